import { availableParallelism, tmpdir } from 'node:os';
import type { ConnectionOptions } from '../config/connection.js';
import type { Expectation, LoadOptions } from '../config/loadOptions.js';
import { openConnection, openSession, type Session } from '../db/connect.js';
import { contentDifference, jobIdentity, jobIdOf, routedIdentity, spooledStdinIdentity, type JobIdentity } from '../checkpoint/identity.js';
import { bookkeepingEngine, checkPlanPrivileges, findOrPlanJob, holdJob, type Job } from '../checkpoint/job.js';
import { ownerText } from '../checkpoint/lock.js';
import type { JobLease } from '../checkpoint/lease.js';
import { CheckpointStore, type StoredJob } from '../checkpoint/store.js';
import { ControlConnection } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import { openAnyInput } from '../input/open.js';
import type { InputSource } from '../input/source.js';
import { removeStaleScratch } from '../input/owner.js';
import { freeBytes, materializeInput, streamedInput, streamName, tmpdirProblem, type LocalInput } from '../input/spool.js';
import { mapHeader } from '../introspect/header.js';
import { readHeader, sampleInput } from '../introspect/input.js';
import { measureTableSizes, sizeRatio } from '../introspect/sizes.js';
import { prepareLoad, scanTargets, type Prepared } from '../introspect/target.js';
import type { ChunkSqlContext } from '../plan/sql.js';
import type { LoadPlan, PlanFacts, PlanOptions } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import { checkRejectPath, defaultRejectPath } from '../report/rejectFile.js';
import type { LoadReport } from '../report/summary.js';
import type { ShardMap } from '../shard/map.js';
import type { StreamGate } from './runner.js';
import type { SharedConnections } from './sharedConnections.js';
import { applyPlan, openChunkInput, type Applied, type LoadRun } from './apply.js';
import { clusterReport, digestsAgree, nodeDigests, readCausally } from './cluster.js';
import { checkExpectation } from './expect.js';
import { analyzeTable, analyzeWanted } from './analyze.js';
import { sqlOf, type TableRef } from '../plan/ops.js';
import { throttles } from '../config/throttle.js';
import { ServerThrottle, type Throttle } from './throttle.js';

export interface ExecuteResult {
  report: LoadReport;
  plan: LoadPlan;
  facts: PlanFacts;
  /** How the chunk statement is written for this file (to show the plan's SQL exactly as it runs). */
  sql: ChunkSqlContext;
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
    order: o.order,
    maxErrors: o.maxErrors,
    sortMemoryBytes: o.sortMemoryBytes,
    clientCpus: availableParallelism(),
    binlog: o.binlog,
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
    cluster: null,
    notes: [],
    error: null,
  };
}


/** The spooled (or original) plain file, described as an input source for sampling. */
function localSource(local: LocalInput): InputSource {
  return { path: local.path, kind: 'file', compression: 'none', sizeBytes: local.sizeBytes, mtimeMs: undefined, seekable: true, remote: local.remote };
}

interface Facts {
  /** The options with the columns a header named (`--columns header`), else as given. */
  o: LoadOptions;
  prep: Prepared;
  local: LocalInput;
  facts: PlanFacts;
  planOptions: PlanOptions;
  identity: JobIdentity;
}

/**
 * One backend's share of a load routed by a Spider table's partition rule:
 * its file is split from the user's input, so the job is identified by that
 * input, the shard map and the backend (see routedIdentity).
 */
export interface ShareOf {
  input: JobIdentity['input'];
  map: ShardMap;
  key: string;
  /** The routed load's repeat (see JobIdentity.repeat): its shares are parts of their own too. */
  repeat?: number;
}

/**
 * A table of an export. Being one changes three things: the connections
 * come from the export's session (TLS settled once for every table, one
 * node list whose failovers every table follows), the export has already
 * fitted the streams to the account's connection limit (this table's plan
 * does not again), and other tables share this thread (an in-memory sort
 * goes to the sort worker).
 */
export interface InExport {
  session: Session;
  /** The loading streams the tables share chunk by chunk; absent when nothing loads (`flatload plan DIR`). */
  streams?: { gate: StreamGate; connections: SharedConnections } | undefined;
  /** The export's one throttle, spanning every table (the export reports it). */
  throttle?: Throttle | undefined;
  /** How many times the export listed this file for this table before (a part of its own each time). */
  repeat?: number | undefined;
}

/** What a load is part of: a backend's share of a routed load, or an export. */
export interface LoadWithin {
  share?: ShareOf | undefined;
  export?: InExport | undefined;
}

/** Stage: what the server, the table and the input are (read-only; a stream is spooled first). */
async function readFacts(
  o: LoadOptions,
  session: Session,
  control: ControlConnection,
  source: InputSource,
  events: EventHub,
  spool: (l: LocalInput) => void,
  share: ShareOf | undefined,
  repeat = 0,
): Promise<Facts> {
  let prep = await prepareLoad(o, session, control.connection, source);
  const spillDir = o.tmpdir ?? tmpdir();
  // A compressed file or standard input is read once as it loads (its start kept for the sample); --spool copies it first.
  const streamed = !source.seekable && !o.spool;
  if (!source.seekable && !streamed) spoolNote(source, spillDir, events);
  if (!o.dryRun) {
    const stale = removeStaleScratch(spillDir);
    if (stale.length > 0) events.emit({ type: 'note', message: `removed ${stale.length} spooled input(s) or spill director(ies) of flatload processes that are gone: ${stale.join(', ')}` });
  }
  const local = streamed ? await streamedInput(source) : await materializeInput(source, spillDir);
  spool(local);
  // One source object for the header and the sample: its first MiB is read once (introspect/input.ts).
  const head = streamed ? source : localSource(local);
  if (o.columnsFromHeader) ({ o, prep } = await columnsFromHeader(o, prep, head));
  const sampled = await sampleInput(head, {
    format: prep.scan,
    charset: prep.charset,
    targets: prep.targets,
    ignoreLines: o.format.ignoreLines,
    columns: prep.columns,
    table: prep.table,
    stripBom: o.stripBom && prep.charset.utf8,
  });
  // A streamed input's decompressed size is known only at the end of its one pass: the plan is made without it.
  const sizeBytes = streamed ? undefined : local.sizeBytes;
  const input = { ...sampled, sizeBytes, path: source.path, kind: source.kind, compression: local.compression, spillFreeBytes: freeBytes(spillDir), spillDir, spillUnwritable: tmpdirProblem(spillDir), spooled: local.spooled };
  const planOptions = planOptionsOf(o, sizeBytes);
  const own = jobIdentity(o, source, local, prep.db, planOptions.chunkSizeBytes, prep.characterSet, prep.server.lowerCaseTableNames);
  const identity = { ...(share ? routedIdentity(own, share.map, share) : own), ...(repeat > 0 ? { repeat } : {}) };
  return { o, prep, local, facts: { server: prep.server, table: prep.table, input }, planOptions, identity };
}

/** `--columns header`: the file's own header line names the columns; from here on the load runs as with that --columns list. */
async function columnsFromHeader(o: LoadOptions, prep: Prepared, source: InputSource): Promise<{ o: LoadOptions; prep: Prepared }> {
  const header = await readHeader(source, prep.scan, prep.charset, o.stripBom && prep.charset.utf8);
  if (!header) throw new FlatloadError('INPUT_MALFORMED', '--columns header: the input has no header line to read the column names from', { file: o.file, line: 1, byteOffset: 0 });
  const columns = mapHeader(header.names, prep.table, o.skipFields, { file: o.file, display: prep.display, byteOffset: header.byteOffset });
  return { o: { ...o, columns }, prep: { ...prep, columns, targets: scanTargets(prep.table, columns) } };
}

type ChunkInputOf = ReturnType<typeof openChunkInput>;

function spoolNote(source: InputSource, tmpdir: string, events: EventHub): void {
  events.emit({ type: 'note', message: `reading ${source.kind === 'stdin' ? 'standard input' : `${source.path} (${source.compression})`} into ${tmpdir} first: it is loaded from that copy, which can be scanned to its end before anything is loaded, read in parallel and resumed` });
}

/** The plan sorts the input into runs: a streamed input is then cut and sorted in its one decompressing pass. */
export function sortsIntoRuns(plan: LoadPlan, prep: Prepared): boolean {
  return plan.order.kind === 'key' && !(plan.order.inMemory ?? false) && prep.unchunkableReason === undefined;
}

/**
 * A streamed (compressed) input is decompressed once, straight into the
 * sort's runs for a plan that sorts in runs, or into the chunks of a load
 * in file order; an input sorted in memory, or that cannot be cut, is
 * spooled into --tmpdir here, once the plan is known.
 */
async function localForPlan(f: Facts, plan: LoadPlan, o: LoadOptions, events: EventHub): Promise<LocalInput> {
  const stream = f.local.stream;
  if (!stream) return f.local;
  if (sortsIntoRuns(plan, f.prep)) {
    events.emit({ type: 'note', message: `${streamName(stream)} once as it is read, each piece sorted into a run in ${o.tmpdir ?? tmpdir()}: no decompressed copy of the whole input is made` });
    return f.local;
  }
  if (plan.order.kind === 'file' && f.prep.unchunkableReason === undefined) {
    events.emit({ type: 'note', message: `${streamName(stream)} once as it is loaded, at most ${plan.concurrency + 1} chunks at a time in ${o.tmpdir ?? tmpdir()}: a broken record late in it stops the load after the chunks before it committed` });
    return f.local;
  }
  spoolNote(stream, o.tmpdir ?? tmpdir(), events);
  f.local = await materializeInput(stream, o.tmpdir ?? tmpdir());
  return f.local;
}

/** Stage: the job started or continued in the bookkeeping, once every record boundary is known. */
async function startJob(
  f: Facts,
  job: Job,
  store: CheckpointStore,
  o: LoadOptions,
  resumeCommand: string,
  events: EventHub,
  opened: (input: ChunkInputOf) => void,
  /** Other loads share this thread (an export's tables): an in-memory sort goes to a worker. */
  shared: boolean,
): Promise<{ jobId: string; chunkInput: ChunkInputOf }> {
  const jobId = job.stored?.jobId ?? jobIdOf(f.identity);
  // Every record boundary is found (and, to load in key order, the input sorted) before anything changes: a broken
  // record late in the input stops the load here.
  const chunkInput = openChunkInput(job.plan, f.prep, o, f.local, jobId, events, shared);
  opened(chunkInput);
  const stored = job.stored;
  // A resume continues the bytes its first run read: a change that kept size and modification time shows here only.
  const verify = stored
    ? (sha: string | undefined): void => {
        const diff = contentDifference(stored.inputSha256, sha, f.identity.input.kind === 'stdin');
        if (diff) throw contentChanged(stored, diff, o, f.prep.display);
      }
    : undefined;
  if (f.prep.unchunkableReason === undefined) await chunkInput.scan(verify);
  const owner = ownerText();
  if (job.stored) {
    await store.update(jobId, { state: 'running', message: null, owner });
    return { jobId, chunkInput };
  }
  await store.ensureTables(bookkeepingEngine(job.plan, f.prep));
  await store.createJob({
    jobId,
    target: f.identity.target,
    inputPath: f.identity.input.path,
    identity: f.identity,
    plan: job.plan,
    rowsBefore: null,
    resumeCommand,
    owner,
    chunksTotal: chunkInput.summary?.chunks ?? null,
    rowsInInput: chunkInput.summary?.records ?? null,
    inputSha256: chunkInput.contentSha256 ?? null,
  });
  return { jobId, chunkInput };
}

/** The refusal to resume an unfinished job over an input whose bytes changed. */
function contentChanged(stored: StoredJob, diff: string, o: LoadOptions, table: string): FlatloadError {
  return new FlatloadError('RESUME_MISMATCH', `the input changed: an unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}) exists, and ${diff}`, {
    file: o.file,
    table,
    hint:
      o.mode === 'append'
        ? `${o.file === '-' ? 'pipe the same bytes again' : 'put the original file back'} and rerun to finish it; or add --restart to discard it — its committed rows (of the old contents) stay in the table, so remove them first`
        : `${o.file === '-' ? 'pipe the same bytes again' : 'put the original file back'} and rerun to finish it, or add --restart to discard it`,
  });
}

/** Stage: the report of a run that loaded (or stopped). */
function loadedReport(report: LoadReport, applied: Applied, local: LocalInput, seconds: number): void {
  const { run } = applied;
  const slowest = run.perChunk.reduce<(typeof run.perChunk)[number] | undefined>((a, b) => (!a || b.elapsedMs > a.elapsedMs ? b : a), undefined);
  const rejected = run.totals.rejected + applied.resumed.rejected;
  Object.assign(report, {
    status: run.stoppedBy ? 'stopped' : rejected > 0 ? 'rejected-within-budget' : 'ok',
    rows: run.totals.rowsLoaded + applied.resumed.rows,
    rowsInInput: applied.totalRecords ?? (run.stoppedBy ? null : run.totals.records),
    rejected,
    skippedDuplicates: run.totals.records - run.totals.rowsLoaded - run.totals.rejected,
    warnings: run.totals.warnings,
    inputBytes: applied.input.summary?.totalBytes ?? local.sizeBytes,
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
  if (applied.input.summary?.bomBytes) report.notes.push('skipped a UTF-8 byte-order mark at the start of the file');
}

/** What `flatload plan` says the check after the load will do. */
function expectationNotes(e: Expectation, plan: LoadPlan, prep: Prepared): string[] {
  const what = [e.rows !== undefined ? `COUNT(*) = ${e.rows}` : '', e.checksum !== undefined ? `CHECKSUM TABLE = ${e.checksum}` : ''].filter(Boolean).join(' and ');
  const when = plan.mode === 'swap' ? 'on the shadow table before the RENAME publishes it' : 'once the load is done';
  const notes = [`after the load: ${what} (${e.source}), checked ${when}; a difference stops with exit code 9`];
  if (plan.mode === 'append' && !prep.table.empty) notes.push(`${prep.display} has rows already and mode append keeps them: the check counts the whole table, so they count too`);
  return notes;
}

/** The table against the exporter's figures; the report keeps the comparison. */
async function checkTable(control: ControlConnection, table: TableRef, display: string, e: Expectation, report: LoadReport): Promise<FlatloadError | undefined> {
  const { result, error } = await checkExpectation(control, table, display, e);
  report.check = result;
  return error;
}

/** The error with the command that resumes the load, when a rerun can finish it: it stopped for a reason outside the input. */
export function withResumeCommand(e: FlatloadError, resumeCommand: string): FlatloadError {
  const resumable = ['INTERRUPTED', 'CONNECTION_LOST', 'SERVER_ERROR', 'ROWS_REJECTED', 'OUTPUT_UNWRITABLE', 'THROTTLED'].includes(e.code);
  return resumeCommand && resumable && e.context.resumeCommand === undefined ? e.withContext({ resumeCommand }) : e;
}

/**
 * One load, end to end, in stages: read the facts (read-only), find or plan
 * the job (the resume guard), and unless it is a dry run or already done,
 * start it, apply the plan and report.
 */
export async function executeLoad(
  o: LoadOptions,
  conn: ConnectionOptions,
  events: EventHub,
  signal?: AbortSignal,
  /** The command line that resumes this load (credentials removed). */
  resumeCommand = '',
  within: LoadWithin = {},
): Promise<ExecuteResult> {
  const { share, export: inExport } = within;
  const t0 = Date.now();
  const source = await openAnyInput(o.file, o.s3);
  const { session, conn: first } = inExport ? { session: inExport.session, conn: await openConnection(inExport.session) } : await openSession(conn, { localInfile: false });
  const control = new ControlConnection(first, session);
  let stopFollowingFailovers: (() => void) | undefined;
  let local: LocalInput | undefined;
  let chunks: ChunkInputOf | undefined;
  let lease: JobLease | undefined;
  let reachable = true;
  let jobStarted = false;
  // A load of its own throttles itself; an export's tables share the export's throttle.
  const own = !inExport && throttles(o.throttle) ? new ServerThrottle(o.throttle, conn, session, events) : undefined;
  const throttle = inExport ? inExport.throttle : own?.throttle;
  try {
    // Every replica is reached and confirmed to replicate before anything is read or changed.
    await own?.check();
    const f = await readFacts(o, session, control, source, events, (l) => (local = l), share, share?.repeat ?? inExport?.repeat);
    o = f.o;
    const { prep, facts } = f;
    const account = prep.server.accountConnections;
    if (account && account.open >= account.limit && !inExport && !o.dryRun) {
      throw new FlatloadError('CONNECTION_REFUSED', `max_user_connections is ${account.limit} for this account and it has ${account.open} open, this load's included: none is left to load over`, {
        hint: 'close a connection of this account, or raise its MAX_USER_CONNECTIONS',
      });
    }
    if (prep.server.galera) {
      await readCausally(control);
      stopFollowingFailovers = session.router.onFailover((lost, next) => events.emit({ type: 'warning', message: `Galera node ${lost} refused a connection or is not ready: new connections go to ${next}` }));
    }
    const schema = o.bookkeepingSchema ?? prep.db;
    const store = new CheckpointStore(control, schema);
    if (!o.dryRun) lease = await holdJob(control, session, store, jobIdOf(f.identity), o, events, prep.server.galera !== undefined);
    const planOptions = inExport ? { ...f.planOptions, connectionsBudgeted: true } : f.planOptions;
    let job = await findOrPlanJob(o, prep, facts, planOptions, f.identity, store, control);
    // Standard input that starts as a finished load's did: copied whole to tell the same bytes (loaded) from a new export.
    if (job.finished && f.local.stream?.kind === 'stdin' && !o.dryRun) {
      spoolNote(f.local.stream, o.tmpdir ?? tmpdir(), events);
      local = f.local = await materializeInput(f.local.stream, o.tmpdir ?? tmpdir());
      if (f.local.contentSha256 !== job.finished.inputSha256) {
        f.identity = { ...f.identity, input: spooledStdinIdentity(f.identity.input, f.local) };
        job = await findOrPlanJob(o, prep, { ...facts, input: { ...facts.input, spooled: true, sizeBytes: f.local.sizeBytes } }, planOptions, f.identity, store, control);
      }
    }
    const { plan, stored, notes } = job;
    const sql: ChunkSqlContext = { format: o.format, characterSet: prep.characterSet };
    checkPlanPrivileges(plan, prep, o, schema);
    // The load's own statements on this connection (TRUNCATE, the shadow, the RENAME) follow the rows in or out of the binary log.
    const logBin = plan.session.find((st) => st.op.kind === 'set-session' && st.op.name === 'sql_log_bin');
    if (logBin) await control.query(sqlOf(logBin.op)).catch((err: unknown) => Promise.reject(toFlatloadError(err, 'setting sql_log_bin for --binlog')));
    const rejectPath = o.rejectFile ?? defaultRejectPath(o.file, o.table);
    // Rejected rows are kept only in the reject file: a load that may reject rows needs it writable before it starts.
    if (!o.dryRun && o.maxErrors > 0) checkRejectPath(rejectPath);

    const report = emptyReport(plan, facts, prep.display);
    report.encrypted = session.encrypted;
    report.tls = session.tls ? { version: session.tls.version, cipher: session.tls.cipher, verified: session.tls.verified } : null;
    report.notes.push(...notes);
    if (own) report.throttle = own.throttle.report();
    // The finished-load note is the summary's headline; printing it as it happens too would say it twice.
    if (!job.finished) for (const n of notes) events.emit({ type: 'note', message: n });
    if (!prep.server.localInfile && plan.strategy === 'insert' && !plan.forced) {
      plan.warnings.unshift('the server has local_infile=OFF, so rows go as batched INSERTs (several times slower); SET GLOBAL local_infile=1 enables the fast path');
    }
    for (const w of plan.warnings) events.emit({ type: 'warning', message: w });
    report.notes.push(...plan.warnings);
    if (o.dryRun && o.columnsFromHeader) report.notes.push(`columns: by the names in the header line of ${o.file} (--columns header), matched case-insensitively`);
    const expect = share ? undefined : o.expect;
    if (expect && o.dryRun) report.notes.push(...expectationNotes(expect, plan, prep));
    const analyze = analyzeWanted(o.analyze, prep.table.empty || plan.mode !== 'append');
    if (analyze && o.dryRun) report.notes.push(`after the load: ANALYZE TABLE ${prep.display} (${o.analyze === 'on' ? '--analyze on' : '--analyze auto: the load starts from an empty table, whose statistics describe no rows'})`);
    if (o.dryRun) return { report, plan, facts, sql, error: undefined };
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
      // Already loaded is not already checked: a rerun of a job that failed its check fails it again.
      const error = expect ? await checkTable(control, plan.target, prep.display, expect, report) : undefined;
      return { report, plan, facts, sql, error };
    }

    local = await localForPlan(f, plan, o, events);
    const { jobId, chunkInput } = await startJob(f, job, store, o, resumeCommand, events, (i) => (chunks = i), inExport !== undefined);
    jobStarted = true;
    // For an append to a table with rows, the size before, so the report can show the growth.
    let sizeBefore: number | null = null;
    if (o.sizeReport && !prep.table.empty && plan.mode === 'append') {
      sizeBefore = (await measureTableSizes(control.connection, prep.db, o.table).catch(() => undefined))?.onDiskBytes ?? null;
    }
    const run: LoadRun = {
      plan,
      prep,
      o,
      input: chunkInput,
      session,
      control,
      events,
      signal,
      rejectPath,
      gate: inExport?.streams?.gate,
      shared: inExport?.streams?.connections,
      checkBeforeSwap: expect
        ? async (shadow) => {
            const e = await checkTable(control, shadow, prep.display, expect, report);
            if (e) throw e;
          }
        : undefined,
      throttle,
      cp: {
        store,
        schema,
        jobId,
        done: job.done,
        phase: job.phase,
        resumed: stored !== undefined,
        keepHistory: o.keepHistory,
        rowsBefore: stored ? stored.rowsBefore : null,
        tableFingerprint: stored ? stored.tableFingerprint : null,
      },
    };
    let applied: Applied;
    try {
      applied = await applyPlan(run);
    } catch (err) {
      // Whatever stopped it, the bookkeeping must not go on saying the job is running.
      const fe = toFlatloadError(err, 'loading');
      await store.update(jobId, { state: fe.code === 'INTERRUPTED' ? 'interrupted' : 'failed', message: fe.message }).catch(() => undefined);
      throw fe;
    }
    events.emit({ type: 'done' });
    loadedReport(report, applied, f.local, (Date.now() - t0) / 1000);
    if (own) report.throttle = own.throttle.report();
    const stoppedBy = applied.run.stoppedBy;
    if (analyze && !stoppedBy) report.analyze = await analyzeTable(control, plan.target);
    if (o.sizeReport && !stoppedBy) {
      try {
        const how = report.analyze?.note === null ? 'done' : o.analyze === 'off' ? 'skip' : 'run';
        const sizes = await measureTableSizes(control.connection, plan.target.db, plan.target.table, { analyze: how });
        report.sizes = {
          ...sizes,
          inputToOnDiskRatio: sizeRatio(report.inputBytes, sizes.onDiskBytes),
          growthBytes: sizeBefore !== null && sizes.onDiskBytes !== null ? sizes.onDiskBytes - sizeBefore : null,
        };
      } catch (err) {
        report.notes.push(`on-disk size not measured: ${(err as Error).message}`);
      }
    }
    let verifyError: FlatloadError | undefined;
    // With every node gone, asking one again only waits out the control connection's reconnects.
    reachable = stoppedBy?.code !== 'CONNECTION_LOST';
    if (prep.server.galera) {
      report.cluster = await clusterReport(session, reachable ? control : undefined, prep.server.galera);
      if (o.verify && !stoppedBy) {
        const digests = await nodeDigests(session, plan.target);
        report.cluster.verify = digests;
        if (!digestsAgree(digests)) {
          verifyError = new FlatloadError('SERVER_ERROR', `--verify: the nodes do not hold the same rows: ${digests.map((d) => `${d.node} ${d.error ?? `${d.count} rows, checksum ${d.checksum}`}`).join('; ')}`, {
            table: prep.display,
            hint: 'a node that differs is out of sync with the cluster: check its wsrep_local_state_comment and error log',
          });
        }
      }
    } else if (o.verify && prep.table.engine !== 'SPIDER') {
      // A Spider table's counts are compared by the routing layer, around this load.
      report.notes.push('--verify compares the nodes of a Galera cluster or a Spider table\'s backends; this is neither');
    }
    if (verifyError) return { report, plan, facts, sql, error: verifyError };
    if (expect && !stoppedBy && !report.check) {
      const e = await checkTable(control, plan.target, prep.display, expect, report);
      if (e) return { report, plan, facts, sql, error: e };
    }
    // A resume only helps when the load stopped for a reason outside the input (and the input can be read again).
    const error = stoppedBy && withResumeCommand(stoppedBy, resumeCommand);
    return { report, plan, facts, sql, error };
  } catch (err) {
    // Anything the server said that no step mapped is still a server error, not a crash.
    const fe = toFlatloadError(err, 'loading');
    if (fe.code === 'CONNECTION_LOST') reachable = false;
    // Once the job is recorded, a load stopped by the server (a cluster with every node gone) resumes like any other.
    throw jobStarted ? withResumeCommand(fe, resumeCommand) : fe;
  } finally {
    chunks?.dispose?.();
    local?.dispose();
    // A lease not released (the cluster unreachable) is taken over by the rerun: its owner's process is gone.
    if (reachable) await lease?.release();
    stopFollowingFailovers?.();
    own?.close();
    await control.end();
  }
}
