import type { CharsetInfo } from './charsets.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from './scanner.js';
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
 * Every record boundary of a chunk (which holds whole records), found by the
 * one scanner; the scanner counts newlines as it goes, so lines come free.
 * `into`: arrays to fill (sized by the cutter's count, reused from chunk to
 * chunk); grown copies when they are too short.
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
  let ends: Uint32Array = into?.ends ?? new Uint32Array(1024);
  let lineOffsets: Uint32Array = into?.lineOffsets ?? new Uint32Array(ends.length);
  let n = 0;
  let pos = 0;
  let terminated = true;
  while (pos < bytes.length) {
    const newlinesBefore = scanner.newlines;
    const r = scanner.scan(bytes, pos, 0, true, pos + 1);
    if (n === ends.length || n === lineOffsets.length) {
      ends = grown(ends);
      lineOffsets = grown(lineOffsets);
    }
    lineOffsets[n] = newlinesBefore;
    ends[n++] = r.atRecordEnd ? r.pos : bytes.length;
    if (!r.atRecordEnd) {
      terminated = false;
      break;
    }
    pos = r.pos;
  }
  return { ends: ends.subarray(0, n), lineOffsets: lineOffsets.subarray(0, n), terminated };
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
