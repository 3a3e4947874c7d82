import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { cutChunks, type CutOptions } from '../chunking/cut.js';
import { countNewlines } from '../chunking/newlines.js';
import { locateRecords } from '../chunking/records.js';
import { permuteRecords, recordEnds, sortPermutation, type KeyContext } from './keyOrder.js';
import type { CutChunk, InputSummary } from '../chunking/types.js';
import { openByteStream, readRange } from '../input/streams.js';
import type { FileFormat } from '../config/format.js';
import { FlatloadError } from '../errors/index.js';
import { sniffInput } from '../input/sniff.js';
import { inputError, type Compression, type InputSource } from '../input/source.js';

/** A record as it is sent: where it is in the bytes sent, and where it came from in the input. */
export interface SentRecord {
  /** Position in the chunk's sent bytes. */
  pos: number;
  /** Bytes, terminator included. */
  length: number;
  /** Absolute byte offset in the input. */
  offset: number;
  /** 1-based physical line in the input. */
  line: number;
}

/** The chunk's bytes as sent and its records in sent order. */
export interface ChunkRecords {
  bytes: Buffer;
  records: SentRecord[];
}


/** Block size for scanning a plain file: big enough for indexOf to run at memory speed. */
const SCAN_BLOCK_BYTES = 4 << 20;
const SNIFF_BYTES = 64 * 1024;

/**
 * Where chunks come from and how their bytes are read back. A plain file is
 * scanned once for boundaries and each chunk is re-read by byte range (in
 * parallel, and again on retry or resume); a stream (stdin, .gz, .zst) is cut
 * on the fly and each chunk carries its bytes.
 */
export class ChunkInput {
  summary: InputSummary | undefined;
  bytesScanned = 0;
  /** What the bytes turned out to be compressed with (stdin is sniffed). */
  compression: Compression;
  /** The first 64 KiB of the (decompressed) input, once read: the header lines for the reject file. */
  head: Buffer | undefined;

  /** In-flight sorted chunks: the bytes as sent and how they map back (held until release()). */
  private readonly sorted = new Map<number, Promise<{ original: Buffer; ends: Uint32Array; perm: Uint32Array; sent: Buffer }>>();

  constructor(
    readonly source: InputSource,
    private readonly cut: Omit<CutOptions, 'keepBytes'>,
    private readonly fileFormat: FileFormat,
    /** Send each chunk's records in clustered-key order. */
    private readonly keyOrder?: KeyContext,
  ) {
    this.compression = source.compression;
  }

  private sortedChunk(chunk: CutChunk): Promise<{ original: Buffer; ends: Uint32Array; perm: Uint32Array; sent: Buffer }> {
    let p = this.sorted.get(chunk.index);
    if (!p) {
      const k = this.keyOrder!;
      p = this.readAll(chunk).then((original) => {
        const ends = recordEnds(original, k.fmt, k.cs, k.targets);
        const perm = sortPermutation(original, ends, k);
        return { original, ends, perm, sent: permuteRecords(original, ends, perm, k.fmt.lineTerm) };
      });
      this.sorted.set(chunk.index, p);
    }
    return p;
  }

  /**
   * The chunk's records in the order they are sent, with their input lines
   * and offsets: for mapping the server's "row N" and isolating bad rows.
   */
  async records(chunk: CutChunk): Promise<ChunkRecords> {
    if (!this.keyOrder) {
      const bytes = await this.readAll(chunk);
      const recs = locateRecords(bytes, chunk.startByte, chunk.firstLine, this.cut.format, this.cut.charset, this.cut.targets);
      return { bytes, records: recs.map((r) => ({ pos: r.offset - chunk.startByte, length: r.length, offset: r.offset, line: r.line })) };
    }
    const { original, ends, perm, sent } = await this.sortedChunk(chunk);
    const lines = new Uint32Array(ends.length);
    let line = chunk.firstLine;
    for (let i = 0; i < ends.length; i++) {
      lines[i] = line;
      line += countNewlines(original, i === 0 ? 0 : ends[i - 1]!, ends[i]!);
    }
    // Only the input's last record can lack a terminator; permuteRecords gave it one.
    const gained = sent.length - (ends.length ? ends[ends.length - 1]! : 0);
    const records: SentRecord[] = [];
    let pos = 0;
    for (let j = 0; j < perm.length; j++) {
      const i = perm[j]!;
      const start = i === 0 ? 0 : ends[i - 1]!;
      const length = ends[i]! - start + (i === ends.length - 1 ? gained : 0);
      records.push({ pos, length, offset: chunk.startByte + start, line: lines[i]! });
      pos += length;
    }
    return { bytes: sent, records };
  }

  /** Forgets a chunk's bytes once it is committed or given up. */
  release(chunk: CutChunk): void {
    this.sorted.delete(chunk.index);
  }

  get seekable(): boolean {
    return this.source.seekable;
  }

  chunks(): AsyncGenerator<CutChunk> {
    const blocks = this.sniffed(this.source.seekable ? this.fileBlocks() : this.streamBlocks());
    return this.withLines(cutChunks(this.tracked(blocks), { ...this.cut, keepBytes: !this.source.seekable }, (s) => (this.summary = s)));
  }

  /** Recent blocks and the newline count before each, so an input error can name its line. */
  private recent: Array<{ start: number; newlinesBefore: number; buf: Buffer }> = [];

  private async *tracked(blocks: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
    let start = 0;
    let newlines = 0;
    let kept = 0;
    for await (const b of blocks) {
      this.recent.push({ start, newlinesBefore: newlines, buf: b });
      kept += b.length;
      // Keep about two records' worth (an error points into the record being read).
      while (this.recent.length > 1 && kept - this.recent[0]!.buf.length > 2 * this.cut.maxRecordBytes + (8 << 20)) kept -= this.recent.shift()!.buf.length;
      start += b.length;
      newlines += countNewlines(b);
      yield b;
    }
  }

  /** The 1-based line of a byte offset, if the bytes before it are still known. */
  private async lineAt(offset: number): Promise<number | undefined> {
    const hit = this.recent.find((r) => offset >= r.start && offset <= r.start + r.buf.length);
    if (hit) return hit.newlinesBefore + countNewlines(hit.buf, 0, offset - hit.start) + 1;
    if (!this.source.seekable) return undefined;
    const fh = await open(this.source.path, 'r');
    try {
      let n = 0;
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let pos = 0; pos < offset; ) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, offset - pos), pos);
        if (bytesRead === 0) break;
        n += countNewlines(buf, 0, bytesRead);
        pos += bytesRead;
      }
      return n + 1;
    } finally {
      await fh.close();
    }
  }

  private async *withLines(chunks: AsyncGenerator<CutChunk>): AsyncGenerator<CutChunk> {
    try {
      yield* chunks;
    } catch (err) {
      if (err instanceof FlatloadError && err.context.byteOffset !== undefined && err.context.line === undefined) {
        const line = await this.lineAt(err.context.byteOffset).catch(() => undefined);
        if (line !== undefined) throw err.withContext({ line });
      }
      throw err;
    }
  }

  /** Checks the first 64 KiB for a binary file or a wrong line terminator before anything is sent. */
  private async *sniffed(blocks: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
    const held: Buffer[] = [];
    let size = 0;
    let checked = false;
    const check = (): void => {
      checked = true;
      this.head = Buffer.concat(held).subarray(0, SNIFF_BYTES);
      const problem = sniffInput(this.head, this.fileFormat);
      if (problem) {
        throw new FlatloadError('INPUT_MALFORMED', problem.message, {
          file: this.source.path,
          line: problem.line,
          byteOffset: problem.byteOffset,
          hint: problem.hint,
        });
      }
    };
    for await (const b of blocks) {
      if (checked) {
        yield b;
        continue;
      }
      held.push(b);
      size += b.length;
      if (size >= SNIFF_BYTES) {
        check();
        yield* held;
      }
    }
    if (!checked) {
      check();
      yield* held;
    }
  }

  private async *fileBlocks(): AsyncGenerator<Buffer> {
    let fh;
    try {
      fh = await open(this.source.path, 'r');
    } catch (err) {
      throw inputError(err, this.source.path);
    }
    try {
      let position = 0;
      for (;;) {
        const buf = Buffer.allocUnsafe(SCAN_BLOCK_BYTES);
        const { bytesRead } = await fh.read(buf, 0, buf.length, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        this.bytesScanned = position;
        yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
      }
    } catch (err) {
      throw inputError(err, this.source.path);
    } finally {
      await fh.close();
    }
  }

  private async *streamBlocks(): AsyncGenerator<Buffer> {
    const { stream, compression } = await openByteStream(this.source, 1 << 20);
    this.compression = compression;
    for await (const b of stream) {
      const buf = b as Buffer;
      this.bytesScanned += buf.length;
      yield buf;
    }
  }

  /** The chunk's bytes as a stream of pieces of about `pieceBytes` (each becomes one LOCAL INFILE packet). */
  open(chunk: CutChunk, pieceBytes: number): Readable {
    if (this.keyOrder) {
      return Readable.from(
        (async function* (self: ChunkInput) {
          const { sent } = await self.sortedChunk(chunk);
          for (let i = 0; i < sent.length; i += pieceBytes) yield sent.subarray(i, i + pieceBytes);
        })(this),
        { objectMode: false },
      );
    }
    if (chunk.buffers) return Readable.from(coalesce(chunk.buffers, pieceBytes), { objectMode: false });
    const s = readRange(this.source.path, chunk.startByte, chunk.endByte, pieceBytes);
    return s;
  }

  /** The whole chunk in memory (row-level work on a chunk only). */
  async readAll(chunk: CutChunk): Promise<Buffer> {
    if (chunk.buffers) return Buffer.concat(chunk.buffers);
    const fh = await open(this.source.path, 'r');
    try {
      const buf = Buffer.allocUnsafe(chunk.endByte - chunk.startByte);
      let off = 0;
      while (off < buf.length) {
        const { bytesRead } = await fh.read(buf, off, buf.length - off, chunk.startByte + off);
        if (bytesRead === 0) break;
        off += bytesRead;
      }
      return buf.subarray(0, off);
    } finally {
      await fh.close();
    }
  }
}

function* coalesce(buffers: Buffer[], pieceBytes: number): Generator<Buffer> {
  let pending: Buffer[] = [];
  let size = 0;
  for (const b of buffers) {
    if (b.length >= pieceBytes && pending.length === 0) {
      for (let i = 0; i < b.length; i += pieceBytes) yield b.subarray(i, i + pieceBytes);
      continue;
    }
    pending.push(b);
    size += b.length;
    if (size >= pieceBytes) {
      yield Buffer.concat(pending, size);
      pending = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(pending, size);
}
