import { statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { cutChunks, type CutOptions } from '../chunking/cut.js';
import { countNewlines } from '../chunking/newlines.js';
import { locateRecords } from '../chunking/records.js';
import { parseRecord } from '../chunking/fields.js';
import type { Activity } from '../report/activity.js';
import type { ChunkRecords, ChunkSource, ContentCheck } from './chunkSource.js';
import type { CutChunk, InputSummary } from '../chunking/types.js';
import { blocksInTurn } from '../input/blocks.js';
import { openByteRange, openPositional } from '../input/ranged.js';
import { openByteStream } from '../input/streams.js';
import type { FileFormat } from '../config/format.js';
import { FlatloadError } from '../errors/index.js';
import { sniffInput } from '../input/sniff.js';
import { fileChange, inputChanged, inputError, type InputSource } from '../input/source.js';
import type { LocalInput } from '../input/spool.js';
import { contentDigest, type Digest, type DigestKind } from '../input/digest.js';

/** Block size for scanning a plain file: big enough for indexOf to run at memory speed. */
const SCAN_BLOCK_BYTES = 4 << 20;
const SNIFF_BYTES = 64 * 1024;
/** Bytes of standard input kept to give an error near the scan its line (LineMarks). */
const LINE_MARK_BYTES = 16 << 20;

/**
 * Where chunks come from and how their bytes are read back. A plain file (or
 * a spooled copy of a stream) is scanned to its end for record boundaries
 * before anything is loaded — so a malformed record late in the input stops
 * the load before the first commit — and each chunk is then re-read by byte
 * range (in parallel, and again on retry or resume). A streamed compressed
 * file is cut once, its chunks carrying their bytes (streamChunks), for a
 * key-ordered load to sort into runs, or a load in file order to load
 * (StreamedChunks), in the same pass.
 */
export class ChunkInput implements ChunkSource {
  summary: InputSummary | undefined;
  bytesScanned = 0;
  /** The first 64 KiB of the input, once read: the header lines for the reject file. */
  head: Buffer | undefined;
  /** Every chunk, once scan() has run. */
  private list: CutChunk[] | undefined;
  /** The file's size and modification time when its read began (when it was opened, for a file the user named). */
  private scannedAs: { size: number; mtimeMs: number } | undefined;
  /**
   * The digest of every byte of the input, taken in the boundary scan (which reads
   * them all anyway): what a resume and the sorted runs are checked against,
   * since a byte changed with the modification time put back changes nothing else.
   */
  contentHash: string | undefined;
  /** Lines counted as standard input passed (it cannot be read again for an error's line). */
  private stdinLines: LineMarks | undefined;

  constructor(
    readonly source: LocalInput,
    private readonly cut: Omit<CutOptions, 'keepBytes'>,
    private readonly fileFormat: FileFormat,
    /** LOAD DATA reads the chunks: refuse a last record the server would shorten silently (see checkLastRecord). */
    private readonly refuseSilentTruncation = false,
    /** The digest a resume compares with (the one its first run stored). */
    private readonly digestKind: DigestKind = 'blake3',
  ) {}

  /**
   * The chunk's records in the order they are sent, with their input lines
   * and offsets: for mapping the server's "row N" and isolating bad rows.
   */
  async records(chunk: CutChunk): Promise<ChunkRecords> {
    const bytes = await this.readAll(chunk);
    const recs = locateRecords(bytes, chunk.startByte, chunk.firstLine, this.cut.format, this.cut.charset, this.cut.targets);
    return { bytes, records: recs.map((r) => ({ pos: r.offset - chunk.startByte, length: r.length, offset: r.offset, line: r.line })) };
  }

  /** Chunks are re-read by range: nothing is held between uses. */
  release(): void {}

  chunkBefore(chunk: CutChunk): CutChunk | undefined {
    const before = this.source.stream ? undefined : this.list?.[chunk.index - 1];
    return before?.index === chunk.index - 1 ? before : undefined;
  }

  /** The boundary scan's bytes read so far (a compressed input's size is known only at its end). */
  progress(): Activity {
    return { kind: 'scanning', bytes: this.bytesScanned, totalBytes: this.source.stream ? null : this.source.sizeBytes, runs: null };
  }

  private stat(): { size: number; mtimeMs: number } | undefined {
    try {
      const st = statSync(this.source.path);
      return { size: st.size, mtimeMs: st.mtimeMs };
    } catch {
      return undefined;
    }
  }

  /**
   * How the input differs from what was scanned (a file rewritten or
   * truncated during the load), or undefined when it looks the same.
   */
  changed(): string | undefined {
    // A remote object's reads are conditional on its version: the read itself finds a change.
    if (this.source.remote) return this.source.remote.changed;
    const then = this.scannedAs;
    return then && fileChange(this.source.path, this.source.display, then, 'the load started');
  }

  /**
   * Finds every chunk boundary, reading the whole input once; throws the
   * input's first error (with its line) before any chunk has been loaded.
   */
  async scan(verify?: ContentCheck): Promise<void> {
    await this.chunkList();
    verify?.(this.contentHash);
  }

  /** Every chunk of the input, found once (scan). */
  async chunkList(): Promise<CutChunk[]> {
    if (this.list) return this.list;
    const opened = this.source.mtimeMs;
    this.scannedAs = opened === undefined ? this.stat() : { size: this.source.sizeBytes, mtimeMs: opened };
    const list: CutChunk[] = [];
    const cut = this.withLines(cutChunks(this.sniffed(this.fileBlocks()), { ...this.cut, keepBytes: false }, (s) => (this.summary = s)));
    for await (const c of cut) list.push(c);
    this.checkReadWhole();
    const last = list[list.length - 1];
    if (last && this.refuseSilentTruncation && !(await this.endsWithTerminator(last))) await this.checkLastRecord(last, await this.readAll(last));
    this.list = list;
    return list;
  }

  /**
   * The scan read to the end of the file: the file must still be as it was
   * when its read began. A file still being written ends anywhere, inside a
   * field too, and its last record is then not data but the input changing.
   */
  private checkReadWhole(): void {
    const then = this.scannedAs;
    const changed = this.changed() ?? (then && this.bytesScanned !== then.size ? `${this.source.display} was ${then.size} bytes when its read began, and ${this.bytesScanned} were read` : undefined);
    if (changed) throw inputChanged(this.source.display, changed);
  }

  /**
   * The chunks of a streamed input with their bytes, cut in the one pass that
   * decompresses it (a key-ordered load sorts each into a run as it comes).
   * The input's first error is thrown from here; once the pass ends, the
   * chunk list, the summary, the input's size and its content hash are known
   * as after scan().
   */
  async *streamChunks(): AsyncGenerator<CutChunk> {
    const stream = this.source.stream;
    if (!stream) throw new FlatloadError('INTERNAL', 'streamChunks() on an input that is a plain file');
    this.scannedAs = this.stat();
    const hash = contentDigest(this.digestKind);
    const list: CutChunk[] = [];
    let last: CutChunk | undefined;
    const cut = this.withLines(cutChunks(this.sniffed(this.streamBlocks(stream, hash)), { ...this.cut, keepBytes: true }, (s) => (this.summary = s)));
    for await (const c of cut) {
      const { buffers: _bytes, ...spec } = c;
      list.push(spec);
      last = c;
      yield c;
    }
    if (last && this.refuseSilentTruncation) await this.checkLastRecord(last, Buffer.concat(last.buffers ?? []));
    // The compressed file must be as it was when its pass began (its decompressed size is known only now).
    const changed = this.changed();
    if (changed) throw inputChanged(this.source.display, changed);
    this.source.sizeBytes = this.bytesScanned;
    this.contentHash = this.source.contentHash = hash.digest();
    this.list = list;
  }

  /** The decompressed blocks of a streamed input, hashed as they pass; a failure names the byte it stopped at. */
  private async *streamBlocks(source: InputSource, hash: Digest): AsyncGenerator<Buffer> {
    let position = 0;
    let stream;
    // Standard input cannot be read again to count lines for an error: they are counted as it passes.
    const lines = source.kind === 'stdin' ? (this.stdinLines = new LineMarks()) : undefined;
    try {
      stream = (await openByteStream(source, SCAN_BLOCK_BYTES)).stream;
      for await (const b of stream) {
        const buf = b as Buffer;
        hash.update(buf);
        lines?.add(buf, position);
        position += buf.length;
        this.bytesScanned = position;
        yield buf;
      }
    } catch (err) {
      const fe = err instanceof FlatloadError ? err : inputError(err, this.source.display);
      throw fe.context.byteOffset === undefined ? fe.withContext({ byteOffset: position }) : fe;
    } finally {
      stream?.destroy();
    }
  }

  /** Whether the chunk ends with an unescaped line terminator, read from its last 64 KiB: a chunk can be the whole input. */
  private async endsWithTerminator(chunk: CutChunk): Promise<boolean> {
    const { format } = this.cut;
    const lt = format.lineTerm;
    const from = Math.max(chunk.startByte, chunk.endByte - SNIFF_BYTES);
    const tail = await this.readAll({ ...chunk, startByte: from });
    const ends = tail.length >= lt.length && lt.length > 0 && tail.subarray(tail.length - lt.length).equals(lt);
    // A tail made of escape characters alone cannot tell whether the first of them is escaped: the whole chunk can.
    const knowable = from === chunk.startByte || tail[0] !== format.escape;
    return ends && knowable && !(format.escape !== -1 && escapedAt(tail, tail.length - lt.length, format.escape));
  }

  /**
   * The server's LOAD DATA reads the input's last record differently when no
   * line terminator follows it (none at all, or one an escape swallows): a
   * field beyond the table's columns is then dropped without warning 1262,
   * so the row would load changed and nothing would say so. Such an input
   * stops here, before anything is loaded, naming the record.
   */
  private async checkLastRecord(chunk: CutChunk, bytes: Buffer): Promise<void> {
    const { format, charset, targets } = this.cut;
    if (!targets || bytes.length === 0) return;
    const lt = format.lineTerm;
    const ends = bytes.length >= lt.length && lt.length > 0 && bytes.subarray(bytes.length - lt.length).equals(lt);
    const swallowed = ends && format.escape !== -1 && escapedAt(bytes, bytes.length - lt.length, format.escape);
    if (ends && !swallowed) return;
    const recs = locateRecords(bytes, chunk.startByte, chunk.firstLine, format, charset, targets);
    const rec = recs[recs.length - 1]!;
    const start = rec.offset - chunk.startByte;
    if (!parseRecord(bytes, start, bytes.length, format, charset, targets).extraData) return;
    throw new FlatloadError(
      'INPUT_MALFORMED',
      `the input's last record has more fields than the table's columns take and no line terminator after it: the server's LOAD DATA would drop the extra fields without a warning`,
      { file: this.source.display, line: rec.line, byteOffset: rec.offset, hint: 'end the input with a line terminator (the row is then rejected as too long, error 1262) or fix the row' },
    );
  }

  async *chunks(): AsyncGenerator<CutChunk> {
    yield* await this.chunkList();
  }

  /**
   * The 1-based line of a byte offset, counted from the file: only an error
   * needs it, so the scan does not count lines of every block in case one comes.
   */
  private async lineAt(offset: number): Promise<number | undefined> {
    if (this.stdinLines) return this.stdinLines.lineAt(offset);
    if (this.source.stream) {
      const { stream } = await openByteStream(this.source.stream, SCAN_BLOCK_BYTES);
      let n = 0;
      let pos = 0;
      try {
        for await (const b of stream) {
          const buf = b as Buffer;
          const take = Math.min(buf.length, offset - pos);
          n += countNewlines(buf, 0, take);
          pos += take;
          if (pos >= offset) break;
        }
      } catch {
        // the pass that failed said why; the lines counted up to here are the answer
      } finally {
        stream.destroy();
      }
      return n + 1;
    }
    const fh = await openPositional(this.source);
    try {
      let n = 0;
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let pos = 0; pos < offset; ) {
        const bytesRead = await fh.read(buf, 0, Math.min(buf.length, offset - pos), pos);
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
      // A copy of the first 64 KiB only: a view would keep the block alive and see it overwritten.
      this.head = Buffer.concat(held, Math.min(size, SNIFF_BYTES));
      const problem = sniffInput(this.head, this.fileFormat);
      if (problem) {
        throw new FlatloadError('INPUT_MALFORMED', problem.message, {
          file: this.source.display,
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
      } else {
        held[held.length - 1] = Buffer.from(b); // the next block is read into this one's buffer
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
      fh = await openPositional(this.source);
    } catch (err) {
      throw inputError(err, this.source.display);
    }
    const file = fh;
    const hash = contentDigest(this.digestKind);
    try {
      for await (const block of blocksInTurn(
        (buf, position) => file.read(buf, 0, buf.length, position),
        SCAN_BLOCK_BYTES,
        (position) => (this.bytesScanned = position),
      )) {
        hash.update(block);
        yield block;
      }
      this.contentHash = hash.digest();
    } catch (err) {
      throw inputError(err, this.source.display);
    } finally {
      await file.close();
    }
  }

  /** The chunk's bytes as a stream of pieces of about `pieceBytes` (each becomes one LOCAL INFILE packet). */
  open(chunk: CutChunk, pieceBytes: number): Readable {
    return openByteRange(this.source, chunk.startByte, chunk.endByte, pieceBytes);
  }

  /**
   * The whole chunk in memory (row-level work on a chunk, sorting it). `spare`: bytes left unwritten after it (a sort
   * may end the input's last record there); the buffer owns its memory, so it can move to a worker.
   */
  async readAll(chunk: CutChunk, spare = 0): Promise<Buffer> {
    const fh = await openPositional(this.source);
    try {
      const length = chunk.endByte - chunk.startByte;
      const buf = Buffer.allocUnsafeSlow(length + spare);
      let off = 0;
      while (off < length) {
        const bytesRead = await fh.read(buf, off, length - off, chunk.startByte + off);
        if (bytesRead === 0) break;
        off += bytesRead;
      }
      if (off < length) {
        throw new FlatloadError('INPUT_CHANGED', `the input changed while it was being loaded: ${this.changed() ?? `${this.source.display} ends before byte ${chunk.endByte}`}`, {
          file: this.source.display,
          chunk: chunk.index,
          byteOffset: chunk.startByte + off,
        });
      }
      return buf;
    } finally {
      await fh.close();
    }
  }
}

/** Whether the byte at `pos` is escaped: an odd run of escape bytes right before it. */
function escapedAt(bytes: Buffer, pos: number, escape: number): boolean {
  let n = 0;
  for (let i = pos - 1; i >= 0 && bytes[i] === escape; i--) n++;
  return n % 2 === 1;
}

/**
 * Lines of a stream counted as it passes: the newlines before each block,
 * and the last blocks themselves (an error is found near where the scan is),
 * so an offset in them gets its line without reading the stream again.
 */
class LineMarks {
  private readonly recent: { start: number; linesBefore: number; bytes: Buffer }[] = [];
  private lines = 0;
  private keptBytes = 0;

  add(block: Buffer, start: number): void {
    this.recent.push({ start, linesBefore: this.lines, bytes: block });
    this.keptBytes += block.length;
    this.lines += countNewlines(block, 0, block.length);
    while (this.keptBytes - this.recent[0]!.bytes.length >= LINE_MARK_BYTES) this.keptBytes -= this.recent.shift()!.bytes.length;
  }

  /** The 1-based line of a byte offset, or undefined when its block is no longer kept. */
  lineAt(offset: number): number | undefined {
    const b = this.recent.find((r) => offset >= r.start && offset <= r.start + r.bytes.length);
    return b && b.linesBefore + countNewlines(b.bytes, 0, offset - b.start) + 1;
  }
}
