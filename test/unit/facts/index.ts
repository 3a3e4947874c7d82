/**
 * Fact sets for planner tests.
 *
 * - mariadb-10.11.json: RECORDED from a throwaway MariaDB 10.11.19 (the
 *   devserver flags) with readServerFacts/readTableFacts/sampleInput on the
 *   fixtures tables and generated files, before ServerFacts had
 *   currentUser and lowerCaseTableNames (the recording script is not kept).
 * - Everything else is hand-written from each server's documented defaults,
 *   because MySQL 8.0/8.4, Percona Server (TokuDB, MyRocks) and MariaDB
 *   10.5/10.6 cannot run here. Each builder names its sources.
 */
import { DEFAULT_SORT_MEMORY } from '../../../src/config/loadOptions.js';
import { resolveFormat } from '../../../src/config/format.js';
import type { PlanOptions } from '../../../src/plan/types.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IndexFacts, ServerFacts, TableFacts } from '../../../src/introspect/types.js';
import type { InputFacts } from '../../../src/introspect/types.js';
import type { GaleraFacts } from '../../../src/introspect/cluster.js';

const here = dirname(fileURLToPath(import.meta.url));

interface Recorded {
  recordedFrom: string;
  /** Recorded before ServerFacts had currentUser and lowerCaseTableNames. */
  server: Omit<ServerFacts, 'currentUser' | 'lowerCaseTableNames'>;
  tables: Record<string, TableFacts>;
  inputs: Record<string, InputFacts>;
}

const recorded = JSON.parse(readFileSync(join(here, 'mariadb-10.11.json'), 'utf8')) as Recorded;

function clone<T>(x: T): T {
  return JSON.parse(JSON.stringify(x)) as T;
}

export const RECORDED_FROM = recorded.recordedFrom;

/** What the hand-written servers say, and the recording lacks: no CURRENT_USER() read, lower_case_table_names 0 (the Linux default). */
const NOT_RECORDED: Pick<ServerFacts, 'currentUser' | 'lowerCaseTableNames'> = { currentUser: undefined, lowerCaseTableNames: 0 };

/** The recorded MariaDB 10.11.19 server (local_infile ON, lock mode 1, 2 cpus, no binlog, MyRocks loaded). */
export function mariadb1011(): ServerFacts {
  return { ...NOT_RECORDED, ...clone(recorded.server) };
}

/** A recorded table, e.g. table('user3', 'InnoDB'), table('user3', 'InnoDB', 'nonempty'). */
export function table(name: string, engine: string, variant?: string): TableFacts {
  const key = [name, engine, variant].filter(Boolean).join(':');
  const t = recorded.tables[key];
  if (!t) throw new Error(`no recorded table ${key}; have ${Object.keys(recorded.tables).join(', ')}`);
  return clone(t);
}

/** A recorded input sample: 'us.tsv', 'us_sorted.tsv', 'u3.tsv (no id)', 'u3_ids.tsv', 'sb_ids.tsv', 'sb.tsv (no id)', 'pi.tsv (no id)', 'pi_ids.tsv'. */
export function input(name: string): InputFacts {
  const i = recorded.inputs[name];
  if (!i) throw new Error(`no recorded input ${name}`);
  // Recorded before these facts existed: no UNIQUE key's order known, no spill space measured.
  const c = clone(i) as Partial<InputFacts> & Omit<InputFacts, 'uniqueKeyOrder' | 'spillFreeBytes'>;
  return { ...c, uniqueKeyOrder: c.uniqueKeyOrder ?? {}, spillFreeBytes: c.spillFreeBytes };
}

/** Keep the recorded server but change what a test is about. */
export function withVars(s: ServerFacts, vars: Record<string, string>, patch: Partial<ServerFacts> = {}): ServerFacts {
  return { ...clone(s), ...patch, variables: { ...s.variables, ...vars } };
}

const COMMON_MYSQL8_VARS: Record<string, string> = {
  local_infile: 'OFF',
  max_allowed_packet: '67108864',
  secure_file_priv: '/var/lib/mysql-files/',
  sql_mode: 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',
  max_error_count: '1024',
  innodb_autoinc_lock_mode: '2',
  innodb_buffer_pool_size: '134217728',
  innodb_flush_log_at_trx_commit: '1',
  innodb_page_size: '16384',
  innodb_file_per_table: 'ON',
  innodb_lock_wait_timeout: '50',
  unique_checks: 'ON',
  foreign_key_checks: 'ON',
  log_bin: 'ON',
  binlog_format: 'ROW',
  sql_log_bin: 'ON',
  autocommit: 'ON',
  character_set_database: 'utf8mb4',
  character_set_server: 'utf8mb4',
  bulk_insert_buffer_size: '8388608',
  myisam_sort_buffer_size: '8388608',
};

const MYSQL_ENGINES: Record<string, string> = {
  INNODB: 'DEFAULT',
  MYISAM: 'YES',
  MEMORY: 'YES',
  CSV: 'YES',
  ARCHIVE: 'YES',
  BLACKHOLE: 'YES',
  MRG_MYISAM: 'YES',
  FEDERATED: 'NO',
  PERFORMANCE_SCHEMA: 'YES',
};

/**
 * MySQL 8.0.36 community, defaults: local_infile OFF (8.0 default), binlog ON,
 * innodb_autoinc_lock_mode 2, innodb_change_buffering all, max_allowed_packet
 * 64 MiB, no thread pool (serverCpus unknown). [MySQL 8.0 ref. server system variables]
 */
export function mysql80(): ServerFacts {
  return {
    flavor: 'mysql',
    version: '8.0.36',
    versionNumber: [8, 0, 36],
    engines: { ...MYSQL_ENGINES },
    variables: { ...COMMON_MYSQL8_VARS, innodb_change_buffering: 'all', version_comment: 'MySQL Community Server - GPL' },
    localInfile: false,
    maxAllowedPacketBytes: 67108864,
    binlog: true,
    grants: ["GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER ON `app`.* TO `loader`@`%`"],
    serverCpus: undefined,
    ...NOT_RECORDED,
  };
}

/** MySQL 8.4.3 LTS: as 8.0, but innodb_change_buffering defaults to none. [MySQL 8.4 ref.] */
export function mysql84(): ServerFacts {
  const s = mysql80();
  s.version = '8.4.3';
  s.versionNumber = [8, 4, 3];
  s.variables = { ...s.variables, innodb_change_buffering: 'none' };
  return s;
}

/**
 * TokuDB's defaults in Percona Server 5.7 and 8.0 ([Percona: TokuDB variables,
 * https://docs.percona.com/percona-server/5.7/tokudb/tokudb_variables.html]); tokudb_cache_size
 * defaults to half the machine's memory, so 4 GiB stands for an 8 GiB machine.
 */
const TOKUDB_VARS: Record<string, string> = {
  tokudb_prelock_empty: 'ON',
  tokudb_empty_scan: 'rl',
  tokudb_load_save_space: 'ON',
  tokudb_loader_memory_size: '100000000',
  tokudb_commit_sync: 'ON',
  tokudb_fsync_log_period: '0',
  tokudb_row_format: 'tokudb_zlib',
  tokudb_cache_size: '4294967296',
  tokudb_tmp_dir: '',
};

/** Percona Server 5.7.44-48 with TokuDB: local_infile ON and max_allowed_packet 4 MiB (5.7 defaults), lock mode 1, no binlog. [MySQL 5.7 ref. server system variables; TOKUDB_VARS above] */
export function percona57Tokudb(): ServerFacts {
  return {
    flavor: 'percona',
    version: '5.7.44-48',
    versionNumber: [5, 7, 44],
    engines: { ...MYSQL_ENGINES, TOKUDB: 'YES' },
    variables: {
      ...COMMON_MYSQL8_VARS,
      ...TOKUDB_VARS,
      local_infile: 'ON',
      max_allowed_packet: '4194304',
      innodb_autoinc_lock_mode: '1',
      log_bin: 'OFF',
      max_error_count: '64',
      innodb_change_buffering: 'all',
      version_comment: 'Percona Server (GPL), Release 48, Revision 497f936a373',
    },
    localInfile: true,
    maxAllowedPacketBytes: 4194304,
    binlog: false,
    grants: ['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'],
    serverCpus: undefined,
    ...NOT_RECORDED,
  };
}

/** Percona Server 8.0.25-15 with TokuDB (the last release before it was disabled in 8.0.26). */
export function percona80Tokudb(): ServerFacts {
  return {
    flavor: 'percona',
    version: '8.0.25-15',
    versionNumber: [8, 0, 25],
    engines: { ...MYSQL_ENGINES, TOKUDB: 'YES' },
    variables: { ...COMMON_MYSQL8_VARS, ...TOKUDB_VARS, innodb_change_buffering: 'all', version_comment: 'Percona Server (GPL), Release 15, Revision a558ec2' },
    localInfile: false,
    maxAllowedPacketBytes: 67108864,
    binlog: true,
    grants: ['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'],
    serverCpus: undefined,
    ...NOT_RECORDED,
  };
}

/** Percona Server 8.0.36-28 with MyRocks (ps-admin --enable-rocksdb), local_infile switched ON. [psmysql-docs variables.md] */
export function percona80Myrocks(): ServerFacts {
  return {
    flavor: 'percona',
    version: '8.0.36-28',
    versionNumber: [8, 0, 36],
    engines: { ...MYSQL_ENGINES, ROCKSDB: 'YES' },
    variables: {
      ...COMMON_MYSQL8_VARS,
      local_infile: 'ON',
      innodb_change_buffering: 'all',
      rocksdb_bulk_load: 'OFF',
      rocksdb_bulk_load_allow_sk: 'OFF',
      rocksdb_bulk_load_allow_unsorted: 'OFF',
      rocksdb_bulk_load_size: '1000',
      rocksdb_enable_bulk_load_api: 'ON',
      rocksdb_max_row_locks: '1048576',
      rocksdb_commit_in_the_middle: 'OFF',
      rocksdb_default_cf_options: 'compression=kLZ4Compression;bottommost_compression=kLZ4Compression',
      version_comment: 'Percona Server (GPL), Release 28, Revision 47601f19',
    },
    localInfile: true,
    maxAllowedPacketBytes: 67108864,
    binlog: true,
    grants: ['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'],
    serverCpus: undefined,
    ...NOT_RECORDED,
  };
}

/** MariaDB 10.5.23 (no empty-table bulk insert: that came in 10.6), from the recorded 10.11 variables. */
export function mariadb105(): ServerFacts {
  const s = mariadb1011();
  s.version = '10.5.23-MariaDB';
  s.versionNumber = [10, 5, 23];
  s.variables = { ...s.variables, innodb_change_buffering: 'all', version_comment: 'mariadb.org binary distribution' };
  return s;
}

/** MariaDB 10.6.16: bulk insert (MDEV-515/24818) but no sorted index build (10.7, MDEV-24621). */
export function mariadb106(): ServerFacts {
  const s = mariadb1011();
  s.version = '10.6.16-MariaDB';
  s.versionNumber = [10, 6, 16];
  s.variables = { ...s.variables, version_comment: 'mariadb.org binary distribution' };
  return s;
}

/** MariaDB 11.4.4 LTS. */
export function mariadb114(): ServerFacts {
  const s = mariadb1011();
  s.version = '11.4.4-MariaDB';
  s.versionNumber = [11, 4, 4];
  return s;
}

/** A recorded table as another server shows it: engine renamed, index type and CREATE text adjusted. */
export function tableOn(name: string, engine: 'InnoDB' | 'TokuDB' | 'RocksDB' | 'MyISAM', server: ServerFacts, variant?: string): TableFacts {
  const base = table(name, engine === 'TokuDB' ? 'InnoDB' : engine, variant);
  base.engine = engine.toUpperCase();
  const ixType = engine === 'RocksDB' ? (server.flavor === 'mariadb' ? 'LSMTREE' : 'SE_SPECIFIC') : 'BTREE';
  base.indexes = base.indexes.map((i: IndexFacts) => ({ ...i, type: ixType }));
  base.primaryKey = base.indexes.find((i) => i.primary);
  const c = base.clusteredKey;
  base.clusteredKey = c ? base.indexes.find((i) => i.name === c.name) : undefined;
  if (server.flavor !== 'mariadb') {
    base.createSql = base.createSql.replace(/ENGINE=\w+/, `ENGINE=${engine}`).replace(/COLLATE=\w+/, 'COLLATE=utf8mb4_0900_ai_ci');
    base.columns = base.columns.map((col) => ({ ...col, columnType: col.columnType.replace(/^(int|bigint)\(\d+\)/, '$1') }));
  }
  if (engine === 'TokuDB') base.rowFormat = 'tokudb_zlib';
  return base;
}

/** Plan options as a user gives none but these (the planner's own defaults otherwise). */
export function planOptions(o: Partial<PlanOptions> = {}): PlanOptions {
  return {
    strategy: undefined,
    mode: 'append',
    jobs: undefined,
    chunkSizeBytes: 64 << 20,
    columns: undefined,
    format: resolveFormat({}),
    onDuplicate: 'error',
    allowDdl: false,
    keepOld: false,
    order: 'auto',
    maxErrors: 0,
    sortMemoryBytes: DEFAULT_SORT_MEMORY,
    clientCpus: 2,
    ...o,
  };
}

/**
 * A Galera node of the throwaway 3-node cluster as readGaleraFacts read it
 * (test/db/clusters.test.ts asserts these values on the real cluster), with
 * the write-set limits a case is about.
 */
export function galeraNode(patch: Partial<GaleraFacts> = {}): GaleraFacts {
  return {
    wsrepOn: true,
    provider: '/usr/lib/galera/libgalera_smm.so',
    providerName: 'Galera',
    providerVersion: '26.4.23(r…)',
    nodeName: 'node1',
    clusterName: 'flatload',
    clusterSize: 3,
    clusterStatus: 'Primary',
    localState: 'Synced',
    ready: true,
    clusterStateUuid: null,
    maxWsSize: 2147483647,
    maxWsRows: 0,
    autoIncrementControl: true,
    autoIncrementIncrement: 3,
    autoIncrementOffset: 1,
    syncWait: 0,
    mode: '',
    loadDataSplitting: false,
    flowControl: { paused: 0, pausedNs: 0, sent: 0, received: 0 },
    incomingAddresses: ['127.0.0.1:3307', '127.0.0.1:3308', '127.0.0.1:3309'],
    ...patch,
  };
}

/** The recorded MariaDB 10.11 server as one node of a Galera cluster (Galera needs innodb_autoinc_lock_mode=2). */
export function mariadbGalera(patch: Partial<GaleraFacts> = {}): ServerFacts {
  return withVars(mariadb1011(), { innodb_autoinc_lock_mode: '2', binlog_format: 'ROW' }, { galera: galeraNode(patch) });
}
