/**
 * A quick statement that locks a live table exclusively (TRUNCATE, the swap's
 * RENAME, DROP INDEX) waits for the sessions reading the table, and while it
 * waits every new reader queues behind it: behind one long report, the table
 * stops answering. So on MariaDB it asks for the lock a second at a time
 * (SET STATEMENT lock_wait_timeout), and between tries the readers go on; it
 * names the sessions it waits for, and gives up after --max-pause, resumable
 * (README.md#nightly-job).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Queryable } from '../db/control.js';
import { ER } from '../db/errnos.js';
import { quoteQualified } from '../db/quote.js';
import { selectRows } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import { briefExclusiveLocks, type Op, type TableRef } from '../plan/ops.js';

/** Seconds each try may wait for the lock: how long a reader of the table may be held up by one try. */
export const TRY_WAIT_SECONDS = 1;

export interface LockWaitOptions {
  /** Waiting longer than this in all stops the load, resumable. */
  maxPauseMs: number;
  /** SET STATEMENT is MariaDB's: elsewhere the statement waits as the server's lock_wait_timeout says. */
  mariadb: boolean;
  note: (message: string) => void;
  /** Ctrl-C or SIGTERM: stop waiting between tries. */
  signal?: AbortSignal | undefined;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** The pause after the n-th refused try (1-based): 1, 2, 4, 8, then 15 s — readers get the table back in between. */
export function pauseAfterTry(n: number): number {
  return Math.min(1000 * 2 ** (n - 1), 15_000);
}

/** A session that may hold the lock: an open transaction, oldest first. */
export interface Holder {
  id: number;
  user: string;
  host: string;
  /** Seconds its transaction has been open. */
  openSeconds: number;
  /** What it runs now, or null when idle. */
  info: string | null;
}

const seconds = (ms: number): string => (ms >= 60_000 ? `${+(ms / 60_000).toFixed(1)} min` : `${Math.round(ms / 1000)} s`);

/** "connection 12 (app@10.0.0.5), in a transaction for 5.2 min, idle; …", or why none is named. */
export function describeHolders(holders: readonly Holder[]): string {
  if (holders.length === 0) return 'no open transaction found (a LOCK TABLES, FLUSH TABLES WITH READ LOCK, or a table of another engine held open)';
  return holders
    .map((h) => `connection ${h.id} (${h.user}@${h.host}), in a transaction for ${seconds(h.openSeconds * 1000)}, ${h.info === null ? 'idle' : `running: ${h.info.replace(/\s+/g, ' ').slice(0, 80)}`}`)
    .join('; ');
}

/** Whether an error is the lock wait giving up (what a try expects), not the statement failing. */
function isLockWaitTimeout(err: unknown): boolean {
  return (err as { errno?: number }).errno === ER.LOCK_WAIT_TIMEOUT;
}

/**
 * The oldest open transactions of other sessions: a reader of a table holds
 * its metadata lock until its transaction ends, so these are who a lock waits
 * for, as far as the server tells without the metadata_lock_info plugin.
 */
async function holders(control: Queryable): Promise<Holder[]> {
  const rows = await selectRows<{ id: number; user: string; host: string; open_seconds: number; info: string | null }>(
    control,
    `SELECT p.ID AS id, p.USER AS user, p.HOST AS host, TIMESTAMPDIFF(SECOND, t.trx_started, NOW()) AS open_seconds, IF(p.COMMAND = 'Sleep', NULL, p.INFO) AS info
       FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
      WHERE p.ID <> CONNECTION_ID() ORDER BY t.trx_started LIMIT 3`,
  );
  return rows.map((r) => ({ id: Number(r.id), user: r.user, host: r.host, openSeconds: Number(r.open_seconds), info: r.info }));
}

/**
 * Runs `sql`, which locks `tables` exclusively, a short wait at a time. The
 * first refusal is noted with the sessions waited for, the lock obtained
 * too; past maxPauseMs the load stops (LOCK_WAIT, exit 4: rerun to resume).
 */
export async function queryWhenUnlocked(control: Queryable, sql: string, tables: readonly TableRef[], o: LockWaitOptions): Promise<void> {
  if (!o.mariadb) {
    await control.query(sql);
    return;
  }
  const sleep = o.sleep ?? ((ms: number) => delay(ms, undefined, { signal: o.signal }).catch(() => undefined));
  const now = o.now ?? Date.now;
  const names = tables.map((t) => quoteQualified(t.db, t.table)).join(', ');
  const t0 = now();
  for (let n = 1; ; n++) {
    try {
      await control.query(`SET STATEMENT lock_wait_timeout = ${TRY_WAIT_SECONDS} FOR ${sql}`);
      if (n > 1) o.note(`got the lock on ${names} after ${seconds(now() - t0)}`);
      return;
    } catch (err) {
      if (!isLockWaitTimeout(err)) throw err;
    }
    const waited = now() - t0;
    if (n === 1 || waited > o.maxPauseMs) {
      const who = describeHolders(await holders(control).catch(() => []));
      if (waited > o.maxPauseMs) {
        throw new FlatloadError('LOCK_WAIT', `waited ${seconds(waited)} for other sessions to let go of ${names}, longer than --max-pause ${seconds(o.maxPauseMs)}: ${who}`, {
          table: names,
          serverErrno: ER.LOCK_WAIT_TIMEOUT,
          hint: 'let those sessions finish (or end them with KILL), or raise --max-pause; then rerun the same command to resume',
        });
      }
      const verb = sql.split(' ', 2).join(' ');
      o.note(`${verb} waits for other sessions to let go of ${names} (${who}); it asks for the lock ${TRY_WAIT_SECONDS} s at a time so readers are not held up, for up to --max-pause ${seconds(o.maxPauseMs)}`);
    }
    await sleep(pauseAfterTry(n));
    if (o.signal?.aborted) throw new FlatloadError('INTERRUPTED', `interrupted while waiting for other sessions to let go of ${names}: that statement did not run`, { table: names });
  }
}

/** An operation's statement: a quick exclusive one waits for readers politely when `locks` is given, any other runs as it is. */
export async function queryOp(control: Queryable, op: Op, sql: string, locks: LockWaitOptions | undefined): Promise<void> {
  const tables = briefExclusiveLocks(op);
  if (locks && tables.length > 0) await queryWhenUnlocked(control, sql, tables, locks);
  else await control.query(sql);
}
