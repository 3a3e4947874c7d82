import { isUtf8 } from 'node:buffer';
import { recordStart, recordTable, type RecordTable } from '../chunking/records.js';
import { ByteSink, compareKeys, integerKey, isIntegerKey, keyReader, plainInteger, plainIntegerReader, putRecordKey, type KeyContext, type KeySpec, type PlainIntegerReader, type SortKey } from './key.js';
import { identityPermutation, radixSort64 } from './radix.js';
import { SortScratch } from './scratch.js';

/** A chunk's records and the order their keys put them in. */
export interface SortedChunk {
  bytes: Buffer;
  table: RecordTable;
  /** perm[j] is the record (input order) that comes j-th in key order; ties in input order. */
  perm: Uint32Array;
  /** The records were already in key order (perm is the identity). */
  ordered: boolean;
  /** Every record is one line (record i is line i): table.lineOffsets was let go, empty (sortChunk's dropLines). */
  oneLineEach: boolean;
  /** Fast path: every key is a plain integer, read again from the record when needed. */
  intReader: PlainIntegerReader | undefined;
  /** Otherwise: the encoded keys, record i's at keyBytes[keyEnds[i-1] (or 0), keyEnds[i]). */
  keyBytes: Buffer | undefined;
  keyEnds: Uint32Array | undefined;
}

/**
 * What sortChunk holds per record besides the records, at its peak (the planner's in-memory budget): for one
 * integer key, the record table's ends and lines and the keys' halves with the radix sort's two arrays, 24 bytes
 * at most (21 when the keys' high halves span at most 256 values); for other keys the encoded keys and their
 * offsets on top, about 40.
 */
export function sortBytesPerRecord(spec: KeySpec): number {
  return isIntegerKey(spec) ? 24 : 40;
}

/**
 * Locates a chunk's records with the chunking scanner and sorts them by key.
 * One plain integer key field (the common case) is read straight from the
 * bytes and radix-sorted; anything else is encoded (see key.ts) and sorted
 * by its first 8 bytes, ties of longer keys by the whole key. Both orders
 * are the encoded keys' byte order, ties in input order. `records` (the
 * cutter's count) sizes the arrays; scratch arrays are reused by the next call.
 */
export function sortChunk(bytes: Buffer, ctx: KeyContext, scratch = new SortScratch(), records = 0, dropLines = false): SortedChunk {
  const cap = Math.max(records, 16);
  let table = recordTable(bytes, ctx.fmt, ctx.cs, ctx.targets, { ends: scratch.uint32('ends', cap), lineOffsets: scratch.uint32('lines', cap) });
  const n = table.ends.length;
  // An in-memory sort keeps the line table as long as the load: when it says nothing, its memory goes to the sort.
  const oneLineEach = dropLines && oneLinePerRecord(table.lineOffsets, n);
  if (oneLineEach) {
    scratch.drop('lines');
    table = { ...table, lineOffsets: new Uint32Array(0) };
  }
  const intReader = integerReader(bytes, ctx);
  if (intReader) {
    const keys = integerKeys(bytes, table.ends, intReader, scratch);
    if (keys) {
      // The radix sort's own array is the permutation, not a copy of it.
      const perm = keys.ordered ? identityPermutation(scratch, n) : radixSort64(keys.hi, keys.lo, scratch);
      return { bytes, table, perm, ordered: keys.ordered, oneLineEach, intReader, keyBytes: undefined, keyEnds: undefined };
    }
  }
  const { keyBytes, keyEnds } = encodedKeys(bytes, table.ends, ctx);
  const perm = sortEncoded(keyBytes, keyEnds, scratch);
  return { bytes, table, perm: perm ?? identityPermutation(scratch, n), ordered: perm === undefined, oneLineEach, intReader: undefined, keyBytes, keyEnds };
}

/** Whether record i is line i for every record of a table's n (its lines then say nothing more). */
export function oneLinePerRecord(lineOffsets: Uint32Array, n: number): boolean {
  if (lineOffsets.length < n) return false;
  for (let i = 0; i < n; i++) if (lineOffsets[i] !== i) return false;
  return true;
}

/**
 * What ends a record: the line terminator, or the field terminator when
 * lines have none (LINES TERMINATED BY ''). A sort can move the input's
 * last record into the middle of a chunk, where it needs one even if the
 * file did not end with it.
 */
export function recordTerminator(fmt: KeyContext['fmt']): Buffer {
  return fmt.lineTerm.length > 0 ? fmt.lineTerm : fmt.fieldTerm;
}

/**
 * Whether bytes (whole records: a chunk, or a sample's complete records)
 * are in key order, ties allowed: the planner's cheap check, with the same
 * keys and comparator as the sort. Stops at the first record out of order.
 */
export function inKeyOrder(bytes: Buffer, ctx: KeyContext): boolean {
  const { ends } = recordTable(bytes, ctx.fmt, ctx.cs, ctx.targets);
  const ints = integerReader(bytes, ctx);
  const general = keyReader(ctx);
  const sink = new ByteSink();
  let prevNum = Number.NEGATIVE_INFINITY;
  let prev: Buffer | undefined;
  for (let i = 0, start = 0; i < ends.length; start = ends[i++]!) {
    const v = ints ? plainInteger(bytes, start, ends[i]!, ints) : Number.NaN;
    if (!Number.isNaN(v) && prev === undefined) {
      if (v < prevNum) return false;
      prevNum = v;
      continue;
    }
    // Off the fast path (from here on): encoded keys.
    sink.length = 0;
    putRecordKey(sink, bytes, start, ends[i]!, general);
    const key = sink.copyFrom(0);
    if (prev === undefined && prevNum !== Number.NEGATIVE_INFINITY) prev = integerKey(prevNum);
    if (prev !== undefined && compareKeys(prev, key) > 0) return false;
    prev = key;
  }
  return true;
}

/** Record i's key as a SortKey (for run bounds and the sparse index). */
export function keyOfRecord(s: SortedChunk, i: number): SortKey {
  if (s.intReader) {
    const ends = s.table.ends;
    return integerKey(plainInteger(s.bytes, recordStart(ends, i), ends[i]!, s.intReader));
  }
  const ends = s.keyEnds!;
  return Buffer.from(s.keyBytes!.subarray(recordStart(ends, i), ends[i]));
}

function integerReader(bytes: Buffer, ctx: KeyContext): PlainIntegerReader | undefined {
  const needsUtf8Check = ctx.cs.utf8 && ctx.spec.fields[0] !== 0;
  return plainIntegerReader(ctx, needsUtf8Check ? isUtf8(bytes) : true);
}

/**
 * Every record's key as a plain integer, split into halves (splitKey), and
 * whether they were in order already. The high halves: undefined while every
 * key has the same one (keys within one 2^32 stretch), one byte each while
 * they are within 128 of the first key's (user_summary's span three), four
 * otherwise: an in-memory input sorts beside them (4 or 3 bytes a record
 * less). Undefined as soon as one key is not a plain integer.
 */
function integerKeys(bytes: Buffer, ends: Uint32Array, reader: PlainIntegerReader, scratch: SortScratch): { hi: HighHalves | undefined; lo: Uint32Array; ordered: boolean } | undefined {
  const n = ends.length;
  const lo = scratch.uint32('lo', n);
  let hi: HighHalves | undefined;
  let base = 0;
  let narrow = true;
  let ordered = true;
  let prev = Number.NEGATIVE_INFINITY;
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = ends[i]!;
    const v = plainInteger(bytes, start, end, reader);
    if (Number.isNaN(v)) return undefined;
    if (v < prev) ordered = false;
    const h = splitKey(v, i, lo);
    // A byte holds h - base, in the keys' order: the first key's high half sits mid-byte.
    if (i === 0) base = h - 128;
    else if (!hi && h !== base + 128) hi = scratch.uint8('hi8', n).fill(128, 0, i);
    if (hi) {
      if (narrow && (h < base || h > base + 255)) {
        hi = widened(hi, base, i, scratch);
        base = 0;
        narrow = false;
      }
      hi[i] = h - base;
    }
    prev = v;
    start = end;
  }
  return { hi, lo, ordered };
}

/** The keys' high halves, in one byte each (less an offset) while they allow. */
export type HighHalves = Uint8Array | Uint32Array;

/** The first i high halves, stored less `base` in bytes, in four bytes each as they are. */
function widened(narrow: HighHalves, base: number, i: number, scratch: SortScratch): Uint32Array {
  const wide = scratch.uint32('hi', narrow.length);
  for (let k = 0; k < i; k++) wide[k] = narrow[k]! + base;
  scratch.drop('hi8');
  return wide;
}

const TWO_32 = 0x1_0000_0000;
/** Makes every plain integer (|v| < 10^15 < 2^50) positive and keeps it exact (below 2^53). */
const KEY_BIAS = 2 ** 51;

/**
 * Key v as the two 32-bit halves of v + 2^51, unsigned and in the keys'
 * order, as radixSort64 takes them: the low half into lo[i], the high one
 * returned. Keys in one aligned 2^32 stretch share their high half, whose two
 * passes the sort then skips. (Subtracting the smallest key instead needed
 * a pass to find it, and 8 bytes per key to keep them meanwhile.)
 */
export function splitKey(v: number, i: number, lo: Uint32Array): number {
  const d = v + KEY_BIAS;
  const h = Math.floor(d / TWO_32);
  lo[i] = d - h * TWO_32;
  return h;
}

function encodedKeys(bytes: Buffer, ends: Uint32Array, ctx: KeyContext): { keyBytes: Buffer; keyEnds: Uint32Array } {
  const reader = keyReader(ctx);
  const n = ends.length;
  const sink = new ByteSink(Math.max(256, n * 16));
  const keyEnds = new Uint32Array(n);
  let start = 0;
  for (let i = 0; i < n; i++) {
    putRecordKey(sink, bytes, start, ends[i]!, reader);
    keyEnds[i] = sink.length;
    start = ends[i]!;
  }
  return { keyBytes: sink.bytes.subarray(0, sink.length), keyEnds };
}

function sortEncoded(keyBytes: Buffer, keyEnds: Uint32Array, scratch: SortScratch): Uint32Array | undefined {
  const n = keyEnds.length;
  const startOf = (i: number): number => recordStart(keyEnds, i);
  let ordered = true;
  for (let i = 1; i < n && ordered; i++) {
    // buf.compare(target, …, source…) is the order of source against target: here key i-1 against key i.
    if (keyBytes.compare(keyBytes, startOf(i), keyEnds[i], startOf(i - 1), keyEnds[i - 1]) > 0) ordered = false;
  }
  if (ordered) return undefined;
  // The first 8 bytes, zero-padded, big-endian: no key is a prefix of another, so padding never misorders.
  const hi = scratch.uint32('hi', n);
  const lo = scratch.uint32('lo', n);
  let long = false;
  for (let i = 0; i < n; i++) {
    const s = startOf(i);
    const len = keyEnds[i]! - s;
    if (len > 8) long = true;
    let h = 0;
    let l = 0;
    for (let k = 0; k < 8; k++) {
      const b = k < len ? keyBytes[s + k]! : 0;
      if (k < 4) h = (h << 8) | b;
      else l = (l << 8) | b;
    }
    hi[i] = h >>> 0;
    lo[i] = l >>> 0;
  }
  if (!long) return radixSort64(hi, lo, scratch);
  // The sort uses lo as working space: keep the prefixes to find the keys that tie on them.
  const prefixHi = hi;
  const prefixLo = Uint32Array.from(lo);
  const perm = radixSort64(hi, lo, scratch);
  // Keys that share their first 8 bytes: ordered by the whole key, ties by input order.
  const byKey = (a: number, b: number): number => keyBytes.compare(keyBytes, startOf(b), keyEnds[b], startOf(a), keyEnds[a]) || a - b;
  for (let j = 0; j < n; ) {
    let k = j + 1;
    while (k < n && prefixHi[perm[k]!] === prefixHi[perm[j]!] && prefixLo[perm[k]!] === prefixLo[perm[j]!]) k++;
    if (k - j > 1) perm.subarray(j, k).sort(byKey);
    j = k;
  }
  return perm;
}
