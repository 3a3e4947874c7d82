import { open, type FileHandle } from 'node:fs/promises';
import { FlatloadError } from '../errors/index.js';
import { copyRecord, viewOf } from './copy.js';
import { PackedBuffer, RunCursor, REFILL, END } from './cursor.js';
import { IndexHeap, LoserTree, type RunQueue } from './heap.js';
import { compareKeys, decodePart, integerKey, type SortKey } from './key.js';
import type { RunInfo } from './manifest.js';
import type { RunPosition } from './runFile.js';
import type { RunSet } from './runs.js';

/** One output chunk: records in key order, a key range disjoint from every other chunk's. */
export interface OrderedChunk {
  /** Deterministic: firstIndex + its place in this merge (with cuts: + its range's place among the cuts). */
  index: number;
  /** The records' bytes, each with its terminator. */
  bytes: Buffer;
  records: number;
  /** Record i is bytes[pos[i], pos[i + 1]) (records + 1 entries). */
  pos: Uint32Array;
  /** The first and last record's keys (equal keys never straddle two chunks). */
  firstKey: SortKey;
  lastKey: SortKey;
  /**
   * Hands the chunk's memory back for the next chunks of the merge: call it
   * when done with the chunk (committed or given up), and use nothing of it
   * afterwards. Without it the memory is simply collected.
   */
  release(): void;
  /**
   * Where each record came from: read back from the runs' meta entries when
   * asked (rejects, warnings), so a chunk in flight holds 6 bytes per record
   * rather than 22. Needs the spill directory (until the load is done).
   */
  locate(): Promise<ChunkSources>;
}

export interface ChunkSources {
  /** Record i's absolute byte offset in the input. */
  offsets: Float64Array;
  /** Record i's 1-based line in the input. */
  lines: Float64Array;
}

export interface MergeOptions {
  /** Record bytes per chunk: a chunk ends at the first key change at or after this many. */
  targetBytes: number;
  /**
   * Records per chunk, when a chunk must stay under a row count (MyRocks'
   * row locks): without cuts, a chunk also ends at the first key change at
   * or after this many records. Records of one key are never split, so a
   * key with more records than this makes a chunk that is larger.
   */
  maxRecords?: number | undefined;
  /** Only keys >= lo (default: from the first). */
  lo?: SortKey | undefined;
  /** Only keys < hi (default: to the last). */
  hi?: SortKey | undefined;
  /** Index of the first chunk (default 0). */
  firstIndex?: number | undefined;
  /**
   * Cut at these keys (strictly increasing) instead of by size: chunk
   * firstIndex + i holds the keys in [cuts[i - 1], cuts[i]) (the first from
   * lo, the last to hi); a range with no record makes no chunk but keeps its
   * number. With planRanges' bounds, one merge makes its ranges' chunks.
   */
  cuts?: SortKey[] | undefined;
  /** Records window per run (meta gets a quarter); default MERGE_WINDOW_BYTES spread over the runs, 64 KiB to 1 MiB each (never under a block plus the longest record). */
  readBufferBytes?: number | undefined;
}

const MAX_CHUNK_BYTES = 0xffffffff;

/** The merge's read windows over all runs together, unless each run's minimum (a block and the longest entry) adds up to more. */
export const MERGE_WINDOW_BYTES = 16 << 20;

function defaultReadBuffer(runs: number): number {
  return Math.min(1 << 20, Math.max(64 << 10, Math.floor(MERGE_WINDOW_BYTES / Math.max(1, runs))));
}

function endOf(run: RunInfo): RunPosition {
  return { ordinal: run.records, recPos: run.recordBytes, metaPos: run.metaBytes };
}

const START: RunPosition = { ordinal: 0, recPos: 0, metaPos: 0 };

/** Where the first record with key >= `key` is in run r (the run's end when there is none). */
async function seekRun(set: RunSet, r: number, fh: FileHandle, key: SortKey): Promise<RunPosition> {
  const run = set.runs[r]!;
  const index = await set.index(r);
  // The first index entry whose key is >= key; the record sought is after the entry before it.
  let lo = 0;
  let hi = index.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (index.keys.compare(key, 0, key.length, index.keyStart(mid), index.keyEnd(mid)) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return START;
  const from = index.position(lo - 1);
  const upto = lo < index.length ? index.position(lo) : endOf(run);
  const c = new RunCursor(fh, run, await set.blocks(r), from, upto.ordinal, 64 << 10, set.intReader, true);
  while (await c.next()) {
    if (compareKeys(c.keyBuf.subarray(c.keyStart, c.keyEnd), key) >= 0) return c.position();
  }
  return upto;
}

/** A chunk's per-record arrays with room for `cap` records, in one slab: pos (u32, cap + 1), run (u16, cap). */
function recordArrays(slab: ArrayBuffer, cap: number): { pos: Uint32Array; from: Uint16Array } {
  return { pos: new Uint32Array(slab, 0, cap + 1), from: new Uint16Array(slab, 4 * (cap + 1), cap) };
}

const recordSlabBytes = (cap: number): number => 6 * cap + 4;

/** Builds one output chunk: record bytes copied once into one buffer, per-record arrays; memory from the pool. */
class ChunkBuilder {
  private byteSlab: ArrayBuffer;
  private recSlab: ArrayBuffer;
  bytes: Buffer;
  private view: DataView;
  used = 0;
  n = 0;
  private cap: number;
  private pos: Uint32Array;
  /** The run each record came from. */
  private from: Uint16Array;
  /** Per run: where its first record in this chunk is. */
  private readonly starts: Array<RunPosition | undefined>;

  constructor(
    private readonly set: RunSet,
    bytes: number,
    records: number,
  ) {
    this.byteSlab = set.pool.take(bytes);
    this.bytes = Buffer.from(this.byteSlab);
    this.view = viewOf(this.bytes);
    this.cap = Math.max(16, records);
    this.recSlab = set.pool.take(recordSlabBytes(this.cap));
    ({ pos: this.pos, from: this.from } = recordArrays(this.recSlab, this.cap));
    this.pos[0] = 0;
    this.starts = new Array<RunPosition | undefined>(set.runs.length);
  }

  add(c: RunCursor, run: number): void {
    const len = c.recLen;
    const used = this.used;
    const n = this.n;
    if (used + len > this.bytes.length || n === this.cap || this.starts[run] === undefined) this.prepare(c, run, len);
    copyRecord(c.recBuf, c.recView, c.recStart, c.recStart + len, this.bytes, this.view, used);
    this.from[n] = run;
    this.used = used + len;
    this.n = n + 1;
    this.pos[n + 1] = used + len;
  }

  /** What add() seldom needs first: more room, or where the chunk's first record of that run is. */
  private prepare(c: RunCursor, run: number, len: number): void {
    if (this.used + len > this.bytes.length) this.growBytes(this.used + len);
    if (this.n === this.cap) this.growRecords();
    this.starts[run] ??= c.position();
  }

  private growBytes(min: number): void {
    if (min > MAX_CHUNK_BYTES) throw new FlatloadError('INTERNAL', `an ordered chunk would pass ${MAX_CHUNK_BYTES} bytes (one key's records?)`);
    const slab = this.set.pool.take(Math.min(MAX_CHUNK_BYTES, Math.max(min, Math.ceil(this.bytes.length * 1.5))));
    const bytes = Buffer.from(slab);
    this.bytes.copy(bytes, 0, 0, this.used);
    this.set.pool.give(this.byteSlab);
    this.byteSlab = slab;
    this.bytes = bytes;
    this.view = viewOf(bytes);
  }

  private growRecords(): void {
    const cap = Math.ceil(this.cap * 1.5) + 16;
    const slab = this.set.pool.take(recordSlabBytes(cap));
    const next = recordArrays(slab, cap);
    next.pos.set(this.pos.subarray(0, this.n + 1));
    next.from.set(this.from.subarray(0, this.n));
    this.set.pool.give(this.recSlab);
    this.recSlab = slab;
    this.cap = cap;
    ({ pos: this.pos, from: this.from } = next);
  }

  /** Gives the memory back without making a chunk. */
  discard(): void {
    this.set.pool.give(this.byteSlab);
    this.set.pool.give(this.recSlab);
  }

  finish(index: number, firstKey: SortKey, lastKey: SortKey): OrderedChunk {
    const { set, byteSlab, recSlab, starts } = this;
    const n = this.n;
    const from = this.from.subarray(0, n);
    let released = false;
    return {
      index,
      bytes: this.bytes.subarray(0, this.used),
      records: n,
      pos: this.pos.subarray(0, n + 1),
      firstKey,
      lastKey,
      release() {
        if (released) return;
        released = true;
        set.pool.give(byteSlab);
        set.pool.give(recSlab);
      },
      locate() {
        if (released) throw new FlatloadError('INTERNAL', `chunk ${index} was released before its records were located`);
        return locateRecords(set, starts, from);
      },
    };
  }
}

/** Where takeInts() stops: before a record whose key reaches `key`, or once the chunk has `bytes` bytes or `records` records. */
interface IntStop {
  key: number;
  bytes: number;
  records: number;
  /** Set by takeInts(): the key of the last record it added. */
  last: number;
}

/**
 * The merge's hot loop for plain integer keys: adds the top run's record,
 * then the next top's while none reaches a stop (the caller decides about
 * that one, as about the first), or until a run must be refilled: then
 * returns that run (its record added, the tree not yet told), else -1.
 */
function takeInts(b: ChunkBuilder, cursors: RunCursor[], tree: LoserTree, stop: IntStop): number {
  const { key: stopKey, bytes: stopBytes, records: stopRecords } = stop;
  for (;;) {
    const r = tree.top;
    const c = cursors[r]!;
    b.add(c, r);
    const num = c.num;
    const s = c.advanceInt();
    if (s === REFILL) {
      stop.last = num;
      return r;
    }
    tree.replace(s === END ? Number.POSITIVE_INFINITY : c.num);
    if (tree.topKey >= stopKey || b.used >= stopBytes || b.n >= stopRecords) {
      stop.last = num;
      return -1;
    }
  }
}

/** Offsets and lines of a chunk's records: each run's meta entries, read from where the chunk's first record of that run is. */
async function locateRecords(set: RunSet, starts: Array<RunPosition | undefined>, from: Uint16Array): Promise<ChunkSources> {
  const n = from.length;
  const offsets = new Float64Array(n);
  const lines = new Float64Array(n);
  const cursors: RunCursor[] = [];
  const files: FileHandle[] = [];
  try {
    for (let r = 0; r < starts.length; r++) {
      const at = starts[r];
      if (!at) continue;
      const fh = await open(set.path(r), 'r');
      files.push(fh);
      cursors[r] = new RunCursor(fh, set.runs[r]!, await set.blocks(r), at, set.runs[r]!.records, 64 << 10, set.intReader, false, true);
    }
    for (let j = 0; j < n; j++) {
      const r = from[j]!;
      const c = cursors[r]!;
      let s = c.advance();
      while (s === REFILL) {
        await c.refill();
        s = c.advance();
      }
      if (s === END) throw new FlatloadError('INTERNAL', `run ${r} ended while locating a chunk's records`);
      const chunk = set.runs[r]!.chunk;
      offsets[j] = chunk.startByte + c.relOffset;
      lines[j] = chunk.firstLine + c.relLine;
    }
  } finally {
    for (const fh of files) await fh.close();
  }
  return { offsets, lines };
}

/** Every run's cursor over [lo, hi), and the bytes and records they hold. */
async function openCursors(set: RunSet, opts: MergeOptions, files: FileHandle[]): Promise<{ cursors: RunCursor[]; bytes: number; records: number }> {
  const runs = set.runs;
  const { lo, hi } = opts;
  const from = lo ? await Promise.all(runs.map((_run, r) => seekRun(set, r, files[r]!, lo))) : runs.map(() => START);
  const upto = hi ? await Promise.all(runs.map((_run, r) => seekRun(set, r, files[r]!, hi))) : runs.map(endOf);
  const blocks = await Promise.all(runs.map((_run, r) => set.blocks(r)));
  const bufferBytes = opts.readBufferBytes ?? defaultReadBuffer(runs.length);
  const packed = new PackedBuffer(); // the merge refills one cursor at a time
  const cursors = runs.map(
    (run, r) => new RunCursor(files[r]!, run, blocks[r]!, from[r]!, Math.max(from[r]!.ordinal, upto[r]!.ordinal), bufferBytes, set.intReader, !set.intKeys, false, packed),
  );
  let bytes = 0;
  let records = 0;
  for (let r = 0; r < runs.length; r++) {
    bytes += Math.max(0, upto[r]!.recPos - from[r]!.recPos);
    records += Math.max(0, upto[r]!.ordinal - from[r]!.ordinal);
  }
  return { cursors, bytes, records };
}

/** The heap's order: by encoded key, ties to the earlier run (so equal keys keep input order). */
function cursorOrder(cursors: RunCursor[]): (a: number, b: number) => boolean {
  return (a, b) => {
    const x = cursors[a]!;
    const y = cursors[b]!;
    const c = x.keyBuf.compare(y.keyBuf, y.keyStart, y.keyEnd, x.keyStart, x.keyEnd);
    return c < 0 || (c === 0 && a < b);
  };
}

/** Every run at its first record, queued: plain integer keys in a tree of losers, encoded keys in a heap. */
async function runQueue(cursors: RunCursor[], intMode: boolean): Promise<RunQueue> {
  const started: boolean[] = [];
  for (const c of cursors) started.push(await c.next()); // one at a time: the cursors share one buffer for reads
  if (intMode) return new LoserTree(cursors.length, (r) => (started[r] ? cursors[r]!.num : undefined));
  const heap = new IndexHeap(cursors.length, cursorOrder(cursors));
  for (let r = 0; r < cursors.length; r++) if (started[r]) heap.push(r);
  return heap;
}

/** The key of the last record added to a chunk: the chunk's lastKey, and where the key changes. */
class LastKey {
  private readonly buf: Buffer;
  private readonly view: DataView;
  private len = 0;
  private num = 0;

  constructor(
    private readonly intMode: boolean,
    maxKeyBytes: number,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(32, maxKeyBytes));
    this.view = viewOf(this.buf);
  }

  /** An integer key (intMode). */
  rememberInt(num: number): void {
    this.num = num;
  }

  remember(c: RunCursor): void {
    if (this.intMode) this.num = c.num;
    else {
      copyRecord(c.keyBuf, c.keyView, c.keyStart, c.keyEnd, this.buf, this.view, 0);
      this.len = c.keyEnd - c.keyStart;
    }
  }

  same(c: RunCursor): boolean {
    return this.intMode ? c.num === this.num : this.buf.compare(c.keyBuf, c.keyStart, c.keyEnd, 0, this.len) === 0;
  }

  key(): SortKey {
    return this.intMode ? integerKey(this.num) : Buffer.from(this.buf.subarray(0, this.len));
  }
}

/** Whether c's key has reached cuts[i] (numbers compare with the cut's integer threshold). */
function cutTest(cuts: SortKey[], thresholds: number[] | undefined): (c: RunCursor, i: number) => boolean {
  if (!thresholds) return (c, i) => cuts[i]!.compare(c.keyBuf, c.keyStart, c.keyEnd) <= 0;
  return (c, i) => c.num >= thresholds[i]!;
}

function checkMerge(set: RunSet, opts: MergeOptions): void {
  const k = set.runs.length;
  if (!(opts.targetBytes > 0)) throw new FlatloadError('INTERNAL', 'a merge needs a positive target chunk size');
  if (k > 0xffff) throw new FlatloadError('UNSUPPORTED', `${k} runs are more than one merge takes (65535): raise --chunk-size`);
  if (opts.cuts?.some((key, i) => i > 0 && compareKeys(opts.cuts![i - 1]!, key) >= 0)) throw new FlatloadError('INTERNAL', 'merge cut keys must be strictly increasing');
}

/**
 * The k-way merge of the runs (a binary heap; ties go to the earlier run,
 * so equal keys keep input order), cut into chunks of about targetBytes
 * only where the key changes, so chunks have disjoint, adjacent key ranges.
 * With lo/hi only keys in [lo, hi) are merged, each run entered by its
 * sparse index: merges of adjacent ranges together give exactly the whole
 * merge. Pull-based: the next chunk is built when it is asked for.
 */
export async function* mergeRuns(set: RunSet, opts: MergeOptions): AsyncGenerator<OrderedChunk> {
  const runs = set.runs;
  const k = runs.length;
  if (k === 0) return;
  checkMerge(set, opts);
  const target = Math.min(opts.targetBytes, MAX_CHUNK_BYTES);
  const maxRecords = opts.maxRecords ?? Number.POSITIVE_INFINITY;
  const intMode = set.intKeys;
  const files: FileHandle[] = [];
  let builder: ChunkBuilder | undefined;
  try {
    for (let r = 0; r < k; r++) files.push(await open(set.path(r), 'r'));
    const opened = await openCursors(set, opts, files);
    const cursors = opened.cursors;
    let bytesLeft = opened.bytes;
    let recordsLeft = opened.records;
    const avg = set.records > 0 ? set.recordBytes / set.records : 1;
    const queue = await runQueue(cursors, intMode);

    const keyOf = (c: RunCursor): SortKey => (intMode ? integerKey(c.num) : c.keyCopy());
    const last = new LastKey(intMode, runs.reduce((m, r) => Math.max(m, r.maxKeyBytes), 32));
    const cuts = opts.cuts ?? [];
    const thresholds = intMode ? cuts.map(integerThreshold) : undefined;
    const reached = cutTest(cuts, thresholds);
    // Integer keys go through takeInts() between the stops it cannot decide alone.
    const tree = intMode ? (queue as LoserTree) : undefined;
    const stop: IntStop = { key: Number.POSITIVE_INFINITY, bytes: opts.cuts ? Number.POSITIVE_INFINITY : target, records: opts.cuts ? Number.POSITIVE_INFINITY : maxRecords, last: 0 };
    let cutPos = 0;
    const maxRecord = runs.reduce((m, r) => Math.max(m, r.maxRecordBytes), 0);
    // Sized for the chunk (or what is left), with room for the records that end it past the target; a range
    // from planRanges is the target only to within the sparse indexes' grain, so it gets a quarter more.
    const room = opts.cuts ? Math.ceil(target * 1.25) : target;
    const newBuilder = (): ChunkBuilder =>
      new ChunkBuilder(set, Math.min(bytesLeft, room + 2 * maxRecord), Math.min(recordsLeft, Math.ceil(Math.min(bytesLeft, room) / avg) + 64));

    const firstIndex = opts.firstIndex ?? 0;
    let made = 0;
    let index = firstIndex;
    builder = newBuilder();
    let firstKey: SortKey | undefined;
    while (!queue.empty) {
      const r = queue.top;
      const c = cursors[r]!;
      if (builder.n > 0 && (opts.cuts ? cutPos < cuts.length && reached(c, cutPos) : (builder.used >= target || builder.n >= maxRecords) && !last.same(c))) {
        const done = builder;
        bytesLeft -= done.used;
        recordsLeft -= done.n;
        builder = undefined;
        yield done.finish(index, firstKey!, last.key());
        made++;
        builder = newBuilder();
      }
      if (builder.n === 0) {
        while (cutPos < cuts.length && reached(c, cutPos)) cutPos++;
        index = firstIndex + (opts.cuts ? cutPos : made);
        firstKey = keyOf(c);
        if (thresholds) stop.key = cutPos < thresholds.length ? thresholds[cutPos]! : Number.POSITIVE_INFINITY;
      }
      if (tree) {
        const refill = takeInts(builder, cursors, tree, stop);
        last.rememberInt(stop.last);
        if (refill >= 0) {
          const d = cursors[refill]!;
          let s = REFILL;
          while (s === REFILL) {
            await d.refill();
            s = d.advanceInt();
          }
          tree.replace(s === END ? Number.POSITIVE_INFINITY : d.num);
        }
        continue;
      }
      builder.add(c, r);
      last.remember(c);
      let s = c.advance();
      while (s === REFILL) {
        await c.refill();
        s = c.advance();
      }
      queue.advanced(s === END);
    }
    if (builder.n > 0) {
      const done = builder;
      builder = undefined;
      yield done.finish(index, firstKey!, last.key());
    }
  } finally {
    builder?.discard(); // a chunk never handed out (empty, or the merge was abandoned)
    for (const fh of files) await fh.close();
  }
}

/**
 * For a merge that compares plain integers: the smallest integer whose key
 * is at or above the cut key (NULL is below every number, malformed text
 * above; a number followed by more bytes is above that number). Integer
 * keys are below 10^15 in magnitude, so larger cuts are infinite.
 */
function integerThreshold(cut: SortKey): number {
  if (cut.length === 0) return Number.NEGATIVE_INFINITY;
  const { part, next } = decodePart(cut, 0);
  if (part.kind === 'null') return Number.NEGATIVE_INFINITY;
  if (part.kind !== 'number') return Number.POSITIVE_INFINITY;
  const neg = part.decimal.startsWith('-');
  const [whole = '', fraction] = (neg ? part.decimal.slice(1) : part.decimal).split('.');
  if (whole.length > 15) return neg ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  const x = neg ? -Number(whole) : Number(whole); // the number truncated toward zero
  const integral = fraction === undefined;
  // ceil(number), or the next integer when the cut is past the number itself.
  if (integral) return next < cut.length ? x + 1 : x;
  return neg ? x : x + 1;
}

/** Every chunk of a merge, for callers that want them all at once (tests, small inputs). */
export async function collect(chunks: AsyncIterable<OrderedChunk>): Promise<OrderedChunk[]> {
  const out: OrderedChunk[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}
