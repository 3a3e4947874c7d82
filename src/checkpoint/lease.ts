import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { openConnection, type Session } from '../db/connect.js';
import { ER } from '../db/errnos.js';
import { asServerError } from '../db/errors.js';
import type { Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { selectOne } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import { JOB_HELD } from './lock.js';

/**
 * The job lock on a Galera cluster. GET_LOCK() is node-local there (a
 * session on another node takes the same name at the same time:
 * docs/scale-out.md#get_lock-on-galera), so the job is also held by a lease
 * row in the bookkeeping schema, replicated like any InnoDB row: taken by
 * an INSERT or a compare-and-swap UPDATE on the row's token (two takers on
 * two nodes conflict at certification, 1213, and the loser reads the
 * winner's row), renewed while the load runs, deleted at its end. A lease
 * left by a process that died is taken over once it expires, or at once
 * when its owner ran on this machine and its process is gone.
 */
export const LEASE_TABLE = 'flatload_job_leases';
export const LEASE_SECONDS = 60;
const RENEW_MS = 10_000;

export interface LeaseRow {
  owner: string;
  token: string;
  expired: boolean;
  expiresAt: string;
}

/** `user@host pid 123` (ownerText) → host and pid, when it has that shape. */
export function parseOwner(owner: string): { host: string; pid: number } | undefined {
  const m = /^(?:[^@\s]*@)?(\S+) pid (\d+)$/.exec(owner);
  return m ? { host: m[1]!, pid: Number(m[2]) } : undefined;
}

/** Whether a lease someone else holds may be taken: it expired, or its owner ran here and is gone. Pure. */
export function leaseTakeable(row: LeaseRow, thisHost: string, alive: (pid: number) => boolean): boolean {
  if (row.expired) return true;
  const o = parseOwner(row.owner);
  return o !== undefined && o.host === thisHost && !alive(o.pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface JobLease {
  /** Stops renewing and deletes the row (if it is still ours). Never throws. */
  release(): Promise<void>;
}

export interface LeaseOptions {
  wait: boolean;
  onWaiting?: (message: string) => void;
  /** Told when a renewal finds the row taken by another process. */
  onLost?: (message: string) => void;
  /** What is held, for the messages (default: the job). */
  what?: { label: string; busy: string; waiting: string };
}

/** Takes the job's lease row, or throws JOB_RUNNING (without --wait). Reads must be causal (wsrep_sync_wait=1). */
export async function acquireJobLease(control: Queryable, session: Session, schema: string, jobId: string, owner: string, o: LeaseOptions): Promise<JobLease> {
  const t = quoteQualified(schema, LEASE_TABLE);
  await control.query(
    `CREATE TABLE IF NOT EXISTS ${t} (
      job_id CHAR(24) NOT NULL PRIMARY KEY,
      owner VARCHAR(255) NOT NULL,
      token CHAR(32) NOT NULL,
      expires_at DATETIME(3) NOT NULL
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='flatload: which process holds a job on a Galera cluster'`,
  );
  const token = randomBytes(16).toString('hex');
  const until = `NOW(3) + INTERVAL ${LEASE_SECONDS} SECOND`;
  let waiting = false;
  const what = o.what ?? { label: `job ${jobId}`, ...JOB_HELD };
  for (;;) {
    const row = await selectOne<{ owner: string; token: string; expired: number | string; expiresAt: string }>(
      control,
      `SELECT owner, token, expires_at < NOW(3) AS expired, expires_at AS expiresAt FROM ${t} WHERE job_id = ?`,
      [jobId],
    );
    try {
      if (!row) {
        await control.query(`INSERT INTO ${t} (job_id, owner, token, expires_at) VALUES (?, ?, ?, ${until})`, [jobId, owner, token]);
        break;
      }
      const lease: LeaseRow = { owner: row.owner, token: row.token, expired: Number(row.expired) === 1, expiresAt: row.expiresAt };
      if (leaseTakeable(lease, hostname(), processAlive)) {
        const [res] = await control.query(`UPDATE ${t} SET owner = ?, token = ?, expires_at = ${until} WHERE job_id = ? AND token = ?`, [owner, token, jobId, lease.token]);
        if (Number((res as { affectedRows?: number }).affectedRows) === 1) break;
        continue;
      }
      const holder = `${what.label} is held by ${lease.owner} (its lease on the cluster runs until ${lease.expiresAt} unless renewed)`;
      if (!o.wait) {
        throw new FlatloadError('JOB_RUNNING', `${what.busy}: ${holder}`, {
          hint: 'let it finish (flatload status shows its progress), or add --wait to wait for it and then carry on',
        });
      }
      if (!waiting) o.onWaiting?.(`${what.waiting}: ${holder}`);
      waiting = true;
      await new Promise((r) => setTimeout(r, 2000));
    } catch (err) {
      // Another process took the row between the read and the write (1062), or on another node at the same time (1213).
      const errno = asServerError(err)?.errno;
      if (errno === ER.DUP_ENTRY || errno === ER.LOCK_DEADLOCK) continue;
      throw err;
    }
  }
  const renew = async (): Promise<void> => {
    // Its own connection, so a long statement on the control connection (an ALTER) never delays the renewal.
    const conn = await openConnection(session).catch(() => undefined);
    if (!conn) return;
    try {
      const [res] = await conn.query(`UPDATE ${t} SET expires_at = ${until} WHERE job_id = ? AND token = ?`, [jobId, token]);
      if (Number((res as { affectedRows?: number }).affectedRows) === 0) o.onLost?.(`this load's lease on the cluster was taken by another process after it expired: two runs of ${what.label} may now overlap`);
    } catch {
      // A node going away: the next renewal goes to the next node.
    } finally {
      await conn.end().catch(() => conn.destroy());
    }
  };
  const timer = setInterval(() => void renew(), RENEW_MS);
  timer.unref();
  return {
    release: async () => {
      clearInterval(timer);
      await control.query(`DELETE FROM ${t} WHERE job_id = ? AND token = ?`, [jobId, token]).catch(() => undefined);
    },
  };
}
