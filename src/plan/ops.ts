/**
 * What a plan does, as typed operations. The planner builds them, the
 * executor dispatches on their kind, and the SQL of each is written in one
 * place (sqlOf) — the same text `flatload plan` shows and the load runs. The
 * privileges a plan needs are derived from the operations (plan/needs.ts),
 * never read back out of SQL text. Pure.
 */
import { quoteId, quoteQualified } from '../db/quote.js';
import { ER } from '../db/errnos.js';

export interface TableRef {
  db: string;
  table: string;
}

export interface IndexDef {
  name: string;
  columns: string[];
}

export type Op =
  /** Empty the table: drop and re-create (fast, resets AUTO_INCREMENT). */
  | { kind: 'truncate'; table: TableRef }
  /** Empty the table row by row (TRUNCATE is refused when foreign keys reference it). */
  | { kind: 'delete-all'; table: TableRef }
  | { kind: 'drop-table'; table: TableRef; ifExists: boolean }
  /** An empty copy with the same columns, indexes, engine and partitioning. */
  | { kind: 'create-like'; table: TableRef; like: TableRef }
  /** One atomic RENAME: target → old, shadow → target. */
  | { kind: 'swap-tables'; target: TableRef; shadow: TableRef; old: TableRef }
  /** Several tables swapped with their shadows in one RENAME TABLE: atomic on one server, so readers see the old set or the new. */
  | { kind: 'swap-set'; swaps: Array<{ target: TableRef; shadow: TableRef; old: TableRef }> }
  | { kind: 'drop-indexes'; table: TableRef; indexes: IndexDef[] }
  | { kind: 'add-indexes'; table: TableRef; indexes: IndexDef[] }
  /** Take the surrogate AUTO_INCREMENT column out of the table for the load. */
  | { kind: 'drop-column'; table: TableRef; column: string }
  /** Put it back as the AUTO_INCREMENT PRIMARY KEY (numbers the rows 1..N). */
  | { kind: 'add-auto-increment-key'; table: TableRef; column: string; columnType: string; after: string | null }
  | { kind: 'disable-keys'; table: TableRef }
  | { kind: 'enable-keys'; table: TableRef }
  /** AUTO_INCREMENT past the last pre-assigned key: firstValue + records in the input, known once the input is read. */
  | { kind: 'auto-increment-after-input'; table: TableRef; firstValue: string }
  | { kind: 'set-session'; name: string; value: string }
  /** MyRocks' bulk load for this session: on before rows, off to finalise (where it reports its errors). */
  | { kind: 'bulk-load'; on: boolean }
  /** The load's one transaction (MariaDB's empty-table bulk insert): begun before the first chunk, committed after the last. */
  | { kind: 'transaction'; edge: 'begin' | 'commit' }
  /** MyRocks: commit every rocksdb_bulk_load_size rows inside a statement (a chunk reloaded after an interrupted bulk load). */
  | { kind: 'commit-in-the-middle'; on: boolean }
  /** Resume: remove what an interrupted attempt at a chunk left, by the chunk's key range (bounds known per chunk). */
  | { kind: 'delete-key-range'; table: TableRef; columns: string[] };

export type OpKind = Op['kind'];

/** An operation in a plan, with why the plan does it (shown by `flatload plan`). */
export interface Step<O extends Op = Op> {
  op: O;
  reason: string;
}

/** A chunk's key range as SQL literals, its first key left out when the chunk before it ends with that key. */
export interface KeyRange {
  lo: string[];
  hi: string[];
  loExclusive?: boolean;
}

/** Values an operation's SQL needs that are known only while loading. */
export interface RunValues {
  /** Records in the whole input (auto-increment-after-input). */
  inputRecords?: number;
  /** SQL literals of a chunk's first and last key (delete-key-range); `loExclusive`: the first key is a committed chunk's. */
  keyRange?: KeyRange;
}

const t = (r: TableRef): string => quoteQualified(r.db, r.table);

function indexSql(ix: IndexDef): string {
  return `ADD INDEX ${quoteId(ix.name)} (${ix.columns.map(quoteId).join(', ')})`;
}

/** Where a run-time value goes, when the SQL is shown before it is known. */
export const PLACEHOLDER = {
  nextAutoIncrement: '{{nextAutoIncrement}}',
  /** A chunk's first pre-assigned key: the first value + the chunk's first record number. */
  chunkFirstKey: '{{chunkFirstKey}}',
  keyLow: '{{chunk first key}}',
  keyHigh: '{{chunk last key}}',
} as const;

/** The one SQL text of an operation. Without run-time values it shows placeholders (for `flatload plan`). */
export function sqlOf(op: Op, v: RunValues = {}): string {
  switch (op.kind) {
    case 'truncate':
      return `TRUNCATE TABLE ${t(op.table)}`;
    case 'delete-all':
      return `DELETE FROM ${t(op.table)}`;
    case 'drop-table':
      return `DROP TABLE ${op.ifExists ? 'IF EXISTS ' : ''}${t(op.table)}`;
    case 'create-like':
      return `CREATE TABLE ${t(op.table)} LIKE ${t(op.like)}`;
    case 'swap-tables':
      return `RENAME TABLE ${t(op.target)} TO ${t(op.old)}, ${t(op.shadow)} TO ${t(op.target)}`;
    case 'swap-set':
      return `RENAME TABLE ${op.swaps.map((w) => `${t(w.target)} TO ${t(w.old)}, ${t(w.shadow)} TO ${t(w.target)}`).join(', ')}`;
    case 'drop-indexes':
      return `ALTER TABLE ${t(op.table)} ${op.indexes.map((i) => `DROP INDEX ${quoteId(i.name)}`).join(', ')}`;
    case 'add-indexes':
      return `ALTER TABLE ${t(op.table)} ${op.indexes.map(indexSql).join(', ')}`;
    case 'drop-column':
      return `ALTER TABLE ${t(op.table)} DROP COLUMN ${quoteId(op.column)}`;
    case 'add-auto-increment-key':
      return `ALTER TABLE ${t(op.table)} ADD COLUMN ${quoteId(op.column)} ${op.columnType} NOT NULL AUTO_INCREMENT PRIMARY KEY ${op.after === null ? 'FIRST' : `AFTER ${quoteId(op.after)}`}`;
    case 'disable-keys':
      return `ALTER TABLE ${t(op.table)} DISABLE KEYS`;
    case 'enable-keys':
      return `ALTER TABLE ${t(op.table)} ENABLE KEYS`;
    case 'auto-increment-after-input': {
      const next = v.inputRecords === undefined ? PLACEHOLDER.nextAutoIncrement : (BigInt(op.firstValue) + BigInt(v.inputRecords)).toString();
      return `ALTER TABLE ${t(op.table)} AUTO_INCREMENT = ${next}`;
    }
    case 'set-session':
    case 'bulk-load':
    case 'commit-in-the-middle': {
      const v = sessionVariable(op)!;
      return `SET SESSION ${v.name} = ${v.value}`;
    }
    case 'transaction':
      return op.edge === 'begin' ? 'START TRANSACTION' : 'COMMIT';
    case 'delete-key-range': {
      const cols = `(${op.columns.map(quoteId).join(', ')})`;
      const lo = v.keyRange ? `(${v.keyRange.lo.join(', ')})` : PLACEHOLDER.keyLow;
      const hi = v.keyRange ? `(${v.keyRange.hi.join(', ')})` : PLACEHOLDER.keyHigh;
      return `DELETE FROM ${t(op.table)} WHERE ${cols} ${v.keyRange?.loExclusive === true ? '>' : '>='} ${lo} AND ${cols} <= ${hi}`;
    }
  }
}

/** The session variable an operation sets, if it is a setting. */
export function sessionVariable(op: Op): { name: string; value: string } | undefined {
  switch (op.kind) {
    case 'set-session':
      return { name: op.name, value: op.value };
    case 'bulk-load':
      return { name: 'rocksdb_bulk_load', value: op.on ? '1' : '0' };
    case 'commit-in-the-middle':
      return { name: 'rocksdb_commit_in_the_middle', value: op.on ? '1' : '0' };
    default:
      return undefined;
  }
}

/**
 * Whether running the operation twice does no harm (a setting, DISABLE
 * KEYS). The others run once per load: the job records that they ran and a
 * resume never repeats them (a second TRUNCATE would empty committed chunks).
 */
export function repeatable(op: Op): boolean {
  switch (op.kind) {
    case 'set-session':
    case 'bulk-load':
    case 'commit-in-the-middle':
    case 'disable-keys':
    case 'enable-keys':
    case 'auto-increment-after-input':
    case 'delete-key-range':
      return true;
    default:
      return false;
  }
}

/**
 * Server errors that mean a once-only operation already took effect: DDL is
 * atomic, but recording that it ran is a second statement, so a rerun after
 * a crash between the two finds its own work done.
 */
export function alreadyDoneErrnos(op: Op): readonly number[] {
  switch (op.kind) {
    case 'drop-indexes':
    case 'drop-column':
      return [ER.CANT_DROP_FIELD_OR_KEY];
    case 'add-indexes':
      return [ER.DUP_KEYNAME];
    case 'add-auto-increment-key':
      return [ER.DUP_FIELDNAME];
    case 'create-like':
      return [ER.TABLE_EXISTS];
    case 'drop-table':
      return [ER.BAD_TABLE];
    case 'swap-tables':
    case 'swap-set':
      // The shadow is gone (renamed already) or the old name is taken (by the rename that ran).
      return [ER.NO_SUCH_TABLE, ER.TABLE_EXISTS];
    default:
      return [];
  }
}

/**
 * The tables a quick statement locks exclusively (a metadata lock), where
 * other sessions may be reading: while it waits for them, every new reader
 * of the table queues behind it. These ask for the lock a second at a time
 * (db/lockWait.ts). Index builds and table rebuilds are left out: a short
 * wait that gave up at their end would throw away the build.
 */
export function briefExclusiveLocks(op: Op): TableRef[] {
  switch (op.kind) {
    case 'truncate':
    case 'drop-table':
    case 'drop-indexes':
    case 'disable-keys':
    case 'auto-increment-after-input':
      return [op.table];
    case 'swap-tables':
      return [op.target, op.shadow];
    case 'swap-set':
      return op.swaps.flatMap((w) => [w.target, w.shadow]);
    default:
      return [];
  }
}

// Constructors: the planner's vocabulary.
export const step = <O extends Op>(op: O, reason: string): Step<O> => ({ op, reason });
