import { isUtf8 } from 'node:buffer';
import type { CharsetInfo } from './charsets.js';
import { countNewlines } from './newlines.js';
import { escapedAt, RecordScanner, type ScanFormat, type ScanTargets } from './scanner.js';
import { FlatloadError } from '../errors/index.js';

export interface RecordLocation {
  /** Absolute byte offset of the record's first byte. */
  offset: number;
  /** Bytes, terminator included. */
  length: number;
  /** 1-based physical line of the record's first byte. */
  line: number;
}

/** A chunk's records as typed arrays: a 64 MiB chunk can hold two million of them. */
export interface RecordTable {
  /** Record i is bytes [recordStart(ends, i), ends[i]). */
  ends: Uint32Array;
  /** Newlines in the chunk before record i: its line is the chunk's first line plus this. */
  lineOffsets: Uint32Array;
  /** Whether the last record ends with its terminator (only the input's last record may not). */
  terminated: boolean;
}

/**
 * Where item i of an ends array starts: where item i - 1 ends (item 0 at 0).
 * A record table's records are laid out so, and so are a sort's encoded keys.
 */
export function recordStart(ends: Uint32Array, i: number): number {
  return i === 0 ? 0 : ends[i - 1]!;
}

/** Item i's bytes (a record's, terminator included). */
export function recordLength(ends: Uint32Array, i: number): number {
  return ends[i]! - recordStart(ends, i);
}

/**
 * Every record boundary of a chunk (which holds whole records), as the one
 * scanner finds them. `into`: arrays to fill (sized by the cutter's count,
 * reused from chunk to chunk); grown copies when they are too short.
 */
export function recordTable(
  bytes: Buffer,
  format: ScanFormat,
  charset: CharsetInfo,
  targets: ScanTargets | undefined,
  into?: { ends: Uint32Array; lineOffsets: Uint32Array },
): RecordTable {
  if (bytes.length > 0xffffffff) {
    throw new FlatloadError('INTERNAL', `a chunk of ${bytes.length} bytes is over the 4 GiB a record table can index`);
  }
  const scanner = new RecordScanner(format, charset, targets);
  const t: Table = { ends: into?.ends ?? new Uint32Array(1024), lineOffsets: into?.lineOffsets ?? new Uint32Array(1024), n: 0, terminated: true };
  // The fast path's rule holds only for well-formed UTF-8 (which the cutter's scan checked too).
  if (scanner.endsAtNewline && (!charset.multiByte || isUtf8(bytes))) newlineRecords(bytes, format, scanner, t);
  else scannedRecords(bytes, scanner, t);
  return { ends: t.ends.subarray(0, t.n), lineOffsets: t.lineOffsets.subarray(0, t.n), terminated: t.terminated };
}

/** A record table being filled: n records so far. */
interface Table {
  ends: Uint32Array;
  lineOffsets: Uint32Array;
  n: number;
  terminated: boolean;
}

function push(t: Table, end: number, lines: number): void {
  if (t.n === t.ends.length || t.n === t.lineOffsets.length) {
    t.ends = grown(t.ends);
    t.lineOffsets = grown(t.lineOffsets);
  }
  t.lineOffsets[t.n] = lines;
  t.ends[t.n++] = end;
}

/** Every record, one scanner call each; the scanner counts newlines as it goes, so lines come free. */
function scannedRecords(bytes: Buffer, scanner: RecordScanner, t: Table): void {
  let pos = 0;
  while (pos < bytes.length) {
    const before = scanner.newlines;
    const r = scanner.scan(bytes, pos, 0, true, pos + 1);
    push(t, r.atRecordEnd ? r.pos : bytes.length, before);
    if (!r.atRecordEnd) {
      t.terminated = false;
      return;
    }
    pos = r.pos;
  }
}

/**
 * The records of a format whose records end at a line terminator ending in
 * its only newline (scanner.endsAtNewline): one indexOf per newline. A
 * newline ends a record when the terminator is there, starts in the record
 * and no odd run of escape bytes precedes it; a record with an enclosure
 * byte before that is read by the scanner's exact rules (from its start, as
 * the scanner's fast path does).
 */
function newlineRecords(bytes: Buffer, fmt: ScanFormat, scanner: RecordScanner, t: Table): void {
  const term = fmt.lineTerm;
  const L = term.length;
  const esc = fmt.escape;
  const enc = fmt.enclosure;
  const len = bytes.length;
  let rec = 0; // where the record in progress starts
  let lines = 0; // newlines before it
  let inRec = 0; // newlines in it so far that end nothing
  let nextEnc = enc === -1 ? len : nextByte(bytes, enc, 0); // the first enclosure byte at or after rec
  let s = 0; // where to look for the next newline
  for (;;) {
    const nl = bytes.indexOf(0x0a, s);
    if (nl === -1) break;
    s = nl + 1;
    const at = nl - L + 1; // where the terminator would start
    if (at < rec || (L > 1 && !matchesAt(bytes, at, term))) {
      inRec++;
      continue;
    }
    let end = s;
    if (nextEnc <= at) {
      const r = scanner.scan(bytes, rec, 0, true, rec + 1);
      if (!r.atRecordEnd) {
        // It runs to the end of the chunk (an open quote): the last record, without terminator.
        push(t, len, lines);
        t.terminated = false;
        return;
      }
      end = r.pos;
      push(t, end, lines);
      lines += countNewlines(bytes, rec, end);
    } else {
      if (escapedAt(bytes, at, rec, esc)) {
        inRec++; // the escape takes the terminator's first byte
        continue;
      }
      push(t, end, lines);
      lines += inRec + 1;
    }
    rec = s = end;
    inRec = 0;
    if (nextEnc < rec) nextEnc = nextByte(bytes, enc, rec);
  }
  if (rec === len) return;
  // No newline left that could end a record: the rest is the last one, without terminator.
  push(t, len, lines);
  t.terminated = false;
}

function nextByte(buf: Buffer, byte: number, from: number): number {
  const j = buf.indexOf(byte, from);
  return j === -1 ? buf.length : j;
}

function matchesAt(buf: Buffer, i: number, term: Buffer): boolean {
  for (let k = 0; k < term.length; k++) if (buf[i + k] !== term[k]) return false;
  return true;
}

function grown(a: Uint32Array): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(Math.max(16, a.length * 2));
  b.set(a);
  return b;
}

/**
 * Every record of a chunk with its offset and line: used only when a chunk
 * needs row-level attention (warnings, rejects), never on the fast path.
 */
export function locateRecords(
  bytes: Buffer,
  baseOffset: number,
  firstLine: number,
  format: ScanFormat,
  charset: CharsetInfo,
  targets: ScanTargets | undefined,
): RecordLocation[] {
  const { ends, lineOffsets } = recordTable(bytes, format, charset, targets);
  const out: RecordLocation[] = [];
  for (let i = 0; i < ends.length; i++) {
    const start = recordStart(ends, i);
    out.push({ offset: baseOffset + start, length: ends[i]! - start, line: firstLine + lineOffsets[i]! });
  }
  return out;
}
