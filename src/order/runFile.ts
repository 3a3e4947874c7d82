import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { FlatloadError } from '../errors/index.js';
import { recordLength, recordStart } from '../chunking/records.js';
import { keyOfRecord, type SortedChunk } from './sortChunk.js';
import { copyRecord, viewOf } from './copy.js';
import type { SortKey } from './key.js';
import type { SortScratch } from './scratch.js';

/**
 * A run file holds one input chunk's records in key order, in three
 * sections written one after the other (the manifest has their sizes and
 * the sha256 of the whole file):
 *
 *   records  the record bytes in key order, each with its terminator (the
 *            input's last record gains one if it had none)
 *   meta     per record, in the same order: varint offset in the input chunk,
 *            varint length, varint newlines before it in the chunk, and for
 *            runs off the fast path varint key length + the encoded key
 *            (fast-path keys are read again from the record: a plain integer)
 *   index    every K-th record (and the first): u32 ordinal, f64 position in
 *            records, f64 position in meta, u32 key length, the encoded key
 *
 * Everything in it is a function of the chunk's bytes, the key and K, so
 * sorting the same input again writes byte-identical runs.
 */

/** Where a record of a run is: its ordinal in key order and where its bytes and meta entry begin. */
export interface RunPosition {
  ordinal: number;
  recPos: number;
  metaPos: number;
}

export interface SparseEntry extends RunPosition {
  key: SortKey;
}

/** What writing a run produced (the manifest keeps it). */
export interface RunLayout {
  records: number;
  recordBytes: number;
  metaBytes: number;
  indexBytes: number;
  indexEntries: number;
  maxRecordBytes: number;
  maxKeyBytes: number;
  /** Fast path: keys are plain integers read from the records; no keys in meta. */
  intKeys: boolean;
  firstKey: SortKey;
  lastKey: SortKey;
  sha256: string;
}

const STAGE_BYTES = 1 << 20;
const INDEX_ENTRY_FIXED = 4 + 8 + 8 + 4;

/** Sequential writes through two staging buffers (one fills while the other is written), hashed on the way. */
class HashedWriter {
  private readonly stages: Buffer[];
  private which = 0;
  buf: Buffer;
  /** A DataView of buf (copyRecord writes short records through it). */
  view: DataView;
  pos = 0;
  private flushed = 0;
  private pending: Promise<void> = Promise.resolve();
  private readonly hash: Hash = createHash('sha256');

  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
    scratch: SortScratch,
  ) {
    this.stages = [scratch.buffer('stage0', STAGE_BYTES), scratch.buffer('stage1', STAGE_BYTES)];
    this.buf = this.stages[0]!;
    this.view = viewOf(this.buf);
  }

  /** Bytes written so far, staged ones included. */
  get offset(): number {
    return this.flushed + this.pos;
  }

  get room(): number {
    return this.buf.length - this.pos;
  }

  async flush(): Promise<void> {
    if (this.pos === 0) return;
    const out = this.buf.subarray(0, this.pos);
    this.hash.update(out);
    await this.pending;
    this.pending = this.writeAt(out, this.flushed);
    this.flushed += this.pos;
    this.which ^= 1;
    this.buf = this.stages[this.which]!;
    this.view = viewOf(this.buf);
    this.pos = 0;
  }

  /** Bytes too big to stage go straight to the file. */
  async direct(bytes: Buffer): Promise<void> {
    await this.flush();
    this.hash.update(bytes);
    await this.pending;
    this.pending = this.writeAt(bytes, this.flushed);
    this.flushed += bytes.length;
  }

  async finish(): Promise<string> {
    await this.flush();
    await this.pending;
    return this.hash.digest('hex');
  }

  private async writeAt(bytes: Buffer, position: number): Promise<void> {
    try {
      for (let done = 0; done < bytes.length; ) {
        const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done, position + done);
        done += bytesWritten;
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

function putVarint(buf: Buffer, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/**
 * Writes the sorted chunk's run. `bytes` is the chunk; `terminator` is
 * appended to the last record when the input ended without one, so every
 * record can go anywhere in the merged stream.
 */
export async function writeRun(path: string, bytes: Buffer, sorted: SortedChunk, every: number, terminator: Buffer, scratch: SortScratch): Promise<RunLayout> {
  const { table, perm } = sorted;
  const { ends, lineOffsets } = table;
  const n = ends.length;
  const lastRecord = table.terminated ? -1 : n - 1;
  const entries = Math.ceil(n / every);
  const sparseOrdinals = new Uint32Array(entries);
  const sparseRec = new Float64Array(entries);
  const sparseMeta = new Float64Array(entries);

  let fh: FileHandle;
  try {
    fh = await open(path, 'w');
  } catch (err) {
    throw spillError(err, path);
  }
  try {
    const w = new HashedWriter(fh, path, scratch);
    let maxRecordBytes = 0;

    // Records. Input already in key order is written as it is.
    if (sorted.ordered && lastRecord === -1) {
      await w.direct(bytes);
      for (let e = 0; e < entries; e++) {
        const i = e * every;
        sparseOrdinals[e] = i;
        sparseRec[e] = recordStart(ends, i);
      }
      for (let i = 0; i < n; i++) maxRecordBytes = Math.max(maxRecordBytes, recordLength(ends, i));
    } else {
      const bytesView = viewOf(bytes);
      for (let j = 0; j < n; j++) {
        const i = perm[j]!;
        const start = recordStart(ends, i);
        const end = ends[i]!;
        const len = end - start + (i === lastRecord ? terminator.length : 0);
        if (len > maxRecordBytes) maxRecordBytes = len;
        if (j % every === 0) {
          sparseOrdinals[j / every] = j;
          sparseRec[j / every] = w.offset;
        }
        if (len > w.room) {
          await w.flush();
          if (len > w.room) {
            await w.direct(i === lastRecord ? Buffer.concat([bytes.subarray(start, end), terminator]) : bytes.subarray(start, end));
            continue;
          }
        }
        copyRecord(bytes, bytesView, start, end, w.buf, w.view, w.pos);
        w.pos += end - start;
        if (i === lastRecord) w.pos += terminator.copy(w.buf, w.pos);
      }
    }
    const recordBytes = w.offset;

    // Meta.
    let maxKeyBytes = 0;
    const keyBytes = sorted.keyBytes;
    const keyEnds = sorted.keyEnds;
    for (let j = 0; j < n; j++) {
      const i = perm[j]!;
      const start = recordStart(ends, i);
      const len = ends[i]! - start + (i === lastRecord ? terminator.length : 0);
      const kStart = keyEnds ? recordStart(keyEnds, i) : 0;
      const kLen = keyEnds ? keyEnds[i]! - kStart : 0;
      if (kLen > maxKeyBytes) maxKeyBytes = kLen;
      if (j % every === 0) sparseMeta[j / every] = w.offset - recordBytes;
      if (w.room < 20 + kLen) {
        await w.flush();
        if (w.room < 20 + kLen) throw new FlatloadError('INTERNAL', `a key of ${kLen} bytes is longer than a spill buffer`);
      }
      let p = putVarint(w.buf, w.pos, start);
      p = putVarint(w.buf, p, len);
      p = putVarint(w.buf, p, lineOffsets[i]!);
      if (keyEnds) {
        p = putVarint(w.buf, p, kLen);
        p += keyBytes!.copy(w.buf, p, kStart, kStart + kLen);
      }
      w.pos = p;
    }
    const metaBytes = w.offset - recordBytes;

    // Sparse index.
    for (let e = 0; e < entries; e++) {
      const key = keyOfRecord(sorted, perm[sparseOrdinals[e]!]!);
      const need = INDEX_ENTRY_FIXED + key.length;
      if (w.room < need) await w.flush();
      const b = w.buf;
      let p = w.pos;
      b.writeUInt32LE(sparseOrdinals[e]!, p);
      b.writeDoubleLE(sparseRec[e]!, p + 4);
      b.writeDoubleLE(sparseMeta[e]!, p + 12);
      b.writeUInt32LE(key.length, p + 20);
      p += INDEX_ENTRY_FIXED;
      p += key.copy(b, p);
      w.pos = p;
    }
    const indexBytes = w.offset - recordBytes - metaBytes;
    const sha256 = await w.finish();
    return {
      records: n,
      recordBytes,
      metaBytes,
      indexBytes,
      indexEntries: entries,
      maxRecordBytes,
      maxKeyBytes,
      intKeys: sorted.intReader !== undefined,
      firstKey: keyOfRecord(sorted, perm[0]!),
      lastKey: keyOfRecord(sorted, perm[n - 1]!),
      sha256,
    };
  } finally {
    await fh.close();
  }
}

/** Parses a run's index section. */
export function parseIndex(section: Buffer): SparseEntry[] {
  const out: SparseEntry[] = [];
  for (let p = 0; p < section.length; ) {
    const keyLen = section.readUInt32LE(p + 20);
    out.push({
      ordinal: section.readUInt32LE(p),
      recPos: section.readDoubleLE(p + 4),
      metaPos: section.readDoubleLE(p + 12),
      key: Buffer.from(section.subarray(p + INDEX_ENTRY_FIXED, p + INDEX_ENTRY_FIXED + keyLen)),
    });
    p += INDEX_ENTRY_FIXED + keyLen;
  }
  return out;
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

/** sha256 of a whole file, read in large pieces. */
export async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
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
  return h.digest('hex');
}
