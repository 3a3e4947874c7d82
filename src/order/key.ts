import { FlatloadError } from '../errors/index.js';
import type { CharsetInfo } from '../chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import { parseRecord } from '../chunking/fields.js';
import { canonicalTemporal } from './temporal.js';

/**
 * Keys are encoded into bytes whose unsigned byte order is the key order
 * (a "memcomparable" encoding), so ONE comparator — compareKeys, a memcmp —
 * orders records, bounds key ranges, seeks runs and checks input order. Each
 * key field becomes one self-delimiting part, so a composite key is the
 * concatenation of its parts and no key is a proper prefix of another.
 *
 * A part starts with a class byte:
 *   NULL     01                      \N, unquoted NULL with an enclosure, or a field the record lacks
 *   NEGATIVE 02 ~E ~digits FF        a number < 0 (every byte after the class complemented)
 *   ZERO     03
 *   POSITIVE 04 E digits 00          a number > 0
 *   MALFORMED 05 text 00 00          a numeric field that is not a number: after every number
 *   TEXT     06 text 00 00           a text field, byte-wise (its bytes after unescaping)
 *   PADDED   07 (8 bytes, marker)…   text under a PAD SPACE binary collation (below)
 * A number is 0.d1d2…dn × 10^E with d1 ≠ 0 and dn ≠ 0 (ASCII digits), E as
 * two bytes big-endian biased by 0x8000: exact for any decimal, integers
 * beyond 2^53 included. In text 00 is written 00 FF, so 00 00 ends it.
 *
 * So NULLs sort first, numbers by value, malformed numbers last (byte-wise
 * among themselves), text byte-wise; ties are broken by input order by
 * whoever sorts (stable), never here.
 */
export type SortKey = Buffer;

const NULL_PART = 0x01;
const NEGATIVE = 0x02;
const ZERO = 0x03;
const POSITIVE = 0x04;
const MALFORMED = 0x05;
const TEXT = 0x06;
const PADDED = 0x07;
/** PADDED: the text in segments of this many bytes, each followed by a marker byte. */
const SEGMENT = 8;
const REST_BELOW_SPACES = 0x01;
const REST_NONE = 0x02;
const REST_ABOVE_SPACES = 0x03;
const EXP_BIAS = 0x8000;
/** |E| beyond this is not a number we can encode (nor one any column type holds). */
const MAX_EXP = 0x7fff - 1;

/** The one comparator: negative, zero or positive as a sorts before, with or after b. */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/**
 * How a key field's text is read so that values the server calls equal are
 * equal keys, in the server's order:
 * - pad-space: a binary (_bin) collation with PAD SPACE: trailing spaces do
 *   not count and a shorter value compares as if padded with spaces;
 * - nopad: a NO PAD binary collation, every byte counts; but trailing spaces
 *   beyond the column's `chars` characters are cut (a Note only), so
 *   'abcde  ' in a VARCHAR(5) is 'abcde';
 * - date, datetime: the value in the server's canonical form (temporal.ts);
 * - number: an integer or DECIMAL column's value as stored, rounded half away
 *   from zero to `scale` fraction digits (the server stores 7.5 in an INT as 8).
 */
export type KeyForm =
  | { kind: 'pad-space' }
  | { kind: 'nopad'; chars: number }
  | { kind: 'date' }
  | { kind: 'datetime'; fsp: number }
  | { kind: 'number'; scale: number };

/** How to read a record's key: which of the file's fields, and whether each compares as a number. */
export interface KeySpec {
  fields: number[];
  numeric: boolean[];
  /** Per field, how its text is read (absent or null: as a number or its plain bytes). */
  forms?: Array<KeyForm | null> | undefined;
}

export interface KeyContext {
  spec: KeySpec;
  fmt: ScanFormat;
  cs: CharsetInfo;
  /** The statement's target fields (text fields of a multi-byte set are read by character). */
  targets: ScanTargets;
}

/** A growable byte buffer that keys are encoded into. */
export class ByteSink {
  bytes: Buffer;
  length = 0;

  constructor(capacity = 256) {
    this.bytes = Buffer.allocUnsafe(capacity);
  }

  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + n));
    this.bytes.copy(next, 0, 0, this.length);
    this.bytes = next;
  }

  /** A copy of what was written since `from`. */
  copyFrom(from: number): Buffer {
    return Buffer.from(this.bytes.subarray(from, this.length));
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Text bytes with 00 escaped, then the 00 00 end. */
function putText(sink: ShallowSink, cls: number, v: Uint8Array, start: number, end: number): void {
  sink.reserve(3 + 2 * (end - start));
  const out = sink.bytes;
  let p = sink.length;
  out[p++] = cls;
  for (let i = start; i < end; i++) {
    const c = v[i]!;
    out[p++] = c;
    if (c === 0) out[p++] = 0xff;
  }
  out[p++] = 0;
  out[p++] = 0;
  sink.length = p;
}

type ShallowSink = Pick<ByteSink, 'bytes' | 'length' | 'reserve'>;

/**
 * Text under PAD SPACE (the MyRocks encoding of such keys): trailing spaces
 * dropped, then segments of 8 bytes, the last padded with spaces, each
 * followed by a marker saying whether what follows compares below, equal to
 * (nothing follows) or above the spaces a shorter value is padded with. So
 * 'x' = 'x  ', 'x\x01' < 'x' < 'x!', as the collation compares them.
 */
function putPadded(sink: ShallowSink, v: Uint8Array, start: number, end: number): void {
  let e = end;
  while (e > start && v[e - 1] === 0x20) e--;
  const segments = Math.max(1, Math.ceil((e - start) / SEGMENT));
  sink.reserve(1 + segments * (SEGMENT + 1));
  const out = sink.bytes;
  let p = sink.length;
  out[p++] = PADDED;
  for (let s = start; ; s += SEGMENT) {
    for (let k = 0; k < SEGMENT; k++) out[p++] = s + k < e ? v[s + k]! : 0x20;
    if (s + SEGMENT >= e) {
      out[p++] = REST_NONE;
      break;
    }
    // The rest is not all spaces (they were dropped): its first other byte decides.
    let r = s + SEGMENT;
    while (v[r] === 0x20) r++;
    out[p++] = v[r]! < 0x20 ? REST_BELOW_SPACES : REST_ABOVE_SPACES;
  }
  sink.length = p;
}

/** NO PAD text: its bytes, less the trailing spaces beyond `chars` characters (counted in the file's set). */
function putNoPad(sink: ShallowSink, v: Buffer, chars: number, cs: CharsetInfo): void {
  let e = v.length;
  while (e > 0 && v[e - 1] === 0x20) e--;
  let n = 0;
  for (let i = 0; i < e && n <= chars; n++) {
    const len = cs.charlen(v, i, e);
    if (len <= 0) return putText(sink, TEXT, v, 0, v.length); // malformed: as it is
    i += len;
  }
  // Longer than the column without its spaces too: an error the load rejects, as it is.
  putText(sink, TEXT, v, 0, n > chars ? v.length : Math.min(v.length, e + (chars - n)));
}

function putFormed(sink: ShallowSink, form: KeyForm, v: Buffer, cs: CharsetInfo): void {
  if (form.kind === 'pad-space') return putPadded(sink, v, 0, v.length);
  if (form.kind === 'nopad') return putNoPad(sink, v, form.chars, cs);
  if (form.kind === 'number') return putNumber(sink, v, 0, v.length, form.scale);
  const canonical = canonicalTemporal(v, 0, v.length, form.kind === 'datetime' ? form.fsp : undefined);
  // A value the server reads only with a warning is rejected there: kept apart from every date, byte-wise.
  if (canonical === undefined) return putText(sink, MALFORMED, v, 0, v.length);
  putText(sink, TEXT, canonical, 0, canonical.length);
}

/**
 * A numeric field's text as a key part: [+-]digits[.digits][e[+-]digits]
 * (or .digits), surrounding ASCII whitespace ignored as the server's
 * string-to-number conversion does. Anything else is MALFORMED. With a
 * `scale`, the value is rounded to that many fraction digits first, half away
 * from zero, in decimal digits (as the server stores it in an exact column).
 */
function putNumber(sink: ShallowSink, v: Uint8Array, start: number, end: number, scale?: number): void {
  let s = start;
  let e = end;
  while (s < e && isSpace(v[s]!)) s++;
  while (e > s && isSpace(v[e - 1]!)) e--;
  let i = s;
  let negative = false;
  if (i < e && (v[i] === 0x2d || v[i] === 0x2b)) negative = v[i++] === 0x2d;
  const intStart = i;
  while (i < e && isDigit(v[i]!)) i++;
  const intEnd = i;
  let fracStart = i;
  let fracEnd = i;
  if (i < e && v[i] === 0x2e) {
    fracStart = ++i;
    while (i < e && isDigit(v[i]!)) i++;
    fracEnd = i;
  }
  let exp = 0;
  if (intEnd === intStart && fracEnd === fracStart) return putText(sink, MALFORMED, v, start, end);
  if (i < e && (v[i] === 0x65 || v[i] === 0x45)) {
    i++;
    let expNeg = false;
    if (i < e && (v[i] === 0x2d || v[i] === 0x2b)) expNeg = v[i++] === 0x2d;
    const expStart = i;
    while (i < e && isDigit(v[i]!) && i - expStart < 7) exp = exp * 10 + (v[i++]! - 0x30);
    if (i === expStart) return putText(sink, MALFORMED, v, start, end);
    if (expNeg) exp = -exp;
  }
  if (i !== e) return putText(sink, MALFORMED, v, start, end);

  // Significant digits: from the first non-zero digit to the last non-zero one, across the point.
  let first = intStart;
  while (first < intEnd && v[first] === 0x30) first++;
  let lead = 0; // E when the first significant digit is in the fraction: minus its leading zeros
  const inFraction = first === intEnd;
  if (inFraction) {
    first = fracStart;
    while (first < fracEnd && v[first] === 0x30) first++;
    if (first === fracEnd) {
      sink.reserve(1);
      sink.bytes[sink.length++] = ZERO;
      return;
    }
    lead = -(first - fracStart);
  }
  let last = fracEnd > fracStart ? fracEnd : intEnd;
  for (;;) {
    const c = v[last - 1];
    if (c === 0x30 || (c === 0x2e && last - 1 === intEnd)) last--;
    else break;
  }
  let E = (inFraction ? lead : intEnd - first) + exp;
  if (E > MAX_EXP || E < -MAX_EXP) return putText(sink, MALFORMED, v, start, end);
  let digits: Uint8Array = v;
  if (scale !== undefined) {
    // Keep the digits down to 10^-scale; the first one dropped decides (>= 5: away from zero).
    const keep = E + scale;
    const n = last - first - (first < intEnd && intEnd < last && v[intEnd] === 0x2e ? 1 : 0);
    if (keep < n) {
      const kept = Buffer.allocUnsafe(Math.max(keep, 1));
      let k = 0;
      let next = 0; // the first dropped digit
      for (let j = first; j < last; j++) {
        const c = v[j]!;
        if (c === 0x2e) continue;
        if (k < keep) kept[k++] = c;
        else {
          next = c;
          break;
        }
      }
      if (keep < 0 || next < 0x35) {
        // Rounded down: drop trailing zeros, or nothing is left (zero, -0.4 included).
        while (k > 0 && kept[k - 1] === 0x30) k--;
      } else {
        // Rounded up: carry through trailing nines; all nines (or none kept) gain a digit.
        while (k > 0 && kept[k - 1] === 0x39) k--;
        if (k === 0) {
          kept[k++] = 0x31;
          E++;
        } else kept[k - 1] = kept[k - 1]! + 1;
      }
      if (k === 0) {
        sink.reserve(1);
        sink.bytes[sink.length++] = ZERO;
        return;
      }
      if (E > MAX_EXP) return putText(sink, MALFORMED, v, start, end);
      digits = kept;
      first = 0;
      last = k;
    }
  }
  const flip = negative ? 0xff : 0;
  sink.reserve(4 + (last - first));
  const out = sink.bytes;
  let p = sink.length;
  out[p++] = negative ? NEGATIVE : POSITIVE;
  const biased = E + EXP_BIAS;
  out[p++] = (biased >>> 8) ^ flip;
  out[p++] = (biased & 0xff) ^ flip;
  for (let k = first; k < last; k++) {
    const c = digits[k]!;
    if (c !== 0x2e) out[p++] = c ^ flip;
  }
  out[p++] = flip;
  sink.length = p;
}

/** An integer (|v| < 2^53) as a key part: the same bytes putNumber gives its decimal text. */
export function putInteger(sink: ShallowSink, v: number): void {
  if (v === 0) {
    sink.reserve(1);
    sink.bytes[sink.length++] = ZERO;
    return;
  }
  const text = Buffer.from(String(v), 'latin1');
  putNumber(sink, text, 0, text.length);
}

/** What the general key path needs beyond KeyContext, computed once. */
export interface KeyReader {
  ctx: KeyContext;
  /** parseRecord's targets: only the fields up to the last key field. */
  partial: ScanTargets;
}

export function keyReader(ctx: KeyContext): KeyReader {
  const upto = Math.max(...ctx.spec.fields) + 1;
  return { ctx, partial: { fields: upto, textField: Array.from({ length: upto }, (_, i) => ctx.targets.textField[i] === true) } };
}

/**
 * The key of the record bytes[start, end), appended to the sink: the field
 * values exactly as LOAD DATA reads them (quotes, escapes, NULL), then
 * encoded part by part.
 */
export function putRecordKey(sink: ShallowSink, bytes: Buffer, start: number, end: number, r: KeyReader): void {
  const { spec, fmt, cs } = r.ctx;
  const values = parseRecord(bytes, start, end, fmt, cs, r.partial).values;
  for (let i = 0; i < spec.fields.length; i++) {
    const v = values[spec.fields[i]!];
    const form = spec.forms?.[i];
    if (v === undefined || v === null) {
      sink.reserve(1);
      sink.bytes[sink.length++] = NULL_PART;
    }
    else if (form) putFormed(sink, form, v, cs);
    else if (spec.numeric[i]) putNumber(sink, v, 0, v.length);
    else putText(sink, TEXT, v, 0, v.length);
  }
}

/** The key of one record, as a new Buffer. */
export function recordKey(bytes: Buffer, start: number, end: number, r: KeyReader): SortKey {
  const sink = new ByteSink(64);
  putRecordKey(sink, bytes, start, end, r);
  return sink.copyFrom(0);
}

/** An integer's key (single numeric key field). */
export function integerKey(v: number): SortKey {
  const sink = new ByteSink(24);
  putInteger(sink, v);
  return sink.copyFrom(0);
}

// ---------------------------------------------------------------------------
// The fast path: one numeric key field holding a plain integer.

/** How to read a single plain integer key straight from the bytes, or undefined when the format does not allow it. */
export interface PlainIntegerReader {
  field: number;
  ft: Buffer;
  lt: Buffer;
  /** Bytes that make the fast read unsafe before the key field: enclosure, escape, and for double-byte sets any byte >= 0x80. */
  unsafe: Uint8Array;
}

/** Integers of at most this many digits are read as doubles (exact below 2^53). */
const MAX_PLAIN_DIGITS = 15;

/** One numeric key field: what the integer fast path (plainIntegerReader, the radix sort of its halves) may take. */
export function isIntegerKey(spec: KeySpec): boolean {
  return spec.fields.length === 1 && spec.numeric[0] === true;
}

/**
 * `wellFormed`: the bytes are well-formed in a UTF-8 set (isUtf8), so no
 * malformed sequence can swallow a terminator before the key field.
 */
export function plainIntegerReader(ctx: KeyContext, wellFormed: boolean): PlainIntegerReader | undefined {
  const { spec, fmt, cs } = ctx;
  if (!isIntegerKey(spec)) return undefined;
  const ft = fmt.fieldTerm;
  const lt = fmt.lineTerm;
  // Field and line terminators that overlap could hide one another from a plain search.
  if (ft.length === 0 || lt.length === 0 || lt.includes(ft[0]!) || ft.includes(lt[0]!)) return undefined;
  const unsafe = new Uint8Array(256);
  if (fmt.enclosure >= 0) unsafe[fmt.enclosure] = 1;
  if (fmt.escape >= 0) unsafe[fmt.escape] = 1;
  if (cs.multiByte && !(cs.utf8 && wellFormed)) unsafe.fill(1, 0x80);
  return { field: spec.fields[0]!, ft, lt, unsafe };
}

function termAt(b: Buffer, i: number, end: number, term: Buffer): boolean {
  if (i + term.length > end) return false;
  for (let k = 0; k < term.length; k++) if (b[i + k] !== term[k]) return false;
  return true;
}

/**
 * The record's key field as a number when it is a plain integer (optional
 * '-', 1–15 digits, nothing else) preceded by nothing that a plain search
 * could misread; NaN otherwise (then the general path decides). Every value
 * read here sorts exactly as putNumber's encoding of the same text.
 */
export function plainInteger(b: Buffer, start: number, end: number, r: PlainIntegerReader): number {
  let s = start;
  const ft = r.ft;
  const ft0 = ft[0]!;
  for (let f = 0; f < r.field; ) {
    if (s >= end) return Number.NaN;
    const c = b[s]!;
    if (r.unsafe[c] === 1) return Number.NaN;
    if (c === ft0 && termAt(b, s, end, ft)) {
      f++;
      s += ft.length;
    } else s++;
  }
  let i = s;
  const neg = b[i] === 0x2d;
  if (neg) i++;
  let v = 0;
  const digitsStart = i;
  while (i < end) {
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) break;
    v = v * 10 + (c - 0x30);
    i++;
  }
  const digits = i - digitsStart;
  if (digits === 0 || digits > MAX_PLAIN_DIGITS) return Number.NaN;
  if (i < end && !termAt(b, i, end, ft) && !termAt(b, i, end, r.lt)) return Number.NaN;
  return neg ? 0 - v : v + 0; // never -0
}

// ---------------------------------------------------------------------------
// Reading keys back.

/** One key field, decoded: what the lead turns into an SQL literal. */
export type KeyPart =
  | { kind: 'null' }
  /** Exact decimal text (no exponent), safe as an unquoted SQL numeric literal. */
  | { kind: 'number'; decimal: string }
  /** A text field's bytes after unescaping. */
  | { kind: 'text'; bytes: Buffer }
  /** A numeric field's text that is not a number (the server converts or rejects it). */
  | { kind: 'malformed'; bytes: Buffer };

function readText(key: Buffer, i: number): { bytes: Buffer; next: number } {
  const out: number[] = [];
  for (;;) {
    const c = key[i++];
    if (c === undefined) throw new FlatloadError('INTERNAL', 'a sort key ends in the middle of a part (a corrupt run file?)');
    if (c !== 0) {
      out.push(c);
      continue;
    }
    const d = key[i++];
    if (d === 0) return { bytes: Buffer.from(out), next: i };
    out.push(0);
  }
}

/** A PADDED part's text, trailing spaces dropped (the server calls it equal to the value as written). */
function readPadded(key: Buffer, i: number): { part: KeyPart; next: number } {
  const out: number[] = [];
  for (;;) {
    if (i + SEGMENT >= key.length) throw new FlatloadError('INTERNAL', 'a sort key ends in the middle of a part (a corrupt run file?)');
    for (let k = 0; k < SEGMENT; k++) out.push(key[i + k]!);
    const marker = key[i + SEGMENT];
    i += SEGMENT + 1;
    if (marker === REST_NONE) break;
  }
  let e = out.length;
  while (e > 0 && out[e - 1] === 0x20) e--;
  return { part: { kind: 'text', bytes: Buffer.from(out.slice(0, e)) }, next: i };
}

export function decodeKey(key: SortKey): KeyPart[] {
  const parts: KeyPart[] = [];
  for (let i = 0; i < key.length; ) {
    const d = decodePart(key, i);
    parts.push(d.part);
    i = d.next;
  }
  return parts;
}

/** The key part at key[i], and where the next one starts. */
export function decodePart(key: Buffer, i: number): { part: KeyPart; next: number } {
  const cls = key[i++];
  if (cls === NULL_PART) return { part: { kind: 'null' }, next: i };
  if (cls === ZERO) return { part: { kind: 'number', decimal: '0' }, next: i };
  if (cls === POSITIVE || cls === NEGATIVE) {
    const flip = cls === NEGATIVE ? 0xff : 0;
    const E = (((key[i]! ^ flip) << 8) | (key[i + 1]! ^ flip)) - EXP_BIAS;
    i += 2;
    let digits = '';
    for (;;) {
      const c = key[i++];
      if (c === undefined) throw new FlatloadError('INTERNAL', 'a sort key ends in the middle of a part (a corrupt run file?)');
      if ((c ^ flip) === 0) break;
      digits += String.fromCharCode(c ^ flip);
    }
    return { part: { kind: 'number', decimal: (flip ? '-' : '') + decimalText(digits, E) }, next: i };
  }
  if (cls === TEXT || cls === MALFORMED) {
    const t = readText(key, i);
    return { part: { kind: cls === TEXT ? 'text' : 'malformed', bytes: t.bytes }, next: t.next };
  }
  if (cls === PADDED) return readPadded(key, i);
  throw new FlatloadError('INTERNAL', `not a sort key: class byte ${cls} at ${i - 1} (a corrupt run file?)`);
}

/** 0.digits × 10^E as plain decimal text. */
function decimalText(digits: string, E: number): string {
  if (E <= 0) return `0.${'0'.repeat(-E)}${digits}`;
  if (E >= digits.length) return digits + '0'.repeat(E - digits.length);
  return `${digits.slice(0, E)}.${digits.slice(E)}`;
}

/** A key for messages and plans: `(1300000001)`, `(NULL, 'abc')`. */
export function formatKey(key: SortKey): string {
  const parts = decodeKey(key).map((p) => {
    if (p.kind === 'null') return 'NULL';
    if (p.kind === 'number') return p.decimal;
    return JSON.stringify(p.bytes.toString('utf8'));
  });
  return `(${parts.join(', ')})`;
}
