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
  const cutter = new ChunkCutter(opts);
  for await (const block of blocks) {
    if (block.length === 0) continue;
    yield* cutter.block(block);
  }
  yield* cutter.end();
  summary?.(cutter.summary());
}

/** The state of one cutChunks pass, in the steps it takes a block through. */
class ChunkCutter {
  private readonly scanner: RecordScanner;
  /** Scans the header records (--ignore-lines); undefined once there are none left to skip. */
  private readonly header: RecordScanner | undefined;
  private base = 0; // absolute offset of the buffer being scanned
  private carry: Buffer | undefined;
  private first = true;
  private headerDone: boolean;
  private headerBytes = 0;
  private bomBytes = 0;
  private newlinesBefore = 0; // newlines before chunkStart
  private chunkStart = 0;
  private chunkNewlines = 0;
  private chunkRecordsAtStart = 0;
  private chunkIndex = 0;
  private target = 0;
  private parts: Buffer[] = [];
  private totalBytes = 0;
  /** The scanner's newline count when the chunk last took bytes. */
  private newlinesSeen = 0;

  constructor(private readonly opts: CutOptions) {
    this.scanner = new RecordScanner(opts.format, opts.charset, opts.targets);
    this.scanner.maxRecordBytes = opts.maxRecordBytes;
    // IGNORE n LINES skips physical lines with next_line(): escapes count, quotes do not. Without
    // a line terminator in the statement (LINES TERMINATED BY ''), the server skips n records instead.
    this.header =
      opts.ignoreLines > 0
        ? opts.format.lineTerm.length > 0
          ? new RecordScanner(opts.format, opts.charset, undefined, true)
          : new RecordScanner(opts.format, opts.charset, opts.targets)
        : undefined;
    this.headerDone = this.header === undefined;
  }

  /**
   * One block of the input. The bytes carried from the block before (a
   * record's start, or lookahead) are finished with the block's head, so the
   * rest of the block is scanned in place instead of copied behind them.
   */
  *block(block: Buffer): Generator<CutChunk> {
    this.totalBytes += block.length;
    let buf = block;
    const old = this.takeCarry();
    if (old) {
      const headLen = Math.min(block.length, HEAD_BYTES);
      const head = Buffer.concat([old, block.subarray(0, headLen)]);
      yield* this.process(head, false);
      const left = this.takeCarry();
      const consumed = head.length - (left?.length ?? 0);
      if (consumed >= old.length) buf = block.subarray(consumed - old.length);
      else buf = Buffer.concat([left!, block.subarray(headLen)]); // a record longer than the head
      if (buf.length === 0) return;
    }
    yield* this.process(buf, false);
  }

  /** The end of the input: the carried bytes, then the last record, which needs no terminator. */
  *end(): Generator<CutChunk> {
    if (this.totalBytes === 0) return;
    const rest = this.takeCarry();
    if (rest !== undefined && rest.length > 0) yield* this.process(rest, true);
    if (!this.headerDone) return;
    const quote = this.scanner.openQuoteOffset;
    if (quote !== undefined) {
      throw new FlatloadError(
        'INPUT_MALFORMED',
        `unterminated quoted field: the quote at byte ${quote} opens a field that runs to the end of the input`,
        { file: this.opts.file, byteOffset: quote },
      );
    }
    this.checkRecordSize(this.totalBytes); // the last record, when it has no terminator
    this.scanner.finish(this.totalBytes);
    if (this.totalBytes > this.chunkStart) yield this.emit(this.totalBytes);
  }

  /** The whole input's counts, once end() has run. */
  summary(): InputSummary {
    const { totalBytes, bomBytes } = this;
    if (totalBytes === 0) return { totalBytes: 0, headerBytes: 0, bomBytes: 0, records: 0, newlines: 0, chunks: 0 };
    if (!this.headerDone) return { totalBytes, headerBytes: totalBytes, bomBytes, records: 0, newlines: this.newlinesBefore, chunks: 0 };
    return { totalBytes, headerBytes: this.headerBytes, bomBytes, records: this.scanner.records, newlines: this.newlinesBefore, chunks: this.chunkIndex };
  }

  /** process() leaves in `carry` what it could not scan yet. */
  private takeCarry(): Buffer | undefined {
    const c = this.carry;
    this.carry = undefined;
    return c;
  }

  /** Scans buf (which starts at absolute offset `base`); leaves what needs more lookahead in `carry`. */
  private *process(buf: Buffer, final: boolean): Generator<CutChunk> {
    let pos = 0;
    if (this.first) {
      const start = this.start(buf, final);
      if (start === undefined) return;
      pos = start;
    }
    if (!this.headerDone) {
      const after = this.skipHeader(buf, pos, final);
      if (after === undefined) return;
      pos = after;
    }
    yield* this.records(buf, pos, final);
  }

  /**
   * The input's first bytes: a UTF-8 byte-order mark is skipped (never data).
   * Returns where the records begin, or undefined when too few bytes have come
   * to tell (they wait in `carry`).
   */
  private start(buf: Buffer, final: boolean): number | undefined {
    const { opts } = this;
    if (opts.stripBom && !final && buf.length < 3 && BOM.subarray(0, buf.length).equals(buf)) {
      this.carry = buf; // could still be a byte-order mark: wait for more bytes
      return undefined;
    }
    this.first = false;
    let pos = 0;
    if (opts.stripBom && buf.length >= 3 && buf.subarray(0, 3).equals(BOM)) {
      this.bomBytes = 3;
      this.headerBytes = 3;
      pos = 3;
      this.newlinesBefore = 0;
    }
    this.chunkStart = pos;
    this.target = pos + opts.chunkSizeBytes;
    return pos;
  }

  /**
   * Header records (--ignore-lines): counted for line numbers, never sent.
   * Returns where the first chunk begins, or undefined when the header goes
   * on past this buffer (the rest waits in `carry`).
   */
  private skipHeader(buf: Buffer, from: number, final: boolean): number | undefined {
    const header = this.header!;
    const want = this.opts.ignoreLines;
    let pos = from;
    while (header.records < want) {
      const r = header.scan(buf, pos, this.base, final, this.base + pos);
      this.newlinesBefore += countNewlines(buf, pos, r.pos);
      pos = r.pos;
      if (!r.atRecordEnd) break;
    }
    if (header.records < want && final) {
      header.finish(this.base + buf.length);
      pos = buf.length;
    }
    if (header.records < want) {
      this.carry = buf.subarray(pos);
      this.base += pos;
      return undefined;
    }
    this.headerDone = true;
    this.headerBytes = this.base + pos;
    this.chunkStart = this.base + pos;
    this.target = this.chunkStart + this.opts.chunkSizeBytes;
    return pos;
  }

  /** The records of buf from `pos`: a chunk ends at the first record end at or after its target. */
  private *records(buf: Buffer, from: number, final: boolean): Generator<CutChunk> {
    const { scanner } = this;
    const maxRecords = this.opts.maxRecordsPerChunk;
    let pos = from;
    let segStart = from;
    for (;;) {
      const base = this.base;
      // With a record bound the scanner stops at every record end, so the bound can cut a chunk short.
      const r = scanner.scan(buf, pos, base, final, maxRecords === undefined ? this.target : base + pos + 1);
      if (r.atRecordEnd && maxRecords !== undefined && base + r.pos < this.target && scanner.records - this.chunkRecordsAtStart < maxRecords) {
        pos = r.pos;
        if (pos < buf.length || !final) continue;
        this.take(buf, segStart, r.pos);
        this.checkRecordSize(base + r.pos);
        this.base += r.pos;
        return;
      }
      this.take(buf, segStart, r.pos);
      if (r.atRecordEnd) {
        yield this.emit(base + r.pos);
        pos = segStart = r.pos;
        if (pos < buf.length || !final) continue;
      }
      this.checkRecordSize(base + r.pos);
      if (r.pos < buf.length) {
        this.carry = buf.subarray(r.pos);
        if (this.carry.length > this.opts.maxRecordBytes + scanner.lookahead) this.checkRecordSize(base + buf.length);
      }
      this.base += r.pos;
      return;
    }
  }

  /** buf[from, to) joins the chunk; the scanner counted its newlines while scanning them. */
  private take(buf: Buffer, from: number, to: number): void {
    this.chunkNewlines += this.scanner.newlines - this.newlinesSeen;
    this.newlinesSeen = this.scanner.newlines;
    if (this.opts.keepBytes && to > from) this.parts.push(buf.subarray(from, to));
  }

  /** The chunk ending at absolute offset `end`; the next one starts there. */
  private emit(end: number): CutChunk {
    const { scanner } = this;
    const chunk: CutChunk = {
      index: this.chunkIndex++,
      startByte: this.chunkStart,
      endByte: end,
      firstLine: this.newlinesBefore + 1,
      firstRecord: this.chunkRecordsAtStart,
      records: scanner.records - this.chunkRecordsAtStart,
      newlines: this.chunkNewlines,
    };
    if (this.opts.keepBytes) chunk.buffers = this.parts;
    this.parts = [];
    this.newlinesBefore += this.chunkNewlines;
    this.chunkNewlines = 0;
    this.chunkStart = end;
    this.chunkRecordsAtStart = scanner.records;
    this.target = this.chunkStart + this.opts.chunkSizeBytes;
    return chunk;
  }

  /** The record in progress (up to abs) or the one that just ended must fit in maxRecordBytes. */
  private checkRecordSize(abs: number): void {
    const { scanner } = this;
    const over = scanner.oversizeRecord;
    if (over) throw this.tooLong(over.offset, undefined);
    if (abs - scanner.currentRecordStart > this.opts.maxRecordBytes) {
      throw this.tooLong(scanner.currentRecordStart, scanner.openQuoteOffset);
    }
  }

  private tooLong(start: number, quote: number | undefined): FlatloadError {
    const max = this.opts.maxRecordBytes;
    return new FlatloadError(
      'INPUT_MALFORMED',
      quote === undefined
        ? `the record at byte ${start} is longer than ${max} bytes, the most flatload will buffer: a wrong --lines-terminated-by?`
        : `the record at byte ${start} is longer than ${max} bytes, the most flatload will buffer: ` +
          `the quote at byte ${quote} opens a field that does not close (an unterminated or stray quote?)`,
      { file: this.opts.file, byteOffset: quote ?? start, hint: 'if the record is genuine, raise --chunk-size' },
    );
  }
}
