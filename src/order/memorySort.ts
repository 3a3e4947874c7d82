/**
 * Ordering an input small enough to hold in memory: one sort of all its records into one sorted copy, cut into chunks
 * by the merge's rule. Why: no runs to write, hash, read back and merge, client CPU a server sharing its cores would
 * miss (docs/ordering.md#8-inputs-that-fit-in-memory).
 */
import { FlatloadError } from '../errors/index.js';
import { recordLength, recordStart } from '../chunking/records.js';
import { copyRecord, GATHER_BATCH, touchRecords, viewOf } from './copy.js';
import { compareKeys, plainInteger, type KeyContext, type SortKey } from './key.js';
import type { ChunkSources, OrderedChunk } from './merge.js';
import { SlabPool, SortScratch } from './scratch.js';
import type { MemorySortRequest } from './memorySortWorker.js';
import { keyOfRecord, recordTerminator, sortChunk, type SortedChunk } from './sortChunk.js';
import { keyData } from './sortRun.js';
import { workerEntry, WorkerPool } from './workerPool.js';

/** Where the bytes held in memory start in the input. */
export interface MemoryOrigin {
  /** Byte offset of the first record in the input. */
  startByte: number;
  /** 1-based line of that byte. */
  firstLine: number;
}

/** A chunk to be: records perm[from, to) of the sorted order, bytes [start, start + bytes) of the sorted copy. */
export interface SortedSpan {
  from: number;
  to: number;
  start: number;
  bytes: number;
}

/**
 * The spans of the sorted records, cut as mergeRuns cuts: a chunk ends at
 * the first key change at or after targetBytes (or maxRecords records), so
 * records of one key never straddle two chunks. Pure: `lengthAt(j)` is the
 * j-th sorted record's length, `sameKeyAt(j)` whether its key equals the
 * (j-1)-th's (asked only where a chunk could end).
 */
export function cutSpans(n: number, lengthAt: (j: number) => number, sameKeyAt: (j: number) => boolean, targetBytes: number, maxRecords = Number.POSITIVE_INFINITY): SortedSpan[] {
  if (!(targetBytes > 0)) throw new FlatloadError('INTERNAL', 'a sorted input needs a positive target chunk size');
  const spans: SortedSpan[] = [];
  let from = 0;
  let start = 0;
  let bytes = 0;
  for (let j = 0; j < n; j++) {
    if (j > from && (bytes >= targetBytes || j - from >= maxRecords) && !sameKeyAt(j)) {
      spans.push({ from, to: j, start, bytes });
      from = j;
      start += bytes;
      bytes = 0;
    }
    bytes += lengthAt(j);
  }
  if (n > from) spans.push({ from, to: n, start, bytes });
  return spans;
}

/** A sort's result in plain arrays, so a worker thread can make it and send it back whole. */
export interface MemorySortParts {
  spans: SortedSpan[];
  /** Each span's first and last key. */
  firstKeys: SortKey[];
  lastKeys: SortKey[];
  /**
   * The records: in key order, span after span (scattered), or as they were
   * read, each span gathered in key order when it is asked for.
   */
  bytes: Buffer;
  scattered: boolean;
  /** perm[j]: the j-th sorted record's place in the input; ends and lineOffsets are by that place. */
  perm: Uint32Array;
  ends: Uint32Array;
  /** Undefined when every record is one line (record r is line r). */
  lineOffsets: Uint32Array | undefined;
  origin: MemoryOrigin;
}

/**
 * Sorts `bytes` (whole records; the last may lack its terminator, which is
 * then written into the spare `recordTerminator(fmt).length` bytes at its end)
 * into one buffer cut into spans. `records` is the count the boundary scan
 * found: a different count means the input changed between the two reads.
 *
 * With `scatter`, the records are then moved to their sorted places in one
 * copy, reading the input in its order (a worker thread does it off the thread
 * that sends: gathering in key order misses the CPU's caches more). Without,
 * they stay where they are and each span is gathered when it is asked for: the
 * first chunk can load as soon as the keys are sorted, and the input is held
 * once (docs/ordering.md#8-inputs-that-fit-in-memory). Memory: the input (twice
 * while a scatter moves it), and about 16 bytes per record (record table and
 * permutation: a rejected row's line and byte offset).
 */
export function sortInMemory(
  bytes: Buffer,
  length: number,
  ctx: KeyContext,
  records: number,
  origin: MemoryOrigin,
  targetBytes: number,
  maxRecords: number | undefined,
  scatter = true,
  spare?: SlabPool,
): MemorySortParts {
  const scratch = new SortScratch(spare);
  const s = sortChunk(bytes.subarray(0, length), ctx, scratch, records, true);
  const { perm, table } = s;
  // The working arrays the result does not keep, those a chunk's bytes fit (SlabPool.take): the gathered chunks'
  // buffers, or the scatter's destinations. New ones, beside these waiting for the collector, made the load's peak.
  scratch.release([perm.buffer, table.ends.buffer, table.lineOffsets.buffer], (size) => size >= targetBytes && size <= 2 * targetBytes);
  const ends = table.ends;
  const n = ends.length;
  if (n !== records) {
    throw new FlatloadError('INPUT_MALFORMED', `the input changed while it was read: the boundary scan found ${records} records, the sort ${n}`, { byteOffset: origin.startByte });
  }
  if (!table.terminated && n > 0) {
    const term = recordTerminator(ctx.fmt);
    if (bytes.length < length + term.length) throw new FlatloadError('INTERNAL', 'no room for the last record\'s terminator');
    term.copy(bytes, length);
    ends[n - 1] = length + term.length;
  }
  const all: SortedChunk = { ...s, bytes };
  const spans = cutSpans(n, (j) => recordLength(ends, perm[j]!), (j) => sameKey(all, perm[j - 1]!, perm[j]!), targetBytes, maxRecords);
  const parts = {
    spans,
    firstKeys: spans.map((sp) => keyOfRecord(all, perm[sp.from]!)),
    lastKeys: spans.map((sp) => keyOfRecord(all, perm[sp.to - 1]!)),
    perm,
    ends,
    lineOffsets: s.oneLineEach ? undefined : table.lineOffsets,
    origin,
  };
  if (!scatter) return { ...parts, bytes, scattered: false };
  // Each record's place in the sorted copy, then one pass over the input in its order.
  // Offsets below 4 GiB: --sort-memory is at most 2 GiB.
  const dest = new Uint32Array(scratch.pool.take(4 * n), 0, n);
  for (let j = 0, acc = 0; j < n; j++) {
    const r = perm[j]!;
    dest[r] = acc;
    acc += recordLength(ends, r);
  }
  const last = spans[spans.length - 1];
  const out = Buffer.allocUnsafeSlow(last ? last.start + last.bytes : 0);
  const srcView = viewOf(bytes);
  const outView = viewOf(out);
  for (let r = 0, start = 0; r < n; r++) {
    const end = ends[r]!;
    copyRecord(bytes, srcView, start, end, out, outView, dest[r]!);
    start = end;
  }
  return { ...parts, bytes: out, scattered: true };
}

/** Span's records copied from the input in key order into a buffer of their own; pos[k + 1] is where record k ends. */
function gatherSpan(bytes: Buffer, ends: Uint32Array, perm: Uint32Array, span: SortedSpan, pos: Uint32Array, slab: ArrayBuffer): Buffer {
  const out = Buffer.from(slab, 0, span.bytes);
  const srcView = viewOf(bytes);
  const outView = viewOf(out);
  const n = span.to - span.from;
  const starts = new Uint32Array(GATHER_BATCH);
  const stops = new Uint32Array(GATHER_BATCH);
  let used = 0;
  for (let k0 = 0; k0 < n; k0 += GATHER_BATCH) {
    const m = Math.min(GATHER_BATCH, n - k0);
    for (let k = 0; k < m; k++) {
      const r = perm[span.from + k0 + k]!;
      starts[k] = recordStart(ends, r);
      stops[k] = ends[r]!;
    }
    touchRecords(bytes, starts, stops, 0, m);
    for (let k = 0; k < m; k++) {
      copyRecord(bytes, srcView, starts[k]!, stops[k]!, out, outView, used);
      used += stops[k]! - starts[k]!;
      pos[k0 + k + 1] = used;
    }
  }
  return out;
}

/** Gathered chunks' buffers kept for the next chunks. */
const SLABS_KEPT = 4;

/** All records of an input sorted by key (sortInMemory); `chunk(i)` is span i. */
export class MemorySort {
  /**
   * Gathered chunks' buffers, handed back by release(): a new buffer per chunk
   * waited for the collector, and a load's RSS grew by most of the input while
   * it sent the chunks.
   */
  constructor(
    private readonly p: MemorySortParts,
    private readonly slabs = new SlabPool(SLABS_KEPT),
  ) {}

  /** sortInMemory, in this thread: no scatter, each chunk gathered when asked for, into the sort's spare arrays. */
  static sort(bytes: Buffer, length: number, ctx: KeyContext, records: number, origin: MemoryOrigin, targetBytes: number, maxRecords: number | undefined): MemorySort {
    const slabs = new SlabPool(SLABS_KEPT);
    return new MemorySort(sortInMemory(bytes, length, ctx, records, origin, targetBytes, maxRecords, false, slabs), slabs);
  }

  get spans(): SortedSpan[] {
    return this.p.spans;
  }

  get records(): number {
    return this.p.perm.length;
  }

  /** Span i's records in key order; its index is i. */
  chunk(i: number): OrderedChunk {
    const span = this.p.spans[i];
    if (!span) throw new FlatloadError('INTERNAL', `sorted chunk ${i} does not exist`);
    const { perm, ends, bytes, scattered } = this.p;
    const n = span.to - span.from;
    // Scattered, the records are one buffer, let go with this object; gathered, each chunk's goes back to the pool,
    // its record offsets after its bytes (each chunk's own array, left to the collector, grew the load's memory).
    // 5% to spare: the next span, a few records longer, fits this one's slab.
    const posAt = (span.bytes + 3) & ~3;
    const slab = scattered ? undefined : this.slabs.take(posAt + 4 * (n + 1), 1.05);
    const pos = slab ? new Uint32Array(slab, posAt, n + 1) : new Uint32Array(n + 1);
    pos[0] = 0;
    if (scattered) {
      for (let j = 0, used = 0; j < n; j++) {
        const r = perm[span.from + j]!;
        used += recordLength(ends, r);
        pos[j + 1] = used;
      }
    }
    let released = false;
    return {
      index: i,
      bytes: slab ? gatherSpan(bytes, ends, perm, span, pos, slab) : bytes.subarray(span.start, span.start + span.bytes),
      records: n,
      pos,
      firstKey: this.p.firstKeys[i]!,
      lastKey: this.p.lastKeys[i]!,
      release: () => {
        if (slab && !released) this.slabs.give(slab);
        released = true;
      },
      locate: () => Promise.resolve(this.sources(span)),
    };
  }

  /** Offsets and lines in the input of a span's records. */
  private sources(span: SortedSpan): ChunkSources {
    const { perm, ends, lineOffsets, origin } = this.p;
    const n = span.to - span.from;
    const offsets = new Float64Array(n);
    const lines = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const r = perm[span.from + j]!;
      offsets[j] = origin.startByte + recordStart(ends, r);
      lines[j] = origin.firstLine + (lineOffsets ? lineOffsets[r]! : r);
    }
    return { offsets, lines };
  }
}

/** Whether records a and b (input order) have equal keys. */
function sameKey(s: SortedChunk, a: number, b: number): boolean {
  const ends = s.table.ends;
  if (s.intReader) {
    return plainInteger(s.bytes, recordStart(ends, a), ends[a]!, s.intReader) === plainInteger(s.bytes, recordStart(ends, b), ends[b]!, s.intReader);
  }
  return compareKeys(keyOfRecord(s, a), keyOfRecord(s, b)) === 0;
}

/** MemorySortParts as they cross threads: keys as hex (a small Buffer is a view on a shared pool). */
export type WireParts = Omit<MemorySortParts, 'firstKeys' | 'lastKeys' | 'bytes'> & { firstKeys: string[]; lastKeys: string[]; bytes: Uint8Array };

/** The parts to post, and the arrays to move rather than copy (each the only view on its memory). */
export function partsToWire(p: MemorySortParts): { wire: WireParts; transfer: ArrayBuffer[] } {
  const wire = { ...p, firstKeys: p.firstKeys.map((k) => k.toString('hex')), lastKeys: p.lastKeys.map((k) => k.toString('hex')) };
  return { wire, transfer: [p.bytes.buffer, p.perm.buffer, p.ends.buffer, p.lineOffsets?.buffer].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer) };
}

function partsFromWire(w: WireParts): MemorySortParts {
  const hex = (k: string): SortKey => Buffer.from(k, 'hex');
  return { ...w, firstKeys: w.firstKeys.map(hex), lastKeys: w.lastKeys.map(hex), bytes: Buffer.from(w.bytes.buffer, w.bytes.byteOffset, w.bytes.byteLength) };
}

const ASIDE_URL = workerEntry('memorySortWorker', import.meta.url);
let aside: WorkerPool<MemorySortRequest, WireParts> | undefined;

/**
 * Starts the sort worker ahead of its first input: it loads its modules while
 * the caller reads the server and plans. A worker that died (its sort failed
 * with it) is replaced, so a later load in the same process sorts again.
 */
export function warmSortAside(): WorkerPool<MemorySortRequest, WireParts> {
  if (!aside || aside.broken) aside = new WorkerPool(ASIDE_URL, 1);
  return aside;
}

/**
 * MemorySort.sort in a worker thread, one for the whole process: inputs are
 * sorted one at a time, in the order asked (an export's smallest table
 * first). The thread that sends chunks goes on sending them meanwhile; an
 * export that sorted its next tables there stopped loading the first for
 * as long. `bytes` moves to the worker: it is unusable after the call.
 */
export async function sortAside(bytes: Buffer, length: number, ctx: KeyContext, records: number, origin: MemoryOrigin, targetBytes: number, maxRecords: number | undefined): Promise<MemorySort> {
  if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength || !(bytes.buffer instanceof ArrayBuffer)) {
    throw new FlatloadError('INTERNAL', 'an input sorted aside must own its memory');
  }
  const request: MemorySortRequest = { key: keyData(ctx), buffer: bytes.buffer, length, records, origin, targetBytes, maxRecords };
  return new MemorySort(partsFromWire(await warmSortAside().run(request, [bytes.buffer])));
}
