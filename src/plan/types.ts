import type { FileFormat } from '../config/format.js';
import type { LoadMode, StrategyName } from '../config/loadOptions.js';
import type { FileKey } from '../introspect/keySpec.js';
import type { InputFacts, ServerFacts, TableFacts } from '../introspect/types.js';
import type { ColumnTarget, DuplicateHandling } from '../config/loadOptions.js';
import type { Step, TableRef } from './ops.js';

/** The user's choices that shape a plan (validated LoadOptions, minus I/O details). */
export interface PlanOptions {
  strategy: StrategyName | undefined;
  mode: LoadMode;
  jobs: number | undefined;
  chunkSizeBytes: number;
  /** --chunk-size was given: the planner keeps it (engine limits aside) instead of choosing. */
  chunkSizeGiven?: boolean | undefined;
  columns: ColumnTarget[] | undefined;
  format: FileFormat;
  onDuplicate: DuplicateHandling;
  allowDdl: boolean;
  keepOld: boolean;
  /** The order rows are sent in: the clustered key's (sorted out of core), the file's with each chunk sorted by that key, the file's, or the planner's choice. */
  order: 'auto' | 'key' | 'chunk' | 'file';
  maxErrors: number;
  /** --allow-truncation: a value the server changes with a warning loads changed (the key the sort read is not the one stored). */
  allowTruncation?: boolean | undefined;
  /** An input sorted by key whose in-memory sort holds at most this much is sorted in memory (--sort-memory). */
  sortMemoryBytes: number;
  /** An export's in-memory sorts run in a worker thread that moves the input into a second copy: counted twice. */
  sortsAside?: boolean | undefined;
  /** Cores on the client machine (the planner must not read os itself). */
  clientCpus: number;
  /** The loading connections are an export's, fitted to the account's connection limit there: not again per table. */
  connectionsBudgeted?: boolean | undefined;
  /** --binlog: write the load to the binary log or not (undefined: the server's own setting). */
  binlog?: 'on' | 'off' | undefined;
  /** --bulk-insert: MariaDB's empty-table bulk insert where it is safe (auto), also with binary logging on (on), never (off). Absent: auto. */
  bulkInsert?: 'auto' | 'on' | 'off' | undefined;
  /** A throttle (--max-rate, --replica, --max-threads-running) paces the load chunk by chunk. */
  throttled?: boolean | undefined;
}

export interface PlanFacts {
  server: ServerFacts;
  table: TableFacts;
  input: InputFacts;
}

/**
 * How chunks commit:
 * - 'chunk': each chunk is one transaction with its bookkeeping row (exactly once).
 * - 'load': the whole load is one transaction on one connection, begun by the
 *   session steps and committed by the session's end (MariaDB's InnoDB
 *   empty-table bulk insert): a chunk cannot roll back alone, and a resume
 *   starts again from the first record (guarantee 'restart-required');
 * - 'none': the engine cannot roll back (MyISAM, Aria, MyRocks bulk load);
 *   see `guarantee` for what resume does instead.
 */
export type CommitScope = 'chunk' | 'load' | 'none';

/** What flatload promises if the load is interrupted, in words the plan prints. */
export interface Guarantee {
  kind: 'exactly-once' | 'exactly-once-by-key-range' | 'exactly-once-by-row-count' | 'restart-required';
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
  /** The key column is dropped for the load and re-added afterwards (needs --allow-ddl; the steps are in `before`/`after`). */
  | { kind: 'defer'; column: string }
  /** The server generates the values (no bulk-path benefit lost on this engine). */
  | { kind: 'server'; column: string };

/** The order rows reach the engine in. */
export type OrderPlan =
  /**
   * Chunks cut in file order, as the file has them; with sortedBy, each
   * chunk's records sorted by that key in memory before it is sent (--order
   * chunk, or where the whole input cannot be sorted): no disk, and each chunk
   * one sweep of the tree in key order (docs/ordering.md#10-sorting-each-chunk).
   */
  | { kind: 'file'; sortedBy?: FileKey }
  /**
   * The whole input sorted by the clustered key (out of core: sorted runs in
   * --tmpdir, merged; or, inMemory, read whole and sorted in one piece, and
   * spillBytes 0), cut into chunks whose key ranges are disjoint and
   * adjacent, so the engine appends instead of inserting all over its tree.
   * A stored plan without inMemory sorts out of core. runRatio: the sample's
   * compressed / raw ratio spillBytes was scaled by (absent: uncompressed).
   */
  | { kind: 'key'; key: FileKey; spillBytes: number; inMemory?: boolean; runRatio?: number };

/**
 * The stored plan's format: a resumed load runs the plan it stored, so a
 * plan written by another version of this structure is refused, not guessed.
 */
export const PLAN_VERSION = 4;
/** Stored plans this version still runs: version 4 only added the `load` commit scope and the `transaction` step. */
export const RUNNABLE_PLAN_VERSIONS: readonly number[] = [3, PLAN_VERSION];

export interface LoadPlan {
  version: number;
  strategy: StrategyName;
  /** --strategy overrode the planner's own choice. */
  forced: boolean;
  /** What the planner would have chosen, when forced differs. */
  plannerChoice: StrategyName;
  mode: LoadMode;
  /** The table the chunks load into: the target, or its shadow copy in swap mode. */
  loadTarget: TableRef;
  target: TableRef;
  concurrency: number;
  chunkSizeBytes: number;
  commitScope: CommitScope;
  /** On every loading connection before its first chunk (SET SESSION …, a session-wide bulk load). */
  session: Step[];
  /** On every loading connection after its last chunk, and checked (MyRocks reports a failed bulk load here). */
  sessionEnd: Step[];
  /** Right before each chunk's load statement, inside its transaction (a per-chunk bulk load). */
  chunkBefore: Step[];
  /** Right after it, before its bookkeeping row and COMMIT, and checked: an error fails the chunk. */
  chunkAfter: Step[];
  /**
   * Upper bound on records per chunk (besides chunkSizeBytes), when an engine
   * limit counts rows (MyRocks rocksdb_max_row_locks). undefined: no bound.
   */
  chunkMaxRecords?: number | undefined;
  /** Once, before the first chunk (emptying or creating the load target, dropping indexes). */
  before: Step[];
  /** Once, after the last chunk (indexes back, AUTO_INCREMENT, the swap). */
  after: Step[];
  /**
   * What a resumed load runs to undo an interrupted attempt, as the guarantee
   * says: empty the table (restart-required) or delete the interrupted
   * chunk's key range (exactly-once-by-key-range).
   */
  onResume: Step[];
  /** Column list for the load statement (undefined: all columns in table order). */
  columns: ColumnTarget[] | undefined;
  surrogateKey: SurrogateKeyPlan | undefined;
  /** The order the rows are sent in. */
  order: OrderPlan;
  /** For strategy insert: bytes per INSERT statement (under max_allowed_packet). */
  insertBatchBytes: number | undefined;
  duplicates: DuplicateHandling;
  guarantee: Guarantee;
  /** One line per decision, naming the fact behind it. */
  reasons: string[];
  warnings: string[];
}
