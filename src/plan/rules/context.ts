/**
 * What every engine rule needs to know, derived once from the facts and the
 * options: no I/O, no clock, no os. Each rule returns an EngineDecision; the
 * planner wraps it with the mode (replace/swap) and surrogate-key steps.
 *
 * Source tags in reasons name the section of the docs that holds the fact
 * and its public source: [docs/rules.md#myrocks-bulk-load] and the like; a
 * claim no published run holds says "not measured here" and prints no figure.
 */
import type { StrategyName } from '../../config/loadOptions.js';
import type { ColumnFacts, IndexFacts, InputFacts, ServerFacts, TableFacts } from '../../introspect/types.js';
import type { ColumnTarget } from '../../config/loadOptions.js';
import type { Step } from '../ops.js';
import type { CommitScope, Guarantee, OrderPlan, PlanOptions } from '../types.js';

export type EngineKind = 'innodb' | 'rocksdb' | 'tokudb' | 'myisam' | 'aria' | 'other';

/** How the load target is empty before the first chunk. */
export type EmptyHow =
  /** It is empty now (introspection). */
  | 'already'
  /** replace mode, TRUNCATE TABLE. */
  | 'truncate'
  /** replace mode, DELETE FROM (InnoDB keeps delete-marked records until purge: not "empty" for its bulk path). */
  | 'delete'
  /** swap mode: a new CREATE TABLE … LIKE shadow. */
  | 'shadow'
  /** append into a table with rows. */
  | 'no';

export interface AutoIncInfo {
  column: string;
  /** Whether the file carries the column. */
  inFile: 'yes' | 'no' | 'unknown';
  /** How inFile was decided (for the reason line). */
  how: string;
}

export interface Ctx {
  server: ServerFacts;
  table: TableFacts;
  input: InputFacts;
  options: PlanOptions;
  engine: EngineKind;
  /** LOAD DATA LOCAL or multi-row INSERT. */
  transport: 'load-data' | 'insert';
  strategy: StrategyName;
  /** The table chunks load into (the shadow in swap mode). */
  loadTarget: { db: string; table: string };
  emptyHow: EmptyHow;
  /** The load target has no rows (and no delete-marked rows) when the first chunk arrives. */
  emptyAtStart: boolean;
  /** Concurrency the planner would use when nothing limits it. */
  parallel: number;
  /** --jobs was given. */
  jobsForced: boolean;
  autoInc: AutoIncInfo | undefined;
  /** The AUTO_INCREMENT key is absent from the file and will be pre-assigned by flatload. */
  preAssign: boolean;
  /** Column list for the load statement. */
  columns: ColumnTarget[] | undefined;
  /** Names of the table columns the file's fields go to. */
  columnsInFile: string[];
  /** The AUTO_INCREMENT surrogate is dropped for the load and re-added after it (--allow-ddl). */
  surrogateDefer: boolean;
  /** The rows reach the engine in ascending clustered-key order (sorted input, ordered by flatload, or a pre-assigned clustered surrogate). */
  keyOrdered: boolean;
  /** Why keyOrdered is what it is. */
  keyOrderWhy: string;
  /** How the rows are ordered before they are sent (decided before the engine rule). */
  order: OrderPlan;
  /** Indexes other than the clustered key / PRIMARY KEY. */
  secondary: IndexFacts[];
  /** Secondary indexes that may be dropped for the load and re-added in one ALTER (non-unique, BTREE, not needed by a FK or AUTO_INCREMENT). */
  droppable: IndexFacts[];
  insertTriggers: number;
  /** MariaDB's empty-table bulk insert loads the table (rules/innodb.ts choosesBulkInsert): one transaction, file order. */
  bulkInsert: boolean;
  reasons: string[];
  warnings: string[];
}

export interface EngineDecision {
  concurrency: number;
  commitScope: CommitScope;
  guarantee: Guarantee;
  session: Step[];
  sessionEnd: Step[];
  chunkBefore: Step[];
  chunkAfter: Step[];
  before: Step[];
  after: Step[];
  chunkSizeBytes: number;
  chunkMaxRecords: number | undefined;
}

/** What every engine starts from: parallel per-chunk transactions, exactly once, nothing around them. */
export function baseDecision(ctx: Ctx): EngineDecision {
  return {
    concurrency: ctx.parallel,
    commitScope: 'chunk',
    guarantee: exactlyOnce(),
    session: [],
    sessionEnd: [],
    chunkBefore: [],
    chunkAfter: [],
    before: [],
    after: [],
    chunkSizeBytes: ctx.options.chunkSizeBytes,
    chunkMaxRecords: undefined,
  };
}

export function engineKind(engine: string): EngineKind {
  switch (engine.toUpperCase()) {
    case 'INNODB':
    case 'XTRADB':
      return 'innodb';
    case 'ROCKSDB':
      return 'rocksdb';
    case 'TOKUDB':
      return 'tokudb';
    case 'MYISAM':
      return 'myisam';
    case 'ARIA':
      return 'aria';
    default:
      return 'other';
  }
}

export function versionAtLeast(server: ServerFacts, v: [number, number, number]): boolean {
  const [a, b, c] = server.versionNumber;
  if (a !== v[0]) return a > v[0];
  if (b !== v[1]) return b > v[1];
  return c >= v[2];
}

export function versionText(server: ServerFacts): string {
  const name = server.flavor === 'mariadb' ? 'MariaDB' : server.flavor === 'percona' ? 'Percona Server' : server.flavor === 'mysql' ? 'MySQL' : server.flavor === 'tidb' ? 'TiDB' : 'server';
  return `${name} ${server.versionNumber.join('.')}`;
}

export function variable(server: ServerFacts, name: string): string | undefined {
  return server.variables[name.toLowerCase()];
}

export function isOn(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toUpperCase();
  if (v === 'ON' || v === '1' || v === 'TRUE' || v === 'YES') return true;
  if (v === 'OFF' || v === '0' || v === 'FALSE' || v === 'NO') return false;
  return undefined;
}

/** Columns LOAD DATA can write (generated columns cannot be loaded). */
export function loadableColumns(table: TableFacts): ColumnFacts[] {
  return table.columns.filter((c) => !c.generated);
}

export function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function indexList(ix: readonly IndexFacts[]): string {
  return ix.map((i) => i.name).join(', ');
}


/** The standard per-chunk InnoDB-style guarantee: the chunk and its bookkeeping row commit together. */
export function exactlyOnce(): Guarantee {
  return {
    kind: 'exactly-once',
    text: 'each chunk commits in one transaction together with its bookkeeping row: after any interruption, resume skips committed chunks and reloads the rest, so every record lands exactly once',
  };
}

/** Bytes per chunk that keep a chunk under `maxRecords` records, with a 2x margin on the sampled record size. */
export function bytesForRecords(maxRecords: number, avgRecordBytes: number | undefined): number | undefined {
  if (avgRecordBytes === undefined || avgRecordBytes <= 0) return undefined;
  return Math.max(64 * 1024, Math.floor((maxRecords * avgRecordBytes) / 2));
}
