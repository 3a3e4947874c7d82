import { availableParallelism, tmpdir } from 'node:os';
import type { ConnectionOptions } from '../config/connection.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openSession } from '../db/connect.js';
import { openInput, type InputSource } from '../input/source.js';
import { materializeInput, type LocalInput } from '../input/spool.js';
import { acquireJobLock, jobLockHolder, jobLockName, ownerText } from '../checkpoint/lock.js';
import { readTableFingerprint } from '../introspect/table.js';
import { quoteQualified } from '../db/quote.js';
import { checkRejectPath, defaultRejectPath } from '../report/rejectFile.js';
import { openChunkInput } from './apply.js';
import { sampleInput } from '../introspect/input.js';
import type { LoadPlan, PlanFacts, PlanOptions } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import type { LoadReport } from '../report/summary.js';
import { applyPlan, type CheckpointContext } from './apply.js';
import { ControlConnection } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { measureTableSizes, sizeRatio } from '../report/sizes.js';
import { identityDifferences, jobIdentity, jobIdOf, type JobIdentity } from '../checkpoint/identity.js';
import { CheckpointStore, type StoredJob } from '../checkpoint/store.js';
import { FlatloadError as LoadError, type FlatloadError } from '../errors/index.js';
import type { Queryable } from '../db/control.js';
import { prepareLoad, type Prepared } from './prepare.js';
import { planLoad } from '../plan/planner.js';
import { checkPrivileges, missingPrivilegeError, privilegesForPlan } from '../plan/privileges.js';
import { chunkTableFor } from '../checkpoint/store.js';

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

function emptyReport(plan: LoadPlan, facts: PlanFacts, display: string): LoadReport {
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
    tls: null,
    rejectFile: null,
    slowestChunk: null,
    timeline: [],
    sizes: null,
    notes: [],
    error: null,
  };
}


interface Job {
  plan: LoadPlan;
  /** The unfinished earlier run being resumed, if any. */
  stored: StoredJob | undefined;
  done: CheckpointContext['done'];
  phase: CheckpointContext['phase'];
  notes: string[];
  /** The same load, already finished (its tombstone), and its rows still in the table: nothing to do without --restart. */
  finished?: StoredJob;
}

/** Rows in a table (only read when a finished load is about to be trusted: it scans the table). */
async function countRows(control: Queryable, db: string, table: string): Promise<number | undefined> {
  try {
    const [r] = await control.query(`SELECT COUNT(*) AS n FROM ${quoteQualified(db, table)}`);
    return Number((r as Array<{ n: unknown }>)[0]!.n);
  } catch {
    return undefined;
  }
}

/**
 * A finished load is only "already loaded" while its rows are plausibly
 * still in the table: the table is the one it loaded (not emptied by
 * TRUNCATE or re-created since) and holds at least as many rows as the load
 * added. Otherwise the rerun loads the input again — or, when the table was
 * only partly emptied in append mode, stops rather than guess.
 */
async function stillLoaded(control: Queryable, earlier: StoredJob, o: LoadOptions, prep: Prepared): Promise<{ ok: true } | { ok: false; why: string; reload: boolean }> {
  const now = await readTableFingerprint(control, prep.db, o.table);
  const recreated = earlier.tableFingerprint !== null && now !== earlier.tableFingerprint;
  const loaded = earlier.rowsLoaded ?? 0;
  const rows = loaded > 0 ? await countRows(control, prep.db, o.table) : undefined;
  const fewer = rows !== undefined && rows < loaded;
  if (!recreated && !fewer) return { ok: true };
  const why = recreated
    ? `the table was emptied or re-created since (then: ${earlier.tableFingerprint}; now: ${now ?? 'missing'})`
    : `the table holds ${rows} rows, fewer than the ${loaded} this load added`;
  // Replace and swap empty the table first, so loading again is what the command asks for; in append mode only a table
  // with none of the load's rows left can take them again without doubling some.
  return { ok: false, why, reload: o.mode !== 'append' || recreated || rows === 0 };
}

/**
 * The job this run continues, or a new plan: an unfinished run of the same
 * load is resumed with its stored plan; one that differs is refused (or
 * discarded with --restart). Reads only, in a dry run.
 */
async function findOrPlanJob(
  o: LoadOptions,
  prep: Prepared,
  facts: PlanFacts,
  planOptions: PlanOptions,
  identity: JobIdentity,
  store: CheckpointStore,
  control: Queryable,
): Promise<Job> {
  const hasBookkeeping = await CheckpointStore.exists(store.conn, store.schema);
  // Bring bookkeeping made by an older flatload up to date before reading it (never in a dry run).
  if (hasBookkeeping && !o.dryRun) await store.ensureTables(prep.table.engine);
  let stored = hasBookkeeping ? await store.findUnfinished(identity.target, identity.input.path) : undefined;
  const notes: string[] = [];
  const jobId = jobIdOf(identity);
  if (stored && stored.jobId !== jobId) {
    // Another load of this input into this table: never discard or compete with one that a process is running.
    const holder = await jobLockHolder(control, stored.jobId);
    if (holder) {
      throw new LoadError('JOB_RUNNING', `a load of ${stored.inputPath} into ${stored.target} with other options is running: ${stored.owner ?? `connection ${holder.connectionId}`}`, {
        table: prep.display,
        hint: 'wait for it to finish (flatload status shows it)',
      });
    }
  }
  if (stored && stored.jobId !== jobId && !o.restart) {
    const done = await store.doneChunks(stored.jobId);
    if (done.size === 0 && stored.phase === 'created') {
      // It stopped before changing anything (an input error found by the first scan, say): nothing to resume.
      if (!o.dryRun) await store.abandon(stored.jobId);
      notes.push(`${o.dryRun ? 'would discard' : 'discarded'} the earlier run ${stored.jobId}, which stopped before loading anything`);
      stored = undefined;
    }
  }
  if (stored && o.restart) {
    const done = await store.doneChunks(stored.jobId);
    const rows = [...done.values()].reduce((a, d) => a + d.rowsLoaded, 0);
    if (!o.dryRun) await store.abandon(stored.jobId);
    notes.push(
      `${o.dryRun ? 'would discard' : 'discarded'} the unfinished job ${stored.jobId} (${done.size} chunk(s) committed)` +
        (rows > 0 && o.mode === 'append' ? `: its ${rows} rows stay in the table` : ''),
    );
    stored = undefined;
  }
  if (!stored) {
    const plan = planLoad(facts, planOptions);
    const earlier = hasBookkeeping ? await store.get(jobId) : undefined;
    if (earlier?.state === 'done' && !o.restart) {
      const check = await stillLoaded(control, earlier, o, prep);
      const when = earlier.finishedAt ?? earlier.updatedAt;
      if (check.ok) {
        notes.push(`the same input went into the same table with the same options at ${when} (job ${earlier.jobId}); add --restart to load it again`);
        return { plan, stored, done: new Map(), phase: 'created', notes, finished: earlier };
      }
      if (!check.reload) {
        throw new LoadError('RESUME_MISMATCH', `this input was loaded into ${prep.display} at ${when} (job ${earlier.jobId}), but ${check.why}: rows were deleted since`, {
          table: prep.display,
          hint: 'add --restart to load the input again (rows of it still in the table are then loaded a second time), or empty the table first',
        });
      }
      notes.push(`loading again: job ${earlier.jobId} loaded this input at ${when}, but ${check.why}`);
    } else if (earlier?.state === 'done') {
      notes.push(`loading again: job ${earlier.jobId} loaded this input at ${earlier.finishedAt ?? earlier.updatedAt} (--restart)`);
    }
    return { plan, stored, done: new Map(), phase: 'created', notes };
  }
  const diffs = identityDifferences(stored.identity, identity);
  if (diffs.length > 0) {
    const done = await store.doneChunks(stored.jobId);
    throw new LoadError(
      'RESUME_MISMATCH',
      `an unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}, ${done.size} chunk(s) committed) exists, and this run differs from it:\n    ${diffs.join('\n    ')}`,
      {
        file: o.file,
        table: prep.display,
        hint:
          o.mode === 'append'
            ? 'rerun the original command (same input, same options) to finish it; or add --restart to discard it — its committed rows stay in the table, so remove them first if this run loads the same rows'
            : 'rerun the original command (same input, same options) to finish it, or add --restart to discard it',
      },
    );
  }
  const done = await store.doneChunks(stored.jobId);
  const total = stored.chunksTotal === null ? '' : ` of ${stored.chunksTotal}`;
  notes.push(`resuming job ${stored.jobId}: ${done.size}${total} chunks done`);
  // The stored plan, not a new one: the table is half full now, and pre-assigned keys must not move.
  // --jobs may change a parallel plan's width; a plan that chose one stream had a reason (a table lock, a bulk load).
  const concurrency = stored.plan.concurrency > 1 && o.jobs !== undefined ? o.jobs : stored.plan.concurrency;
  return { plan: { ...stored.plan, concurrency }, stored, done, phase: stored.phase, notes };
}

/** Chunk rows share the target's engine (one transaction with the data), unless there is no transaction to share. */
function bookkeepingEngine(plan: LoadPlan, prep: Prepared): string {
  return plan.commitScope === 'none' ? 'InnoDB' : prep.table.engine;
}

/** Fails now, naming each missing grant, rather than half-way through the load. */
function checkPlanPrivileges(plan: LoadPlan, prep: Prepared, o: LoadOptions, schema: string): void {
  const { needs } = privilegesForPlan(plan, {
    ...(o.dryRun ? {} : { bookkeepingSchema: schema, bookkeepingTables: ['flatload_jobs', chunkTableFor(bookkeepingEngine(plan, prep)).name] }),
    sizeReport: o.sizeReport,
    engine: prep.table.engine,
  });
  const check = checkPrivileges(prep.server.grants, needs, {
    ...(prep.server.currentUser ? { currentUser: prep.server.currentUser } : {}),
    lowerCaseTableNames: prep.server.lowerCaseTableNames,
  });
  const missing = missingPrivilegeError(check, prep.server.currentUser, { table: prep.display });
  if (missing) throw missing;
}

/** The spooled (or original) plain file, described as an input source for sampling. */
function localSource(local: LocalInput): InputSource {
  return { path: local.path, kind: 'file', compression: 'none', sizeBytes: local.sizeBytes, mtimeMs: undefined, seekable: true };
}

/**
 * Takes the job's lock for this process (a second run of the same load stops
 * or waits), and takes it again if the control connection is replaced.
 */
async function holdJob(control: ControlConnection, store: CheckpointStore, jobId: string, o: LoadOptions, events: EventHub): Promise<void> {
  await acquireJobLock(control, jobId, {
    wait: o.wait,
    describeHolder: async () => {
      const holder = await jobLockHolder(control, jobId);
      // A load that has just started records itself once its input is scanned: give it a moment to appear.
      let job: StoredJob | undefined;
      for (let i = 0; i < 20 && job?.state !== 'running'; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 150));
        job = (await CheckpointStore.exists(store.conn, store.schema)) ? await store.get(jobId) : undefined;
      }
      const who = (job?.state === 'running' ? job.owner : null) ?? (holder ? `a flatload connected from ${holder.host ?? '?'}` : 'another flatload');
      const since = job?.state === 'running' ? `, started ${job.startedAt}` : '';
      return `job ${jobId} is held by ${who} (server connection ${holder?.connectionId ?? '?'}${since})`;
    },
    onWaiting: (message) => events.emit({ type: 'note', message }),
  });
  control.onReconnect(async (conn) => {
    const [r] = await conn.query('SELECT GET_LOCK(?, 0) AS got', [jobLockName(jobId)]);
    if (Number((r as Array<{ got: unknown }>)[0]?.got) !== 1) {
      throw new LoadError('JOB_RUNNING', `lost this load's job lock while reconnecting, and another flatload took it: stopping so that the two do not load the same chunks`);
    }
  });
}

/**
 * One load, end to end: read facts (read-only), plan, and unless it is a
 * dry run, apply the plan and report.
 */
export async function executeLoad(
  o: LoadOptions,
  conn: ConnectionOptions,
  events: EventHub,
  signal?: AbortSignal,
  /** The command line that resumes this load (credentials removed). */
  resumeCommand = '',
): Promise<ExecuteResult> {
  const t0 = Date.now();
  const source = openInput(o.file);
  const { session, conn: first } = await openSession(conn, { localInfile: false });
  const control = new ControlConnection(first, session);
  let local: LocalInput | undefined;
  try {
    const prep = await prepareLoad(o, session, first, source);
    if (!source.seekable) {
      events.emit({ type: 'note', message: `reading ${source.kind === 'stdin' ? 'standard input' : `${o.file} (${source.compression})`} into ${o.tmpdir ?? tmpdir()} first: it is loaded from that copy, which can be scanned to its end before anything is loaded, read in parallel and resumed` });
    }
    local = await materializeInput(source, o.tmpdir ?? tmpdir());
    const sampled = await sampleInput(localSource(local), {
      format: prep.scan,
      charset: prep.charset,
      targets: prep.targets,
      ignoreLines: o.format.ignoreLines,
      columns: prep.columns,
      table: prep.table,
      stripBom: o.stripBom && prep.charset.utf8,
    });
    const input = { ...sampled, path: source.path, kind: source.kind, compression: local.compression };
    const facts: PlanFacts = { server: prep.server, table: prep.table, input };
    const planOptions = planOptionsOf(o, local.sizeBytes);
    const identity = jobIdentity(o, source, local, prep.db, planOptions.chunkSizeBytes, prep.characterSet);
    const jobId = jobIdOf(identity);
    const schema = o.bookkeepingSchema ?? prep.db;
    const store = new CheckpointStore(control, schema);
    if (!o.dryRun) await holdJob(control, store, jobId, o, events);
    const job = await findOrPlanJob(o, prep, facts, planOptions, identity, store, control);
    const { plan, stored, notes } = job;
    checkPlanPrivileges(plan, prep, o, schema);
    const rejectPath = o.rejectFile ?? defaultRejectPath(o.file, o.table);
    // Rejected rows are kept only in the reject file: a load that may reject rows needs it writable before it starts.
    if (!o.dryRun && o.maxErrors > 0) checkRejectPath(rejectPath);
    const report = emptyReport(plan, facts, prep.display);
    report.encrypted = session.encrypted;
    report.tls = session.tls ? { version: session.tls.version, cipher: session.tls.cipher, verified: session.tls.verified } : null;
    report.notes.push(...notes);
    // The finished-load note is the summary's headline; printing it as it happens too would say it twice.
    if (!job.finished) for (const n of notes) events.emit({ type: 'note', message: n });
    if (!prep.server.localInfile && plan.strategy === 'insert' && !plan.forced) {
      plan.warnings.unshift('the server has local_infile=OFF, so rows go as batched INSERTs (several times slower); SET GLOBAL local_infile=1 enables the fast path');
    }
    for (const w of plan.warnings) events.emit({ type: 'warning', message: w });
    report.notes.push(...plan.warnings);
    if (o.dryRun) return { report, plan, facts, error: undefined };
    if (job.finished) {
      // A rerun after a crash that came after the final commit: the rows are in; loading again would double them.
      Object.assign(report, {
        status: 'already-loaded',
        rows: job.finished.rowsLoaded ?? 0,
        rejected: job.finished.rowsRejected ?? 0,
        rowsInInput: job.finished.rowsInInput,
        chunks: job.finished.chunksTotal ?? 0,
        resumedChunks: job.finished.chunksTotal ?? 0,
        seconds: (Date.now() - t0) / 1000,
      } satisfies Partial<LoadReport>);
      return { report, plan, facts, error: undefined };
    }

    // Every record boundary is found before anything changes: a broken record late in the input stops the load here.
    const chunkInput = openChunkInput(plan, prep, o, local);
    if (prep.unchunkableReason === undefined) await chunkInput.scan();
    const activeJobId = stored?.jobId ?? jobId;
    const owner = ownerText();
    if (!stored) {
      await store.ensureTables(bookkeepingEngine(plan, prep));
      await store.createJob({
        jobId,
        target: identity.target,
        inputPath: identity.input.path,
        identity,
        plan,
        rowsBefore: null,
        resumeCommand,
        owner,
        chunksTotal: chunkInput.summary?.chunks ?? null,
        rowsInInput: chunkInput.summary?.records ?? null,
      });
    } else {
      await store.update(activeJobId, { state: 'running', message: null, owner });
    }
    // For an append to a table with rows, the size before, so the report can show the growth.
    let sizeBefore: number | null = null;
    if (o.sizeReport && !prep.table.empty && plan.mode === 'append') {
      sizeBefore = (await measureTableSizes(control.connection, prep.db, o.table).catch(() => undefined))?.onDiskBytes ?? null;
    }
    let applied;
    try {
      applied = await applyPlan(plan, prep, o, chunkInput, session, control, events, signal, {
        store,
        schema,
        jobId: activeJobId,
        done: job.done,
        phase: job.phase,
        resumed: stored !== undefined,
        keepHistory: o.keepHistory,
        rowsBefore: stored ? stored.rowsBefore : null,
        tableFingerprint: stored ? stored.tableFingerprint : null,
      }, rejectPath);
    } catch (err) {
      // Whatever stopped it, the bookkeeping must not go on saying the job is running.
      const fe = toFlatloadError(err, 'loading');
      await store.update(activeJobId, { state: fe.code === 'INTERRUPTED' ? 'interrupted' : 'failed', message: fe.message }).catch(() => undefined);
      throw fe;
    }
    events.emit({ type: 'done' });
    const { run, input: chunkInputUsed } = applied;
    const seconds = (Date.now() - t0) / 1000;
    const inputBytes = chunkInputUsed.summary?.totalBytes ?? local.sizeBytes;
    const slowest = run.perChunk.reduce<(typeof run.perChunk)[number] | undefined>((a, b) => (!a || b.elapsedMs > a.elapsedMs ? b : a), undefined);
    // With one transaction for the whole load, a stop rolled back everything this run loaded.
    if (run.stoppedBy && plan.commitScope === 'load' && run.totals.rowsLoaded > 0) {
      report.notes.push(`the whole load was one transaction and was rolled back: none of this run's ${run.totals.rowsLoaded} rows were kept`);
      run.totals.rowsLoaded = 0;
      run.totals.rejected = 0;
    }
    const rejected = run.totals.rejected + applied.resumed.rejected;
    Object.assign(report, {
      status: run.stoppedBy ? 'stopped' : rejected > 0 ? 'rejected-within-budget' : 'ok',
      rows: run.totals.rowsLoaded + applied.resumed.rows,
      rowsInInput: applied.totalRecords ?? (run.stoppedBy ? null : run.totals.records),
      rejected,
      skippedDuplicates: run.totals.records - run.totals.rowsLoaded - run.totals.rejected,
      warnings: run.totals.warnings,
      inputBytes,
      inputBytesCompressed: local.compression !== 'none' ? (local.originalBytes ?? null) : null,
      seconds,
      // Rates describe this run: rows and bytes committed by an earlier run are not counted.
      rowsPerSec: seconds > 0 ? run.totals.rowsLoaded / seconds : 0,
      mbPerSec: seconds > 0 ? run.totals.bytes / 1e6 / seconds : 0,
      chunks: run.chunks,
      resumedChunks: applied.resumed.chunks,
      rejectFile: applied.rejectFile?.path ?? null,
      slowestChunk: slowest ? { chunk: slowest.chunk, seconds: slowest.elapsedMs / 1000, rows: slowest.records } : null,
      error: run.stoppedBy ? { code: run.stoppedBy.code, message: run.stoppedBy.message } : null,
    } satisfies Partial<LoadReport>);
    if (chunkInputUsed.summary?.bomBytes) report.notes.push('skipped a UTF-8 byte-order mark at the start of the file');
    if (o.sizeReport && !run.stoppedBy) {
      try {
        const sizes = await measureTableSizes(control.connection, plan.target.db, plan.target.table);
        report.sizes = {
          ...sizes,
          inputToOnDiskRatio: sizeRatio(inputBytes, sizes.onDiskBytes),
          growthBytes: sizeBefore !== null && sizes.onDiskBytes !== null ? sizes.onDiskBytes - sizeBefore : null,
        };
      } catch (err) {
        report.notes.push(`on-disk size not measured: ${(err as Error).message}`);
      }
    }
    // A resume only helps when the load stopped for a reason outside the input (and the input can be read again).
    const resumable = run.stoppedBy && ['INTERRUPTED', 'CONNECTION_LOST', 'SERVER_ERROR', 'ROWS_REJECTED', 'OUTPUT_UNWRITABLE'].includes(run.stoppedBy.code);
    const error = run.stoppedBy && resumeCommand && resumable ? run.stoppedBy.withContext({ resumeCommand }) : run.stoppedBy;
    return { report, plan, facts, error };
  } catch (err) {
    // Anything the server said that no step mapped is still a server error, not a crash.
    throw toFlatloadError(err, 'loading');
  } finally {
    local?.dispose();
    await control.end();
  }
}
