import type { Connection } from 'mysql2/promise';
import type { ConnectionOptions } from '../config/connection.js';
import type { HeartbeatTable, ReplicaTarget } from '../config/throttle.js';
import { openSession } from '../db/connect.js';
import { toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';

/** One replica's lag as read now: null when it cannot be known (not replicating, SQL thread stopped, unreachable). */
export interface LagReading {
  name: string;
  lagSeconds: number | null;
  /** Why the lag is unknown, or 'replicating'. */
  state: string;
}

type Row = Record<string, unknown>;

/** A column of the status row by either spelling, as text (null when NULL or absent). */
function field(row: Row, ...names: string[]): string | null {
  const v = names.map((n) => row[n]).find((x) => x !== undefined);
  return v === null || v === undefined ? null : typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? String(v) : null;
}

/**
 * What SHOW SLAVE STATUS (MariaDB, MySQL before 8.4) or SHOW REPLICA STATUS
 * (MySQL 8.4, which dropped the other) says of the replication lag. Pure.
 * No row: the server is not a replica. A stopped SQL thread applies nothing,
 * so however small Seconds_Behind_Master looked, the lag is unknown.
 */
export function lagOf(name: string, rows: readonly Row[]): LagReading {
  const row = rows[0];
  if (!row) return { name, lagSeconds: null, state: 'not a replica (SHOW SLAVE STATUS is empty)' };
  const sql = field(row, 'Slave_SQL_Running', 'Replica_SQL_Running');
  const io = field(row, 'Slave_IO_Running', 'Replica_IO_Running');
  if (sql !== 'Yes') return { name, lagSeconds: null, state: 'SQL thread stopped' };
  const behind = field(row, 'Seconds_Behind_Master', 'Seconds_Behind_Source');
  if (behind === null || behind === '') return { name, lagSeconds: null, state: io === 'Yes' ? 'lag not reported' : 'IO thread stopped' };
  const lag = Number(behind);
  return Number.isFinite(lag) ? { name, lagSeconds: lag, state: 'replicating' } : { name, lagSeconds: null, state: `lag "${behind}" unreadable` };
}

/**
 * Seconds from a pt-heartbeat `ts` to `nowMs` (negative when `ts` is ahead),
 * or null when `ts` is not a timestamp. `ts` carries no zone: it is read as
 * UTC, as pt-heartbeat --utc writes it (`2026-12-04T18:00:00.123456`; a space
 * for the T, as NOW() gives, and no fraction are read too). Pure.
 */
export function heartbeatLag(ts: string, nowMs: number): number | null {
  const m = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(ts.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const at = Date.UTC(y, mo - 1, d, h, mi, s) + Number(`0.${m[7] ?? '0'}`) * 1000;
  const back = new Date(at);
  // Date.UTC rolls 2026-02-30 over into March: a ts that does not read back is not a timestamp.
  if (back.getUTCDate() !== d || back.getUTCMonth() !== mo - 1 || back.getUTCHours() !== h || back.getUTCMinutes() !== mi) return null;
  return (nowMs - at) / 1000;
}

/** A heartbeat further ahead of this clock than two hosts' clocks differ, and less than any time zone's offset. */
export const HEARTBEAT_AHEAD_SECONDS = 60;

/** Where one replica's lag comes from, as the plan says it. */
export function lagSourceText(hb: HeartbeatTable | undefined, serverId: string | undefined): string {
  return hb ? `lag from heartbeat ${hb.text} (now, UTC, minus its ts for server_id ${serverId ?? '?'})` : 'lag from Seconds_Behind_Master';
}

/**
 * The lag of a replica read from a heartbeat table: SHOW SLAVE STATUS still
 * decides whether it applies anything (a stopped SQL thread is an unknown
 * lag however fresh the row looks); the lag is the row's age, to a tenth of
 * a second. `ts` undefined: no row for the primary's server_id. Pure.
 */
export function heartbeatLagOf(name: string, rows: readonly Row[], hb: HeartbeatTable, serverId: string, ts: string | null | undefined, nowMs: number): LagReading {
  const status = lagOf(name, rows);
  if (status.state !== 'replicating' && status.state !== 'lag not reported') return status;
  if (ts === undefined) return { name, lagSeconds: null, state: `no row in ${hb.text} for the primary's server_id ${serverId}` };
  const lag = ts === null ? null : heartbeatLag(ts, nowMs);
  if (lag === null) return { name, lagSeconds: null, state: `ts "${ts ?? 'NULL'}" in ${hb.text} unreadable` };
  // Far ahead is a local time east of UTC (pt-heartbeat without --utc), which would never pause; a little is the hosts' clocks differing.
  if (lag < -HEARTBEAT_AHEAD_SECONDS) return { name, lagSeconds: null, state: `ts "${ts!}" in ${hb.text} is ${Math.round(-lag)} s ahead of UTC (pt-heartbeat without --utc?)` };
  return { name, lagSeconds: Math.max(0, Math.round(lag * 10) / 10), state: 'replicating' };
}

async function replicaStatusRows(conn: Connection): Promise<Row[]> {
  try {
    const [rows] = await conn.query('SHOW SLAVE STATUS');
    return rows as Row[];
  } catch (err) {
    // 1064: a server that only knows the newer spelling.
    if ((err as { errno?: number }).errno !== 1064) throw err;
    const [rows] = await conn.query('SHOW REPLICA STATUS');
    return rows as Row[];
  }
}

/** The newest heartbeat ts for a server_id on this server; undefined when there is no row (null when ts is NULL). */
async function heartbeatTs(conn: Connection, hb: HeartbeatTable, serverId: string): Promise<string | null | undefined> {
  const [rows] = await conn.query(`SELECT ts FROM ${quoteQualified(hb.db, hb.table)} WHERE server_id = ? ORDER BY ts DESC LIMIT 1`, [serverId]);
  const row = (rows as Row[])[0];
  if (!row) return undefined;
  const ts = row.ts;
  if (ts instanceof Date) return ts.toISOString().slice(0, 23);
  return typeof ts === 'string' ? ts : ts === null || ts === undefined ? null : JSON.stringify(ts);
}

/** The address a replica is reached at, for messages (never its credentials). */
export function replicaAddress(r: ReplicaTarget): string {
  return r.url.socketPath ?? `${r.url.host ?? 'localhost'}:${r.url.port ?? 3306}`;
}

/** How flatload reaches a replica: the URL's address, user and password, else flatload's own user, password and TLS settings. */
export function replicaConnection(primary: ConnectionOptions, r: ReplicaTarget): ConnectionOptions {
  const host = r.url.host ?? 'localhost';
  const port = r.url.port ?? 3306;
  return {
    ...primary,
    host,
    port,
    nodes: [{ host, port }],
    socketPath: r.url.socketPath,
    database: undefined,
    user: r.url.user ?? primary.user,
    password: r.url.password ?? primary.password,
    targetSource: `--replica ${r.name}`,
  };
}

/**
 * Watches one replica over its own connection. A reading that fails (the
 * replica went away) is an unknown lag, which pauses the load like a
 * stopped SQL thread; the next reading connects again.
 */
export class ReplicaWatch {
  private conn: Connection | undefined;
  constructor(
    readonly target: ReplicaTarget,
    private readonly options: ConnectionOptions,
  ) {}

  /** With --lag-heartbeat: the table and the primary's server_id, known once the primary was asked (ServerThrottle.check). */
  heartbeat: { table: HeartbeatTable; serverId: string } | undefined;

  /**
   * Connects and checks it is a replica: a connection failure throws as such (exit 6), a server that is not a replica is a configuration error.
   * With a heartbeat table, a table the replica lacks or without the primary's row is a target error (exit 7): it is how the lag would be read.
   */
  async check(): Promise<LagReading> {
    const conn = await this.connect();
    const rows = await replicaStatusRows(conn);
    const reading = lagOf(this.target.name, rows);
    if (reading.state.startsWith('not a replica')) {
      throw new FlatloadError('CONFIG', `--replica ${this.target.name} (${replicaAddress(this.target)}) is not a replica: SHOW SLAVE STATUS returns no row`, {
        hint: 'give the URL of a server that replicates from this one, or leave the --replica out',
      });
    }
    const hb = this.heartbeat;
    if (!hb) return reading;
    const where = `--lag-heartbeat ${hb.table.text} on --replica ${this.target.name} (${replicaAddress(this.target)})`;
    let ts: string | null | undefined;
    try {
      ts = await heartbeatTs(conn, hb.table, hb.serverId);
    } catch (err) {
      const e = toFlatloadError(err, `reading ${where}`);
      if (e.code !== 'UNKNOWN_TABLE' && e.code !== 'UNKNOWN_DATABASE') throw e;
      throw new FlatloadError('UNKNOWN_TABLE', `${where}: no such table`, { hint: 'create pt-heartbeat\'s table on the primary (pt-heartbeat --create-table --update --utc) so that it replicates, or leave --lag-heartbeat out' });
    }
    if (ts === undefined) {
      throw new FlatloadError('UNKNOWN_TABLE', `${where}: no row for the primary's server_id ${hb.serverId}`, { hint: 'run pt-heartbeat --update --utc against the primary (it writes that row every second), or leave --lag-heartbeat out' });
    }
    const hbReading = heartbeatLagOf(this.target.name, rows, hb.table, hb.serverId, ts, Date.now());
    if (/^ts ".*" in /s.test(hbReading.state)) {
      throw new FlatloadError('CONFIG', `${where}: ${hbReading.state}`, { hint: 'flatload reads ts as UTC, ISO 8601 (2026-12-04T18:00:00.123456): run pt-heartbeat --update with --utc, or leave --lag-heartbeat out' });
    }
    return hbReading;
  }

  async read(): Promise<LagReading> {
    try {
      const conn = await this.connect();
      const rows = await replicaStatusRows(conn);
      const hb = this.heartbeat;
      if (!hb) return lagOf(this.target.name, rows);
      return heartbeatLagOf(this.target.name, rows, hb.table, hb.serverId, await heartbeatTs(conn, hb.table, hb.serverId), Date.now());
    } catch (err) {
      this.conn?.destroy();
      this.conn = undefined;
      return { name: this.target.name, lagSeconds: null, state: `unreachable: ${toFlatloadError(err, `reading --replica ${this.target.name}`).message.split('\n')[0]!}` };
    }
  }

  private async connect(): Promise<Connection> {
    if (!this.conn) this.conn = (await openSession(this.options, { localInfile: false })).conn;
    return this.conn;
  }

  close(): void {
    this.conn?.destroy();
    this.conn = undefined;
  }
}

/** The primary's Threads_running (every thread executing a statement, the one asking included). */
export async function threadsRunning(conn: Connection): Promise<number> {
  const [rows] = await conn.query("SHOW GLOBAL STATUS LIKE 'Threads_running'");
  const value = Number((rows as Row[])[0]?.Value);
  if (!Number.isFinite(value)) throw new FlatloadError('SERVER_ERROR', 'the server did not report Threads_running');
  return value;
}
