import { keyHash, parseIntField, parseIntText, type KeyAlgorithm, type KeyColumn } from './keyHash.js';

/**
 * Which partition the server puts a record in, for the partition rules
 * flatload can evaluate exactly (verified against MariaDB 10.11, see
 * docs/scale-out.md). Pure. Anything else answers undefined, and the caller
 * sends such rows through the server (the Spider front) instead of guessing.
 *
 * The formulas are sql/sql_partition.cc's: get_part_id_hash (value MOD n,
 * sign dropped), get_part_id_from_linear_hash (value AND mask, halved mask
 * when that is past the last partition), get_part_id_key (KEY hash MOD n),
 * and the RANGE / LIST searches. A NULL in HASH or RANGE counts as the
 * smallest integer (part_val_int returns LONGLONG_MIN for NULL).
 */

export type PartitionMethod = 'HASH' | 'LINEAR HASH' | 'KEY' | 'LINEAR KEY' | 'RANGE' | 'RANGE COLUMNS' | 'LIST' | 'LIST COLUMNS';

export const PARTITION_METHODS: readonly PartitionMethod[] = ['HASH', 'LINEAR HASH', 'KEY', 'LINEAR KEY', 'RANGE', 'RANGE COLUMNS', 'LIST', 'LIST COLUMNS'];

/** A RANGE bound component: an integer, or MAXVALUE (above everything). */
export type RangeValue = bigint | 'MAXVALUE';

/** A LIST value component: an integer or NULL. */
export type ListValue = bigint | null;

export interface PartitionColumn {
  name: string;
  type: KeyColumn;
}

export interface PartitionRule {
  method: PartitionMethod;
  /** The partitioning expression as the server shows it, e.g. "`id`" or "`a`,`b`". */
  expression: string;
  /**
   * The columns the rule reads, in order, when the expression is a bare
   * column (HASH, RANGE, LIST) or a column list (KEY, the COLUMNS variants);
   * undefined for any other expression: flatload does not evaluate SQL.
   */
  columns: PartitionColumn[] | undefined;
  /** Number of partitions (HASH/KEY) = bounds.length (RANGE) = lists.length (LIST). */
  partitionCount: number;
  /** KEY only: ALGORITHM=1 (MySQL 5.1 hash for numbers) or 2 (the default). */
  keyAlgorithm?: KeyAlgorithm;
  /** RANGE: per partition, in order, its `VALUES LESS THAN` tuple. */
  rangeBounds?: RangeValue[][];
  /** LIST: per partition, in order, its `VALUES IN` tuples; `default` for a DEFAULT partition. */
  listValues?: Array<ListValue[][] | 'default'>;
}

const LONGLONG_MIN = -(1n << 63n);

/** Why flatload cannot route records by this rule itself, or undefined when it can. */
export function unevaluableReason(rule: PartitionRule): string | undefined {
  if (!rule.columns || rule.columns.length === 0) return `the partitioning expression ${rule.expression} is not a plain column list`;
  if (rule.partitionCount < 1) return 'the rule has no partitions';
  const nonInt = rule.columns.find((c) => c.type.kind !== 'int');
  switch (rule.method) {
    case 'KEY':
    case 'LINEAR KEY':
      return undefined;
    case 'HASH':
    case 'LINEAR HASH':
    case 'RANGE':
    case 'LIST':
      if (rule.columns.length !== 1) return `${rule.method} over ${rule.expression} is not a single column`;
      return nonInt ? `${rule.method} over the ${nonInt.type.kind} column ${nonInt.name} is not evaluated (integer columns only)` : undefined;
    case 'RANGE COLUMNS':
    case 'LIST COLUMNS':
      return nonInt ? `${rule.method} over the ${nonInt.type.kind} column ${nonInt.name} is not evaluated (integer columns only)` : undefined;
  }
}

/**
 * The integer the server stores for a field of an integer column, or NULL,
 * or undefined when it cannot tell (not a plain integer in range, or no
 * value at all: the column default would apply).
 */
function intValue(col: PartitionColumn, value: Buffer | null | undefined): bigint | null | undefined {
  if (value === null) return null;
  if (value === undefined || col.type.kind !== 'int') return undefined;
  return parseIntField(value, col.type.bytes, col.type.unsigned);
}

/** Every column's integer (or NULL), or undefined when any one cannot be read exactly. */
function intTuple(cols: PartitionColumn[], values: ReadonlyArray<Buffer | null | undefined>): ListValue[] | undefined {
  const out: ListValue[] = [];
  for (let i = 0; i < cols.length; i++) {
    const v = intValue(cols[i]!, values[i]);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

/** part_val_int: what HASH and RANGE compute with (an unsigned BIGINT above 2^63 - 1 wraps negative). */
function partValInt(col: PartitionColumn, v: bigint | null): bigint {
  if (v === null) return LONGLONG_MIN;
  return col.type.kind === 'int' && col.type.bytes === 8 ? BigInt.asIntN(64, v) : v;
}

/** linear_hash_mask: one less than the smallest power of two at or above the partition count. */
export function linearHashMask(partitions: number): number {
  let mask = 1;
  while (mask < partitions) mask *= 2;
  return mask - 1;
}

/** get_part_id_from_linear_hash, for a hash value's two's-complement bits. */
export function linearHashPartition(hash: bigint | number, partitions: number): number {
  const mask = linearHashMask(partitions);
  // The mask is below 2^31, so only the low 32 bits matter: ToInt32 / asUintN(32) keep them for any integer.
  const low = typeof hash === 'number' ? hash >>> 0 : Number(BigInt.asUintN(32, hash));
  let part = low & mask;
  if (part >= partitions) part = low & (((mask + 1) >> 1) - 1);
  return part;
}

function compareTuple(values: bigint[], bound: RangeValue[]): number {
  for (let i = 0; i < bound.length; i++) {
    const b = bound[i]!;
    if (b === 'MAXVALUE') return -1;
    const v = values[i]!;
    if (v !== b) return v < b ? -1 : 1;
  }
  return 0;
}

/**
 * The 0-based partition (position in the table's partition list) the server
 * stores the record in, or undefined when flatload cannot be sure: an
 * expression it does not evaluate, a value it does not parse exactly, or a
 * row the server would reject (no partition for it).
 *
 * `values` are the record's fields for rule.columns, in that order, as
 * parseRecord gives them (Buffer, null for NULL, undefined when missing).
 */
export function partitionIndex(rule: PartitionRule, values: ReadonlyArray<Buffer | null | undefined>): number | undefined {
  if (unevaluableReason(rule) !== undefined) return undefined;
  const cols = rule.columns!;
  if (values.length !== cols.length) return undefined;
  const n = rule.partitionCount;
  switch (rule.method) {
    case 'KEY':
    case 'LINEAR KEY': {
      const h = keyHash(
        cols.map((c) => c.type),
        values,
        rule.keyAlgorithm ?? 2,
      );
      if (h === undefined) return undefined;
      return rule.method === 'KEY' ? h % n : linearHashPartition(h, n);
    }
    case 'HASH':
    case 'LINEAR HASH': {
      const col = cols[0]!;
      const raw = values[0];
      if (raw === undefined || col.type.kind !== 'int') return undefined;
      const v = raw === null ? null : parseIntText(raw, col.type.bytes, col.type.unsigned);
      if (v === undefined) return undefined;
      // The fast path: a safe integer needs no BigInt (routing evaluates this per record).
      if (typeof v === 'number') return rule.method === 'LINEAR HASH' ? linearHashPartition(v, n) : Math.abs(v % n);
      const x = partValInt(col, v);
      if (rule.method === 'LINEAR HASH') return linearHashPartition(x, n);
      const r = x % BigInt(n);
      return Number(r < 0n ? -r : r);
    }
    case 'RANGE':
    case 'RANGE COLUMNS': {
      const bounds = rule.rangeBounds;
      const tuple = intTuple(cols, values);
      if (!bounds || bounds.length !== n || !tuple) return undefined;
      // RANGE: NULL sorts below every value. RANGE COLUMNS: not verified, so not evaluated.
      if (rule.method === 'RANGE COLUMNS' && tuple.includes(null)) return undefined;
      // Bounds are compared as written (an unsigned BIGINT bound stays unsigned).
      const ints = tuple.map((v) => (v === null ? LONGLONG_MIN : v));
      const p = bounds.findIndex((b) => b.length === ints.length && compareTuple(ints, b) < 0);
      return p === -1 ? undefined : p;
    }
    case 'LIST':
    case 'LIST COLUMNS': {
      const lists = rule.listValues;
      const tuple = intTuple(cols, values);
      if (!lists || lists.length !== n || !tuple) return undefined;
      const p = lists.findIndex((l) => l !== 'default' && l.some((t) => t.length === tuple.length && t.every((x, i) => x === tuple[i])));
      if (p !== -1) return p;
      const d = lists.indexOf('default');
      return d === -1 ? undefined : d;
    }
  }
}
