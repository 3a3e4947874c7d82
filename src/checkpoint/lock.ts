import { createHash } from 'node:crypto';
import { selectNumber, selectOne } from '../db/rows.js';
import { hostname, userInfo } from 'node:os';
import type { Queryable } from '../db/control.js';
import { FlatloadError } from '../errors/index.js';

/**
 * One process per load. A job is held through a server-side named lock on
 * the control connection for the whole run: a second run of the same job (a
 * cron overlap) cannot take it and stops, naming the holder, instead of
 * loading the same chunks a second time. The server frees the lock when the
 * holding session ends for any reason, so a killed flatload never leaves a
 * job locked.
 */
export const JOB_LOCK_PREFIX = 'flatload-job:';

/** What a second run is told when the job is held, by its lock or (on a cluster) its lease. */
export const JOB_HELD = { busy: 'this load is already running', waiting: 'waiting for the running load to finish' };

export function jobLockName(jobId: string): string {
  return `${JOB_LOCK_PREFIX}${jobId}`;
}

/**
 * A load that empties or replaces a whole table (--mode replace, --mode
 * swap, an export in those modes) also holds the table, whatever its input:
 * two such loads of one table at once would share its shadow or empty it
 * under each other. The table's name is hashed, as a lock name is limited to
 * 64 characters; it is folded first where the server folds table names.
 */
export const TABLE_LOCK_PREFIX = 'flatload-table:';

export function tableLockName(db: string, table: string, foldCase: boolean): string {
  const key = JSON.stringify(foldCase ? [db.toLowerCase(), table.toLowerCase()] : [db, table]);
  return `${TABLE_LOCK_PREFIX}${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

/** The 24-character key a table's lease row has on a Galera cluster (a job's key is 24 hex digits: no clash). */
export function tableLeaseKey(lockName: string): string {
  return `table-${lockName.slice(TABLE_LOCK_PREFIX.length, TABLE_LOCK_PREFIX.length + 18)}`;
}

/** Who holds a job, as recorded in the bookkeeping and shown to a second run. */
export function ownerText(): string {
  let user = '';
  try {
    user = `${userInfo().username}@`;
  } catch {
    // No passwd entry (a container): the host and pid still identify the process.
  }
  return `${user}${hostname()} pid ${process.pid}`;
}

export interface LockHolder {
  connectionId: number;
  /** Client host:port and seconds in its current state, from the server's process list. */
  host: string | null;
}

/** The session holding the job's lock, or undefined when no process holds it. */
export async function jobLockHolder(conn: Queryable, jobId: string): Promise<LockHolder | undefined> {
  return lockHolder(conn, jobLockName(jobId));
}

/** The session holding a named lock, or undefined when none holds it. */
export async function lockHolder(conn: Queryable, name: string): Promise<LockHolder | undefined> {
  const id = (await selectOne<{ id: number | null }>(conn, 'SELECT IS_USED_LOCK(?) AS id', [name]))?.id;
  if (id === null || id === undefined) return undefined;
  const p = await selectOne<{ host: string | null }>(conn, 'SELECT HOST AS host FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
  return { connectionId: Number(id), host: p?.host ?? null };
}

export interface AcquireOptions {
  /** Wait for the holder to finish instead of stopping. */
  wait: boolean;
  /** What the holder recorded (owner, since), for the message. */
  describeHolder: () => Promise<string>;
  onWaiting?: (message: string) => void;
  /** Seconds per GET_LOCK attempt while waiting (tests shorten it). */
  waitSliceSeconds?: number;
  /** What is held, for the messages (default: this load). */
  what?: { busy: string; waiting: string };
}

/** Takes the job's lock, or throws JOB_RUNNING (without --wait). */
export async function acquireJobLock(conn: Queryable, jobId: string, o: AcquireOptions): Promise<void> {
  await acquireLock(conn, jobLockName(jobId), o);
}

/** Takes a named lock, or throws JOB_RUNNING (without --wait). */
export async function acquireLock(conn: Queryable, name: string, o: AcquireOptions): Promise<void> {
  const what = o.what ?? JOB_HELD;
  const take = async (seconds: number): Promise<boolean> => {
    return (await selectNumber(conn, 'SELECT GET_LOCK(?, ?) AS got', [name, seconds])) === 1;
  };
  if (await take(0)) return;
  const holder = await o.describeHolder();
  if (!o.wait) {
    throw new FlatloadError('JOB_RUNNING', `${what.busy}: ${holder}`, {
      hint: 'let it finish (flatload status shows its progress), or add --wait to wait for it and then carry on',
    });
  }
  o.onWaiting?.(`${what.waiting}: ${holder}`);
  while (!(await take(o.waitSliceSeconds ?? 60))) {
    // Still held: keep waiting (each attempt is bounded so a lost connection is noticed).
  }
}

/** Gives the lock back (the end of the session would too). */
export async function releaseJobLock(conn: Queryable, jobId: string): Promise<void> {
  await conn.query('DO RELEASE_LOCK(?)', [jobLockName(jobId)]);
}
