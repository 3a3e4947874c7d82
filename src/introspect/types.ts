/** Facts read from the server, the table and the input; the planner's only inputs besides options. */
import type { GaleraFacts } from './cluster.js';

export type Flavor = 'mariadb' | 'mysql' | 'percona' | 'tidb' | 'unknown';

export interface ServerFacts {
  flavor: Flavor;
  /** As the server reports it, e.g. "10.11.19-MariaDB-0+deb12u1". */
  version: string;
  /** [major, minor, patch]. */
  versionNumber: [number, number, number];
  /** ENGINE -> SUPPORT (YES, DEFAULT, NO, DISABLED), upper-case engine names. */
  engines: Record<string, string>;
  /** Lower-case variable name -> value, for the variables that matter to loading. */
  variables: Record<string, string>;
  localInfile: boolean;
  maxAllowedPacketBytes: number;
  /** Binary logging on (log_bin). */
  binlog: boolean;
  /** Privileges of the current user as SHOW GRANTS states them (password hashes redacted). */
  grants: string[];
  /** CURRENT_USER(), e.g. "loader@%". */
  currentUser: string | undefined;
  /** lower_case_table_names: 1 or 2 make table names case-insensitive. */
  lowerCaseTableNames: number;
  /** Best guess of the server's CPU count (thread_pool_size defaults to it on MariaDB). */
  serverCpus: number | undefined;
  /** The node's Galera facts when it replicates (wsrep_on with a provider); undefined on a plain server. */
  galera?: GaleraFacts | undefined;
  /** The account's connection limit and use; undefined when it has none. */
  accountConnections?: AccountConnections | undefined;
}

export interface AccountConnections {
  /** The account's MAX_USER_CONNECTIONS, as the session value of max_user_connections shows it. */
  limit: number;
  /** Connections the account has open, the one that asked included. */
  open: number;
}

export interface ColumnFacts {
  name: string;
  ordinal: number;
  dataType: string;
  columnType: string;
  nullable: boolean;
  defaultValue: string | null;
  /** e.g. "auto_increment", "VIRTUAL GENERATED". */
  extra: string;
  maxChars: number | null;
  characterSet: string | null;
  /** COLLATION_NAME (text columns); absent in facts stored before it was read. */
  collation?: string | null | undefined;
  generated: boolean;
}

export interface IndexFacts {
  name: string;
  unique: boolean;
  primary: boolean;
  columns: string[];
  /** BTREE, FULLTEXT, SPATIAL, HASH, LSM ... */
  type: string;
}

export interface ForeignKeyFacts {
  name: string;
  columns: string[];
  referencedTable: string;
}

export interface TriggerFacts {
  name: string;
  event: string;
  timing: string;
}

export interface TableFacts {
  db: string;
  table: string;
  /** Upper-case engine name, e.g. INNODB, ROCKSDB, ARIA, MYISAM, TOKUDB. */
  engine: string;
  rowFormat: string | null;
  createOptions: string;
  /** Default character set of the table. */
  charset: string | null;
  columns: ColumnFacts[];
  indexes: IndexFacts[];
  /** The explicit PRIMARY KEY, if any. */
  primaryKey: IndexFacts | undefined;
  /**
   * The key the engine clusters rows by: the PRIMARY KEY, else (InnoDB,
   * MyRocks) the first UNIQUE key whose columns are all NOT NULL.
   */
  clusteredKey: IndexFacts | undefined;
  autoIncrementColumn: string | undefined;
  autoIncrementNext: string | null;
  foreignKeys: ForeignKeyFacts[];
  /** Foreign keys in other tables that reference this one. */
  referencedBy: number;
  triggers: TriggerFacts[];
  partitioned: boolean;
  empty: boolean;
  /** information_schema estimate. */
  approxRows: number;
  /** CREATE TABLE text, for swap mode and bench. */
  createSql: string;
}

/** What flatload learned about the input before loading (a sample; never the whole file). */
export interface InputFacts {
  /** As the user named it. */
  path: string;
  kind: 'file' | 'stdin';
  compression: 'none' | 'gzip' | 'zstd';
  /** Bytes on disk; undefined for stdin. */
  sizeBytes: number | undefined;
  /** The file can be re-read by byte range (plain file): parallel chunks, resume, multi-pass plans. */
  seekable: boolean;
  /** Fields per record in the sample (most common count), undefined when the sample was empty. */
  sampleFieldCount: number | undefined;
  sampleRecords: number;
  /** The sample laid out as a sorted run and compressed with the runs' codec: compressed / raw bytes (introspect/runRatio.ts). */
  sampleRunRatio?: number | undefined;
  /** Average record length in the sample, bytes. */
  avgRecordBytes: number | undefined;
  /** Estimated records in the whole input (size / avg), undefined when unknown. */
  estimatedRecords: number | undefined;
  /**
   * Whether the sampled records arrive in ascending clustered-key order:
   * 'sorted', 'unsorted', or 'unknown' (no key, key not in the file, or not comparable).
   */
  keyOrder: 'sorted' | 'unsorted' | 'unknown';
  /** The same for every UNIQUE key whose columns are all in the file, by index name (the clustered key's included). */
  uniqueKeyOrder: Record<string, 'sorted' | 'unsorted'>;
  /** Column names read from a header line (--ignore-lines 1 with names), if any. */
  headerColumns: string[] | undefined;
  /** Free bytes where sort runs would be written (--tmpdir), when known: ordering by key needs about the input's size. */
  spillFreeBytes: number | undefined;
  /** That directory (--tmpdir or the system's), for messages. */
  spillDir?: string | undefined;
  /** Why no runs can be written there (read-only, missing, not writable), when that is so. */
  spillUnwritable?: string | undefined;
  /** The input was streamed into --tmpdir (standard input, compressed) and sizeBytes is that copy's. */
  spooled?: boolean;
}
