/**
 * Applying a plan, in named stages: prepare the target (the resume guard and
 * the plan's `before` steps), load the chunks over the pool, finish (the
 * `after` steps, the reject file, the job marked done). Every statement that
 * runs comes from the plan's typed steps (plan/ops.ts) or its chunk
 * statement (plan/sql.ts).
 */
import { selectNumber } from '../db/rows.js';
import type { CutChunk } from '../chunking/types.js';
import type { CheckpointContext, ResumedChunk } from './resume.js';
import { chunkDigestKind, landedPrefix, skippingDone } from './resume.js';
import { CheckpointStore } from '../checkpoint/store.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { nodeOf, openPool, type Session } from '../db/connect.js';
import type { Queryable } from '../db/control.js';
import { isNodeNotReady, toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';
import type { LocalInput } from '../input/spool.js';
import type { DigestKind } from '../input/digest.js';
import type { Prepared } from '../introspect/target.js';
import { readTableFingerprint, sameTable } from '../introspect/table.js';
import { sqlOf, type TableRef } from '../plan/ops.js';
import { chunkLoadSql, insertHeadSql, keyCounterSql, preAssignedKey } from '../plan/sql.js';
import type { LoadPlan } from '../plan/types.js';
import { MAX_LISTED_WARNINGS } from '../plan/planner.js';
import type { EventHub } from '../report/events.js';
import { encodeRejects, type RejectedRow } from '../report/rejectFile.js';
import { ErrorBudget } from './budget.js';
import { bulkCommitFailure } from './bulkInsert.js';
import { tmpdir } from 'node:os';
import { runChunkBytes } from '../order/runs.js';
import { ChunkInput } from './chunkInput.js';
import type { ChunkSource } from './chunkSource.js';
import { SortedChunks } from './sortedChunks.js';
import { StreamedChunks } from './streamedChunks.js';
import { OrderedInput } from './orderedInput.js';
import { guardChunks } from './chunkGuard.js';
import { insertExecutor } from './insertExecutor.js';
import { loadDataExecutor } from './loadDataExecutor.js';
import { RejectKeeper } from './rejects.js';
import type { SharedConnections } from './sharedConnections.js';
import { runChunks, type ChunkContext, type ChunkExecutor, type ChunkOutcome, type ChunkThrottle, type RunResult, type StreamGate } from './runner.js';
import { chunkStepsFor, runSteps } from './steps.js';
import { problemPolicy } from './warnings.js';

/**
 * Bytes per LOCAL INFILE packet. Why small: each piece is read into a new buffer and copied again by mysql2, and
 * large pieces fault fresh pages in twice for the same server time (docs/chunking.md#5-memory).
 */
const PIECE_BYTES = 256 * 1024;

/** Warnings kept per statement (max_error_count): every warning of a chunk must be readable to account for its rows. */
export const MAX_WARNINGS = MAX_LISTED_WARNINGS;

/** Everything one load's stages share. */
export interface LoadRun {
  plan: LoadPlan;
  prep: Prepared;
  o: LoadOptions;
  input: ChunkSource;
  session: Session;
  control: Queryable;
  events: EventHub;
  signal: AbortSignal | undefined;
  cp: CheckpointContext;
  rejectPath: string;
  /** Loading streams shared with other loads (an export's tables). */
  gate?: StreamGate | undefined;
  /** The connections those streams load over. */
  shared?: SharedConnections | undefined;
  /** Checks a swap's shadow against the exporter's figures before it is published (throws on a difference). */
  checkBeforeSwap?: ((shadow: TableRef) => Promise<void>) | undefined;
  /** Replica lag, the primary's Threads_running, --max-rate: held between chunks. */
  throttle?: ChunkThrottle | undefined;
}

export interface Applied {
  run: RunResult;
  input: ChunkSource;
  /** Records in the input, when the whole input was read. */
  totalRecords: number | undefined;
  /** Rows and chunks committed by an earlier, interrupted run of this job. */
  resumed: { chunks: number; rows: number; rejected: number; bytes: number };
  rejectFile: { path: string; log: string; rows: number } | undefined;
}

/**
 * The chunks the plan loads, over the input's plain file: in file order, or
 * sorted by the clustered key (in memory, or runs in --tmpdir named after
 * the job). scan() reads the whole input before anything is loaded.
 */
export function openChunkInput(
  plan: LoadPlan,
  prep: Prepared,
  o: LoadOptions,
  local: LocalInput,
  /** The job, and the digest its input is checked with (the one its first run stored). */
  job: { jobId: string; digest: DigestKind },
  events: EventHub,
  /** `aside`: other loads share this thread (OrderOptions.aside); `signal`: Ctrl-C stops a sort into runs. */
  { aside = false, signal }: { aside?: boolean; signal?: AbortSignal | undefined } = {},
): ChunkSource & { dispose?: () => void } {
  const unchunkable = prep.unchunkableReason !== undefined;
  const ordered = plan.order.kind === 'key' && !unchunkable ? plan.order : undefined;
  const chunkSizeBytes = unchunkable ? Number.MAX_SAFE_INTEGER : ordered ? runChunkBytes(local.stream ? undefined : local.sizeBytes, plan.chunkSizeBytes) : plan.chunkSizeBytes;
  const file = new ChunkInput(
    local,
    {
      format: prep.scan,
      charset: prep.charset,
      targets: prep.targets,
      chunkSizeBytes,
      maxRecordsPerChunk: unchunkable ? undefined : plan.chunkMaxRecords,
      maxRecordBytes: unchunkable ? Number.MAX_SAFE_INTEGER : Math.max(plan.chunkSizeBytes, 1 << 20),
      ignoreLines: unchunkable ? 0 : o.format.ignoreLines,
      stripBom: o.stripBom && prep.charset.utf8,
      file: o.file,
    },
    o.format,
    plan.strategy !== 'insert',
    job.digest,
  );
  // A compressed file in file order: cut as it is decompressed, at most jobs + 1 chunks in --tmpdir at a time.
  if (!ordered) {
    if (local.stream && !unchunkable) return new StreamedChunks(file, o.tmpdir ?? tmpdir(), { format: prep.scan, charset: prep.charset, targets: prep.targets });
    const by = plan.order.kind === 'file' && !unchunkable ? plan.order.sortedBy : undefined;
    return by ? new SortedChunks(file, { spec: by, fmt: prep.scan, cs: prep.charset, targets: prep.targets }) : file;
  }
  const t0 = Date.now();
  let runs = 0;
  return new OrderedInput(file, { spec: ordered.key, fmt: prep.scan, cs: prep.charset, targets: prep.targets }, {
    key: ordered.key,
    chunkSizeBytes: plan.chunkSizeBytes,
    maxRecords: plan.chunkMaxRecords,
    tmpdir: o.tmpdir ?? tmpdir(),
    jobId: job.jobId,
    needBytes: ordered.spillBytes,
    inMemory: ordered.inMemory ?? false,
    aside,
    onSortedInMemory: (records) => events.emit({ type: 'note', message: `sorted ${records.toLocaleString('en-US')} records by ${ordered.key.name} in memory in ${((Date.now() - t0) / 1000).toFixed(1)} s` }),
    onRun: (n) => {
      if (n === 1) events.emit({ type: 'note', message: `sorting the input by ${ordered.key.name} (runs in ${o.tmpdir ?? tmpdir()})` });
      runs = n;
    },
    onSorted: (records, reused) => {
      const kept = reused > 0 ? ` (${reused} of them the interrupted run's, found intact)` : '';
      events.emit({ type: 'note', message: `sorted ${records.toLocaleString('en-US')} records by ${ordered.key.name} into ${runs} runs${kept} in ${((Date.now() - t0) / 1000).toFixed(1)} s` });
    },
    signal,
  });
}

function checkPreconditions({ plan, prep, o }: LoadRun): void {
  if (plan.strategy === 'insert' && prep.unchunkableReason !== undefined) {
    throw new FlatloadError('UNSUPPORTED', `the insert strategy needs records it can find, and ${prep.unchunkableReason}`, { file: o.file });
  }
  if (plan.strategy !== 'insert' && !prep.server.localInfile) {
    throw new FlatloadError('LOCAL_INFILE_DISABLED', 'the server has local_infile=OFF, so it refuses LOAD DATA LOCAL INFILE', {
      table: prep.display,
      hint: 'enable it with SET GLOBAL local_infile=1 (or local_infile=1 under [mysqld]), or load with --strategy insert',
    });
  }
}

/**
 * Why the table is not the one the interrupted run committed chunks into, or
 * undefined. On a Galera cluster (whose nodes each keep their own creation
 * time and table id) it must hold at least the rows those chunks committed.
 */
async function tableChangedSince(r: LoadRun, now: string | null, target: string): Promise<string | undefined> {
  const { cp, control } = r;
  const cluster = r.prep.server.galera !== undefined;
  if (!sameTable(cp.tableFingerprint, now, cluster)) return `then: ${cp.tableFingerprint}; now: ${now ?? 'missing'}`;
  if (!cluster) return undefined;
  const committed = (cp.rowsBefore ?? 0) + [...cp.done.values()].reduce((a, d) => a + d.rowsLoaded, 0);
  const rows = await selectNumber(control, `SELECT COUNT(*) AS n FROM ${target}`);
  return rows < committed ? `it holds ${rows} rows, fewer than the ${committed} its chunks committed` : undefined;
}

/** How the plan's quick exclusive statements wait for the table's readers (load/lockWait.ts). */
function lockWaits(r: LoadRun): { maxPauseMs: number; mariadb: boolean; signal: AbortSignal | undefined } {
  return { maxPauseMs: r.o.throttle.maxPauseMs, mariadb: r.prep.server.flavor === 'mariadb', signal: r.signal };
}

/**
 * Stage 1: the load target, ready for chunks. A resume first checks the
 * table is still the one its chunks went into, and — for a plan that cannot
 * resume part-way — runs the plan's restart step; a new job runs the plan's
 * `before` steps once and records what the table held and its fingerprint.
 */
async function prepareTarget(r: LoadRun): Promise<void> {
  const { plan, prep, control, cp, events } = r;
  const target = quoteQualified(plan.loadTarget.db, plan.loadTarget.table);
  const cluster = prep.server.galera !== undefined;
  const fingerprint = (): Promise<string | null> => readTableFingerprint(control, plan.loadTarget.db, plan.loadTarget.table, cluster);
  if (cp.phase === 'prepared' && cp.tableFingerprint !== null) {
    // Chunks committed by the interrupted run are skipped: they must still be in the table.
    const why = await tableChangedSince(r, await fingerprint(), target);
    if (why) {
      throw new FlatloadError('RESUME_MISMATCH', `cannot resume: ${target} was emptied or re-created since the interrupted run committed ${cp.done.size} chunk(s) into it (${why})`, {
        table: prep.display,
        hint: 'add --restart to load the whole input again',
      });
    }
  }
  const resumed = cp.done.size > 0 || cp.phase !== 'created';
  if (resumed && plan.guarantee.kind === 'restart-required' && cp.phase !== 'finished') {
    if (cp.rowsBefore !== 0) {
      throw new FlatloadError('RESUME_MISMATCH', `this load cannot resume: ${plan.guarantee.text}; and ${target} had rows before the load started, which emptying it would delete`, {
        hint: 'remove the rows this load added yourself, then rerun with --restart; or load with --mode replace or swap',
      });
    }
    await runSteps(control, plan.onResume, 'restarting the load', {}, false, events, lockWaits(r));
    await cp.store.clearChunks(cp.jobId);
    cp.done.clear();
    events.emit({ type: 'note', message: `this plan cannot resume part-way (${plan.guarantee.kind}): emptied ${target}, which was empty when the load started, and loading from the first record` });
    if (cp.phase !== 'created') {
      cp.tableFingerprint = await fingerprint();
      await cp.store.update(cp.jobId, { tableFingerprint: cp.tableFingerprint });
    }
  }
  if (cp.phase !== 'created') return;
  await runSteps(control, plan.before, 'preparing the table', {}, cp.resumed, events, lockWaits(r));
  if (plan.commitScope !== 'chunk' || plan.guarantee.kind === 'restart-required') {
    // What the table held before the first chunk (after `before` emptied or created it): the base for row-count resume,
    // and what tells a restart that emptying the table deletes nothing but this load's rows.
    cp.rowsBefore = await selectNumber(control, `SELECT COUNT(*) AS n FROM ${target}`);
  }
  cp.tableFingerprint = await fingerprint();
  await cp.store.update(cp.jobId, { phase: 'prepared', tableFingerprint: cp.tableFingerprint, ...(cp.rowsBefore !== null ? { rowsBefore: cp.rowsBefore } : {}) });
}

/** Chunk rows share the target's engine (one transaction with the data), unless there is no per-chunk transaction to share. */
export function bookkeepingEngine(plan: LoadPlan, prep: Prepared): string {
  return plan.commitScope !== 'chunk' ? 'InnoDB' : prep.table.engine;
}

/** The strategy's chunk executor, with the plan's per-chunk steps and bookkeeping. */
function chunkExecutor(r: LoadRun, resuming: boolean, budget: ErrorBudget, rejects: RejectKeeper): { executor: ChunkExecutor; notBulk: ReadonlySet<number>; beforeCommit: BeforeCommit } {
  const { plan, prep, o, input, control, cp, events } = r;
  const key = preAssignedKey(plan);
  const firstKey = key ? BigInt(key.firstValue) : 0n;
  const steps = chunkStepsFor(plan, cp, resuming);
  const beforeCommit: BeforeCommit = async (c, ctx, outcome, rows) => {
    const chunk = c as ResumedChunk;
    // The last moment to see a file that its writer goes on writing (or rewrites): once committed, the rows are in.
    const changed = input.changed();
    if (changed) {
      throw new FlatloadError('INPUT_CHANGED', `the input changed while it was being loaded: ${changed}`, {
        file: o.file,
        chunk: chunk.index,
        hint: 'load a file that nothing writes to meanwhile (let its writer finish, or copy it first); the rerun refuses to resume over a changed file',
      });
    }
    // With no per-chunk transaction to share, the bookkeeping row goes through the control connection into InnoDB: writing
    // it on the loading session would interleave a second table into a MyRocks bulk load, which finalises it early. Under
    // one transaction for the load (scope 'load') the rows are uncommitted until its end: its guarantee restarts a resume.
    const bk = plan.commitScope === 'chunk' ? ctx.conn : control;
    await CheckpointStore.markChunk(bk, cp.schema, bookkeepingEngine(plan, prep), cp.jobId, {
      index: chunk.index,
      startByte: chunk.original?.startByte ?? chunk.startByte,
      endByte: chunk.endByte,
      records: chunk.original?.records ?? outcome.records,
      rowsLoaded: outcome.rowsLoaded + (chunk.original?.skipped ?? 0),
      rejected: outcome.rejected,
      digest: (chunk as { digest?: string }).digest ?? null,
      rejects: encodeRejects(rows),
    }, prep.server.maxAllowedPacketBytes);
  };
  const afterCommit = async (chunk: CutChunk, rows: RejectedRow[]): Promise<void> => rejects.keep(rows.map((x) => ({ ...x, chunk: chunk.index })));
  const isProblem = problemPolicy({ duplicatesExpected: plan.duplicates !== 'error', allowAltered: o.allowTruncation });
  const common = { input, file: o.file, scope: plan.commitScope, chunkBefore: steps.before, chunkAfter: steps.after, budget, events, beforeCommit, afterCommit, isProblem };
  const maxPacket = prep.server.maxAllowedPacketBytes;
  if (plan.strategy === 'insert') {
    const fields = plan.columns ?? prep.table.columns.map((c) => ({ name: c.name, isVariable: false }));
    const executor = insertExecutor({
      ...common,
      head: insertHeadSql(plan, fields),
      fields,
      binaryField: fields.map((f) => !f.isVariable && prep.table.columns.find((c) => c.name.toLowerCase() === f.name.toLowerCase())?.characterSet === 'binary'),
      characterSet: prep.characterSet,
      scan: { format: prep.scan, charset: prep.charset, targets: prep.targets },
      key: key ? { column: key.column, first: firstKey } : undefined,
      duplicates: plan.duplicates,
      maxWarnings: MAX_WARNINGS,
      batchBytes: plan.insertBatchBytes ?? Math.max(64 * 1024, Math.min(4 << 20, Math.floor(maxPacket / 2))),
      maxPacketBytes: maxPacket,
    });
    return { executor, notBulk: steps.notBulk, beforeCommit };
  }
  const unchunkable = prep.unchunkableReason !== undefined;
  const executor = loadDataExecutor({
    ...common,
    sql: (fileToken) => {
      const sql = chunkLoadSql(plan, { format: o.format, characterSet: prep.characterSet }, fileToken);
      // One unsplit chunk: the server skips the header lines itself.
      return unchunkable && o.format.ignoreLines > 0 ? `${sql} IGNORE ${o.format.ignoreLines} LINES` : sql;
    },
    pre: (chunk, first) => (key ? [keyCounterSql(firstKey + BigInt(chunk.firstRecord + first))] : []),
    pieceBytes: Math.max(16 * 1024, Math.min(PIECE_BYTES, Math.floor(maxPacket / 2))),
    maxWarnings: MAX_WARNINGS,
    scan: { format: prep.scan, charset: prep.charset, targets: prep.targets },
    duplicatesExpected: plan.duplicates !== 'error',
  });
  return { executor, notBulk: steps.notBulk, beforeCommit };
}

type BeforeCommit = (chunk: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome, rejects: RejectedRow[]) => Promise<void>;

/** Stage 2: every chunk not yet committed, over the pool. */
async function loadChunks(r: LoadRun, resumed: Applied['resumed'], rejects: RejectKeeper): Promise<RunResult> {
  const { plan, prep, o, input, session, control, cp, events } = r;
  const unchunkable = prep.unchunkableReason !== undefined;
  // Resuming by counting rows needs one stream in file order.
  const jobs = unchunkable || plan.guarantee.kind === 'exactly-once-by-row-count' ? 1 : plan.concurrency;
  events.emit({
    type: 'start',
    // A compressed file cut as it loads has an unknown size until its end (sorted into runs, it is known by now).
    totalBytes: input.source.stream && input.summary === undefined ? undefined : input.source.sizeBytes,
    jobs,
    table: prep.display,
    strategy: plan.strategy,
    resumedChunks: resumed.chunks,
    resumedBytes: resumed.bytes,
    resumedRows: resumed.rows,
  });
  if (unchunkable) events.emit({ type: 'note', message: `loading as one chunk: ${prep.unchunkableReason}` });
  const partial = await landedPrefix(control, plan, cp);
  if (partial) events.emit({ type: 'note', message: `the interrupted run left the first ${partial.skip} record(s) of chunk ${partial.index} in the table: loading the rest of that chunk` });
  const resuming = cp.done.size > 0 || cp.phase !== 'created';
  const budget = new ErrorBudget(o.maxErrors, resumed.rejected);
  const { executor, notBulk, beforeCommit } = chunkExecutor(r, resuming, budget, rejects);
  const execute = guardChunks({ plan, prep, input, cp, events, executor, notBulk, partial, resuming, beforeCommit, rejects });
  // Before chunks() cuts anything: a job an older flatload started stored SHA-1 per chunk, and is compared by it.
  input.digestChunksWith?.(chunkDigestKind(cp.done));
  const chunks = skippingDone(unchunkable ? wholeFile(input.source.sizeBytes) : input.chunks(), cp.done, input.source.display, r.o.mode);
  // A session that ends with statements (a bulk load finalised at its end) lasts the whole load: it keeps its own connections.
  const shared = r.shared && plan.sessionEnd.length === 0 ? r.shared : undefined;
  const pool = shared ? undefined : openPool(session, jobs, { localInfile: true });
  try {
    return await runChunks({
      pool,
      shared: shared && { connections: shared, as: cp.jobId },
      jobs,
      chunks,
      isDone: (c) => (c as { alreadyDone?: boolean }).alreadyDone === true,
      onFinished: (c) => input.release(c),
      pullAhead: input.pullAhead,
      execute,
      // Every warning of a chunk must be readable to account for its rows: the server keeps only 64 by default.
      sessionSql: [`SET SESSION max_error_count = ${MAX_WARNINGS}`, ...plan.session.map((s) => sqlOf(s.op))],
      sessionEnd: plan.sessionEnd.map((s) => sqlOf(s.op)),
      // The load's one transaction is committed only when every chunk is in.
      sessionAbort: plan.commitScope === 'load' ? ['ROLLBACK'] : undefined,
      // Work held by a session until its end (a bulk load finalised at session end) dies with its connection: retrying
      // one chunk would quietly lose the others, so the load stops instead. An engine that cannot roll back keeps part of
      // an interrupted chunk: a retry would load that part twice, so the load stops there and the rerun counts the
      // table's rows to skip exactly that part.
      ...(plan.commitScope !== 'chunk' || plan.sessionEnd.length > 0 ? { maxAttempts: 1 } : {}),
      // A Galera node that says it is not ready (1047) is left for the next node of the list.
      onFault: (conn, err) => {
        const node = isNodeNotReady(err) ? nodeOf(conn) : undefined;
        if (node) session.router.failed(node);
      },
      events,
      gate: r.gate,
      throttle: r.throttle,
      ...(r.signal ? { signal: r.signal } : {}),
    });
  } finally {
    await pool?.end().catch(() => undefined);
  }
}

/**
 * A chunk that failed where nothing rolls back (a MyRocks bulk load ingests
 * part of it before 4054; MyISAM keeps the rows before the error) may have
 * left rows that "loaded" does not count: say so, and what the rerun does.
 */
function withPartialChunkHint(err: FlatloadError, plan: LoadPlan): FlatloadError {
  const chunk = err.context.chunk;
  if (plan.commitScope !== 'none' || chunk === undefined || err.code === 'INTERRUPTED') return err;
  const resume = plan.onResume[0]?.op.kind;
  const rerun =
    resume === 'delete-key-range'
      ? "rerunning the same command deletes them by the chunk's key range and loads the chunk again"
      : resume === 'truncate'
        ? 'rerunning the same command empties the table (it was empty when the load began) and loads from the first record'
        : 'rerunning the same command counts them and skips those records';
  const note = `chunk ${chunk} could not be rolled back: rows of it the server had taken may be in the table, not counted as loaded; ${rerun}`;
  return err.withContext({ hint: err.context.hint ? `${err.context.hint}; ${note}` : note });
}

/** Stage 3: the plan's `after` steps once every chunk is in, the reject file, and the job marked done. */
async function finishLoad(r: LoadRun, run: RunResult, rejects: RejectKeeper, totalRecords: number | undefined): Promise<Applied['rejectFile']> {
  const { plan, input, control, cp, events } = r;
  if (input.summary) await cp.store.update(cp.jobId, { chunksTotal: input.summary.chunks, rowsInInput: input.summary.records });
  if (run.stoppedBy) {
    let file: Applied['rejectFile'];
    try {
      file = rejects.finish();
    } catch (err) {
      // The rows are kept in the bookkeeping; a rerun writes the file again.
      events.emit({ type: 'warning', message: toFlatloadError(err, 'writing the reject file').message });
    }
    const state = run.stoppedBy.code === 'INTERRUPTED' ? 'interrupted' : 'failed';
    await cp.store.update(cp.jobId, { state, message: run.stoppedBy.message }).catch(() => undefined);
    run.stoppedBy = withPartialChunkHint(run.stoppedBy, plan);
    return file;
  }
  await cp.store.update(cp.jobId, { phase: 'loaded' });
  try {
    if (cp.phase !== 'finished') {
      const values = totalRecords === undefined ? {} : { inputRecords: totalRecords };
      const rerun = cp.resumed && cp.phase === 'loaded';
      // A table that does not match the exporter's figures is never published: the check comes before the RENAME.
      const at = r.checkBeforeSwap ? plan.after.findIndex((s) => s.op.kind === 'swap-tables') : -1;
      const swap = at >= 0 ? plan.after[at]!.op : undefined;
      await runSteps(control, at >= 0 ? plan.after.slice(0, at) : plan.after, 'finishing the load', values, rerun, events, lockWaits(r));
      if (swap?.kind === 'swap-tables') {
        await r.checkBeforeSwap!(swap.shadow);
        await runSteps(control, plan.after.slice(at), 'finishing the load', values, rerun, events, lockWaits(r));
      }
      await cp.store.update(cp.jobId, { phase: 'finished' });
    }
    // The rejected rows live only in the reject file once the job is done: write it (durably) first.
    const file = rejects.finish();
    // A stream's hash is known only now: what tells the same standard input again from a new one (load/execute.ts).
    if (input.source.stream && input.contentHash) await cp.store.update(cp.jobId, { inputHash: input.contentHash });
    await cp.store.finish(cp.jobId, cp.keepHistory, await readTableFingerprint(control, plan.target.db, plan.target.table, r.prep.server.galera !== undefined));
    return file;
  } catch (err) {
    run.stoppedBy = toFlatloadError(err, 'finishing the load');
    await cp.store.update(cp.jobId, { state: 'failed', message: run.stoppedBy.message }).catch(() => undefined);
    return undefined;
  }
}

export async function applyPlan(r: LoadRun): Promise<Applied> {
  checkPreconditions(r);
  await prepareTarget(r);
  const resumed = { chunks: 0, rows: 0, rejected: 0, bytes: 0 };
  for (const d of r.cp.done.values()) {
    resumed.chunks++;
    resumed.rows += d.rowsLoaded;
    resumed.rejected += d.rejected;
    resumed.bytes += d.endByte - d.startByte;
  }
  const rejects = new RejectKeeper(r.rejectPath, () => r.input.head, r.o, r.prep, r.cp.done.values());
  const run = await loadChunks(r, resumed, rejects);
  if (r.plan.commitScope === 'load' && run.stoppedBy) await afterBulkStop(r, run);
  const totalRecords = r.prep.unchunkableReason !== undefined ? run.totals.records + resumed.rows : r.input.summary?.records;
  const rejectFile = await finishLoad(r, run, rejects, totalRecords);
  return { run, input: r.input, totalRecords, resumed, rejectFile };
}

/**
 * The load's one transaction stopped: nothing of it is in the table, so no
 * chunk stays marked as loaded. A COMMIT that failed on a duplicate is the
 * bulk insert given up like any other (the job then loads by chunks).
 */
async function afterBulkStop(r: LoadRun, run: RunResult): Promise<void> {
  run.stoppedBy = bulkCommitFailure(run.stoppedBy!);
  await r.cp.store.clearChunks(r.cp.jobId).catch(() => undefined);
  r.cp.done.clear();
}

/** An unsplittable input: one chunk, the server counts its records. */
async function* wholeFile(sizeBytes: number): AsyncGenerator<CutChunk> {
  yield { index: 0, startByte: 0, endByte: sizeBytes, firstLine: 1, firstRecord: 0, records: -1, newlines: 0 };
}
