import { ILSEQ, type CharsetInfo } from './charsets.js';
import type { ScanFormat, ScanTargets } from './scanner.js';

/**
 * A record's field values exactly as LOAD DATA reads them (READ_INFO
 * read_field + unescape + read_sep_field's NULL rules), for the paths that
 * need values rather than bytes: batched INSERT, sorting by key, sampling.
 * The record's bounds come from RecordScanner; this mirrors its state
 * machine and additionally builds values.
 *
 * A value is a Buffer of the field's bytes after unescaping, null for SQL
 * NULL, or undefined when the record ended before this field ("no data":
 * the server uses the column default and warns 1261).
 */
export type FieldValue = Buffer | null | undefined;

export interface ParsedRecord {
  values: FieldValue[];
  /** More fields than targets (the server skips them and warns 1262). */
  extraData: boolean;
}

const UNESCAPE: Record<number, number> = { 0x6e: 0x0a, 0x74: 0x09, 0x72: 0x0d, 0x62: 0x08, 0x30: 0x00, 0x5a: 0x1a };

export function parseRecord(
  buf: Buffer,
  start: number,
  end: number,
  fmt: ScanFormat,
  charset: CharsetInfo,
  targets: ScanTargets,
): ParsedRecord {
  const r = reader(buf, end, fmt, charset);
  const values: FieldValue[] = [];
  let i = start;
  let lineEnded = false;
  while (values.length < targets.fields) {
    if (lineEnded || i >= end) {
      values.push(undefined);
      continue;
    }
    const f = readField(r, i, charset.multiByte && targets.textField[values.length] === true);
    values.push(f.value);
    i = f.next;
    lineEnded = f.lineEnded;
  }
  // Anything left before the line terminator is extra data (next_line() skips it).
  let extraData = false;
  if (!lineEnded) {
    const rest = end - i;
    const termAtEnd = r.lineTerm.length > 0 && rest >= r.lineTerm.length && matches(r, end - r.lineTerm.length, r.lineTerm);
    extraData = rest > (termAtEnd ? r.lineTerm.length : 0);
  }
  return { values, extraData };
}

/** One record's bytes and the format's terminators, as readField reads them. */
interface Reader {
  buf: Buffer;
  end: number;
  fieldTerm: Buffer;
  lineTerm: Buffer;
  lt0: number;
  ft0: number;
  enclosure: number;
  escape: number;
  charset: CharsetInfo;
}

function reader(buf: Buffer, end: number, fmt: ScanFormat, charset: CharsetInfo): Reader {
  const { fieldTerm, enclosure, escape } = fmt;
  // FT == LT: the server drops LT (READ_INFO's constructor), as RecordScanner does.
  const lineTerm = fmt.lineTerm.length && fmt.lineTerm.equals(fieldTerm) ? Buffer.alloc(0) : fmt.lineTerm;
  return { buf, end, fieldTerm, lineTerm, lt0: lineTerm.length ? lineTerm[0]! : -1, ft0: fieldTerm.length ? fieldTerm[0]! : -1, enclosure, escape, charset };
}

function matches(r: Reader, i: number, term: Buffer): boolean {
  if (term.length === 0 || i + term.length > r.end) return false;
  for (let k = 0; k < term.length; k++) if (r.buf[i + k] !== term[k]) return false;
  return true;
}

/** Bytes of the character at i (a malformed sequence: the bytes read before it failed, at least one). */
function mbTail(r: Reader, i: number): number {
  const { buf, end, charset } = r;
  let chlen = charset.charlen(buf, i, i + 1);
  if (chlen === 1 || chlen === ILSEQ) return 1;
  let k = 1;
  while (chlen < 0) {
    if (i + k >= end) return end - i;
    k++;
    chlen = charset.charlen(buf, i, i + k);
    if (chlen === ILSEQ) return k - 1;
  }
  return k;
}

interface FieldRead {
  value: FieldValue;
  /** Where the next field starts. */
  next: number;
  /** The record ended with this field (its line terminator, or the end of the bytes). */
  lineEnded: boolean;
}

/**
 * What an enclosure byte at i inside a quoted field does: closes the field
 * (before the line terminator, the field terminator or the end), is half of
 * a doubled quote (data), or is data alone ('data').
 */
function quoteAt(r: Reader, i: number): { close: true; next: number; lineEnded: boolean } | 'doubled' | 'data' {
  const n = i + 1;
  if (n >= r.end) return { close: true, next: n, lineEnded: true };
  const d = r.buf[n]!;
  if (d === r.enclosure) return 'doubled';
  if (d === r.lt0 && matches(r, n, r.lineTerm)) return { close: true, next: n + r.lineTerm.length, lineEnded: true };
  if (d === r.ft0 && matches(r, n, r.fieldTerm)) return { close: true, next: n + r.fieldTerm.length, lineEnded: false };
  return 'data';
}

/** The field starting at `from`, read as READ_INFO read_field does; `mb`: a text field of a multi-byte character set. */
function readField(r: Reader, from: number, mb: boolean): FieldRead {
  const { buf, end, enclosure, escape, lineTerm, fieldTerm, lt0, ft0 } = r;
  // The value is built from raw segments [seg, i) plus unescaped bytes; with no escapes it is one zero-copy slice.
  const parts: Buffer[] = [];
  let i = from;
  let quoted = false;
  let closed = false;
  let foundNull = false;
  let lineEnded = false;
  if (buf[i] === enclosure) {
    quoted = true;
    i++;
  }
  let seg = i;
  const flush = (to: number): void => {
    if (to > seg) parts.push(buf.subarray(seg, to));
  };
  for (;;) {
    if (i >= end) {
      flush(end);
      // EOF: an unterminated quoted field keeps its opening quote (found_eof uses the whole buffer).
      if (quoted) parts.unshift(Buffer.of(enclosure));
      lineEnded = true;
      break;
    }
    let c = buf[i]!;
    if (c === escape) {
      if (i + 1 >= end) {
        i = end; // the escape byte itself is data (flushed above)
        continue;
      }
      const d = buf[i + 1]!;
      if (escape !== enclosure || d === escape) {
        if (d === 0x4e) foundNull = true; // \N
        flush(i);
        parts.push(Buffer.of(UNESCAPE[d] ?? d));
        i += 2;
        seg = i;
        continue;
      }
      c = enclosure;
    }
    if (!quoted && c === lt0 && matches(r, i, lineTerm)) {
      flush(i);
      i += lineTerm.length;
      lineEnded = true;
      break;
    }
    if (quoted && c === enclosure) {
      const q = quoteAt(r, i);
      if (q === 'doubled') {
        flush(i + 1); // keeps one of the two quotes
        i += 2;
        seg = i;
        continue;
      }
      if (q !== 'data') {
        flush(i);
        closed = true;
        i = q.next;
        lineEnded = q.lineEnded;
        break;
      }
      // A quote that closes nothing is data (a multi-byte lead byte takes its trail, as in RecordScanner); the field stays quoted.
    }
    if (!quoted && c === ft0 && matches(r, i, fieldTerm)) {
      flush(i);
      i += fieldTerm.length;
      break;
    }
    i += mb ? mbTail(r, i) : 1;
  }
  const value = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  const isNullWord = !closed && enclosure !== -1 && value.length === 4 && value.toString('latin1') === 'NULL';
  return { value: isNullWord || (value.length === 1 && foundNull) ? null : value, next: i, lineEnded };
}
