import type { ColumnTarget } from '../config/loadOptions.js';
import type { KeyForm, KeySpec } from '../order/key.js';
import type { ColumnFacts, IndexFacts, TableFacts } from './types.js';

/** Exact numbers: the key encoding orders and equates them by value, as the server does. */
const EXACT_NUMBERS = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'numeric']);
/** Read as numbers for locality, but the server's equality differs: YEAR '99' is 1999, BIT holds the field's bytes. */
const INEXACT_NUMBERS = new Set(['year', 'bit']);
/** Byte strings without padding: they compare byte by byte, as the sort does. */
const BINARY_TYPES = new Set(['varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob']);
const TEXT_TYPES = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext']);

/** The clustered key as the file carries it: which fields hold it, and how its values compare. */
export interface FileKey extends KeySpec {
  /** The index's name and columns. */
  name: string;
  columns: string[];
  /**
   * The order of the encoded keys (src/order/key.ts) is the server's order
   * for these columns, and keys the server calls equal are equal bytes:
   * every part is an exact number, a byte string, text in a binary (_bin)
   * collation, or a DATE/DATETIME read as the server reads it. Otherwise
   * (case- or accent-insensitive collations, other types) the sort is only
   * good for locality: it may separate or reorder keys the server calls
   * equal, and MyRocks' bulk load, which needs the exact order, fails.
   */
  exact: boolean;
  /** When not exact: the first column that is not, and why (for the plan). */
  inexact?: string | undefined;
}

interface PartRule {
  numeric: boolean;
  form: KeyForm | null;
  /** Why the server's equality or order is not what the sort computes; undefined when it is. */
  inexact?: string;
}

/** Fraction digits of a DATETIME(fsp) column type. */
function fsp(columnType: string): number {
  const m = /\((\d)\)/.exec(columnType);
  return m ? Number(m[1]) : 0;
}

/** Fraction digits an exact number column stores: s of DECIMAL(p,s), 0 for the integer types. */
function scale(dataType: string, columnType: string): number {
  if (dataType !== 'decimal' && dataType !== 'numeric') return 0;
  const m = /\(\s*\d+\s*,\s*(\d+)\s*\)/.exec(columnType);
  return m ? Number(m[1]) : 0;
}

/** How one key column's values compare, and whether flatload computes it exactly. */
export function keyPartRule(c: ColumnFacts | undefined): PartRule {
  const type = c?.dataType ?? '';
  const name = c?.name ?? '?';
  // The server rounds a value to the column's scale (with a Note only): 7.5 and 8 are one INT key.
  if (EXACT_NUMBERS.has(type)) return { numeric: true, form: { kind: 'number', scale: scale(type, c?.columnType ?? '') } };
  if (INEXACT_NUMBERS.has(type)) return { numeric: true, form: null, inexact: `${name} is ${type.toUpperCase()}, whose values the server reads otherwise than as plain numbers` };
  if (BINARY_TYPES.has(type)) return { numeric: false, form: null };
  if (type === 'date') return { numeric: false, form: { kind: 'date' } };
  if (type === 'datetime') return { numeric: false, form: { kind: 'datetime', fsp: fsp(c?.columnType ?? '') } };
  if (TEXT_TYPES.has(type)) {
    const collation = (c?.collation ?? '').toLowerCase();
    if (collation.endsWith('_bin')) {
      // NO PAD collations compare every byte (but spaces beyond the column's length are cut); the others ignore trailing spaces.
      if (!/_nopad_|_0900_/.test(collation)) return { numeric: false, form: { kind: 'pad-space' } };
      return { numeric: false, form: type === 'varchar' && c?.maxChars ? { kind: 'nopad', chars: c.maxChars } : null };
    }
    return {
      numeric: false,
      form: null,
      inexact: `${name} is ${collation ? `text in ${collation}` : 'text in a collation'}, which calls values equal or orders them otherwise than by their bytes (case, accents), and flatload does not compute that collation`,
    };
  }
  return { numeric: false, form: null, inexact: `${name} is ${(c?.columnType ?? type) || 'of an unknown type'}, whose equality and order flatload does not compute` };
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
  const rules = key.columns.map((k) => keyPartRule(table.columns.find((c) => c.name.toLowerCase() === k.toLowerCase())));
  const numeric = rules.map((r) => r.numeric);
  const inexact = rules.find((r) => r.inexact !== undefined)?.inexact;
  const out: FileKey = { name: key.name, columns: key.columns, fields, numeric, exact: inexact === undefined };
  if (rules.some((r) => r.form !== null)) out.forms = rules.map((r) => r.form);
  if (inexact !== undefined) out.inexact = inexact;
  return out;
}
