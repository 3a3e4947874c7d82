import type { CharsetInfo } from './charsets.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from './scanner.js';

export interface RecordLocation {
  /** Absolute byte offset of the record's first byte. */
  offset: number;
  /** Bytes, terminator included. */
  length: number;
  /** 1-based physical line of the record's first byte. */
  line: number;
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
  const scanner = new RecordScanner(format, charset, targets);
  const out: RecordLocation[] = [];
  let pos = 0;
  let line = firstLine;
  while (pos < bytes.length) {
    const r = scanner.scan(bytes, pos, baseOffset, true, baseOffset + pos + 1);
    const end = r.atRecordEnd ? r.pos : bytes.length;
    out.push({ offset: baseOffset + pos, length: end - pos, line });
    for (let i = bytes.indexOf(0x0a, pos); i !== -1 && i < end; i = bytes.indexOf(0x0a, i + 1)) line++;
    if (!r.atRecordEnd) break;
    pos = end;
  }
  return out;
}
