/**
 * A Spider table loaded straight to its backends: the input split by the
 * partition rule into one file per backend table (in --tmpdir, removed at
 * the end), each loaded by its own table job over that backend's own
 * connections, all backends at once. A chunk's bookkeeping row commits in
 * the same transaction as its rows, so it lives where the rows do: on the
 * backend. The front keeps the routed job itself, whose identity holds the
 * shard map, so a rerun against a changed map is refused before any
 * backend is touched. It climbs the one ladder (climb.ts): held → found
 * (fresh | resume) → prepared (split) → started → loaded (the shares) →
 * reported → verified → finished, or stopped.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityDifferences, jobIdentity, jobIdOf, routedIdentity, type JobIdentity } from '../../checkpoint/identity.js';
import { ownerText } from '../../checkpoint/lock.js';
import { CheckpointStore } from '../../checkpoint/store.js';
import type { LoadOptions } from '../../config/loadOptions.js';
import { FlatloadError } from '../../errors/index.js';
import { isRemoteInput, maskInputUrl } from '../../input/remote.js';
import { materializeInput, type LocalInput } from '../../input/spool.js';
import { autoChunkSize } from '../../load/execute.js';
import { removeDir, splitByShard, type ShardSplit } from '../../load/shardSplit.js';
import { backendConnection, backendName, directReport, shareEvents, shareRejectPath, verified } from '../../load/spider.js';
import type { RoutePlan } from '../../plan/route.js';
import { defaultRejectPath } from '../../report/rejectFile.js';
import type { ShardMap } from '../../shard/map.js';
import { findStored, heldTable, holdJob, markStopped, refuseIfRunning, withResumeCommand } from '../ladder.js';
import { climb, type LadderJob, type StopRules } from '../climb.js';
import type { JobRequest, JobResult, LoadTarget, Opened } from '../types.js';

type Route = { plan: RoutePlan; map: ShardMap };
/** Runs one backend's share as a table job of its own (never routed again). */
export type RunShare = (req: JobRequest) => Promise<JobResult>;

/** Where a routed job's shares are split to (one directory per job, so a rerun finds what a killed run left). */
const routeDir = (tmp: string, jobId: string): string => join(tmp, `flatload-route-${jobId}`);

/**
 * Rung: the routed job on the front, before anything is loaded. An
 * unfinished run of this load with another identity (the shard map above
 * all) is refused, or discarded with --restart. Returns whether this run
 * continues one.
 */
async function findRoutedJob(store: CheckpointStore, identity: JobIdentity, o: LoadOptions, tmp: string, foldTableNames: boolean): Promise<boolean> {
  const jobId = jobIdOf(identity);
  if (!(await CheckpointStore.exists(store.conn, store.schema))) return false;
  await store.ensureTables('InnoDB');
  const stored = await findStored(store, identity, foldTableNames);
  if (!stored || stored.jobId === jobId) return stored !== undefined;
  await refuseIfRunning(store.conn, stored, stored.target, 'another shard map or other options');
  // Every run splits anew, so the shares a killed run of that job left behind are of no use to anyone.
  removeDir(routeDir(tmp, stored.jobId));
  if (!o.restart) {
    const diffs = identityDifferences(stored.identity, identity);
    throw new FlatloadError('RESUME_MISMATCH', `an unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}) exists, and this run differs from it:\n    ${diffs.join('\n    ')}`, {
      file: o.file,
      table: stored.target,
      hint: 'rerun the original command against the original shard map to finish it; or add --restart to discard it (its committed rows stay on the backends, so remove them first if this run loads the same rows)',
    });
  }
  await store.abandon(stored.jobId);
  return false;
}

/** Rung: the routed job recorded as running (once the input has split: an input error leaves nothing to resume). */
async function startRoutedJob(store: CheckpointStore, identity: JobIdentity, continues: boolean, plan: RoutePlan, resumeCommand: string): Promise<void> {
  const jobId = jobIdOf(identity);
  if (continues) return store.update(jobId, { state: 'running', message: null, owner: ownerText() });
  await store.ensureTables('InnoDB');
  await store.createJob({ jobId, target: identity.target, inputPath: identity.input.path, identity, plan: { route: plan }, rowsBefore: null, resumeCommand, owner: ownerText(), chunksTotal: null, rowsInInput: null });
}

/** Rung: the input split by the partition rule, one file per backend table. */
async function splitInput(req: JobRequest, opened: Opened, route: Route, local: LocalInput, dir: string): Promise<ShardSplit> {
  const { prep } = opened;
  const { plan, map } = route;
  const ts = Date.now();
  const split = await splitByShard({
    path: local.path,
    display: local.display,
    format: prep.scan,
    charset: prep.charset,
    targets: prep.targets,
    ignoreLines: req.o.format.ignoreLines,
    stripBom: req.o.stripBom && prep.charset.utf8,
    rule: map.rule,
    fields: plan.fields,
    partitionShare: plan.partitionBackend,
    shareNames: plan.backends.map(backendName),
    dir,
  });
  const shares = plan.backends.map((b, i) => `${backendName(b)} ${split.records[i]!.toLocaleString('en-US')}`).join(', ');
  req.events.emit({ type: 'note', message: `split ${local.display} by the partition rule in ${((Date.now() - ts) / 1000).toFixed(1)} s: ${shares} records` });
  return split;
}

/** Rung: every backend's share loaded at once, each as a table job of its own on that backend. */
async function loadShares(req: JobRequest, route: Route, split: ShardSplit, identity: JobIdentity, display: string, runShare: RunShare): Promise<Array<PromiseSettledResult<{ r: JobResult; seconds: number }>>> {
  const { o, events } = req;
  const repeat = identity.repeat ?? 0;
  events.emit({ type: 'start', totalBytes: split.bytes.reduce((a, b) => a + b, 0), jobs: route.plan.backends.length, table: display, strategy: 'direct to the backends', resumedChunks: 0, resumedBytes: 0, resumedRows: 0 });
  const results = await Promise.allSettled(
    route.plan.backends.map(async (b, i) => {
      const started = Date.now();
      const name = backendName(b);
      const share: LoadOptions = {
        ...o,
        file: split.paths[i]!,
        db: b.database,
        table: b.table,
        // The split files hold data records only, the header and a byte-order mark dropped.
        format: { ...o.format, ignoreLines: 0 },
        stripBom: false,
        rejectFile: shareRejectPath(o.rejectFile ?? defaultRejectPath(o.file, o.table), name),
        chartPath: undefined,
        route: undefined,
        verify: false,
      };
      const identityOf = (own: JobIdentity): JobIdentity => ({ ...routedIdentity(own, route.map, { input: identity.input, key: b.key }), ...(repeat > 0 ? { repeat } : {}) });
      const r = await runShare({ o: share, conn: backendConnection(req.conn, b, display, o), events: shareEvents(events, name, i), signal: req.signal, resumeCommand: req.resumeCommand, identityOf });
      events.emit({ type: 'note', message: `${name}: ${r.report.rows.toLocaleString('en-US')} rows in ${((Date.now() - started) / 1000).toFixed(1)} s` });
      return { r, seconds: (Date.now() - started) / 1000 };
    }),
  );
  events.emit({ type: 'done' });
  return results;
}

/** A routed job's stops: a share's stop is returned by the load and recorded here; nothing thrown is. */
const ROUTED_STOPS: StopRules = { recordThrownIn: [], loadRecordsItsStops: false, verifyGatesFinish: false, resumeThrownFrom: null };

/** What the routed job's rungs hand on. */
interface Routed {
  local?: LocalInput;
  store?: CheckpointStore;
  identity?: JobIdentity;
  jobId?: string;
  continues?: boolean;
  dir?: string;
  split?: ShardSplit;
  result?: Omit<JobResult, 'error'>;
}

/** The routed job's hooks for the ladder (climb.ts), on the front's control connection (closed at the end). */
function routedLadder(req: JobRequest, opened: Opened, route: Route, runShare: RunShare): LadderJob<JobResult> {
  const t0 = Date.now();
  const { o } = req;
  const { session, control, prep } = opened;
  const tmp = o.tmpdir ?? tmpdir();
  const k: Routed = {};
  return {
    kind: 'spider-direct',
    doing: 'loading',
    rules: ROUTED_STOPS,
    hold: async () => {
      k.local = await materializeInput(opened.source, tmp);
      k.store = new CheckpointStore(control, o.bookkeepingSchema ?? prep.db);
      const own = jobIdentity(o, opened.source, k.local, prep.db, o.chunkSizeBytes ?? autoChunkSize(k.local.sizeBytes), prep.characterSet, prep.server.lowerCaseTableNames);
      const repeat = req.inExport?.repeat ?? 0;
      k.identity = { ...routedIdentity(own, route.map), ...(repeat > 0 ? { repeat } : {}) };
      k.jobId = jobIdOf(k.identity);
      await holdJob(control, session, k.store, k.jobId, o, req.events, false, heldTable(o, prep));
    },
    find: async () => {
      k.continues = await findRoutedJob(k.store!, k.identity!, o, tmp, prep.server.lowerCaseTableNames !== 0);
      return k.continues ? 'resume' : 'fresh';
    },
    // Each share finds for itself whether it is already loaded.
    endsAtFound: async () => undefined,
    prepare: async () => {
      k.dir = routeDir(tmp, k.jobId!);
      k.split = await splitInput(req, opened, route, k.local!, k.dir);
    },
    start: () => startRoutedJob(k.store!, k.identity!, k.continues!, route.plan, req.resumeCommand),
    load: async () => {
      const results = await loadShares(req, route, k.split!, k.identity!, prep.display, runShare);
      const { result, firstError } = directReport(route.plan, results, k.local!, k.split!, prep.display, (Date.now() - t0) / 1000);
      k.result = result;
      return firstError;
    },
    // The shares' sums were added up with the load.
    report: async () => undefined,
    verify: async () => (o.verify ? verified(k.result!.report, req.conn, o, route.map, route.plan, control) : undefined),
    finish: () => k.store!.finish(k.jobId!, o.keepHistory, null),
    mark: (_state, e) => markStopped(k.store!, k.jobId!, e),
    withResume: (e) => withResumeCommand(e, req.resumeCommand),
    result: (error) => ({ ...k.result!, error, route }),
    release: async () => {
      if (k.dir) removeDir(k.dir);
      k.local?.dispose();
      await control.end();
    },
  };
}

/** The first backend's share planned on its backend: what each share's plan looks like (a dry run). */
async function planFirstShare(req: JobRequest, opened: Opened, route: Route, runShare: RunShare): Promise<JobResult> {
  await opened.control.end();
  const b = route.plan.backends[0]!;
  const result = await runShare({ ...req, o: { ...req.o, db: b.database, table: b.table }, conn: backendConnection(req.conn, b, `${route.map.db}.${route.map.table}`, req.o), inExport: undefined });
  return { ...result, route };
}

export function spiderDirectTarget(req: JobRequest, opened: Opened, route: Route, runShare: RunShare): LoadTarget {
  return {
    kind: 'spider-direct',
    prepare: async () => undefined,
    load: async () => {
      if (req.o.dryRun) return planFirstShare(req, opened, route, runShare);
      for (const r of route.plan.reasons) req.events.emit({ type: 'note', message: r });
      if (isRemoteInput(req.o.file)) {
        await opened.control.end();
        // Splitting by the partition rule reads a local file; a remote one would have to be fetched whole first.
        throw new FlatloadError('UNSUPPORTED', `${maskInputUrl(req.o.file)}: a Spider table's direct route splits a local file; a remote input loads through the front`, { hint: 'add --route front, or download the file first' });
      }
      return climb(routedLadder(req, opened, route, runShare));
    },
    // The routed ladder reports and verifies across its backends itself.
    report: async () => undefined,
    verify: async () => undefined,
    close: () => undefined,
  };
}
