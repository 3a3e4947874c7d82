/**
 * A table job's hooks for the one ladder (climb.ts, docs/jobs.md): held
 * (the input's facts read, the target prepared, the job's lock) → found
 * (fresh | resume | already done) → prepared (the job recorded as running,
 * the input as the plan reads it) → started (the input scanned and sorted)
 * → loaded → reported → verified → finished, or stopped. Each
 * rung is one function below; the target (single server, Galera, Spider
 * front) adds what is its own through its own hooks.
 */
import { jobIdOf } from '../checkpoint/identity.js';
import type { JobLease } from '../checkpoint/lease.js';
import { CheckpointStore } from '../checkpoint/store.js';
import { EXPORT_SORT_MEMORY, type LoadOptions } from '../config/loadOptions.js';
import { throttles } from '../config/throttle.js';
import type { Session } from '../db/connect.js';
import type { ControlConnection } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import type { LocalInput } from '../input/spool.js';
import { measureTableSizes, sizeRatio } from '../introspect/sizes.js';
import { analyzeTable, analyzeWanted } from '../load/analyze.js';
import { applyPlan, type Applied } from '../load/apply.js';
import {
  checkTable,
  emptyReport,
  expectationNotes,
  localForPlan,
  loadedReport,
  readFacts,
  recordJob,
  spoolFinishedStdin,
  startJob,
  type ChunkInputOf,
  type Facts,
} from '../load/execute.js';
import { ServerThrottle, type Throttle } from '../load/throttle.js';
import { sqlOf } from '../plan/ops.js';
import type { ChunkSqlContext } from '../plan/sql.js';
import { checkRejectPath, defaultRejectPath } from '../report/rejectFile.js';
import type { LoadReport } from '../report/summary.js';
import { checkPlanPrivileges, findOrPlanJob, heldTable, holdJob, markStopped, withResumeCommand, type Job } from './ladder.js';
import { climb, type LadderJob, type StopRules } from './climb.js';
import type { JobRequest, JobResult, LoadTarget, Opened } from './types.js';

/** What the rungs hand on, and what the last one releases. */
interface Rungs {
  readonly t0: number;
  local?: LocalInput;
  chunks?: ChunkInputOf;
  lease?: JobLease | undefined;
  /** Once the server stops answering, nothing more is asked of it. */
  reachable: boolean;
}

/** The job held and found: where its bookkeeping is, and which job this run is. */
interface Claimed {
  f: Facts;
  o: LoadOptions;
  store: CheckpointStore;
  schema: string;
  job: Job;
  rejectPath: string;
  sql: ChunkSqlContext;
}

/** A load of its own throttles itself; an export's tables share the export's throttle. */
function ownThrottle(req: JobRequest, session: Session): ServerThrottle | undefined {
  return !req.inExport && throttles(req.o.throttle) ? new ServerThrottle(req.o.throttle, req.conn, session, req.events) : undefined;
}

/** Rung: the input's facts (spooled first when it is a stream) and the job's identity. */
async function readInput(req: JobRequest, opened: Opened, r: Rungs): Promise<Facts> {
  const repeat = req.inExport?.repeat ?? 0;
  const identityOf = req.identityOf ?? ((own) => own);
  const f = await readFacts(req.o, opened.prep, opened.source, req.events, (l) => (r.local = l), (own) => ({ ...identityOf(own), ...(repeat > 0 ? { repeat } : {}) }));
  const account = f.prep.server.accountConnections;
  if (account && account.open >= account.limit && !req.inExport && !f.o.dryRun) {
    throw new FlatloadError('CONNECTION_REFUSED', `max_user_connections is ${account.limit} for this account and it has ${account.open} open, this load's included: none is left to load over`, {
      hint: 'close a connection of this account, or raise its MAX_USER_CONNECTIONS',
    });
  }
  return f;
}

/** Rung: the job held — the server's lock, and on a Galera cluster its lease; a replace or swap also holds the table (nothing in a dry run). */
async function hold(req: JobRequest, f: Facts, opened: Opened, r: Rungs): Promise<CheckpointStore> {
  const { o, prep } = f;
  const store = new CheckpointStore(opened.control, o.bookkeepingSchema ?? prep.db);
  if (!o.dryRun) r.lease = await holdJob(opened.control, opened.session, store, jobIdOf(f.identity), o, req.events, prep.server.galera !== undefined, heldTable(o, prep));
  return store;
}

/** Rung: find the job (fresh, resumed or already done), and check the plan can run. */
async function claim(req: JobRequest, f: Facts, opened: Opened, store: CheckpointStore, r: Rungs): Promise<Claimed> {
  const { o, prep } = f;
  const { control } = opened;
  const schema = store.schema;
  const planOptions = req.inExport
    ? { ...f.planOptions, connectionsBudgeted: true, sortsAside: true, sortMemoryBytes: o.sortMemoryGiven ? o.sortMemoryBytes : EXPORT_SORT_MEMORY }
    : f.planOptions;
  let job = await findOrPlanJob(o, prep, f.facts, planOptions, f.identity, store, control);
  if (job.finished && !o.dryRun && (await spoolFinishedStdin(f, job.finished.inputHash, req.events, (l) => (r.local = l)))) {
    job = await findOrPlanJob(o, prep, f.facts, planOptions, f.identity, store, control);
  }
  checkPlanPrivileges(job.plan, prep, o, schema);
  // The load's own statements on this connection (TRUNCATE, the shadow, the RENAME) follow the rows in or out of the binary log.
  const logBin = job.plan.session.find((st) => st.op.kind === 'set-session' && st.op.name === 'sql_log_bin');
  if (logBin) await control.query(sqlOf(logBin.op)).catch((err: unknown) => Promise.reject(toFlatloadError(err, 'setting sql_log_bin for --binlog')));
  const rejectPath = o.rejectFile ?? defaultRejectPath(o.file, o.table);
  // Rejected rows are kept only in the reject file: a load that may reject rows needs it writable before it starts.
  if (!o.dryRun && o.maxErrors > 0) checkRejectPath(rejectPath);
  return { f, o, store, schema, job, rejectPath, sql: { format: o.format, characterSet: prep.characterSet } };
}

/** The report as planned: notes, warnings and (dry run) what would happen after the load. */
function plannedReport(req: JobRequest, c: Claimed, session: Session, own: ServerThrottle | undefined): LoadReport {
  const { o, job } = c;
  const { prep, facts } = c.f;
  const { plan, notes } = job;
  const report = emptyReport(plan, facts, prep.display);
  report.encrypted = session.encrypted;
  report.tls = session.tls ? { version: session.tls.version, cipher: session.tls.cipher, verified: session.tls.verified } : null;
  report.notes.push(...notes);
  if (own) report.throttle = own.throttle.report();
  // The finished-load note is the summary's headline; printing it as it happens too would say it twice.
  if (!job.finished) for (const n of notes) req.events.emit({ type: 'note', message: n });
  if (!prep.server.localInfile && plan.strategy === 'insert' && !plan.forced) {
    plan.warnings.unshift('the server has local_infile=OFF, so rows go as batched INSERTs (several times slower); SET GLOBAL local_infile=1 enables the fast path');
  }
  for (const w of plan.warnings) req.events.emit({ type: 'warning', message: w });
  report.notes.push(...plan.warnings);
  if (!o.dryRun) return report;
  if (o.columnsFromHeader) report.notes.push(`columns: by the names in the header line of ${o.file} (--columns header), matched case-insensitively`);
  if (o.expect) report.notes.push(...expectationNotes(o.expect, plan, prep));
  if (analyzeWanted(o.analyze, prep.table.empty || plan.mode !== 'append')) {
    report.notes.push(`after the load: ANALYZE TABLE ${prep.display} (${o.analyze === 'on' ? '--analyze on' : '--analyze auto: the load starts from an empty table, whose statistics describe no rows'})`);
  }
  return report;
}

/** Rung: the same load finished before, after its final commit — the rows are in; loading again would double them. */
async function alreadyDone(c: Claimed, control: ControlConnection, report: LoadReport, r: Rungs): Promise<JobResult> {
  const finished = c.job.finished!;
  Object.assign(report, {
    status: 'already-loaded',
    rows: finished.rowsLoaded ?? 0,
    rejected: finished.rowsRejected ?? 0,
    rowsInInput: finished.rowsInInput,
    chunks: finished.chunksTotal ?? 0,
    resumedChunks: finished.chunksTotal ?? 0,
    seconds: (Date.now() - r.t0) / 1000,
  } satisfies Partial<LoadReport>);
  // Already loaded is not already checked: a rerun of a job that failed its check fails it again.
  const error = c.o.expect ? await checkTable(control, c.job.plan.target, c.f.prep.display, c.o.expect, report) : undefined;
  return { report, plan: c.job.plan, facts: c.f.facts, sql: c.sql, error };
}

/** The job started: its id, the chunks to load, and (an append to a table with rows) the table's size before. */
interface Started {
  jobId: string;
  chunkInput: Parameters<typeof applyPlan>[0]['input'];
  sizeBefore: number | null;
}

/** Rung: start the job — every record boundary found (the input sorted), the job's row completed. */
async function startRows(req: JobRequest, c: Claimed, opened: Opened, jobId: string, r: Rungs): Promise<Started> {
  const { o, job, store, f } = c;
  const { prep } = f;
  const chunkInput = await startJob(f, job, { store, jobId }, o, req.events, (i) => (r.chunks = i), { shared: req.inExport !== undefined, signal: req.signal });
  // For an append to a table with rows, the size before, so the report can show the growth.
  const sizeBefore =
    o.sizeReport && !prep.table.empty && job.plan.mode === 'append' ? ((await measureTableSizes(opened.control.connection, prep.db, o.table).catch(() => undefined))?.onDiskBytes ?? null) : null;
  return { jobId, chunkInput, sizeBefore };
}

/** Rung: load the chunks; the apply step records a stop it comes through, and the job's end (done) with its last step. */
async function loadRows(req: JobRequest, c: Claimed, opened: Opened, report: LoadReport, throttle: Throttle | undefined, s: Started): Promise<Applied> {
  const { o, job, store, f } = c;
  const { prep } = f;
  const { control, session } = opened;
  const expect = o.expect;
  return applyPlan({
    plan: job.plan,
    prep,
    o,
    input: s.chunkInput,
    session,
    control,
    events: req.events,
    signal: req.signal,
    rejectPath: c.rejectPath,
    gate: req.inExport?.streams?.gate,
    shared: req.inExport?.streams?.connections,
    checkBeforeSwap: expect
      ? async (shadow) => {
          const e = await checkTable(control, shadow, prep.display, expect, report);
          if (e) throw e;
        }
      : undefined,
    throttle,
    cp: {
      store,
      schema: c.schema,
      jobId: s.jobId,
      done: job.done,
      phase: job.phase,
      resumed: job.stored !== undefined,
      keepHistory: o.keepHistory,
      rowsBefore: job.stored ? job.stored.rowsBefore : null,
      tableFingerprint: job.stored ? job.stored.tableFingerprint : null,
    },
  });
}

/** Rung: what loaded, ANALYZE and the table's size on disk. */
async function loadedTable(c: Claimed, control: ControlConnection, report: LoadReport, loaded: { applied: Applied; sizeBefore: number | null }, r: Rungs): Promise<void> {
  const { o, job } = c;
  const { plan } = job;
  loadedReport(report, loaded.applied, c.f.local, (Date.now() - r.t0) / 1000);
  if (loaded.applied.run.stoppedBy) return;
  if (analyzeWanted(o.analyze, c.f.prep.table.empty || plan.mode !== 'append')) report.analyze = await analyzeTable(control, plan.target);
  if (!o.sizeReport) return;
  try {
    const how = report.analyze?.note === null ? 'done' : o.analyze === 'off' ? 'skip' : 'run';
    const sizes = await measureTableSizes(control.connection, plan.target.db, plan.target.table, { analyze: how });
    report.sizes = {
      ...sizes,
      inputToOnDiskRatio: sizeRatio(report.inputBytes, sizes.onDiskBytes),
      growthBytes: loaded.sizeBefore !== null && sizes.onDiskBytes !== null ? sizes.onDiskBytes - loaded.sizeBefore : null,
    };
  } catch (err) {
    report.notes.push(`on-disk size not measured: ${(err as Error).message}`);
  }
}

/** Rung: the target's own report (a cluster's nodes), once the rows are in or the load stopped. */
async function targetReport(target: LoadTarget, report: LoadReport, stoppedBy: FlatloadError | undefined, r: Rungs): Promise<void> {
  // With every node gone, asking one again only waits out the control connection's reconnects.
  r.reachable = stoppedBy?.code !== 'CONNECTION_LOST';
  await target.report(report, r.reachable);
}

/** Rung: --verify as the target does it, then the exporter's figures; the error the job ends with, if any. */
async function verifyTable(c: Claimed, control: ControlConnection, target: LoadTarget, report: LoadReport): Promise<FlatloadError | undefined> {
  if (c.o.verify) {
    const e = await target.verify(report, c.job.plan);
    if (e) return e;
  }
  if (c.o.expect && !report.check) return checkTable(control, c.job.plan.target, c.f.prep.display, c.o.expect, report);
  return undefined;
}

/**
 * A table job's stops: the apply step records those it comes through; one thrown once its row is written (the input
 * copied, scanned or sorted; the rows loading) is recorded here, and resumable.
 */
const TABLE_STOPS: StopRules = { recordThrownIn: ['prepared', 'started', 'loaded'], loadRecordsItsStops: true, verifyGatesFinish: false, resumeThrownFrom: 'prepared' };

/** What the table's rungs hand on. */
interface Climbed {
  f?: Facts;
  store?: CheckpointStore;
  c?: Claimed;
  /** The job's row, once this run wrote it. */
  jobId?: string;
  report?: LoadReport;
  started?: Started;
  applied?: Applied;
}

/** The table job's hooks for the ladder (climb.ts). */
function tableLadder(req: JobRequest, opened: Opened, target: LoadTarget, own: ServerThrottle | undefined, r: Rungs): LadderJob<JobResult> {
  const k: Climbed = {};
  const result = (error: FlatloadError | undefined): JobResult => ({ report: k.report!, plan: k.c!.job.plan, facts: k.f!.facts, sql: k.c!.sql, error });
  return {
    kind: 'table',
    doing: 'loading',
    rules: TABLE_STOPS,
    hold: async () => {
      // Every replica is reached and confirmed to replicate before anything is read or changed.
      await own?.check();
      k.f = await readInput(req, opened, r);
      await target.prepare();
      k.store = await hold(req, k.f, opened, r);
    },
    find: async () => {
      k.c = await claim(req, k.f!, opened, k.store!, r);
      return k.c.job.finished ? 'done' : k.c.job.stored ? 'resume' : 'fresh';
    },
    endsAtFound: async (found) => {
      k.report = plannedReport(req, k.c!, opened.session, own);
      if (k.c!.o.dryRun) return result(undefined);
      return found === 'done' ? alreadyDone(k.c!, opened.control, k.report, r) : undefined;
    },
    prepare: async () => {
      k.jobId = await recordJob(k.f!, k.c!.job, k.store!, req.resumeCommand);
      r.local = await localForPlan(k.f!, k.c!.job.plan, k.c!.o, req.events);
    },
    start: async () => {
      k.started = await startRows(req, k.c!, opened, k.jobId!, r);
    },
    load: async () => {
      k.applied = await loadRows(req, k.c!, opened, k.report!, req.inExport ? req.inExport.throttle : own?.throttle, k.started!);
      req.events.emit({ type: 'done' });
      return k.applied.run.stoppedBy;
    },
    report: async (stoppedBy) => {
      await loadedTable(k.c!, opened.control, k.report!, { applied: k.applied!, sizeBefore: k.started!.sizeBefore }, r);
      if (own) k.report!.throttle = own.throttle.report();
      await targetReport(target, k.report!, stoppedBy, r);
    },
    verify: () => verifyTable(k.c!, opened.control, target, k.report!),
    // The apply step wrote the job's end with the load's last step (its RENAME, its final commit).
    finish: async () => undefined,
    // Nothing to mark before the row is written (its bookkeeping could not be created, say).
    mark: async (_state, e) => (k.jobId === undefined ? undefined : markStopped(k.store!, k.jobId, e)),
    withResume: (e) => withResumeCommand(e, req.resumeCommand),
    result,
    release: async (thrown) => {
      if (thrown?.code === 'CONNECTION_LOST') r.reachable = false;
      r.chunks?.dispose?.();
      r.local?.dispose();
      // A lease not released (the cluster unreachable) is taken over by the rerun: its owner's process is gone.
      if (r.reachable) await r.lease?.release();
      target.close();
      own?.close();
      await opened.control.end();
    },
  };
}

/**
 * One table's job, end to end, up the ladder. `opened` is the job's own
 * (its control connection is closed at the end); the target is where the
 * rows go.
 */
export function runTableJob(req: JobRequest, opened: Opened, target: LoadTarget): Promise<JobResult> {
  const r: Rungs = { t0: Date.now(), reachable: true };
  return climb(tableLadder(req, opened, target, ownThrottle(req, opened.session), r));
}
