import { open, readdir, rm, stat } from 'node:fs/promises';
import type { CutChunk } from '../chunking/types.js';
import { compareKeys, plainIntegerReader, type KeyContext, type PlainIntegerReader } from './key.js';
import { readManifest, RUN_FORMAT_VERSION, runFileName, runParams, writeManifest, type Manifest, type RunInfo } from './manifest.js';
import { FlatloadError } from '../errors/index.js';
import { digestOf } from '../input/digest.js';
import { hashFile, parseBlocks, parseIndex, readAt, type RunBlocks, type SparseIndex } from './runFile.js';
import { RUN_BLOCK_BYTES } from './codec.js';
import { SlabPool, SortScratch } from './scratch.js';
import { inProcessSorter, workerSorter } from './sorters.js';
import type { SortJob } from './sortRun.js';
import type { SpillDir } from './spillDir.js';

/** Records between two sparse index entries of a run. */
export const DEFAULT_SPARSE_EVERY = 1024;

const MIB = 1 << 20;
/** Runs aimed at when the input's size is known: few enough that the merge's windows stay small. */
const TARGET_RUNS = 512;

/**
 * How many input bytes to sort into each run: 16 MiB, more for inputs over
 * 8 GiB so the merge reads at most ~512 runs, never more than the load's
 * chunk size, 64 MiB for a stream of unknown size (docs/ordering.md §6).
 */
export function runChunkBytes(inputBytes: number | undefined, loadChunkBytes: number): number {
  const want = inputBytes === undefined ? 64 * MIB : Math.max(16 * MIB, Math.ceil(inputBytes / TARGET_RUNS));
  return Math.max(MIB, Math.min(want, loadChunkBytes));
}

export interface RunOptions {
  key: KeyContext;
  spill: SpillDir;
  /**
   * Reads a chunk that does not carry its bytes (a plain file, by range) into
   * `into` (at least the chunk's length) and returns the bytes read. The
   * sort reuses its buffers, so it holds at most workers + 1 chunks' bytes.
   * fileChunkReader() is one for a plain file.
   */
  read: (chunk: CutChunk, into: Buffer) => Promise<Buffer>;
  /** The caller's job identity: runs are reused only by the same job with the same key and format. */
  identity: string;
  sparseEvery?: number | undefined;
  /** Threads that sort chunks (default 1: this one). More use more cores and hold one more chunk each. */
  workers?: number | undefined;
  /** Each run as it is written or reused (progress). */
  onRun?: ((run: RunInfo, reused: boolean) => void) | undefined;
}

/** The runs of a whole input, in input order, ready to merge. */
export class RunSet {
  private readonly tails = new Map<number, Promise<{ index: SparseIndex; blocks: RunBlocks }>>();
  /** Fast path: a reader for the single plain-integer key (set when any run uses it). */
  readonly intReader: PlainIntegerReader | undefined;

  constructor(
    readonly spill: SpillDir,
    readonly manifest: Manifest,
    readonly key: KeyContext,
    /** Where merged chunks take their memory (and give it back with release()). */
    readonly pool = new SlabPool(),
  ) {
    this.intReader = manifest.runs.some((r) => r.intKeys) ? plainIntegerReader(key, true) : undefined;
  }

  get runs(): RunInfo[] {
    return this.manifest.runs;
  }

  get records(): number {
    return this.runs.reduce((a, r) => a + r.records, 0);
  }

  /** Record bytes over all runs (the input's records, plus a terminator its last record may have gained). */
  get recordBytes(): number {
    return this.runs.reduce((a, r) => a + r.recordBytes, 0);
  }

  /** Spill bytes over all runs (on disk, compressed). */
  get spillBytes(): number {
    return this.runs.reduce((a, r) => a + r.fileBytes, 0);
  }

  /** Every key is a plain integer: the merge compares numbers. */
  get intKeys(): boolean {
    return this.runs.every((r) => r.intKeys);
  }

  /** The input was in key order already (each chunk, and each chunk's first key >= the previous chunk's last). */
  get inputOrdered(): boolean {
    return this.runs.every((r, i) => r.ordered && (i === 0 || compareKeys(Buffer.from(r.firstKey, 'hex'), Buffer.from(this.runs[i - 1]!.lastKey, 'hex')) >= 0));
  }

  path(run: number): string {
    return this.spill.file(this.runs[run]!.file);
  }

  /** A run's sparse index (read once). */
  async index(run: number): Promise<SparseIndex> {
    return (await this.tail(run)).index;
  }

  /** Where a run's blocks are (read once). */
  async blocks(run: number): Promise<RunBlocks> {
    return (await this.tail(run)).blocks;
  }

  /** The index and block table at a run's end, read together. */
  private tail(run: number): Promise<{ index: SparseIndex; blocks: RunBlocks }> {
    let p = this.tails.get(run);
    if (!p) {
      const info = this.runs[run]!;
      p = (async () => {
        const fh = await open(this.path(run), 'r');
        try {
          const start = info.recordFileBytes + info.metaFileBytes;
          const buf = Buffer.allocUnsafe(info.fileBytes - start);
          const got = await readAt(fh, buf, 0, buf.length, start);
          if (got < buf.length) throw new FlatloadError('SPILL', `${this.path(run)} is shorter than its manifest says`);
          const recordBlocks = Math.ceil(info.recordBytes / RUN_BLOCK_BYTES);
          return { index: parseIndex(buf.subarray(0, info.indexBytes)), blocks: parseBlocks(buf.subarray(info.indexBytes), recordBlocks, info.recordFileBytes) };
        } finally {
          await fh.close();
        }
      })();
      this.tails.set(run, p);
    }
    return p;
  }
}

function sameChunk(run: RunInfo, c: CutChunk): boolean {
  const r = run.chunk;
  return r.index === c.index && r.startByte === c.startByte && r.endByte === c.endByte && r.firstLine === c.firstLine && r.firstRecord === c.firstRecord && r.records === c.records;
}

async function intact(spill: SpillDir, run: RunInfo): Promise<boolean> {
  const path = spill.file(run.file);
  const st = await stat(path).catch(() => undefined);
  if (!st || st.size !== run.fileBytes) return false;
  return (await hashFile(path).catch(() => undefined)) === run.digest;
}

interface Loaded {
  chunk: CutChunk;
  /** The chunk's bytes are slab[0, length). */
  slab?: ArrayBuffer;
  length?: number;
  inputHash?: string;
  reuse?: RunInfo;
}

/** The previous attempt's runs by chunk index, when it sorted with the same parameters (else the spill directory is cleared). */
async function priorRuns(opts: RunOptions, params: string): Promise<Map<number, RunInfo>> {
  const before = await readManifest(opts.spill);
  const prior = new Map<number, RunInfo>();
  if (before?.params === params) for (const r of before.runs) prior.set(r.chunk.index, r);
  else await opts.spill.clear();
  return prior;
}

/** Reads the next chunk into a slab from the pool, or finds its run from before still good. */
function chunkLoader(it: AsyncIterator<CutChunk>, opts: RunOptions, prior: Map<number, RunInfo>, pool: SlabPool): () => Promise<Loaded | undefined> {
  return async () => {
    const r = await it.next();
    if (r.done) return undefined;
    const chunk = r.value;
    const inputHash = chunk.buffers ? digestOf(chunk.buffers) : undefined;
    const old = prior.get(chunk.index);
    if (old && sameChunk(old, chunk) && old.inputHash === inputHash && (await intact(opts.spill, old))) return { chunk, reuse: old };
    // With room to spare, so a slab fits the next chunk (a few bytes longer) too.
    const slab = pool.take(chunk.endByte - chunk.startByte, 1.03);
    const into = Buffer.from(slab);
    if (!chunk.buffers) return { chunk, slab, length: (await opts.read(chunk, into)).length, inputHash };
    let n = 0;
    for (const b of chunk.buffers) n += b.copy(into, n);
    return { chunk, slab, length: n, inputHash };
  };
}

function sortJob(chunk: CutChunk, opts: RunOptions, every: number, inputHash: string | undefined): SortJob {
  const file = runFileName(chunk.index);
  return {
    chunk: { index: chunk.index, startByte: chunk.startByte, endByte: chunk.endByte, firstLine: chunk.firstLine, firstRecord: chunk.firstRecord, records: chunk.records },
    file,
    path: opts.spill.file(file),
    sparseEvery: every,
    inputHash,
  };
}

/** Writes the complete manifest and removes runs of chunks this input no longer has (an earlier, different cut). */
async function completeManifest(spill: SpillDir, manifest: Manifest, runs: RunInfo[]): Promise<void> {
  manifest.runs = runs.sort((a, b) => a.chunk.index - b.chunk.index);
  manifest.complete = true;
  await writeManifest(spill, manifest);
  const keep = new Set(manifest.runs.map((r) => r.file));
  for (const name of await readdir(spill.path)) {
    if (/^run-\d+\.bin$/.test(name) && !keep.has(name)) await rm(spill.file(name), { force: true });
  }
}

/**
 * Sorts each input chunk into a run file in the spill directory and returns
 * the set. While chunks are sorted and written (in this thread, or in
 * `workers` threads), the next one is read: at most workers + 1 chunks'
 * bytes are held. A run a previous attempt of the same job wrote for the
 * same chunk is reused when its digest still matches (and, for a stream,
 * the chunk's bytes are the same); anything else is sorted again, to
 * byte-identical runs.
 */
export async function generateRuns(chunks: AsyncIterable<CutChunk>, opts: RunOptions): Promise<RunSet> {
  const every = opts.sparseEvery ?? DEFAULT_SPARSE_EVERY;
  const params = runParams(opts.key, every, opts.identity);
  const prior = await priorRuns(opts, params);
  const manifest: Manifest = { version: RUN_FORMAT_VERSION, params, runs: [], complete: false };

  const pool = new SlabPool();
  const scratch = new SortScratch(pool);
  const workers = opts.workers ?? 1;
  const sorter = workers > 1 ? workerSorter(opts.key, workers) : inProcessSorter(opts.key, scratch);
  const it = chunks[Symbol.asyncIterator]();
  const load = chunkLoader(it, opts, prior, pool);

  // Runs finish in any order with workers; the manifest lists them in input order, written one at a time.
  const done = new Map<number, RunInfo>();
  let writing = Promise.resolve();
  const finished = (run: RunInfo, reused: boolean): Promise<void> => {
    done.set(run.chunk.index, run);
    opts.onRun?.(run, reused);
    writing = writing.then(() => writeManifest(opts.spill, { ...manifest, runs: [...done.values()].sort((a, b) => a.chunk.index - b.chunk.index) }));
    return writing;
  };
  let failure: { err: unknown } | undefined;
  const inFlight = new Set<Promise<void>>();
  let next = load();
  try {
    for (;;) {
      const cur = await next;
      if (!cur) break;
      next = load(); // read the next chunk while this one is sorted and written
      // A stream's error can come while this chunk is sorted: it is thrown where `next` is awaited, not left unhandled.
      next.catch(() => undefined);
      if (cur.reuse) {
        await finished(cur.reuse, true);
        continue;
      }
      const { chunk, slab, length } = cur;
      if (!slab || !length) continue;
      const task: Promise<void> = sorter.sort(slab, length, sortJob(chunk, opts, every, cur.inputHash)).then(
        (r) => {
          pool.give(r.slab);
          return finished(r.run, false);
        },
        (err: unknown) => {
          failure ??= { err };
        },
      );
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
      if (inFlight.size >= sorter.capacity) await Promise.race(inFlight);
      if (failure) throw failure.err;
    }
    await Promise.all(inFlight);
    if (failure) throw failure.err;
    await writing;
  } catch (err) {
    next.catch(() => undefined);
    await Promise.allSettled(inFlight);
    await it.return?.(undefined);
    throw err;
  } finally {
    await sorter.close();
  }
  await completeManifest(opts.spill, manifest, [...done.values()]);
  // The sort's slabs (run chunks and working arrays) are dropped, not handed to the merge: its chunks are sized
  // by the load's chunk size, so none of them would fit, and a pool would hold them for the rest of the load.
  return new RunSet(opts.spill, manifest, opts.key, new SlabPool());
}

/** Reads chunks of a plain file by byte range (RunOptions.read); close() when done. */
export async function fileChunkReader(path: string): Promise<{ read: RunOptions['read']; close: () => Promise<void> }> {
  const fh = await open(path, 'r');
  return {
    async read(chunk, into) {
      return into.subarray(0, await readAt(fh, into, 0, chunk.endByte - chunk.startByte, chunk.startByte));
    },
    close: () => fh.close(),
  };
}

/** The runs of a finished earlier sort of the same job, if they are all there and intact. */
export async function openRuns(spill: SpillDir, key: KeyContext, identity: string, sparseEvery = DEFAULT_SPARSE_EVERY): Promise<RunSet | undefined> {
  const m = await readManifest(spill);
  if (!m?.complete || m.params !== runParams(key, sparseEvery, identity)) return undefined;
  for (const r of m.runs) if (!(await intact(spill, r))) return undefined;
  return new RunSet(spill, m, key);
}
