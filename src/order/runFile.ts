import { open, type FileHandle } from 'node:fs/promises';
import { FlatloadError } from '../errors/index.js';
import { contentDigest, type Digest } from '../input/digest.js';
import { recordLength, recordStart } from '../chunking/records.js';
import { keyOfRecord, type SortedChunk } from './sortChunk.js';
import { copyRecord, GATHER_BATCH, touchRecords, viewOf } from './copy.js';
import type { SortKey } from './key.js';
import type { SortScratch } from './scratch.js';
import { blockBytesOf, compressBlock, META_BLOCK_BYTES, RUN_BLOCK_BYTES } from './codec.js';

/**
 * A run file holds one input chunk's records in key order, in four
 * sections written one after the other (the manifest has their sizes and
 * the digest of the whole file):
 *
 *   records  the record bytes in key order, each with its terminator (the
 *            input's last record gains one if it had none), in blocks
 *   meta     per record, in the same order: varint offset in the input chunk,
 *            varint length, varint newlines before it in the chunk, and for
 *            runs off the fast path varint key length + the encoded key
 *            (fast-path keys are read again from the record: a plain integer),
 *            in blocks
 *   index    every K-th record (and the first): u32 ordinal, f64 position in
 *            records, f64 position in meta, u32 key length, the encoded key
 *   blocks   u32 compressed length of each records block, then each meta block
 *
 * Records are cut into blocks of RUN_BLOCK_BYTES, meta into blocks of
 * META_BLOCK_BYTES (each section's last one shorter), each compressed on its
 * own: a position in a section (the index's, a resumed merge's) is block
 * position / the section's block size plus the rest within that block, and a
 * reader starts at any block.
 *
 * Everything in it is a function of the chunk's bytes, the key and K, so
 * sorting the same input again writes byte-identical runs.
 */

/** Where a record of a run is: its ordinal in key order and where its bytes and meta entry begin (uncompressed section positions). */
export interface RunPosition {
  ordinal: number;
  recPos: number;
  metaPos: number;
}

/** What writing a run produced (the manifest keeps it). */
export interface RunLayout {
  records: number;
  /** Uncompressed sizes of the records and meta sections. */
  recordBytes: number;
  metaBytes: number;
  indexBytes: number;
  /** Compressed sizes of the records and meta sections, and of the whole file. */
  recordFileBytes: number;
  metaFileBytes: number;
  fileBytes: number;
  indexEntries: number;
  maxRecordBytes: number;
  maxKeyBytes: number;
  /** Fast path: keys are plain integers read from the records; no keys in meta. */
  intKeys: boolean;
  firstKey: SortKey;
  lastKey: SortKey;
  /** Of the whole file (src/input/digest.ts). */
  digest: string;
}

/** Compressed bytes gathered before one write. */
const WRITE_BYTES = 1 << 20;
const INDEX_ENTRY_FIXED = 4 + 8 + 8 + 4;

/**
 * Sequential writes of blocked, compressed sections: bytes go into a block
 * buffer (buf, pos), each full block is compressed and queued, and queued
 * blocks are written in batches (one batch written while the next fills),
 * hashed on the way. `offset` is the uncompressed position in the stream.
 */
class BlockWriter {
  buf: Buffer;
  /** A DataView of buf (copyRecord writes short records through it). */
  view: DataView;
  pos = 0;
  /** The current section's block size (records first, then meta: see section()). */
  blockBytes = RUN_BLOCK_BYTES;
  /** Uncompressed bytes in blocks already sealed. */
  private sealed = 0;
  /** Compressed length of every block sealed, in order. */
  readonly blockSizes: number[] = [];
  private queue: Buffer[] = [];
  private queued = 0;
  private written = 0;
  private pending: Promise<void> = Promise.resolve();
  private readonly hash: Digest = contentDigest();

  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
    scratch: SortScratch,
  ) {
    this.buf = scratch.buffer('block', RUN_BLOCK_BYTES);
    this.view = viewOf(this.buf);
  }

  /** Uncompressed bytes written so far. */
  get offset(): number {
    return this.sealed + this.pos;
  }

  get room(): number {
    return this.blockBytes - this.pos;
  }

  /** Ends the current section (sealing its last block) and starts one cut into blocks of its own size. */
  section(kind: 'records' | 'meta'): void {
    this.seal();
    this.blockBytes = blockBytesOf(kind);
  }

  /** File bytes so far (queued ones included). */
  get fileOffset(): number {
    return this.written + this.queued;
  }

  /** A batch of compressed blocks is ready to be written: call drain(). */
  get full(): boolean {
    return this.queued >= WRITE_BYTES;
  }

  /** Compresses the block buffer (when it holds anything) and queues it: a section ends, or the buffer is full. */
  seal(): void {
    if (this.pos === 0) return;
    const packed = compressBlock(this.buf.subarray(0, this.pos));
    this.blockSizes.push(packed.length);
    this.enqueue(packed);
    this.sealed += this.pos;
    this.pos = 0;
  }

  /** Copies src[start, end) into the blocks, sealing each that fills. */
  put(src: Buffer, start: number, end: number): void {
    while (start < end) {
      const n = Math.min(end - start, this.room);
      src.copy(this.buf, this.pos, start, start + n);
      this.pos += n;
      start += n;
      if (this.pos === this.blockBytes) this.seal();
    }
  }

  /** Starts writing what is queued (after the previous batch). */
  async drain(): Promise<void> {
    if (this.queued === 0) return;
    const batch = this.queue;
    const at = this.written;
    this.written += this.queued;
    this.queue = [];
    this.queued = 0;
    await this.pending;
    this.pending = this.writeAt(batch, at);
  }

  /** Bytes written as they are (the index, the block table). */
  raw(bytes: Buffer): void {
    if (this.pos !== 0) throw new FlatloadError('INTERNAL', 'raw bytes inside a compressed section');
    this.enqueue(bytes);
  }

  async finish(): Promise<string> {
    this.seal();
    await this.drain();
    await this.pending;
    return this.hash.digest();
  }

  private enqueue(bytes: Buffer): void {
    this.hash.update(bytes);
    this.queue.push(bytes);
    this.queued += bytes.length;
  }

  private async writeAt(batch: Buffer[], position: number): Promise<void> {
    try {
      for (const bytes of batch) {
        for (let done = 0; done < bytes.length; ) {
          const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done, position + done);
          done += bytesWritten;
        }
        position += bytes.length;
      }
    } catch (err) {
      throw spillError(err, this.path);
    }
  }
}

export function spillError(err: unknown, path: string): FlatloadError {
  const code = (err as NodeJS.ErrnoException).code;
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  return new FlatloadError('SPILL', `${full ? 'no space left' : `cannot write (${code ?? String(err)})`} in the spill file ${path}`, {
    hint: full ? 'free space there or point --tmpdir at a larger file system' : undefined,
  }, { cause: err });
}

/** A meta entry's number as a run stores it (LEB128, 7 bits a byte, low bits first); returns the next position. */
export function putVarint(buf: Buffer, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Where the sparse index entries point: record ordinals and their positions in records and meta. */
interface Sparse {
  every: number;
  ordinals: Uint32Array;
  rec: Float64Array;
  meta: Float64Array;
}

function sparseFor(n: number, every: number): Sparse {
  const entries = Math.ceil(n / every);
  return { every, ordinals: new Uint32Array(entries), rec: new Float64Array(entries), meta: new Float64Array(entries) };
}

/** Each record's bounds and line in key order (j-th in key order at [j]), kept by writeRecords for writeMeta. */
interface Gathered {
  starts: Uint32Array;
  stops: Uint32Array;
  lines: Uint32Array;
}

function gatheredFor(scratch: SortScratch, n: number): Gathered {
  return { starts: scratch.uint32('gather.starts', n), stops: scratch.uint32('gather.stops', n), lines: scratch.uint32('gather.lines', n) };
}

/**
 * The records section, in key order; returns the longest record. Input already in key order is written as it is.
 * Fills `g`, so the meta section is written from sequential reads.
 */
async function writeRecords(w: BlockWriter, bytes: Buffer, sorted: SortedChunk, sparse: Sparse, terminator: Buffer, g: Gathered): Promise<number> {
  const { ends, lineOffsets } = sorted.table;
  const { perm } = sorted;
  const n = ends.length;
  const every = sparse.every;
  const lastRecord = sorted.table.terminated ? -1 : n - 1;
  let maxRecordBytes = 0;
  if (sorted.ordered && lastRecord === -1) {
    for (let e = 0; e < sparse.ordinals.length; e++) {
      const i = e * every;
      sparse.ordinals[e] = i;
      sparse.rec[e] = recordStart(ends, i);
    }
    for (let i = 0; i < n; i++) maxRecordBytes = Math.max(maxRecordBytes, recordLength(ends, i));
    g.starts[0] = 0;
    g.starts.set(ends.subarray(0, n - 1), 1);
    g.stops.set(ends);
    g.lines.set(lineOffsets);
    for (let p = 0; p < bytes.length; p += WRITE_BYTES) {
      w.put(bytes, p, Math.min(bytes.length, p + WRITE_BYTES));
      await w.drain();
    }
    return maxRecordBytes;
  }
  const bytesView = viewOf(bytes);
  // Records are gathered in batches: every bound of the batch, then touchRecords (the cache misses overlap), then the copies.
  const { starts, stops, lines } = g;
  for (let j0 = 0; j0 < n; j0 += GATHER_BATCH) {
    const m = Math.min(GATHER_BATCH, n - j0);
    for (let j = j0; j < j0 + m; j++) {
      const i = perm[j]!;
      starts[j] = i === 0 ? 0 : ends[i - 1]!;
      stops[j] = ends[i]!;
      lines[j] = lineOffsets[i]!;
    }
    touchRecords(bytes, starts, stops, j0, m);
    for (let k = 0; k < m; k++) {
      const j = j0 + k;
      const start = starts[j]!;
      const end = stops[j]!;
      const last = lastRecord !== -1 && perm[j] === lastRecord;
      const len = end - start + (last ? terminator.length : 0);
      if (len > maxRecordBytes) maxRecordBytes = len;
      if (j % every === 0) {
        sparse.ordinals[j / every] = j;
        sparse.rec[j / every] = w.offset;
      }
      if (end - start < w.room) {
        copyRecord(bytes, bytesView, start, end, w.buf, w.view, w.pos);
        w.pos += end - start;
      } else w.put(bytes, start, end);
      if (last) w.put(terminator, 0, terminator.length);
      if (w.full) await w.drain();
    }
  }
  return maxRecordBytes;
}

/** The meta section (offsets, lengths, lines and stored keys in key order, read from `g`); returns the longest stored key. */
async function writeMeta(w: BlockWriter, sorted: SortedChunk, sparse: Sparse, terminator: Buffer, base: number, g: Gathered): Promise<number> {
  const { perm, keyBytes, keyEnds } = sorted;
  const { starts, stops, lines } = g;
  const n = sorted.table.ends.length;
  const every = sparse.every;
  const lastRecord = sorted.table.terminated ? -1 : n - 1;
  let maxKeyBytes = 0;
  let tmp = Buffer.allocUnsafe(64);
  for (let j = 0; j < n; j++) {
    const start = starts[j]!;
    const len = stops[j]! - start + (lastRecord !== -1 && perm[j] === lastRecord ? terminator.length : 0);
    const i = keyEnds ? perm[j]! : 0;
    const kStart = keyEnds ? recordStart(keyEnds, i) : 0;
    const kLen = keyEnds ? keyEnds[i]! - kStart : 0;
    if (kLen > maxKeyBytes) maxKeyBytes = kLen;
    if (j % every === 0) sparse.meta[j / every] = w.offset - base;
    // Straight into the block when the entry fits, else through tmp and across the block's end.
    const direct = w.room >= 20 + kLen;
    if (!direct && tmp.length < 20 + kLen) tmp = Buffer.allocUnsafe(20 + kLen);
    const out = direct ? w.buf : tmp;
    let p = putVarint(out, direct ? w.pos : 0, start);
    p = putVarint(out, p, len);
    p = putVarint(out, p, lines[j]!);
    if (keyEnds) {
      p = putVarint(out, p, kLen);
      p += keyBytes!.copy(out, p, kStart, kStart + kLen);
    }
    if (direct) {
      w.pos = p;
      if (w.pos === w.blockBytes) w.seal();
    } else w.put(tmp, 0, p);
    if (w.full) await w.drain();
  }
  return maxKeyBytes;
}

/** The sparse index section, as one buffer. */
function indexSection(sorted: SortedChunk, sparse: Sparse): Buffer {
  const keys = Array.from(sparse.ordinals, (ordinal) => keyOfRecord(sorted, sorted.perm[ordinal]!));
  const out = Buffer.allocUnsafe(keys.reduce((a, k) => a + INDEX_ENTRY_FIXED + k.length, 0));
  let p = 0;
  keys.forEach((key, e) => {
    out.writeUInt32LE(sparse.ordinals[e]!, p);
    out.writeDoubleLE(sparse.rec[e]!, p + 4);
    out.writeDoubleLE(sparse.meta[e]!, p + 12);
    out.writeUInt32LE(key.length, p + 20);
    p += INDEX_ENTRY_FIXED;
    p += key.copy(out, p);
  });
  return out;
}

/**
 * Writes the sorted chunk's run. `bytes` is the chunk; `terminator` is
 * appended to the last record when the input ended without one, so every
 * record can go anywhere in the merged stream.
 */
export async function writeRun(path: string, bytes: Buffer, sorted: SortedChunk, every: number, terminator: Buffer, scratch: SortScratch): Promise<RunLayout> {
  const n = sorted.table.ends.length;
  const sparse = sparseFor(n, every);
  let fh: FileHandle;
  try {
    fh = await open(path, 'w');
  } catch (err) {
    throw spillError(err, path);
  }
  try {
    const w = new BlockWriter(fh, path, scratch);
    const gathered = gatheredFor(scratch, n);
    const maxRecordBytes = await writeRecords(w, bytes, sorted, sparse, terminator, gathered);
    w.section('meta');
    const recordBytes = w.offset;
    const recordBlocks = w.blockSizes.length;
    const recordFileBytes = w.fileOffset;
    const maxKeyBytes = await writeMeta(w, sorted, sparse, terminator, recordBytes, gathered);
    w.seal();
    const metaBytes = w.offset - recordBytes;
    const metaFileBytes = w.fileOffset - recordFileBytes;
    const index = indexSection(sorted, sparse);
    w.raw(index);
    const sizes = Buffer.allocUnsafe(4 * w.blockSizes.length);
    w.blockSizes.forEach((size, b) => sizes.writeUInt32LE(size, 4 * b));
    if (sizes.length !== 4 * (recordBlocks + Math.ceil(metaBytes / META_BLOCK_BYTES))) throw new FlatloadError('INTERNAL', `run ${path}: block table does not match its sections`);
    w.raw(sizes);
    const fileBytes = w.fileOffset;
    const digest = await w.finish();
    return {
      records: n,
      recordBytes,
      metaBytes,
      indexBytes: index.length,
      recordFileBytes,
      metaFileBytes,
      fileBytes,
      indexEntries: sparse.ordinals.length,
      maxRecordBytes,
      maxKeyBytes,
      intKeys: sorted.intReader !== undefined,
      firstKey: keyOfRecord(sorted, sorted.perm[0]!),
      lastKey: keyOfRecord(sorted, sorted.perm[n - 1]!),
      digest,
    };
  } finally {
    await fh.close();
  }
}

/**
 * A run's sparse index, kept in flat arrays: the merge holds every run's
 * index at once, and an object and a Buffer per entry cost ~200 bytes each
 * (about 40 MB of heap for the 200,000 entries of a 200M-row input).
 */
export class SparseIndex {
  readonly length: number;
  /** Per entry: ordinal, recPos, metaPos. */
  private readonly at: Float64Array;
  /** Entry e's key is keys[keyAt[e], keyAt[e + 1]). */
  private readonly keyAt: Uint32Array;
  readonly keys: Buffer;

  constructor(section: Buffer) {
    let n = 0;
    let keyBytes = 0;
    for (let p = 0; p < section.length; n++) {
      const keyLen = section.readUInt32LE(p + 20);
      keyBytes += keyLen;
      p += INDEX_ENTRY_FIXED + keyLen;
    }
    this.length = n;
    this.at = new Float64Array(3 * n);
    this.keyAt = new Uint32Array(n + 1);
    this.keys = Buffer.allocUnsafeSlow(keyBytes);
    let k = 0;
    for (let p = 0, e = 0; e < n; e++) {
      const keyLen = section.readUInt32LE(p + 20);
      this.at[3 * e] = section.readUInt32LE(p);
      this.at[3 * e + 1] = section.readDoubleLE(p + 4);
      this.at[3 * e + 2] = section.readDoubleLE(p + 12);
      this.keyAt[e] = k;
      k += section.copy(this.keys, k, p + INDEX_ENTRY_FIXED, p + INDEX_ENTRY_FIXED + keyLen);
      p += INDEX_ENTRY_FIXED + keyLen;
    }
    this.keyAt[n] = k;
  }

  ordinal(e: number): number {
    return this.at[3 * e]!;
  }

  recPos(e: number): number {
    return this.at[3 * e + 1]!;
  }

  position(e: number): RunPosition {
    return { ordinal: this.at[3 * e]!, recPos: this.at[3 * e + 1]!, metaPos: this.at[3 * e + 2]! };
  }

  /** Entry e's key, a view into this index. */
  key(e: number): SortKey {
    return this.keys.subarray(this.keyAt[e], this.keyAt[e + 1]);
  }

  keyStart(e: number): number {
    return this.keyAt[e]!;
  }

  keyEnd(e: number): number {
    return this.keyAt[e + 1]!;
  }
}

/** Parses a run's index section. */
export function parseIndex(section: Buffer): SparseIndex {
  return new SparseIndex(section);
}

/** Where each block of a run's records and meta sections is in the file: block b spans [at[b], at[b + 1]). */
export interface RunBlocks {
  records: Float64Array;
  meta: Float64Array;
}

/** Parses a run's block table (`recordBlocks` records blocks, then the meta blocks; the meta section starts at metaStart). */
export function parseBlocks(section: Buffer, recordBlocks: number, metaStart: number): RunBlocks {
  const all = section.length / 4;
  const records = new Float64Array(recordBlocks + 1);
  const meta = new Float64Array(all - recordBlocks + 1);
  for (let b = 0; b < recordBlocks; b++) records[b + 1] = records[b]! + section.readUInt32LE(4 * b);
  meta[0] = metaStart;
  for (let b = recordBlocks; b < all; b++) meta[b - recordBlocks + 1] = meta[b - recordBlocks]! + section.readUInt32LE(4 * b);
  return { records, meta };
}

/** Reads buf[offset, offset + length) from the file at `position`, as much as there is: returns the bytes read. */
export async function readAt(fh: FileHandle, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, offset + got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/** The digest of a whole file, read in large pieces. */
export async function hashFile(path: string): Promise<string> {
  const h = contentDigest();
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(4 << 20);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return h.digest();
}
