import type { Connection } from 'mysql2/promise';
import type { ConnectionOptions } from '../config/connection.js';
import type { ReplicaTarget } from '../config/throttle.js';
import { openSession } from '../db/connect.js';
import { toFlatloadError } from '../db/errors.js';
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

  /** Connects and checks it is a replica: a connection failure throws as such (exit 6), a server that is not a replica is a configuration error. */
  async check(): Promise<LagReading> {
    const reading = lagOf(this.target.name, await replicaStatusRows(await this.connect()));
    if (reading.state.startsWith('not a replica')) {
      throw new FlatloadError('CONFIG', `--replica ${this.target.name} (${replicaAddress(this.target)}) is not a replica: SHOW SLAVE STATUS returns no row`, {
        hint: 'give the URL of a server that replicates from this one, or leave the --replica out',
      });
    }
    return reading;
  }

  async read(): Promise<LagReading> {
    try {
      return lagOf(this.target.name, await replicaStatusRows(await this.connect()));
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
