import type { CharsetInfo } from '../chunking/charsets.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../chunking/scanner.js';
import { parseRecord } from '../chunking/fields.js';
import type { TableFacts } from '../introspect/types.js';
import type { ColumnTarget } from '../config/loadOptions.js';

/** How to read a record's clustered key: which fields, and whether each compares as a number. */
export interface KeySpec {
  fields: number[];
  numeric: boolean[];
}

export interface KeyContext {
  spec: KeySpec;
  fmt: ScanFormat;
  cs: CharsetInfo;
  targets: ScanTargets;
}

/** Record boundaries of a chunk: record i is bytes [ends[i-1] (or 0), ends[i]). Typed arrays: a chunk can hold millions. */
export function recordEnds(bytes: Buffer, fmt: ScanFormat, cs: CharsetInfo, targets: ScanTargets): Uint32Array {
  const scanner = new RecordScanner(fmt, cs, targets);
  let ends = new Uint32Array(1024);
  let n = 0;
  let pos = 0;
  while (pos < bytes.length) {
    const r = scanner.scan(bytes, pos, 0, true, pos + 1);
    const end = r.atRecordEnd ? r.pos : bytes.length;
    if (n === ends.length) {
      const bigger = new Uint32Array(ends.length * 2);
      bigger.set(ends);
      ends = bigger;
    }
    ends[n++] = end;
    if (!r.atRecordEnd) break;
    pos = end;
  }
  return ends.subarray(0, n);
}

/**
 * A single numeric key in a plain (unquoted) field: read the digits where
 * the field starts, without building the record's values. NaN when the
 * field is not a plain number (then the general parser decides).
 */
function plainNumber(bytes: Buffer, start: number, end: number, field: number, fmt: ScanFormat): number {
  let s = start;
  for (let f = 0; f < field; f++) {
    const i = bytes.indexOf(fmt.fieldTerm, s);
    if (i === -1 || i >= end) return Number.NaN;
    s = i + fmt.fieldTerm.length;
  }
  let v = 0;
  let digits = 0;
  let neg = false;
  let i = s;
  if (bytes[i] === 0x2d) {
    neg = true;
    i++;
  }
  for (; i < end; i++) {
    const c = bytes[i]!;
    if (c >= 0x30 && c <= 0x39) {
      v = v * 10 + (c - 0x30);
      digits++;
      continue;
    }
    break;
  }
  if (digits === 0 || digits > 15) return Number.NaN;
  // The number must be the whole field.
  if (i < end && bytes[i] !== fmt.fieldTerm[0] && bytes[i] !== fmt.lineTerm[0]) return Number.NaN;
  return neg ? -v : v;
}

type KeyPart = null | number | string;

function generalKey(bytes: Buffer, start: number, end: number, k: KeyContext): KeyPart[] {
  const upto = Math.max(...k.spec.fields) + 1;
  const values = parseRecord(bytes, start, end, k.fmt, k.cs, { fields: upto, textField: k.targets.textField.slice(0, upto) }).values;
  return k.spec.fields.map((f, i) => {
    const v = values[f];
    if (v === undefined || v === null) return null;
    const text = v.toString('latin1');
    if (k.spec.numeric[i]) {
      const n = Number(text);
      if (!Number.isNaN(n)) return n;
    }
    return text;
  });
}

function compareParts(a: KeyPart[], b: KeyPart[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    const c = String(x) < String(y) ? -1 : 1;
    return c;
  }
  return 0;
}

/**
 * The order to send a chunk's records in: ascending clustered key, ties in
 * file order (so the same chunk always sorts the same way). A single
 * numeric key in a plain field — the common case — is read straight from
 * the bytes into a Float64Array; anything else goes through the field parser.
 * Numbers compare as numbers; other keys byte-wise, which is close to, not
 * exactly, the collation order (enough for locality; the server still
 * checks uniqueness).
 */
export function sortPermutation(bytes: Buffer, ends: Uint32Array, k: KeyContext): Uint32Array {
  const n = ends.length;
  const perm = new Uint32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  const single = k.spec.fields.length === 1 && k.spec.numeric[0] === true && k.fmt.enclosure === -1;
  if (single) {
    const keys = new Float64Array(n);
    let fallback = false;
    for (let i = 0; i < n; i++) {
      const start = i === 0 ? 0 : ends[i - 1]!;
      const v = plainNumber(bytes, start, ends[i]!, k.spec.fields[0]!, k.fmt);
      if (Number.isNaN(v)) {
        fallback = true;
        break;
      }
      keys[i] = v;
    }
    if (!fallback) return perm.sort((a, b) => keys[a]! - keys[b]! || a - b);
  }
  const parts = Array.from({ length: n }, (_, i) => generalKey(bytes, i === 0 ? 0 : ends[i - 1]!, ends[i]!, k));
  return perm.sort((a, b) => compareParts(parts[a]!, parts[b]!) || a - b);
}

/** The chunk's bytes with its records in `perm` order; every record ends with the line terminator. */
export function permuteRecords(bytes: Buffer, ends: Uint32Array, perm: Uint32Array, lineTerm: Buffer): Buffer {
  const lastEnd = ends.length ? ends[ends.length - 1]! : 0;
  const lt = lineTerm.length;
  const needsTerm = lt > 0 && !bytes.subarray(lastEnd - lt, lastEnd).equals(lineTerm);
  const out = Buffer.allocUnsafe(lastEnd + (needsTerm ? lt : 0));
  let pos = 0;
  for (let j = 0; j < perm.length; j++) {
    const i = perm[j]!;
    const start = i === 0 ? 0 : ends[i - 1]!;
    pos += bytes.copy(out, pos, start, ends[i]);
    if (needsTerm && i === ends.length - 1) pos += lineTerm.copy(out, pos);
  }
  return out.subarray(0, pos);
}

const NUMERIC_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'numeric', 'float', 'double', 'year', 'bit']);

/** Where the clustered key's columns are among the file's fields; undefined when one is missing. */
export function keySpecOf(table: TableFacts, columns: readonly ColumnTarget[] | undefined): KeySpec | undefined {
  const key = table.clusteredKey;
  if (!key) return undefined;
  const names = (columns ?? table.columns.map((c) => ({ name: c.name, isVariable: false }))).map((c) => (c.isVariable ? '' : c.name.toLowerCase()));
  const fields = key.columns.map((k) => names.indexOf(k.toLowerCase()));
  if (fields.some((f) => f < 0)) return undefined;
  const numeric = key.columns.map((k) => NUMERIC_TYPES.has(table.columns.find((c) => c.name.toLowerCase() === k.toLowerCase())?.dataType ?? ''));
  return { fields, numeric };
}

