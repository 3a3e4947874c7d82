import type { Connection, PoolConnection } from 'mysql2/promise';
import type { Queryable } from '../db/control.js';
import { ER } from '../db/errnos.js';
import { asServerError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import { buildShardMap, type ColumnRow, type PartitionRow, type ServerRow, type ShardMap } from '../shard/map.js';

type Conn = Connection | PoolConnection | Queryable;

async function rows<T>(conn: Conn, sql: string, values?: unknown[]): Promise<T[]> {
  const [r] = await conn.query(sql, values);
  return r as T[];
}

/**
 * What a Galera node says about itself and its cluster, read-only. On a
 * server without wsrep (or with wsrep_on=OFF) `wsrepOn` is false and the
 * cluster fields are empty.
 */
export interface GaleraFacts {
  wsrepOn: boolean;
  /** wsrep_provider (the library path), or null when none is loaded. */
  provider: string | null;
  /** e.g. "Galera" and "26.4.23(r…)". */
  providerName: string | null;
  providerVersion: string | null;
  nodeName: string | null;
  clusterName: string | null;
  /** Members of the primary component this node sees. */
  clusterSize: number;
  /** Primary, non-Primary or Disconnected: only a Primary node accepts queries on tables. */
  clusterStatus: string | null;
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, Joined, Initialized… */
  localState: string | null;
  /** wsrep_ready: OFF means statements get error 1047. */
  ready: boolean;
  clusterStateUuid: string | null;
  /** Largest write-set (one transaction) in bytes; a bigger one fails with 1105 and commits nothing. */
  maxWsSize: number;
  /** Largest write-set in rows, 0 = no limit; exceeding it fails at COMMIT with 1180. */
  maxWsRows: number;
  autoIncrementControl: boolean;
  autoIncrementIncrement: number;
  autoIncrementOffset: number;
  /** The session's wsrep_sync_wait bitmask (1 reads, 2 UPDATE/DELETE, 4 INSERT/REPLACE, 8 SHOW). */
  syncWait: number;
  /** wsrep_mode (e.g. REQUIRED_PRIMARY_KEY), as the server lists it. */
  mode: string;
  /** Deprecated; flatload never relies on it, but shows it. */
  loadDataSplitting: boolean | null;
  flowControl: {
    /** Fraction of time paused by flow control since the last FLUSH STATUS (0..1). */
    paused: number;
    /** Nanoseconds paused since the node started. */
    pausedNs: number;
    /** Pause requests this node sent (it could not keep up) and received. */
    sent: number;
    received: number;
  };
  /** Every member's client address (host:port) as wsrep_incoming_addresses lists them. */
  incomingAddresses: string[];
}

const GALERA_STATUS = [
  'wsrep_provider_name',
  'wsrep_provider_version',
  'wsrep_cluster_size',
  'wsrep_cluster_status',
  'wsrep_local_state_comment',
  'wsrep_ready',
  'wsrep_cluster_state_uuid',
  'wsrep_flow_control_paused',
  'wsrep_flow_control_paused_ns',
  'wsrep_flow_control_sent',
  'wsrep_flow_control_recv',
  'wsrep_incoming_addresses',
];

const GALERA_VARIABLES = [
  'wsrep_on',
  'wsrep_provider',
  'wsrep_node_name',
  'wsrep_cluster_name',
  'wsrep_max_ws_size',
  'wsrep_max_ws_rows',
  'wsrep_auto_increment_control',
  'auto_increment_increment',
  'auto_increment_offset',
  'wsrep_sync_wait',
  'wsrep_mode',
  'wsrep_load_data_splitting',
];

const on = (v: string | undefined): boolean => ['ON', '1', 'TRUE'].includes(String(v ?? '').toUpperCase());
const num = (v: string | undefined): number => (v === undefined || v === '' ? 0 : Number(v));

/** Splits wsrep_incoming_addresses ("h1:p1,h2:p2"); empty entries (a joiner without an address yet) are dropped. */
export function parseIncomingAddresses(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s.toUpperCase() !== 'AUTO');
}

export async function readGaleraFacts(conn: Conn): Promise<GaleraFacts> {
  const vars: Record<string, string> = {};
  const placeholders = GALERA_VARIABLES.map(() => '?').join(', ');
  // SESSION values: wsrep_sync_wait and the auto-increment pair are per session; globals fill in the rest.
  for (const r of await rows<{ Variable_name: string; Value: string }>(conn, `SHOW SESSION VARIABLES WHERE Variable_name IN (${placeholders})`, GALERA_VARIABLES)) {
    vars[r.Variable_name.toLowerCase()] = r.Value;
  }
  const status: Record<string, string> = {};
  for (const r of await rows<{ Variable_name: string; Value: string }>(
    conn,
    `SHOW GLOBAL STATUS WHERE Variable_name IN (${GALERA_STATUS.map(() => '?').join(', ')})`,
    GALERA_STATUS,
  )) {
    status[r.Variable_name.toLowerCase()] = r.Value;
  }
  const provider = vars['wsrep_provider'];
  return {
    wsrepOn: on(vars['wsrep_on']) && !!provider && provider.toLowerCase() !== 'none',
    provider: provider && provider.toLowerCase() !== 'none' ? provider : null,
    providerName: status['wsrep_provider_name'] || null,
    providerVersion: status['wsrep_provider_version'] || null,
    nodeName: vars['wsrep_node_name'] ?? null,
    clusterName: vars['wsrep_cluster_name'] ?? null,
    clusterSize: num(status['wsrep_cluster_size']),
    clusterStatus: status['wsrep_cluster_status'] ?? null,
    localState: status['wsrep_local_state_comment'] ?? null,
    ready: on(status['wsrep_ready']),
    clusterStateUuid: status['wsrep_cluster_state_uuid'] || null,
    maxWsSize: num(vars['wsrep_max_ws_size']),
    maxWsRows: num(vars['wsrep_max_ws_rows']),
    autoIncrementControl: on(vars['wsrep_auto_increment_control']),
    autoIncrementIncrement: num(vars['auto_increment_increment']) || 1,
    autoIncrementOffset: num(vars['auto_increment_offset']) || 1,
    syncWait: num(vars['wsrep_sync_wait']),
    mode: vars['wsrep_mode'] ?? '',
    loadDataSplitting: vars['wsrep_load_data_splitting'] === undefined ? null : on(vars['wsrep_load_data_splitting']),
    flowControl: {
      paused: num(status['wsrep_flow_control_paused']),
      pausedNs: num(status['wsrep_flow_control_paused_ns']),
      sent: num(status['wsrep_flow_control_sent']),
      received: num(status['wsrep_flow_control_recv']),
    },
    incomingAddresses: parseIncomingAddresses(status['wsrep_incoming_addresses']),
  };
}

async function readPartitionRows(conn: Conn, db: string, table: string): Promise<PartitionRow[]> {
  return (
    await rows<{
      PARTITION_NAME: string | null;
      PARTITION_ORDINAL_POSITION: number | null;
      PARTITION_METHOD: string | null;
      PARTITION_EXPRESSION: string | null;
      PARTITION_DESCRIPTION: string | null;
      PARTITION_COMMENT: string | null;
      SUBPARTITION_METHOD: string | null;
    }>(
      conn,
      `SELECT PARTITION_NAME, PARTITION_ORDINAL_POSITION, PARTITION_METHOD, PARTITION_EXPRESSION, PARTITION_DESCRIPTION, PARTITION_COMMENT, SUBPARTITION_METHOD
         FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION`,
      [db, table],
    )
  )
    .filter((p) => p.PARTITION_NAME !== null)
    .map((p) => ({
      name: p.PARTITION_NAME!,
      ordinal: Number(p.PARTITION_ORDINAL_POSITION),
      method: p.PARTITION_METHOD,
      expression: p.PARTITION_EXPRESSION,
      description: p.PARTITION_DESCRIPTION,
      comment: p.PARTITION_COMMENT,
      subpartitionMethod: p.SUBPARTITION_METHOD,
    }));
}

/**
 * The shard map of a (Spider or any partitioned) table as the server reports
 * it. Reads mysql.servers without its Password column; a user who may not
 * read mysql.servers gets MISSING_PRIVILEGE with what to grant.
 */
export async function readShardMap(conn: Conn, db: string, table: string): Promise<ShardMap> {
  const where = `\`${db}\`.\`${table}\``;
  const t = (await rows<{ ENGINE: string | null }>(conn, 'SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [db, table]))[0];
  if (!t) throw new FlatloadError('UNKNOWN_TABLE', `unknown table ${where}`, { table: where });
  const create = await rows<Record<string, string>>(conn, `SHOW CREATE TABLE \`${db.replace(/`/g, '``')}\`.\`${table.replace(/`/g, '``')}\``);
  const showCreateTable = String(create[0]?.['Create Table'] ?? '');
  const columns: ColumnRow[] = (
    await rows<{ COLUMN_NAME: string; DATA_TYPE: string; COLUMN_TYPE: string; COLLATION_NAME: string | null; CHARACTER_MAXIMUM_LENGTH: string | number | null }>(
      conn,
      `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COLLATION_NAME, CHARACTER_MAXIMUM_LENGTH
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
      [db, table],
    )
  ).map((c) => ({
    name: c.COLUMN_NAME,
    dataType: c.DATA_TYPE,
    columnType: c.COLUMN_TYPE,
    collation: c.COLLATION_NAME,
    maxChars: c.CHARACTER_MAXIMUM_LENGTH === null ? null : Number(c.CHARACTER_MAXIMUM_LENGTH),
  }));
  // For a Spider table this view asks every backend for statistics: with one backend down (1429) or a
  // remote table missing (12702) it fails, and the partitions come from SHOW CREATE TABLE instead.
  const partitions: PartitionRow[] | undefined = await readPartitionRows(conn, db, table).catch(() => undefined);
  let servers: ServerRow[];
  try {
    servers = (
      await rows<{ Server_name: string; Host: string; Port: number | string; Socket: string; Db: string; Username: string; Wrapper: string }>(
        conn,
        // Never the Password column: nothing flatload reads about a backend may leak it.
        'SELECT Server_name, Host, Port, Socket, Db, Username, Wrapper FROM mysql.servers',
      )
    ).map((s) => ({ name: s.Server_name, host: s.Host, port: Number(s.Port), socket: s.Socket, db: s.Db, username: s.Username, wrapper: s.Wrapper }));
  } catch (err) {
    const errno = asServerError(err)?.errno;
    if (errno === ER.TABLEACCESS_DENIED || errno === ER.COLUMNACCESS_DENIED) {
      throw new FlatloadError('MISSING_PRIVILEGE', `reading the shard map of ${where} needs SELECT on mysql.servers (Server_name, Host, Port, Socket, Db, Username, Wrapper)`, {
        table: where,
        serverErrno: errno,
        hint: 'GRANT SELECT (Server_name, Host, Port, Socket, Db, Username, Wrapper) ON mysql.servers TO the loading user, or name each backend with --backend',
      });
    }
    throw err;
  }
  return buildShardMap({ db, table, engine: t.ENGINE ?? '', showCreateTable, columns, partitions, servers });
}
