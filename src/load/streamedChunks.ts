import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { locateRecords } from '../chunking/records.js';
import type { CutChunk } from '../chunking/types.js';
import { FlatloadError } from '../errors/index.js';
import { CHUNK_DIGEST, digestOf, type DigestKind } from '../input/digest.js';
import { writeOwner } from '../input/owner.js';
import { readRange } from '../input/streams.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import type { CharsetInfo } from '../chunking/charsets.js';
import type { ChunkInput } from './chunkInput.js';
import { OverChunkInput, type ChunkRecords, type ChunkSource } from './chunkSource.js';

/**
 * A compressed file loaded in file order, in one pass: the decompressed
 * stream is cut as it is read (ChunkInput.streamChunks) and each chunk is
 * written to its own file in `<tmpdir>/flatload-chunks-<pid>-*`, removed
 * once the chunk is committed. The runner pulls a chunk only when a
 * connection is free, so decompression waits while the chunks in flight
 * hold their files: at most jobs + 1 at a time, never the whole input.
 *
 * Unlike a plain file, the input is not scanned to its end first: a broken
 * record late in it is found after earlier chunks committed. The load stops
 * there (file, line, byte offset), and a rerun cuts the same chunks from
 * the same bytes and skips the committed ones, each checked against the
 * digest its commit stored (skippingDone), so other bytes are refused before
 * any new chunk loads: neither standard input nor a compressed file whose
 * size and time were kept can resume over content it did not commit. The
 * input's summary and content hash are known once it has all been cut (the
 * end of the load): a resume of this mode is not checked against the hash.
 */
export class StreamedChunks extends OverChunkInput implements ChunkSource {
  /** Each chunk's file, and where in the input the file starts (a resumed chunk may start later). */
  private readonly files = new Map<number, { path: string; startByte: number }>();
  private dir: string | undefined;
  /** How each chunk's bytes are digested: as the done chunks of the job being resumed were (digestChunksWith). */
  private digestKind: DigestKind = 'blake3';

  constructor(
    file: ChunkInput,
    private readonly tmpdir: string,
    private readonly scan_: { format: ScanFormat; charset: CharsetInfo; targets: ScanTargets | undefined },
  ) {
    super(file);
  }

  /** Nothing is read ahead: the chunks are cut as the load asks for them. */
  async scan(): Promise<void> {}

  digestChunksWith(kind: DigestKind): void {
    this.digestKind = kind;
  }

  private chunkDir(): string {
    if (this.dir) return this.dir;
    try {
      this.dir = mkdtempSync(join(this.tmpdir, `flatload-chunks-${process.pid}-`));
      // A kill -9 leaves it: the owner marker lets a later load remove it once this process is gone.
      writeOwner(this.dir);
    } catch (err) {
      throw new FlatloadError('OUTPUT_UNWRITABLE', `cannot make a directory for the input's chunks in ${this.tmpdir}: ${(err as Error).message}`, { hint: 'point --tmpdir at a writable directory' });
    }
    return this.dir;
  }

  /**
   * Each chunk is handed out once the next one is cut (or the input has
   * ended and its last record was checked), so the last chunk never loads
   * before that check.
   */
  async *chunks(): AsyncGenerator<CutChunk> {
    let held: CutChunk | undefined;
    for await (const c of this.file.streamChunks()) {
      if (held) yield await this.written(held);
      held = c;
    }
    if (held) yield await this.written(held);
  }

  private async written(c: CutChunk): Promise<CutChunk & { digest: string }> {
    {
      const { buffers, ...spec } = c;
      const path = join(this.chunkDir(), `chunk-${c.index}`);
      const bytes = Buffer.concat(buffers ?? []);
      // What the bookkeeping keeps of a committed chunk, and what a resume checks the same chunk cut again against.
      const digest = digestOf([bytes], this.digestKind, CHUNK_DIGEST);
      try {
        await writeFile(path, bytes);
      } catch (err) {
        throw new FlatloadError('OUTPUT_UNWRITABLE', `cannot write chunk ${c.index} of the input into ${this.tmpdir}: ${(err as Error).message}`, {
          hint: 'point --tmpdir at a file system with room for (jobs + 1) chunks',
        });
      }
      this.files.set(c.index, { path, startByte: c.startByte });
      return { ...spec, digest };
    }
  }

  /**
   * The chunk's bytes in its file: all of them, or for the rest of a chunk
   * an interrupted statement had partly loaded into a table that cannot roll
   * back, only the bytes from its first record that did not land.
   */
  private placeOf(chunk: CutChunk): { path: string; from: number; to: number } {
    const f = this.files.get(chunk.index);
    if (!f) throw new FlatloadError('INTERNAL', `chunk ${chunk.index} of a streamed input was read after it was released`);
    const from = chunk.startByte - f.startByte;
    if (from < 0 || chunk.endByte < chunk.startByte) throw new FlatloadError('INTERNAL', `chunk ${chunk.index} asked for bytes outside its file`);
    return { path: f.path, from, to: chunk.endByte - f.startByte };
  }

  open(chunk: CutChunk, pieceBytes: number): Readable {
    const { path, from, to } = this.placeOf(chunk);
    return readRange(path, from, to, pieceBytes);
  }

  async readAll(chunk: CutChunk): Promise<Buffer> {
    const { path, from, to } = this.placeOf(chunk);
    const bytes = await readFile(path);
    return from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to);
  }

  async records(chunk: CutChunk): Promise<ChunkRecords> {
    const bytes = await this.readAll(chunk);
    const { format, charset, targets } = this.scan_;
    const recs = locateRecords(bytes, chunk.startByte, chunk.firstLine, format, charset, targets);
    return { bytes, records: recs.map((r) => ({ pos: r.offset - chunk.startByte, length: r.length, offset: r.offset, line: r.line })) };
  }

  /** The chunk is committed (or skipped as committed before): its file goes, and the stream may go on. */
  release(chunk: CutChunk): void {
    const f = this.files.get(chunk.index);
    if (!f) return;
    this.files.delete(chunk.index);
    void rm(f.path, { force: true });
  }

  dispose(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
