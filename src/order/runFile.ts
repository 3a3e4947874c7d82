import { open, type FileHandle } from 'node:fs/promises';
import { FlatloadError } from '../errors/index.js';
import { contentDigest, type Digest } from '../input/digest.js';
import { recordStart } from '../chunking/records.js';
import { keyOfRecord, oneLinePerRecord, type SortedChunk } from './sortChunk.js';
import { copyRecord, GATHER_BATCH, touchRecords, viewOf } from './copy.js';
import type { SortKey } from './key.js';
import type { SortScratch } from './scratch.js';
import { blockBytesOf, compressBlock, compressBlockInto, META_BLOCK_BYTES, packedBound, RUN_BLOCK_BYTES } from './codec.js';

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
 * Blocks are compressed straight into one of two batch buffers (the other
 * is being written): no buffer per block, and one writev per batch.
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
  /** The batch buffer filling (packed[0, packedEnd)), its part not yet queued starting at packedFrom, and the one being written. */
  private packed: Buffer;
  private spare: Buffer;
  private packedFrom = 0;
  private packedEnd = 0;
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
    this.packed = scratch.buffer('packed.a', WRITE_BYTES + packedBound(RUN_BLOCK_BYTES));
    this.spare = scratch.buffer('packed.b', WRITE_BYTES + packedBound(RUN_BLOCK_BYTES));
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
    const block = this.buf.subarray(0, this.pos);
    let size: number;
    if (this.packed.length - this.packedEnd >= packedBound(this.pos)) {
      size = compressBlockInto(block, this.packed.subarray(this.packedEnd));
      this.packedEnd += size;
      this.queued += size;
    } else {
      // Many blocks sealed between two drains (records longer than a batch): this one in a buffer of its own.
      const own = compressBlock(block);
      size = own.length;
      this.enqueue(own);
    }
    this.blockSizes.push(size);
    this.sealed += this.pos;
    this.pos = 0;
  }

  /** Copies src[start, end) into the blocks, sealing each that fills. */
  /** src[0, end) in pieces of WRITE_BYTES, each handed to the disk before the next is put. */
  async putAll(src: Buffer, end = src.length): Promise<void> {
    for (let p = 0; p < end; p += WRITE_BYTES) {
      this.put(src, p, Math.min(end, p + WRITE_BYTES));
      await this.drain();
    }
  }

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
    this.queuePacked();
    if (this.queued === 0) return;
    const batch = this.queue;
    const at = this.written;
    this.written += this.queued;
    this.queue = [];
    this.queued = 0;
    await this.pending;
    // The previous batch is written: its buffer takes the next blocks, this one's is written.
    [this.packed, this.spare] = [this.spare, this.packed];
    this.packedFrom = this.packedEnd = 0;
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

  /** Queues the blocks compressed into the batch buffer since the last call (they come before what is queued next). */
  private queuePacked(): void {
    if (this.packedEnd === this.packedFrom) return;
    const bytes = this.packed.subarray(this.packedFrom, this.packedEnd);
    this.hash.update(bytes);
    this.queue.push(bytes);
    this.packedFrom = this.packedEnd;
  }

  private enqueue(bytes: Buffer): void {
    this.queuePacked();
    this.hash.update(bytes);
    this.queue.push(bytes);
    this.queued += bytes.length;
  }

  private async writeAt(batch: Buffer[], position: number): Promise<void> {
    try {
      let { bytesWritten: done } = await this.fh.writev(batch, position);
      // A short write (rare for a file): the rest piece by piece.
      for (const bytes of batch) {
        const skip = Math.min(done, bytes.length);
        done -= skip;
        for (let p = skip; p < bytes.length; ) {
          const { bytesWritten } = await this.fh.write(bytes, p, bytes.length - p, position + p);
          p += bytesWritten;
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

/** Bytes putVarint takes for v (< 2^32). */
function varintBytes(v: number): number {
  let n = 1;
  for (; v >= 0x80; v >>>= 7) n++;
  return n;
}

/**
 * Room for the whole meta section, which the records pass writes as it goes (each record's bounds and line are at
 * hand there; a second pass would read them again): every varint at its widest for this chunk, and the keys.
 */
function metaBound(sorted: SortedChunk, terminator: Buffer): number {
  const { ends, lineOffsets } = sorted.table;
  const n = ends.length;
  if (n === 0) return 0;
  const chunk = sorted.bytes.length + terminator.length;
  const keys = sorted.keyEnds ? sorted.keyEnds[n - 1]! : 0;
  const perRecord = 2 * varintBytes(chunk) + varintBytes(lineOffsets[n - 1] ?? 0) + (sorted.keyEnds ? varintBytes(keys) : 0);
  return n * perRecord + keys;
}

/** Record i's meta entry (offset in the chunk, length, line, and the stored key off the fast path) at meta[p]; returns the next position. */
function putMeta(meta: Buffer, p: number, start: number, len: number, line: number, sorted: SortedChunk, i: number): number {
  p = putVarint(meta, p, start);
  p = putVarint(meta, p, len);
  p = putVarint(meta, p, line);
  const keyEnds = sorted.keyEnds;
  if (keyEnds) {
    const kStart = recordStart(keyEnds, i);
    p = putVarint(meta, p, keyEnds[i]! - kStart);
    p += sorted.keyBytes!.copy(meta, p, kStart, keyEnds[i]);
  }
  return p;
}

/** The longest stored key (none on the fast path). */
function maxKeyLength(keyEnds: Uint32Array | undefined): number {
  let max = 0;
  if (keyEnds) for (let i = 0; i < keyEnds.length; i++) max = Math.max(max, keyEnds[i]! - recordStart(keyEnds, i));
  return max;
}

/** What writeRecords leaves for the rest of the run: the meta section (meta[0, metaBytes)) and the longest record. */
interface Gathered {
  metaBytes: number;
  maxRecordBytes: number;
}

/** A batch's record bounds and lines (a module's worth: one batch is gathered at a time in a thread). */
const batchStarts = new Uint32Array(GATHER_BATCH);
const batchStops = new Uint32Array(GATHER_BATCH);
const batchLines = new Uint32Array(GATHER_BATCH);

/** Every record is one line (record i's line is i): the gather need not read the lines at random. */
function linesAreRecords(sorted: SortedChunk): boolean {
  return sorted.oneLineEach || oneLinePerRecord(sorted.table.lineOffsets, sorted.table.ends.length);
}

/** The records section of a chunk already in key order, terminated: the chunk as it is; its meta entries in `meta`. */
async function writeInOrder(w: BlockWriter, bytes: Buffer, sorted: SortedChunk, sparse: Sparse, meta: Buffer): Promise<Gathered> {
  const { ends, lineOffsets } = sorted.table;
  const lineIsRecord = linesAreRecords(sorted);
  const n = ends.length;
  const every = sparse.every;
  let maxRecordBytes = 0;
  let mp = 0;
  for (let i = 0; i < n; i++) {
    const start = recordStart(ends, i);
    const len = ends[i]! - start;
    if (len > maxRecordBytes) maxRecordBytes = len;
    if (i % every === 0) {
      sparse.ordinals[i / every] = i;
      sparse.rec[i / every] = start;
      sparse.meta[i / every] = mp;
    }
    mp = putMeta(meta, mp, start, len, lineIsRecord ? i : lineOffsets[i]!, sorted, i);
  }
  await w.putAll(bytes);
  return { metaBytes: mp, maxRecordBytes };
}

/**
 * The records section, in key order, with each record's meta entry written to `meta` as its bounds are read.
 * Records are gathered in batches: every bound of the batch, then touchRecords (the cache misses overlap), then the
 * copies; a batch that fits in the block's room (the usual case) is copied without a check per record.
 */
async function writeRecords(w: BlockWriter, bytes: Buffer, sorted: SortedChunk, sparse: Sparse, terminator: Buffer, meta: Buffer): Promise<Gathered> {
  if (sorted.ordered && sorted.table.terminated) return writeInOrder(w, bytes, sorted, sparse, meta);
  const { ends, lineOffsets } = sorted.table;
  const { perm } = sorted;
  const n = ends.length;
  const every = sparse.every;
  const lastRecord = sorted.table.terminated ? -1 : n - 1;
  // Where the record that gains a terminator comes in key order (-1: none does).
  const lastAt = lastRecord === -1 ? -1 : perm.indexOf(lastRecord);
  const lineIsRecord = linesAreRecords(sorted);
  const bytesView = viewOf(bytes);
  const starts = batchStarts;
  const stops = batchStops;
  const lines = batchLines;
  let maxRecordBytes = 0;
  let mp = 0;
  let nextSparse = 0;
  for (let j0 = 0; j0 < n; j0 += GATHER_BATCH) {
    const m = Math.min(GATHER_BATCH, n - j0);
    // Only loads here, none depending on another record's: their cache misses overlap.
    let batchBytes = 0;
    for (let k = 0; k < m; k++) {
      const i = perm[j0 + k]!;
      const start = i === 0 ? 0 : ends[i - 1]!;
      const end = ends[i]!;
      starts[k] = start;
      stops[k] = end;
      lines[k] = lineIsRecord ? i : lineOffsets[i]!;
      batchBytes += end - start;
    }
    touchRecords(bytes, starts, stops, 0, m);
    // Usually the whole batch fits with room to spare: the block does not fill, nothing is sealed, no record is cut.
    const fits = (lastAt < j0 || lastAt >= j0 + m) && batchBytes < w.room;
    for (let k = 0; k < m; k++) {
      const j = j0 + k;
      const start = starts[k]!;
      const end = stops[k]!;
      const last = j === lastAt;
      const len = end - start + (last ? terminator.length : 0);
      if (len > maxRecordBytes) maxRecordBytes = len;
      if (j === nextSparse) {
        const e = j / every;
        sparse.ordinals[e] = j;
        sparse.rec[e] = w.offset;
        sparse.meta[e] = mp;
        nextSparse += every;
      }
      if (fits) {
        copyRecord(bytes, bytesView, start, end, w.buf, w.view, w.pos);
        w.pos += len;
      } else {
        w.put(bytes, start, end);
        if (last) w.put(terminator, 0, terminator.length);
      }
      mp = putMeta(meta, mp, start, len, lines[k]!, sorted, perm[j]!);
    }
    if (w.full) await w.drain();
  }
  return { metaBytes: mp, maxRecordBytes };
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
    const meta = scratch.buffer('run.meta', metaBound(sorted, terminator));
    const { metaBytes: metaLength, maxRecordBytes } = await writeRecords(w, bytes, sorted, sparse, terminator, meta);
    w.section('meta');
    const recordBytes = w.offset;
    const recordBlocks = w.blockSizes.length;
    const recordFileBytes = w.fileOffset;
    await w.putAll(meta, metaLength); // the meta section, written by writeRecords: cut into its blocks
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
      maxKeyBytes: maxKeyLength(sorted.keyEnds),
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
