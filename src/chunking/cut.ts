import { FlatloadError } from '../errors/index.js';
import type { CharsetInfo } from './charsets.js';
import { countNewlines } from './newlines.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from './scanner.js';
import type { CutChunk, InputSummary } from './types.js';

export interface CutOptions {
  format: ScanFormat;
  charset: CharsetInfo;
  /** The statement's target fields; see RecordScanner. */
  targets: ScanTargets | undefined;
  chunkSizeBytes: number;
  /** At most this many records per chunk as well (an engine limit counted in rows); undefined: no bound. */
  maxRecordsPerChunk?: number | undefined;
  /** A record longer than this is an error (a stray quote usually). */
  maxRecordBytes: number;
  /** Header records to skip (--ignore-lines). */
  ignoreLines: number;
  /** Drop a leading UTF-8 byte-order mark (never data). */
  stripBom: boolean;
  /** Keep each chunk's bytes (inputs that cannot be re-read). */
  keepBytes: boolean;
  /** Input name for messages. */
  file: string;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Bytes of a new block joined to the carried bytes (the rest of the block is never copied). */
const HEAD_BYTES = 64 * 1024;

/**
 * Cuts a byte stream into chunks of whole records, deterministically: chunk
 * k ends at the first record end at or after (its start + chunkSizeBytes).
 * The same input and options always give the same chunks.
 *
 * Pull-based: the next block is read only when the consumer asks for the
 * next chunk, so a slow consumer bounds memory.
 */
export async function* cutChunks(
  blocks: AsyncIterable<Buffer>,
  opts: CutOptions,
  summary?: (s: InputSummary) => void,
): AsyncGenerator<CutChunk> {
  const scanner = new RecordScanner(opts.format, opts.charset, opts.targets);
  scanner.maxRecordBytes = opts.maxRecordBytes;
  // IGNORE n LINES skips physical lines with next_line(): escapes count, quotes do not. Without
  // a line terminator in the statement (LINES TERMINATED BY ''), the server skips n records instead.
  const header =
    opts.ignoreLines > 0
      ? opts.format.lineTerm.length > 0
        ? new RecordScanner(opts.format, opts.charset, undefined, true)
        : new RecordScanner(opts.format, opts.charset, opts.targets)
      : undefined;

  let base = 0; // absolute offset of buf[0]
  let carry: Buffer | undefined;
  let first = true;
  let headerDone = header === undefined;
  let headerBytes = 0;
  let bomBytes = 0;
  let newlinesBefore = 0; // newlines before chunkStart
  let chunkStart = 0;
  let chunkNewlines = 0;
  let chunkRecordsAtStart = 0;
  let chunkIndex = 0;
  let target = 0;
  let parts: Buffer[] = [];
  let totalBytes = 0;

  const emit = (end: number): CutChunk => {
    const chunk: CutChunk = {
      index: chunkIndex++,
      startByte: chunkStart,
      endByte: end,
      firstLine: newlinesBefore + 1,
      firstRecord: chunkRecordsAtStart,
      records: scanner.records - chunkRecordsAtStart,
      newlines: chunkNewlines,
    };
    if (opts.keepBytes) chunk.buffers = parts;
    parts = [];
    newlinesBefore += chunkNewlines;
    chunkNewlines = 0;
    chunkStart = end;
    chunkRecordsAtStart = scanner.records;
    target = chunkStart + opts.chunkSizeBytes;
    return chunk;
  };

  /** buf[from, to) joins the chunk; the scanner counted its newlines while scanning them. */
  let newlinesSeen = 0;
  const take = (buf: Buffer, from: number, to: number): void => {
    chunkNewlines += scanner.newlines - newlinesSeen;
    newlinesSeen = scanner.newlines;
    if (opts.keepBytes && to > from) parts.push(buf.subarray(from, to));
  };

  const tooLong = (start: number, quote: number | undefined): FlatloadError =>
    new FlatloadError(
      'INPUT_MALFORMED',
      quote === undefined
        ? `the record at byte ${start} is longer than ${opts.maxRecordBytes} bytes, the most flatload will buffer: a wrong --lines-terminated-by?`
        : `the record at byte ${start} is longer than ${opts.maxRecordBytes} bytes, the most flatload will buffer: ` +
          `the quote at byte ${quote} opens a field that does not close (an unterminated or stray quote?)`,
      { file: opts.file, byteOffset: quote ?? start, hint: 'if the record is genuine, raise --chunk-size' },
    );

  /** The record in progress (up to abs) or the one that just ended must fit in maxRecordBytes. */
  const checkRecordSize = (abs: number): void => {
    const over = scanner.oversizeRecord;
    if (over) throw tooLong(over.offset, undefined);
    if (abs - scanner.currentRecordStart > opts.maxRecordBytes) {
      throw tooLong(scanner.currentRecordStart, scanner.openQuoteOffset);
    }
  };

  /** Scans buf (which starts at absolute offset `base`); leaves what needs more lookahead in `carry`. */
  function* process(buf: Buffer, final: boolean): Generator<CutChunk> {
    let pos = 0;
    if (first) {
      if (opts.stripBom && !final && buf.length < 3 && BOM.subarray(0, buf.length).equals(buf)) {
        carry = buf; // could still be a byte-order mark: wait for more bytes
        return;
      }
      first = false;
      if (opts.stripBom && buf.length >= 3 && buf.subarray(0, 3).equals(BOM)) {
        bomBytes = 3;
        headerBytes = 3;
        pos = 3;
        newlinesBefore = 0;
      }
      chunkStart = pos;
      target = pos + opts.chunkSizeBytes;
    }
    if (!headerDone && header) {
      // Header records: counted for line numbers, never sent.
      while (header.records < opts.ignoreLines) {
        const r = header.scan(buf, pos, base, final, base + pos);
        newlinesBefore += countNewlines(buf, pos, r.pos);
        pos = r.pos;
        if (!r.atRecordEnd) break;
      }
      if (header.records < opts.ignoreLines && final) {
        header.finish(base + buf.length);
        pos = buf.length;
      }
      if (header.records >= opts.ignoreLines) {
        headerDone = true;
        headerBytes = base + pos;
        chunkStart = base + pos;
        target = chunkStart + opts.chunkSizeBytes;
      } else {
        carry = buf.subarray(pos);
        base += pos;
        return;
      }
    }
    let segStart = pos;
    const maxRecords = opts.maxRecordsPerChunk;
    for (;;) {
      // With a record bound the scanner stops at every record end, so the bound can cut a chunk short.
      const r = scanner.scan(buf, pos, base, final, maxRecords === undefined ? target : base + pos + 1);
      if (r.atRecordEnd && maxRecords !== undefined && base + r.pos < target && scanner.records - chunkRecordsAtStart < maxRecords) {
        pos = r.pos;
        if (pos < buf.length || !final) continue;
        take(buf, segStart, r.pos);
        checkRecordSize(base + r.pos);
        base += r.pos;
        return;
      }
      take(buf, segStart, r.pos);
      if (r.atRecordEnd) {
        yield emit(base + r.pos);
        pos = segStart = r.pos;
        if (pos < buf.length || !final) continue;
      }
      checkRecordSize(base + r.pos);
      if (r.pos < buf.length) {
        carry = buf.subarray(r.pos);
        if (carry.length > opts.maxRecordBytes + scanner.lookahead) checkRecordSize(base + buf.length);
      }
      base += r.pos;
      return;
    }
  }

  /** process() leaves in `carry` what it could not scan yet. */
  const takeCarry = (): Buffer | undefined => {
    const c = carry;
    carry = undefined;
    return c;
  };

  for await (const block of blocks) {
    if (block.length === 0) continue;
    totalBytes += block.length;
    let buf = block;
    if (carry) {
      // The carried bytes (a record's start, or lookahead) are finished with the block's head, so
      // the rest of the block is scanned in place instead of copied behind them.
      const old: Buffer = carry;
      const headLen = Math.min(block.length, HEAD_BYTES);
      const head = Buffer.concat([old, block.subarray(0, headLen)]);
      carry = undefined;
      yield* process(head, false);
      const left = takeCarry();
      const consumed = head.length - (left?.length ?? 0);
      if (consumed >= old.length) buf = block.subarray(consumed - old.length);
      else buf = Buffer.concat([left!, block.subarray(headLen)]); // a record longer than the head
      if (buf.length === 0) continue;
    }
    yield* process(buf, false);
  }
  if (totalBytes === 0) {
    summary?.({ totalBytes: 0, headerBytes: 0, bomBytes: 0, records: 0, newlines: 0, chunks: 0 });
    return;
  }
  if (carry !== undefined && carry.length > 0) {
    const rest: Buffer = carry;
    carry = undefined;
    yield* process(rest, true);
  }
  if (!headerDone) {
    summary?.({ totalBytes, headerBytes: totalBytes, bomBytes, records: 0, newlines: newlinesBefore, chunks: 0 });
    return;
  }
  const quote = scanner.openQuoteOffset;
  if (quote !== undefined) {
    throw new FlatloadError(
      'INPUT_MALFORMED',
      `unterminated quoted field: the quote at byte ${quote} opens a field that runs to the end of the input`,
      { file: opts.file, byteOffset: quote },
    );
  }
  checkRecordSize(totalBytes); // the last record, when it has no terminator
  scanner.finish(totalBytes);
  if (totalBytes > chunkStart) yield emit(totalBytes);
  summary?.({
    totalBytes,
    headerBytes,
    bomBytes,
    records: scanner.records,
    newlines: newlinesBefore,
    chunks: chunkIndex,
  });
}
