import type { Connection, PoolConnection } from 'mysql2/promise';
import type { AccountConnections, Flavor, ServerFacts } from './types.js';
import { redactGrant } from './grants.js';
import { readGaleraFacts } from './cluster.js';

type Conn = Connection | PoolConnection;

/** Variables that change how a load should run; read once, shown by `plan`. */
const VARIABLE_PATTERNS = [
  'local_infile',
  'max_allowed_packet',
  'secure_file_priv',
  'sql_mode',
  'max_error_count',
  'innodb_autoinc_lock_mode',
  'innodb_buffer_pool_size',
  'innodb_flush_log_at_trx_commit',
  'innodb_page_size',
  'innodb_compression_algorithm',
  'innodb_file_per_table',
  'innodb_change_buffering',
  'innodb_lock_wait_timeout',
  'unique_checks',
  'foreign_key_checks',
  'log_bin',
  'binlog_format',
  'sql_log_bin',
  'autocommit',
  'character_set_database',
  'character_set_server',
  'lower_case_table_names',
  'thread_pool_size',
  'max_user_connections',
  'bulk_insert_buffer_size',
  'myisam_sort_buffer_size',
  'aria_sort_buffer_size',
  'version_comment',
  'rocksdb_%',
  'tokudb_%',
];

async function rows<T>(conn: Conn, sql: string, values?: unknown[]): Promise<T[]> {
  const [r] = await conn.query(sql, values);
  return r as T[];
}

export function parseVersion(version: string, comment: string): { flavor: Flavor; number: [number, number, number] } {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  const number: [number, number, number] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  const text = `${version} ${comment}`;
  let flavor: Flavor = 'mysql';
  if (/mariadb/i.test(text)) flavor = 'mariadb';
  else if (/tidb/i.test(text)) flavor = 'tidb';
  else if (/percona/i.test(text)) flavor = 'percona';
  else if (!m) flavor = 'unknown';
  return { flavor, number };
}

/**
 * The account's connection limit and the connections it has open now,
 * undefined when it has no limit. The session value of max_user_connections
 * is the account's MAX_USER_CONNECTIONS when it has one, else the global
 * value; 0 is no limit. The count is of the user name's connections, which
 * is the account's or more (another host's account of the same name): a
 * conservative count.
 */
export async function readAccountConnections(conn: Conn, sessionLimit?: string): Promise<AccountConnections | undefined> {
  const limit = Number(sessionLimit ?? (await rows<{ v: unknown }>(conn, 'SELECT @@SESSION.max_user_connections AS v'))[0]?.v);
  if (!(limit > 0)) return undefined;
  const [r] = await rows<{ n: unknown }>(conn, "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)");
  return { limit, open: Math.max(1, Number(r?.n ?? 1)) };
}

export async function readServerFacts(conn: Conn): Promise<ServerFacts> {
  const variables: Record<string, string> = {};
  // One round trip for every pattern (one statement each was 30 round trips, on the path to the first row).
  const vs = await rows<{ Variable_name: string; Value: string }>(
    conn,
    `SHOW SESSION VARIABLES WHERE ${VARIABLE_PATTERNS.map(() => 'Variable_name LIKE ?').join(' OR ')}`,
    VARIABLE_PATTERNS,
  );
  for (const v of vs) variables[v.Variable_name.toLowerCase()] = v.Value;
  // Globals that a session value can hide (local_infile is global-only; max_allowed_packet's session copy is read-only).
  const globals = await rows<Record<string, string | null>>(
    conn,
    'SELECT @@GLOBAL.local_infile AS local_infile, @@GLOBAL.max_allowed_packet AS max_allowed_packet, @@version AS version',
  );
  const g = globals[0] ?? {};
  const version = String(g['version'] ?? '');
  const engines: Record<string, string> = {};
  for (const e of await rows<{ Engine: string; Support: string }>(conn, 'SHOW ENGINES')) {
    engines[e.Engine.toUpperCase()] = e.Support.toUpperCase();
  }
  // No grants readable: the privilege check then claims nothing missing and the server decides.
  const grants = await rows<Record<string, string>>(conn, 'SHOW GRANTS')
    .then((r) => r.map((x) => redactGrant(String(Object.values(x)[0]))))
    .catch(() => [] as string[]);
  const user = await rows<{ u: string }>(conn, 'SELECT CURRENT_USER() AS u').catch(() => []);
  const { flavor, number } = parseVersion(version, variables['version_comment'] ?? '');
  const cpus = Number(variables['thread_pool_size']);
  // A server without wsrep variables (MySQL, TiDB) answers with nothing or an error: not a cluster node either way.
  const galera = await readGaleraFacts(conn).catch(() => undefined);
  const accountConnections = await readAccountConnections(conn, variables['max_user_connections'] ?? '0');
  return {
    flavor,
    version,
    versionNumber: number,
    engines,
    variables,
    localInfile: ['1', 'ON'].includes(String(g['local_infile'] ?? variables['local_infile'] ?? '').toUpperCase()),
    maxAllowedPacketBytes: Number(g['max_allowed_packet'] ?? variables['max_allowed_packet'] ?? 16 << 20),
    binlog: (variables['log_bin'] ?? 'OFF').toUpperCase() === 'ON',
    grants,
    currentUser: user[0]?.u,
    lowerCaseTableNames: Number(variables['lower_case_table_names'] ?? 0),
    serverCpus: Number.isFinite(cpus) && cpus > 0 ? cpus : undefined,
    ...(galera?.wsrepOn ? { galera } : {}),
    ...(accountConnections ? { accountConnections } : {}),
  };
}
