/**
 * The parts of the ladder's rungs (climb.ts) that decide which job this run is (docs/jobs.md):
 * hold the job's lock, then find the unfinished run it continues (with its
 * stored plan), a finished one it must not repeat (while its rows are still
 * there), or none — then it plans anew; at the end the job is finished or
 * marked failed or interrupted. Changes or refusals are explained in words.
 */
import { selectNumber, selectRows } from '../db/rows.js';
import type { LoadOptions } from '../config/loadOptions.js';
import type { ControlConnection, Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';
import type { Prepared } from '../introspect/target.js';
import { bookkeepingEngine } from '../load/apply.js';
import { readTableFingerprint, sameTable } from '../introspect/table.js';
import { privilegesForPlan } from '../plan/needs.js';
import { planLoad } from '../plan/planner.js';
import { streamsThatFit } from '../plan/rules/connections.js';
import { checkPrivileges, missingPrivilegeError } from '../plan/privilegeCheck.js';
import { RUNNABLE_PLAN_VERSIONS, type LoadPlan, type PlanFacts, type PlanOptions } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import { identityDifferences, jobIdOf, type JobIdentity } from '../checkpoint/identity.js';
import { EXPORTS_TABLE } from '../checkpoint/exports.js';
import { acquireJobLease, type JobLease } from '../checkpoint/lease.js';
import { acquireJobLock, acquireLock, JOB_LOCK_PREFIX, jobLockHolder, jobLockName, lockHolder, ownerText, tableLeaseKey, tableLockName } from '../checkpoint/lock.js';
import type { Session } from '../db/connect.js';
import { restartHint, type CheckpointContext } from '../load/resume.js';
import { bookkeepingChunkTables, CheckpointStore, JOBS_TABLE, type StoredJob } from '../checkpoint/store.js';

export interface Job {
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
    return await selectNumber(control, `SELECT COUNT(*) AS n FROM ${quoteQualified(db, table)}`);
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
async function stillLoaded(control: Queryable, earlier: StoredJob, o: LoadOptions, prep: Prepared): Promise<StillLoaded> {
  // On a Galera cluster only a missing table counts as re-created here: the row count below does the rest.
  return stillLoadedIn(control, earlier, { db: prep.db, table: o.table, mode: o.mode, cluster: prep.server.galera !== undefined });
}

export type StillLoaded = { ok: true } | { ok: false; why: string; reload: boolean };

/** stillLoaded for a table named outright (an export's member, checked before its load starts). */
export async function stillLoadedIn(control: Queryable, earlier: StoredJob, t: { db: string; table: string; mode: string; cluster: boolean }): Promise<StillLoaded> {
  const { db, table, cluster } = t;
  const now = await readTableFingerprint(control, db, table, cluster);
  const recreated = !sameTable(earlier.tableFingerprint, now, cluster);
  const loaded = earlier.rowsLoaded ?? 0;
  const rows = loaded > 0 ? await countRows(control, db, table) : undefined;
  const fewer = rows !== undefined && rows < loaded;
  if (!recreated && !fewer) return { ok: true };
  const why = recreated
    ? `the table was emptied or re-created since (then: ${earlier.tableFingerprint}; now: ${now ?? 'missing'})`
    : `the table holds ${rows} rows, fewer than the ${loaded} this load added`;
  // Replace and swap empty the table first, so loading again is what the command asks for; in append mode only a table
  // with none of the load's rows left can take them again without doubling some.
  return { ok: false, why, reload: t.mode !== 'append' || recreated || rows === 0 };
}

/** An unfinished run of this load into this table, if the bookkeeping holds one (this listing's, in an export). */
export async function findStored(store: CheckpointStore, identity: JobIdentity, foldTableNames: boolean): Promise<StoredJob | undefined> {
  const stored = await store.findUnfinished(identity.target, identity.input.path, foldTableNames);
  // Another listing of the same file in the same export is another part, with a job of its own.
  return stored && (stored.identity.repeat ?? 0) === (identity.repeat ?? 0) ? stored : undefined;
}

/**
 * A stored run of this load with other options: never discarded or competed
 * with while a process runs it; dropped when it stopped before changing
 * anything (an input error found by the first scan, say).
 */
async function otherRun(stored: StoredJob, o: LoadOptions, prep: Prepared, store: CheckpointStore, control: Queryable, notes: string[]): Promise<StoredJob | undefined> {
  await refuseIfRunning(control, stored, prep.display, 'other options');
  if (o.restart) return stored;
  const done = await store.doneChunks(stored.jobId);
  if (done.size > 0 || stored.phase !== 'created') return stored;
  if (!o.dryRun) await store.abandon(stored.jobId);
  notes.push(`${o.dryRun ? 'would discard' : 'discarded'} the earlier run ${stored.jobId}, which stopped before loading anything`);
  return undefined;
}

/** Another run of this load (other options, another shard map) is never discarded or competed with while a process runs it. */
export async function refuseIfRunning(control: Queryable, stored: StoredJob, table: string, differing: string): Promise<void> {
  const holder = await jobLockHolder(control, stored.jobId);
  if (!holder) return;
  throw new FlatloadError('JOB_RUNNING', `a load of ${stored.inputPath} into ${stored.target} with ${differing} is running: ${stored.owner ?? `connection ${holder.connectionId}`}`, {
    table,
    hint: 'wait for it to finish (flatload status shows it)',
  });
}

/** --restart: the unfinished run is discarded (an append's committed rows stay in the table). */
async function discardForRestart(stored: StoredJob, o: LoadOptions, store: CheckpointStore, notes: string[]): Promise<undefined> {
  const done = await store.doneChunks(stored.jobId);
  const rows = [...done.values()].reduce((a, d) => a + d.rowsLoaded, 0);
  if (!o.dryRun) await store.abandon(stored.jobId);
  notes.push(
    `${o.dryRun ? 'would discard' : 'discarded'} the unfinished job ${stored.jobId} (${done.size} chunk(s) committed)` +
      (rows > 0 && o.mode === 'append' ? `: its ${rows} rows stay in the table` : ''),
  );
  return undefined;
}

/** No run to continue: a new plan, unless the same load already finished and its rows are still there. */
async function freshOrDone(o: LoadOptions, prep: Prepared, plan: LoadPlan, earlier: StoredJob | undefined, control: Queryable, notes: string[]): Promise<Job> {
  const fresh: Job = { plan, stored: undefined, done: new Map(), phase: 'created', notes };
  if (earlier?.state !== 'done') return fresh;
  const when = earlier.finishedAt ?? earlier.updatedAt;
  if (o.restart) {
    notes.push(`loading again: job ${earlier.jobId} loaded this input at ${when} (--restart)`);
    return fresh;
  }
  const check = await stillLoaded(control, earlier, o, prep);
  if (check.ok) {
    notes.push(`the same input went into the same table with the same options at ${when} (job ${earlier.jobId}); add --restart to load it again`);
    return { ...fresh, finished: earlier };
  }
  if (!check.reload) {
    throw new FlatloadError('RESUME_MISMATCH', `this input was loaded into ${prep.display} at ${when} (job ${earlier.jobId}), but ${check.why}: rows were deleted since`, {
      table: prep.display,
      hint: 'add --restart to load the input again (rows of it still in the table are then loaded a second time), or empty the table first',
    });
  }
  notes.push(`loading again: job ${earlier.jobId} loaded this input at ${when}, but ${check.why}`);
  return fresh;
}

/**
 * Only the input's time differs (a re-copy, an rsync, an object uploaded
 * again): the same load, when the scan before anything loads compares every
 * byte with the digest the interrupted run stored (startJob refuses a
 * difference). An input that is not scanned, or a job without the digest,
 * keeps the strict identity.
 */
function onlyTimeChanged(stored: StoredJob, identity: JobIdentity, prep: Prepared): boolean {
  if (!stored.inputHash || stored.identity.input.kind !== 'file' || prep.unchunkableReason !== undefined) return false;
  const sameInput = { ...identity, input: { ...identity.input, mtimeMs: stored.identity.input.mtimeMs } };
  return identityDifferences(stored.identity, sameInput).length === 0;
}

/** The unfinished run continues only as the same load, planned by this version of flatload. */
async function refuseOtherResume(stored: StoredJob, identity: JobIdentity, o: LoadOptions, prep: Prepared, store: CheckpointStore, notes: string[]): Promise<void> {
  const diffs = identityDifferences(stored.identity, identity);
  if (diffs.length > 0 && onlyTimeChanged(stored, identity, prep)) {
    notes.push(`${stored.inputPath} has a new modification time since the interrupted run (a copy of the same file?): resuming once its bytes are found the same as that run read`);
  } else if (diffs.length > 0) {
    const done = await store.doneChunks(stored.jobId);
    throw new FlatloadError(
      'RESUME_MISMATCH',
      `an unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}, ${done.size} chunk(s) committed) exists, and this run differs from it:\n    ${diffs.join('\n    ')}`,
      {
        file: o.file,
        table: prep.display,
        hint: `rerun the original command (same input, same options) to finish it; or ${restartHint(o.mode)}`,
      },
    );
  }
  if (!RUNNABLE_PLAN_VERSIONS.includes((stored.plan as { version?: number }).version ?? 0)) {
    throw new FlatloadError('RESUME_MISMATCH', `the unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}) was planned by another version of flatload, whose plan this one cannot run`, {
      table: prep.display,
      hint: `finish it with the flatload that started it; or ${restartHint(o.mode)}`,
    });
  }
}

/** Resume: the stored plan, not a new one — the table is half full now, and pre-assigned keys must not move. */
async function resumeStored(stored: StoredJob, o: LoadOptions, prep: Prepared, planOptions: PlanOptions, store: CheckpointStore, notes: string[]): Promise<Job> {
  const done = await store.doneChunks(stored.jobId);
  const total = stored.chunksTotal === null ? '' : ` of ${stored.chunksTotal}`;
  const where = stored.activity ? ` (its run stopped while ${stored.activity.kind} its input)` : '';
  notes.push(`resuming job ${stored.jobId}${where}: ${done.size}${total} chunks done`);
  // --jobs may change a parallel plan's width; a plan that chose one stream had a reason (a table lock, a bulk load).
  const wanted = stored.plan.concurrency > 1 && o.jobs !== undefined ? o.jobs : stored.plan.concurrency;
  // The account's connections may be fewer than when the job was planned.
  const fit = streamsThatFit(wanted, prep.server, planOptions.connectionsBudgeted);
  if (fit.warning) notes.push(fit.warning);
  return { plan: { ...stored.plan, concurrency: fit.streams }, stored, done, phase: stored.phase, notes };
}

/**
 * The ladder's second rung, once the job is held: the stored run this one
 * continues (resume), the same load already finished (done), or none
 * (fresh, with a new plan). One that differs is refused, or discarded with
 * --restart. Reads only, in a dry run.
 */
export async function findOrPlanJob(
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
  const notes: string[] = [];
  const jobId = jobIdOf(identity);
  let stored = hasBookkeeping ? await findStored(store, identity, prep.server.lowerCaseTableNames !== 0) : undefined;
  if (stored && stored.jobId !== jobId) stored = await otherRun(stored, o, prep, store, control, notes);
  if (stored && o.restart) stored = await discardForRestart(stored, o, store, notes);
  if (!stored) return freshOrDone(o, prep, planLoad(facts, planOptions), hasBookkeeping ? await store.get(jobId) : undefined, control, notes);
  await refuseOtherResume(stored, identity, o, prep, store, notes);
  return resumeStored(stored, o, prep, planOptions, store, notes);
}

/** Fails now, naming each missing grant, rather than half-way through the load. */
export function checkPlanPrivileges(plan: LoadPlan, prep: Prepared, o: LoadOptions, schema: string): void {
  const needs = privilegesForPlan(plan, {
    ...(o.dryRun ? {} : { bookkeepingSchema: schema, bookkeepingTables: ['flatload_jobs', ...bookkeepingChunkTables(bookkeepingEngine(plan, prep))] }),
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

/** The table a load holds whole (--mode replace or swap): its name, and how the server compares table names. */
export interface HeldTable {
  db: string;
  table: string;
  foldCase: boolean;
}

/**
 * The ladder's first rung: holds the job for this run: the server's named lock, and on a Galera
 * cluster (where that lock is node-local) also the job's lease row; with `table` (a load that
 * empties or replaces it) also the table's lock and lease. The returned lease, if any, is released
 * when the run ends. The locks are taken again if the control connection is replaced.
 */
export async function holdJob(control: ControlConnection, session: Session, store: CheckpointStore, jobId: string, o: LoadOptions, events: EventHub, cluster: boolean, table?: HeldTable): Promise<JobLease | undefined> {
  await acquireJobLock(control, jobId, {
    wait: o.wait,
    describeHolder: async () => {
      const holder = await jobLockHolder(control, jobId);
      // A load that has just started records itself once it has found its job and planned (before its input is read): give it a moment.
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
  const names = [jobLockName(jobId)];
  if (table) names.push(await lockTable(control, store.schema, table, o.wait, (m) => events.emit({ type: 'note', message: m })));
  control.onReconnect(async (conn) => {
    for (const name of names) {
      if ((await selectNumber(conn, 'SELECT GET_LOCK(?, 0) AS got', [name])) !== 1) {
        throw new FlatloadError('JOB_RUNNING', `lost this load's lock while reconnecting, and another flatload took it: stopping so that the two do not load the same table`);
      }
    }
  });
  if (!cluster) return undefined;
  const leaseOptions = { wait: o.wait, onWaiting: (message: string) => events.emit({ type: 'note', message }), onLost: (message: string) => events.emit({ type: 'warning', message }) };
  const job = await acquireJobLease(control, session, store.schema, jobId, ownerText(), leaseOptions);
  if (!table) return job;
  const held = await leaseTable(control, session, store.schema, table, leaseOptions).catch(async (err: unknown) => {
    await job.release();
    throw err;
  });
  return { release: async () => void (await Promise.all([held.release(), job.release()])) };
}

/** The table a load holds whole: with --mode replace or swap (an export's own loads append, the export holds its tables). */
export function heldTable(o: LoadOptions, prep: Prepared): HeldTable | undefined {
  return o.mode === 'append' ? undefined : { db: prep.db, table: prep.table.table, foldCase: prep.server.lowerCaseTableNames !== 0 };
}

function tableText(t: HeldTable): string {
  return `${t.db}.${t.table}`;
}

const tableMessages = (t: HeldTable): { busy: string; waiting: string } => ({
  busy: `another load is replacing ${tableText(t)} (--mode replace or swap, from another input)`,
  waiting: `waiting for the other load replacing ${tableText(t)} to finish`,
});

/**
 * Holds a table a load empties or replaces (its lock, named after the table), or throws
 * JOB_RUNNING naming the run that holds it. Returns the lock's name.
 */
export async function lockTable(control: Queryable, schema: string, t: HeldTable, wait: boolean, onWaiting: (m: string) => void): Promise<string> {
  const name = tableLockName(t.db, t.table, t.foldCase);
  await acquireLock(control, name, {
    wait,
    what: tableMessages(t),
    describeHolder: async () => {
      const holder = await lockHolder(control, name);
      const runs = holder ? await runsOfConnection(control, schema, holder.connectionId) : [];
      const conn = `server connection ${holder?.connectionId ?? '?'}${holder?.host ? ` from ${holder.host}` : ''}`;
      return `${tableText(t)} is held by ${runs.length > 0 ? runs.join('; ') : 'another flatload'} (${conn})`;
    },
    onWaiting,
  });
  return name;
}

/** On a Galera cluster the table's lock is node-local: its lease row holds it across the nodes. */
export function leaseTable(control: Queryable, session: Session, schema: string, t: HeldTable, o: { wait: boolean; onWaiting?: (m: string) => void; onLost?: (m: string) => void }): Promise<JobLease> {
  const key = tableLeaseKey(tableLockName(t.db, t.table, t.foldCase));
  return acquireJobLease(control, session, schema, key, ownerText(), { ...o, what: { label: `table ${tableText(t)}`, ...tableMessages(t) } });
}

/** The loads and exports a server connection holds, from the bookkeeping (none when it is elsewhere or missing). */
async function runsOfConnection(control: Queryable, schema: string, connectionId: number): Promise<string[]> {
  // A run holds its job's (or its export's) lock on the connection that holds the table's.
  const runs = (table: string, id: string, what: string): Promise<string[]> =>
    selectRows<{ run: string }>(
      control,
      `SELECT CONCAT(${what}, ' for ', COALESCE(owner, '?'), ', started ', started_at) AS run FROM ${quoteQualified(schema, table)}
        WHERE state = 'running' AND IS_USED_LOCK(CONCAT(?, ${id})) = ?`,
      [JOB_LOCK_PREFIX, connectionId],
    ).then(
      (rows) => rows.map((r) => r.run),
      () => [],
    );
  const jobs = await runs(JOBS_TABLE, 'job_id', "'job ', job_id, ' loading ', input_path");
  return [...jobs, ...(await runs(EXPORTS_TABLE, 'export_id', "'export ', export_id, ' of ', source"))];
}

/** The ladder's last rung when a run stops: the bookkeeping must not go on saying the job is running. */
export async function markStopped(store: CheckpointStore, jobId: string, e: FlatloadError): Promise<void> {
  await store.update(jobId, { state: e.code === 'INTERRUPTED' ? 'interrupted' : 'failed', message: e.message }).catch(() => undefined);
}

/** The error with the command that resumes the load, when a rerun can finish it: it stopped for a reason outside the input. */
export function withResumeCommand(e: FlatloadError, resumeCommand: string): FlatloadError {
  const resumable = ['INTERRUPTED', 'CONNECTION_LOST', 'SERVER_ERROR', 'ROWS_REJECTED', 'OUTPUT_UNWRITABLE', 'THROTTLED', 'LOCK_WAIT'].includes(e.code);
  return resumeCommand && resumable && e.context.resumeCommand === undefined ? e.withContext({ resumeCommand }) : e;
}
