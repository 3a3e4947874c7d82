/**
 * The stages of one table's load that the job ladder (src/job/) runs in
 * order: read the input's facts, record the job, start it once every record
 * boundary is known (the input sorted), and describe what loaded. Nothing
 * here knows the target's kind.
 */
import { restartHint } from './resume.js';
import { availableParallelism, tmpdir } from 'node:os';
import type { Expectation, LoadOptions } from '../config/loadOptions.js';
import { contentDifference, jobIdentity, jobIdOf, spooledStdinIdentity, type JobIdentity } from '../checkpoint/identity.js';
import type { Activity } from '../report/activity.js';
import { ownerText } from '../checkpoint/lock.js';
import type { CheckpointStore, StoredJob } from '../checkpoint/store.js';
import type { ControlConnection } from '../db/control.js';
import { FlatloadError } from '../errors/index.js';
import type { InputSource } from '../input/source.js';
import { removeStaleScratch, systemProbe } from '../input/owner.js';
import { freeBytes, materializeInput, streamedInput, streamName, tmpdirProblem, type LocalInput } from '../input/spool.js';
import { digestKindOf } from '../input/digest.js';
import { mapHeader } from '../introspect/header.js';
import { readHeader, sampleInput } from '../introspect/input.js';
import { scanTargets, type Prepared } from '../introspect/target.js';
import type { ChunkSqlContext } from '../plan/sql.js';
import type { LoadPlan, PlanFacts, PlanOptions } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import type { LoadReport } from '../report/summary.js';
import { bookkeepingEngine, openChunkInput, type Applied } from './apply.js';
import { checkExpectation } from './expect.js';
import { followingActivity } from './followActivity.js';
import type { TableRef } from '../plan/ops.js';
import { throttles } from '../config/throttle.js';
import { isSpillDirName, keptSpillBytes } from '../order/spillDir.js';

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
 * input's size only, so a resumed load cuts the same chunks. A stream of
 * unknown size takes 16 MiB: its chunks in flight and its runs (never larger
 * than a chunk) then hold a quarter of what 64 MiB chunks did.
 */
export function autoChunkSize(sizeBytes: number | undefined): number {
  if (sizeBytes === undefined) return 16 * MiB;
  const target = Math.ceil(sizeBytes / 16 / MiB) * MiB;
  return Math.min(64 * MiB, Math.max(1 * MiB, target));
}

export function planOptionsOf(o: LoadOptions, inputSizeBytes: number | undefined): PlanOptions {
  return {
    strategy: o.strategy,
    mode: o.mode,
    jobs: o.jobs,
    chunkSizeBytes: o.chunkSizeBytes ?? autoChunkSize(inputSizeBytes),
    chunkSizeGiven: o.chunkSizeBytes !== undefined,
    columns: o.columns,
    format: o.format,
    onDuplicate: o.onDuplicate,
    allowDdl: o.allowDdl,
    keepOld: o.keepOld,
    order: o.order,
    maxErrors: o.maxErrors,
    allowTruncation: o.allowTruncation,
    sortMemoryBytes: o.sortMemoryBytes,
    clientCpus: availableParallelism(),
    binlog: o.binlog,
    bulkInsert: o.bulkInsert,
    throttled: throttles(o.throttle),
  };
}

export function emptyReport(plan: LoadPlan, facts: PlanFacts, display: string): LoadReport {
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

export interface Facts {
  /** The options with the columns a header named (`--columns header`), else as given. */
  o: LoadOptions;
  prep: Prepared;
  local: LocalInput;
  facts: PlanFacts;
  planOptions: PlanOptions;
  identity: JobIdentity;
}

/** Stage: what the server, the table and the input are (read-only; a stream is spooled first). */
export async function readFacts(
  o: LoadOptions,
  /** The server's and the table's facts, read once by whoever resolved the target. */
  prepared: Prepared,
  source: InputSource,
  events: EventHub,
  spool: (l: LocalInput) => void,
  /** The job's identity from the load's own (a routed share's names its routing too). */
  identityOf: (own: JobIdentity) => JobIdentity,
): Promise<Facts> {
  let prep = prepared;
  const spillDir = o.tmpdir ?? tmpdir();
  // A compressed file or standard input is read once as it loads (its start kept for the sample); --spool copies it first.
  const streamed = !source.seekable && !o.spool;
  if (!source.seekable && !streamed) spoolNote(source, spillDir, events);
  // Spill directories wait until the job is known: its own, left by its killed run, holds runs its sort reuses.
  const stale = o.dryRun ? [] : removeStaleScratch(spillDir, systemProbe, (name) => isSpillDirName(name));
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
  const planOptions = planOptionsOf(o, sizeBytes);
  const own = jobIdentity(o, source, local, prep.db, planOptions.chunkSizeBytes, prep.characterSet, prep.server.lowerCaseTableNames);
  const identity = identityOf(own);
  const jobId = jobIdOf(identity);
  if (!o.dryRun) stale.push(...removeStaleScratch(spillDir, systemProbe, (name) => isSpillDirName(name, jobId)));
  if (stale.length > 0) events.emit({ type: 'note', message: `removed ${stale.length} spooled input(s) or spill director(ies) of flatload processes that are gone: ${stale.join(', ')}` });
  // The runs this job's killed run left are room its sort has: it reuses them, or writes over them.
  const free = freeBytes(spillDir);
  const spillFreeBytes = free === undefined ? undefined : free + keptSpillBytes(spillDir, jobId);
  const input = { ...sampled, sizeBytes, path: source.path, kind: source.kind, compression: local.compression, spillFreeBytes, spillDir, spillUnwritable: tmpdirProblem(spillDir), spooled: local.spooled };
  return { o, prep, local, facts: { server: prep.server, table: prep.table, input }, planOptions, identity };
}

/** `--columns header`: the file's own header line names the columns; from here on the load runs as with that --columns list. */
async function columnsFromHeader(o: LoadOptions, prep: Prepared, source: InputSource): Promise<{ o: LoadOptions; prep: Prepared }> {
  const header = await readHeader(source, prep.scan, prep.charset, o.stripBom && prep.charset.utf8);
  if (!header) throw new FlatloadError('INPUT_MALFORMED', '--columns header: the input has no header line to read the column names from', { file: o.file, line: 1, byteOffset: 0 });
  const columns = mapHeader(header.names, prep.table, o.skipFields, { file: o.file, display: prep.display, byteOffset: header.byteOffset });
  return { o: { ...o, columns }, prep: { ...prep, columns, targets: scanTargets(prep.table, columns) } };
}

export type ChunkInputOf = ReturnType<typeof openChunkInput>;

/**
 * Standard input that starts as a finished load's did: copied whole, to tell
 * the same bytes (already loaded) from a new export that starts alike.
 * Returns whether it is a new input (f then names it by its whole content).
 */
export async function spoolFinishedStdin(f: Facts, finishedHash: string | null, events: EventHub, spool: (l: LocalInput) => void): Promise<boolean> {
  const stream = f.local.stream;
  if (stream?.kind !== 'stdin') return false;
  const dir = f.o.tmpdir ?? tmpdir();
  spoolNote(stream, dir, events);
  f.local = await materializeInput(stream, dir, undefined, digestKindOf(finishedHash));
  spool(f.local);
  if (f.local.contentHash === finishedHash) return false;
  f.identity = { ...f.identity, input: spooledStdinIdentity(f.identity.input, f.local) };
  f.facts = { ...f.facts, input: { ...f.facts.input, spooled: true, sizeBytes: f.local.sizeBytes } };
  return true;
}

function spoolNote(source: InputSource, tmpdir: string, events: EventHub): void {
  events.emit({ type: 'note', message: `reading ${source.kind === 'stdin' ? 'standard input' : `${source.path} (${source.compression})`} into ${tmpdir} first: it is loaded from that copy, which can be scanned to its end before anything is loaded, read in parallel and resumed` });
}

/** The plan sorts the input into runs: a streamed input is then cut and sorted in its one decompressing pass. */
export function sortsIntoRuns(plan: LoadPlan, prep: Prepared): boolean {
  return plan.order.kind === 'key' && !(plan.order.inMemory ?? false) && prep.unchunkableReason === undefined;
}

/** A streamed input this plan cannot read as it streams (sorted in memory, or not to be cut): copied into --tmpdir first. */
function spoolsFirst(f: Facts, plan: LoadPlan): boolean {
  return f.local.stream !== undefined && !sortsIntoRuns(plan, f.prep) && !(plan.order.kind === 'file' && f.prep.unchunkableReason === undefined);
}

/**
 * A streamed (compressed) input is decompressed once, straight into the
 * sort's runs for a plan that sorts in runs, or into the chunks of a load
 * in file order; an input sorted in memory, or that cannot be cut, is
 * spooled into --tmpdir here, once the plan is known.
 */
export async function localForPlan(f: Facts, plan: LoadPlan, o: LoadOptions, events: EventHub): Promise<LocalInput> {
  const stream = f.local.stream;
  if (!stream) return f.local;
  if (!spoolsFirst(f, plan)) {
    const note = sortsIntoRuns(plan, f.prep)
      ? `${streamName(stream)} once as it is read, each piece sorted into a run in ${o.tmpdir ?? tmpdir()}: no decompressed copy of the whole input is made`
      : `${streamName(stream)} once as it is loaded, at most ${plan.concurrency + 1} chunks at a time in ${o.tmpdir ?? tmpdir()}: a broken record late in it stops the load after the chunks before it committed`;
    events.emit({ type: 'note', message: note });
    return f.local;
  }
  spoolNote(stream, o.tmpdir ?? tmpdir(), events);
  f.local = await materializeInput(stream, o.tmpdir ?? tmpdir());
  return f.local;
}

/**
 * Stage: the job recorded as running as soon as it is found — before its
 * input is copied, scanned or sorted, which can take minutes — so that
 * `flatload status` shows it from the start, and a stop from here on is
 * recorded on its row. A new job's row holds its identity and plan from the
 * start: a run killed while it sorts is resumed like any other. Returns the job's id.
 */
export async function recordJob(f: Facts, job: { plan: LoadPlan; stored: StoredJob | undefined }, store: CheckpointStore, resumeCommand: string): Promise<string> {
  const jobId = job.stored?.jobId ?? jobIdOf(f.identity);
  const activity: Activity = spoolsFirst(f, job.plan)
    ? { kind: 'spooling', bytes: null, totalBytes: null, runs: null }
    : { kind: 'scanning', bytes: 0, totalBytes: f.local.stream ? null : f.local.sizeBytes, runs: null };
  const owner = ownerText();
  if (job.stored) {
    await store.update(jobId, { state: 'running', message: null, owner, activity });
    return jobId;
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
    chunksTotal: null,
    rowsInInput: null,
    activity,
  });
  return jobId;
}

/** Stage: every record boundary found (and, to load in key order, the input sorted), the job's row completed. */
export async function startJob(
  f: Facts,
  /** The plan to run, and the stored run it continues, if any. */
  job: { plan: LoadPlan; stored: StoredJob | undefined },
  /** The job's row, as recordJob wrote it. */
  at: { store: CheckpointStore; jobId: string },
  o: LoadOptions,
  events: EventHub,
  opened: (input: ChunkInputOf) => void,
  /** `shared`: other loads share this thread (an export's tables), an in-memory sort goes to a worker; `signal`: Ctrl-C. */
  { shared, signal }: { shared: boolean; signal: AbortSignal | undefined },
): Promise<ChunkInputOf> {
  const { store, jobId } = at;
  // Every record boundary is found (and, to load in key order, the input sorted) before anything changes: a broken
  // record late in the input stops the load here.
  const chunkInput = openChunkInput(job.plan, f.prep, o, f.local, { jobId, digest: digestKindOf(job.stored?.inputHash) }, events, { aside: shared, signal });
  opened(chunkInput);
  const stored = job.stored;
  // A resume continues the bytes its first run read: a change that kept size and modification time shows here only.
  const verify = stored
    ? (hash: string | undefined): void => {
        const diff = contentDifference(stored.inputHash, hash, f.identity.input.kind === 'stdin');
        if (diff) throw contentChanged(stored, diff, o, f.prep.display);
      }
    : undefined;
  if (f.prep.unchunkableReason === undefined) await followingActivity(chunkInput.scan(verify), () => chunkInput.progress(), store, jobId);
  // A run killed while it sorted left none of these: its rerun writes them, and keeps a hash the interrupted run recorded (it was checked above).
  const summary = chunkInput.summary;
  await store.update(jobId, { chunksTotal: summary?.chunks, rowsInInput: summary?.records, inputHash: stored?.inputHash ?? chunkInput.contentHash, activity: null });
  return chunkInput;
}

/** The refusal to resume an unfinished job over an input whose bytes changed. */
function contentChanged(stored: StoredJob, diff: string, o: LoadOptions, table: string): FlatloadError {
  return new FlatloadError('RESUME_MISMATCH', `the input changed: an unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}) exists, and ${diff}`, {
    file: o.file,
    table,
    hint: `${o.file === '-' ? 'pipe the same bytes again' : 'put the original file back'} and rerun to finish it; or ${restartHint(o.mode)}`,
  });
}

/** Stage: the report of a run that loaded (or stopped). */
export function loadedReport(report: LoadReport, applied: Applied, local: LocalInput, seconds: number): void {
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
export function expectationNotes(e: Expectation, plan: LoadPlan, prep: Prepared): string[] {
  const what = [e.rows !== undefined ? `COUNT(*) = ${e.rows}` : '', e.checksum !== undefined ? `CHECKSUM TABLE = ${e.checksum}` : ''].filter(Boolean).join(' and ');
  const when = plan.mode === 'swap' ? 'on the shadow table before the RENAME publishes it' : 'once the load is done';
  const notes = [`after the load: ${what} (${e.source}), checked ${when}; a difference stops with exit code 9`];
  if (plan.mode === 'append' && !prep.table.empty) notes.push(`${prep.display} has rows already and mode append keeps them: the check counts the whole table, so they count too`);
  return notes;
}

/** The table against the exporter's figures; the report keeps the comparison. */
export async function checkTable(control: ControlConnection, table: TableRef, display: string, e: Expectation, report: LoadReport): Promise<FlatloadError | undefined> {
  const { result, error } = await checkExpectation(control, table, display, e);
  report.check = result;
  return error;
}
