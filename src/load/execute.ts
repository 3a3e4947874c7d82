import { availableParallelism } from 'node:os';
import type { ConnectionOptions } from '../config/connection.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openSession } from '../db/connect.js';
import type { FlatloadError } from '../errors/index.js';
import { openInput } from '../input/source.js';
import { sampleInput } from '../introspect/input.js';
import type { LoadPlan, PlanFacts, PlanOptions } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import type { LoadReport } from '../report/summary.js';
import { applyPlan } from './apply.js';
import { prepareLoad } from './prepare.js';
import { provisionalPlan } from './provisionalPlan.js';

export interface ExecuteResult {
  report: LoadReport;
  plan: LoadPlan;
  facts: PlanFacts;
  error: FlatloadError | undefined;
}

const MiB = 1024 * 1024;

/**
 * Without --chunk-size: about 16 chunks, between 1 MiB and 64 MiB each, so a
 * mid-sized file still spreads over every connection. It depends on the
 * input's size only, so a resumed load cuts the same chunks.
 */
export function autoChunkSize(sizeBytes: number | undefined): number {
  if (sizeBytes === undefined) return 64 * MiB;
  const target = Math.ceil(sizeBytes / 16 / MiB) * MiB;
  return Math.min(64 * MiB, Math.max(1 * MiB, target));
}

export function planOptionsOf(o: LoadOptions, inputSizeBytes: number | undefined): PlanOptions {
  return {
    strategy: o.strategy,
    mode: o.mode,
    jobs: o.jobs,
    chunkSizeBytes: o.chunkSizeBytes ?? autoChunkSize(inputSizeBytes),
    columns: o.columns,
    format: o.format,
    onDuplicate: o.onDuplicate,
    allowDdl: o.allowDdl,
    keepOld: o.keepOld,
    sortChunks: o.sortChunks,
    maxErrors: o.maxErrors,
    clientCpus: availableParallelism(),
  };
}

function emptyReport(plan: LoadPlan, facts: PlanFacts, o: LoadOptions, display: string): LoadReport {
  return {
    status: 'dry-run',
    table: display,
    engine: facts.table.engine,
    strategy: plan.strategy,
    mode: plan.mode,
    rows: 0,
    rowsInInput: 0,
    rejected: 0,
    skippedDuplicates: 0,
    warnings: 0,
    inputBytes: 0,
    inputBytesCompressed: null,
    seconds: 0,
    rowsPerSec: 0,
    mbPerSec: 0,
    jobs: plan.concurrency,
    chunks: 0,
    chunkSizeBytes: plan.chunkSizeBytes,
    resumedChunks: 0,
    encrypted: false,
    rejectFile: null,
    slowestChunk: null,
    timeline: [],
    sizes: null,
    notes: [],
    error: null,
  };
}

/**
 * One load, end to end: read facts (read-only), plan, and unless it is a
 * dry run, apply the plan and report.
 */
export async function executeLoad(o: LoadOptions, conn: ConnectionOptions, events: EventHub, signal?: AbortSignal): Promise<ExecuteResult> {
  const t0 = Date.now();
  const source = openInput(o.file);
  const { session, conn: control } = await openSession(conn, { localInfile: false });
  try {
    const prep = await prepareLoad(o, session, control, source);
    const input = await sampleInput(source, {
      format: prep.scan,
      charset: prep.charset,
      targets: prep.targets,
      ignoreLines: o.format.ignoreLines,
      columns: prep.columns,
      table: prep.table,
    });
    const facts: PlanFacts = { server: prep.server, table: prep.table, input };
    const plan = provisionalPlan(facts, planOptionsOf(o, source.compression === 'none' ? source.sizeBytes : undefined), prep.db, o.table);
    const report = emptyReport(plan, facts, o, prep.display);
    report.encrypted = session.encrypted;
    if (o.dryRun) return { report, plan, facts, error: undefined };

    const applied = await applyPlan(plan, prep, o, source, session, control, events, signal);
    events.emit({ type: 'done' });
    const { run, input: chunkInput } = applied;
    const seconds = (Date.now() - t0) / 1000;
    const inputBytes = chunkInput.summary?.totalBytes ?? chunkInput.bytesScanned;
    const slowest = run.perChunk.reduce<(typeof run.perChunk)[number] | undefined>((a, b) => (!a || b.elapsedMs > a.elapsedMs ? b : a), undefined);
    Object.assign(report, {
      status: run.stoppedBy ? 'stopped' : run.totals.rejected > 0 ? 'rejected-within-budget' : 'ok',
      rows: run.totals.rowsLoaded,
      rowsInInput: applied.totalRecords ?? (run.stoppedBy ? null : run.totals.records),
      rejected: run.totals.rejected,
      skippedDuplicates: run.totals.records - run.totals.rowsLoaded - run.totals.rejected,
      warnings: run.totals.warnings,
      inputBytes,
      inputBytesCompressed: chunkInput.compression !== 'none' ? (source.sizeBytes ?? null) : null,
      seconds,
      rowsPerSec: seconds > 0 ? run.totals.rowsLoaded / seconds : 0,
      mbPerSec: seconds > 0 ? inputBytes / 1e6 / seconds : 0,
      chunks: run.chunks,
      resumedChunks: run.skippedChunks,
      slowestChunk: slowest ? { chunk: slowest.chunk, seconds: slowest.elapsedMs / 1000, rows: slowest.records } : null,
      error: run.stoppedBy ? { code: run.stoppedBy.code, message: run.stoppedBy.message } : null,
    } satisfies Partial<LoadReport>);
    if (chunkInput.summary?.bomBytes) report.notes.push('skipped a UTF-8 byte-order mark at the start of the file');
    return { report, plan, facts, error: run.stoppedBy };
  } finally {
    await control.end().catch(() => undefined);
  }
}
