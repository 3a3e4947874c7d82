/**
 * Shared helpers for the chunking tests (not a test file itself): the case
 * format of the JSON fixtures, and drivers that run a case through
 * RecordScanner directly and through cutChunks.
 */
import { readFileSync } from 'node:fs';
import { charsetInfo, type CharsetInfo } from '../../src/chunking/charsets.js';
import { cutChunks, type CutOptions } from '../../src/chunking/cut.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../../src/chunking/scanner.js';
import type { CutChunk, InputSummary } from '../../src/chunking/types.js';
import { FlatloadError } from '../../src/errors/index.js';
import { blocksInTurn } from '../../src/input/blocks.js';

/** One case of chunking-cases.json / chunking-fuzz.json. */
export interface ScanCase {
  name: string;
  /** Input bytes, hex. */
  hex: string;
  /** Hex. */
  fieldTerm: string;
  /** Hex. */
  lineTerm: string;
  enclosure: number;
  escape: number;
  charset: string;
  ncols: number;
  /** Per target: scanned as text in the file's character set (else byte by byte). */
  text: boolean[];
  ignore: number;
  /** Expected record end offsets (exclusive), as the server (emulator) reads them. */
  ends: number[];
  /** Offset of the opening quote when the input ends inside a quoted field. */
  openQuote: number | null;
}

export function readCases(file: string): ScanCase[] {
  const doc = JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as { cases: ScanCase[] };
  return doc.cases;
}

export function formatOf(c: ScanCase): ScanFormat {
  return {
    fieldTerm: Buffer.from(c.fieldTerm, 'hex'),
    lineTerm: Buffer.from(c.lineTerm, 'hex'),
    enclosure: c.enclosure,
    escape: c.escape,
  };
}

export function charsetOf(c: ScanCase): CharsetInfo {
  const cs = charsetInfo(c.charset);
  if (!cs) throw new Error(`unknown charset ${c.charset}`);
  return cs;
}

export function targetsOf(c: ScanCase): ScanTargets {
  return { fields: c.ncols, textField: c.text };
}

export function describe(c: ScanCase): string {
  const fmt = (h: string): string => JSON.stringify(Buffer.from(h, 'hex').toString('latin1'));
  const b = (n: number): string => (n < 0 ? 'none' : JSON.stringify(String.fromCharCode(n)));
  return (
    `${c.name}: data=${fmt(c.hex)} (hex ${c.hex}) FT=${fmt(c.fieldTerm)} LT=${fmt(c.lineTerm)} ENC=${b(c.enclosure)} ` +
    `ESC=${b(c.escape)} cs=${c.charset} text=[${c.text.join(',')}] ignore=${c.ignore}`
  );
}

export interface WholeScan {
  /** Where the header (IGNORE n LINES) ends. */
  headerEnd: number;
  /** Record end offsets, as a single pass over the whole input sees them. */
  ends: number[];
  openQuote: number | undefined;
  /** Newlines the record scanner counted (those after the header). */
  newlines: number;
  /** Times its fast path handed malformed UTF-8 to the general path. */
  fallbacks: number;
}

/**
 * Scans the whole input in one buffer, like the server: header lines with
 * next_line() rules, then records one by one (stopAt = just past the start).
 */
export function scanWhole(
  data: Buffer,
  format: ScanFormat,
  charset: CharsetInfo,
  targets: ScanTargets | undefined,
  ignore: number,
  fastPath = true,
): WholeScan {
  let pos = 0;
  if (ignore > 0) {
    // IGNORE n LINES: physical lines (next_line), or n records when the statement has no line terminator.
    const header = format.lineTerm.length ? new RecordScanner(format, charset, undefined, true) : new RecordScanner(format, charset, targets);
    while (header.records < ignore && pos < data.length) {
      const r = header.scan(data, pos, 0, true, pos + 1);
      pos = r.pos;
      if (!r.atRecordEnd) break;
    }
  }
  const headerEnd = pos;
  const scanner = new RecordScanner(format, charset, targets, false, { fastPath });
  const ends: number[] = [];
  while (pos < data.length) {
    const r = scanner.scan(data, pos, 0, true, pos + 1);
    pos = r.pos;
    if (!r.atRecordEnd) break;
    ends.push(pos);
  }
  const before = scanner.records;
  const open = scanner.finish(data.length);
  if (scanner.records > before) ends.push(data.length);
  return { headerEnd, ends, openQuote: open?.quoteOffset, newlines: scanner.newlines, fallbacks: scanner.fastPathFallbacks };
}

export function scanCase(c: ScanCase): WholeScan {
  return scanWhole(Buffer.from(c.hex, 'hex'), formatOf(c), charsetOf(c), targetsOf(c), c.ignore);
}

/** Splits data into blocks of `size` bytes (the last may be shorter). */
export function* blocksOf(data: Buffer, size: number): Generator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

async function* asyncBlocks(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (const b of blocksOf(data, size)) yield b;
}

/** The blocks as the file scan reads them: into two buffers in turn, each overwritten two blocks later. */
function blocksReusingBuffers(data: Buffer, size: number): AsyncGenerator<Buffer> {
  return blocksInTurn(async (buf, position) => data.copy(buf, 0, position, Math.min(data.length, position + buf.length)), size);
}

export interface CutResult {
  chunks: CutChunk[];
  summary: InputSummary | undefined;
  error: FlatloadError | undefined;
}

export async function cut(
  data: Buffer,
  opts: Partial<CutOptions> & Pick<CutOptions, 'format' | 'charset' | 'targets'>,
  blockSize: number,
  reuseBuffers = false,
): Promise<CutResult> {
  const full: CutOptions = {
    chunkSizeBytes: 1,
    maxRecordBytes: Number.MAX_SAFE_INTEGER,
    ignoreLines: 0,
    stripBom: false,
    keepBytes: false,
    file: 'test.txt',
    ...opts,
  };
  const chunks: CutChunk[] = [];
  let summary: InputSummary | undefined;
  try {
    const blocks = reuseBuffers ? blocksReusingBuffers(data, blockSize) : asyncBlocks(data, blockSize);
    for await (const ch of cutChunks(blocks, full, (s) => (summary = s))) chunks.push(ch);
  } catch (err) {
    if (err instanceof FlatloadError) return { chunks, summary, error: err };
    throw err;
  }
  return { chunks, summary, error: undefined };
}

export function cutCase(c: ScanCase, chunkSizeBytes: number, blockSize: number, extra: Partial<CutOptions> = {}): Promise<CutResult> {
  return cut(
    Buffer.from(c.hex, 'hex'),
    { format: formatOf(c), charset: charsetOf(c), targets: targetsOf(c), ignoreLines: c.ignore, chunkSizeBytes, ...extra },
    blockSize,
  );
}

export { prng as rng } from '../../fixtures/prng.js';

export function countLf(data: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (data[i] === 0x0a) n++;
  return n;
}
