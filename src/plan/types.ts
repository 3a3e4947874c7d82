import type { FileFormat } from '../config/format.js';
import type { LoadMode, StrategyName } from '../config/loadOptions.js';
import type { ServerFacts, TableFacts } from '../introspect/types.js';
import type { ColumnTarget, DuplicateHandling } from './sql.js';

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
  /** Average record length in the sample, bytes. */
  avgRecordBytes: number | undefined;
  /** Estimated records in the whole input (size / avg), undefined when unknown. */
  estimatedRecords: number | undefined;
  /**
   * Whether the sampled records arrive in ascending clustered-key order:
   * 'sorted', 'unsorted', or 'unknown' (no key, key not in the file, or not comparable).
   */
  keyOrder: 'sorted' | 'unsorted' | 'unknown';
  /** Column names read from a header line (--ignore-lines 1 with names), if any. */
  headerColumns: string[] | undefined;
}

/** The user's choices that shape a plan (validated LoadOptions, minus I/O details). */
export interface PlanOptions {
  strategy: StrategyName | undefined;
  mode: LoadMode;
  jobs: number | undefined;
  chunkSizeBytes: number;
  columns: ColumnTarget[] | undefined;
  format: FileFormat;
  onDuplicate: DuplicateHandling;
  allowDdl: boolean;
  keepOld: boolean;
  sortChunks: 'auto' | 'on' | 'off';
  maxErrors: number;
  /** Cores on the client machine (the planner must not read os itself). */
  clientCpus: number;
}

export interface PlanFacts {
  server: ServerFacts;
  table: TableFacts;
  input: InputFacts;
}

/** A statement the plan runs once, before the first chunk or after the last, and why. */
export interface PlannedStatement {
  sql: string;
  reason: string;
  /**
   * Running it a second time does no harm (e.g. ENABLE KEYS, SET ...). When
   * false or absent the executor must record that it ran and never run it
   * again for the same load, e.g. on resume (TRUNCATE, DROP INDEX, RENAME).
   */
  idempotent?: boolean;
}

export interface SessionSetting {
  name: string;
  value: string;
  reason: string;
}

/**
 * How chunks commit:
 * - 'chunk': each chunk is one transaction with its bookkeeping row (exactly once).
 * - 'load': the whole load is one transaction on one connection (engine bulk
 *   paths that only work for the first statement after the table was empty).
 * - 'none': the engine cannot roll back (MyISAM, Aria, MyRocks bulk load);
 *   see `guarantee` for what resume does instead.
 */
export type CommitScope = 'chunk' | 'load' | 'none';

/** What flatload promises if the load is interrupted, in words the plan prints. */
export interface Guarantee {
  kind: 'exactly-once' | 'all-or-nothing' | 'exactly-once-by-key-range' | 'exactly-once-by-row-count' | 'restart-required';
  text: string;
  /**
   * For 'exactly-once-by-key-range': the column(s) whose per-chunk range
   * identifies a chunk's rows (the pre-assigned surrogate key, or the
   * clustered key of key-ordered input).
   */
  keyColumns?: string[];
}

/** Surrogate AUTO_INCREMENT key handling when the file does not carry it. */
export type SurrogateKeyPlan =
  /** Each record gets firstValue + its record number (dense, in file order), sent explicitly. */
  | { kind: 'pre-assign'; column: string; firstValue: string }
  /** The key column is dropped for the load and re-added afterwards (needs --allow-ddl). */
  | { kind: 'defer'; column: string; restoreSql: string[] }
  /** The server generates the values (no bulk-path benefit lost on this engine). */
  | { kind: 'server'; column: string };

export interface LoadPlan {
  strategy: StrategyName;
  /** --strategy overrode the planner's own choice. */
  forced: boolean;
  /** What the planner would have chosen, when forced differs. */
  plannerChoice: StrategyName;
  mode: LoadMode;
  /** The table the chunks load into: the target, or its shadow copy in swap mode. */
  loadTarget: { db: string; table: string };
  target: { db: string; table: string };
  concurrency: number;
  chunkSizeBytes: number;
  commitScope: CommitScope;
  /** SET SESSION on every loading connection, before its first chunk. */
  sessionSettings: SessionSetting[];
  /** SQL run on every loading connection after its last chunk, and checked (e.g. SET rocksdb_bulk_load=0). */
  sessionEnd: PlannedStatement[];
  /**
   * Engine statements run on the chunk's connection right before its load
   * statement (inside the chunk's transaction when commitScope is 'chunk'),
   * e.g. SET rocksdb_bulk_load=1. The surrogate-key `SET @flatload_key` is
   * not listed here: it follows from `surrogateKey`.
   */
  chunkBefore?: PlannedStatement[];
  /**
   * Run right after the chunk's load statement, before its bookkeeping row
   * and COMMIT, and checked: an error here fails the chunk (e.g.
   * SET rocksdb_bulk_load=0, which is where MyRocks reports 4054/4055).
   */
  chunkAfter?: PlannedStatement[];
  /**
   * For display (explain / --json): the SQL one chunk runs, in order, with
   * placeholders {{chunkFirstKey}} (first pre-assigned key of the chunk) and
   * N (chunk index). The executor builds the real statements.
   */
  chunkTemplate?: string[];
  /**
   * Upper bound on records per chunk (besides chunkSizeBytes), when an engine
   * limit counts rows (MyRocks rocksdb_max_row_locks). undefined: no bound.
   */
  chunkMaxRecords?: number | undefined;
  before: PlannedStatement[];
  after: PlannedStatement[];
  /** Column list for the load statement (undefined: all columns in table order). */
  columns: ColumnTarget[] | undefined;
  surrogateKey: SurrogateKeyPlan | undefined;
  /** Rows are sent sorted by the clustered key within each chunk. */
  sortChunks: boolean;
  /** For strategy insert: bytes per INSERT statement (under max_allowed_packet). */
  insertBatchBytes: number | undefined;
  duplicates: DuplicateHandling;
  guarantee: Guarantee;
  /** One line per decision, naming the fact behind it. */
  reasons: string[];
  warnings: string[];
}
