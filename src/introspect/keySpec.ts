import type { ColumnTarget } from '../config/loadOptions.js';
import type { KeySpec } from '../order/key.js';
import type { IndexFacts, TableFacts } from './types.js';

const NUMERIC_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'numeric', 'year', 'bit']);
/** Byte strings: they compare byte by byte, as the sort does. */
const BINARY_TYPES = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob']);

/** The clustered key as the file carries it: which fields hold it, and how its values compare. */
export interface FileKey extends KeySpec {
  /** The index's name and columns. */
  name: string;
  columns: string[];
  /**
   * Byte order of the encoded keys (src/order/key.ts) is the engine's key
   * order: every part is a number or a binary string. Text in a collation
   * sorts differently (case, accents), which is fine for locality but not
   * for an engine that requires strict order (MyRocks' bulk load).
   */
  exact: boolean;
}

/**
 * Where the clustered key's columns (or another index's) are among the
 * file's fields; undefined when one is missing (or there is no such key).
 */
export function clusteredKeyInFile(table: TableFacts, columns: readonly ColumnTarget[] | undefined, index: IndexFacts | undefined = table.clusteredKey): FileKey | undefined {
  const key = index;
  if (!key) return undefined;
  const names = (columns ?? table.columns.map((c) => ({ name: c.name, isVariable: false }))).map((c) => (c.isVariable ? '' : c.name.toLowerCase()));
  const fields = key.columns.map((k) => names.indexOf(k.toLowerCase()));
  if (fields.some((f) => f < 0)) return undefined;
  const cols = key.columns.map((k) => table.columns.find((c) => c.name.toLowerCase() === k.toLowerCase()));
  const numeric = cols.map((c) => NUMERIC_TYPES.has(c?.dataType ?? ''));
  const exact = cols.every((c, i) => numeric[i] === true || BINARY_TYPES.has(c?.dataType ?? ''));
  return { name: key.name, columns: key.columns, fields, numeric, exact };
}
