import { createHash } from 'node:crypto';
import { open, readdir, rm, stat } from 'node:fs/promises';
import type { CutChunk } from '../chunking/types.js';
import { compareKeys, plainIntegerReader, type KeyContext, type PlainIntegerReader } from './key.js';
import { readManifest, RUN_FORMAT_VERSION, runFileName, runParams, writeManifest, type Manifest, type RunInfo } from './manifest.js';
import { hashFile, parseIndex, writeRun, type SparseEntry } from './runFile.js';
import { SlabPool, SortScratch } from './scratch.js';
import { sortChunk } from './sortChunk.js';
import type { SpillDir } from './spillDir.js';

/** Records between two sparse index entries of a run. */
export const DEFAULT_SPARSE_EVERY = 1024;

export interface RunOptions {
  key: KeyContext;
  spill: SpillDir;
  /**
   * Reads a chunk that does not carry its bytes (a plain file, by range) into
   * `into` (at least the chunk's length) and returns the bytes read: the
   * sort reuses two buffers, so a job holds at most two chunks' bytes.
   * fileChunkReader() is one for a plain file.
   */
  read: (chunk: CutChunk, into: Buffer) => Promise<Buffer>;
  /** The caller's job identity: runs are reused only by the same job with the same key and format. */
  identity: string;
  sparseEvery?: number | undefined;
  /** Each run as it is written or reused (progress). */
  onRun?: ((run: RunInfo, reused: boolean) => void) | undefined;
}

/** The runs of a whole input, in input order, ready to merge. */
export class RunSet {
  private readonly indexes = new Map<number, Promise<SparseEntry[]>>();
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

  /** Spill bytes over all runs. */
  get spillBytes(): number {
    return this.runs.reduce((a, r) => a + r.recordBytes + r.metaBytes + r.indexBytes, 0);
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
  index(run: number): Promise<SparseEntry[]> {
    let p = this.indexes.get(run);
    if (!p) {
      const info = this.runs[run]!;
      p = (async () => {
        const fh = await open(this.path(run), 'r');
        try {
          const buf = Buffer.allocUnsafe(info.indexBytes);
          await fh.read(buf, 0, buf.length, info.recordBytes + info.metaBytes);
          return parseIndex(buf);
        } finally {
          await fh.close();
        }
      })();
      this.indexes.set(run, p);
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
  if (!st || st.size !== run.recordBytes + run.metaBytes + run.indexBytes) return false;
  return (await hashFile(path)) === run.sha256;
}

function sha256(buffers: Buffer[]): string {
  const h = createHash('sha256');
  for (const b of buffers) h.update(b);
  return h.digest('hex');
}

interface Loaded {
  chunk: CutChunk;
  bytes?: Buffer;
  inputSha256?: string;
  reuse?: RunInfo;
}

/**
 * Sorts each input chunk (in file order) into a run file in the spill
 * directory and returns the set. While one chunk is sorted and written, the
 * next is read: at most two chunks' bytes are held. A run a previous attempt
 * of the same job wrote for the same chunk is reused when its sha256 still
 * matches (and, for a stream, the chunk's bytes are the same); anything
 * else is sorted again, to byte-identical runs.
 */
export async function generateRuns(chunks: AsyncIterable<CutChunk>, opts: RunOptions): Promise<RunSet> {
  const every = opts.sparseEvery ?? DEFAULT_SPARSE_EVERY;
  const params = runParams(opts.key, every, opts.identity);
  const before = await readManifest(opts.spill);
  const prior = new Map<number, RunInfo>();
  if (before?.params === params) for (const r of before.runs) prior.set(r.chunk.index, r);
  else await opts.spill.clear();
  const manifest: Manifest = { version: RUN_FORMAT_VERSION, params, runs: [], complete: false };
  const fmt = opts.key.fmt;
  const terminator = fmt.lineTerm.length > 0 ? fmt.lineTerm : fmt.fieldTerm;

  const pool = new SlabPool();
  const scratch = new SortScratch(pool);
  // Two chunk buffers, taken in turn: the chunk being sorted and the one being read.
  let turn = 0;
  const buffer = (n: number): Buffer => scratch.buffer(`chunk${turn++ & 1}`, n);
  const it = chunks[Symbol.asyncIterator]();
  const load = async (): Promise<Loaded | undefined> => {
    const r = await it.next();
    if (r.done) return undefined;
    const chunk = r.value;
    const inputSha256 = chunk.buffers ? sha256(chunk.buffers) : undefined;
    const old = prior.get(chunk.index);
    if (old && sameChunk(old, chunk) && old.inputSha256 === inputSha256 && (await intact(opts.spill, old))) return { chunk, reuse: old };
    const into = buffer(chunk.endByte - chunk.startByte);
    if (!chunk.buffers) return { chunk, bytes: await opts.read(chunk, into), inputSha256 };
    let n = 0;
    for (const b of chunk.buffers) n += b.copy(into, n);
    return { chunk, bytes: into.subarray(0, n), inputSha256 };
  };

  let next = load();
  try {
    for (;;) {
      const cur = await next;
      if (!cur) break;
      next = load(); // read the next chunk while this one is sorted and written
      let run = cur.reuse;
      if (!run) {
        const { chunk, bytes } = cur;
        if (!bytes || bytes.length === 0) continue;
        const file = runFileName(chunk.index);
        const sorted = sortChunk(bytes, opts.key, scratch, chunk.records);
        const layout = await writeRun(opts.spill.file(file), bytes, sorted, every, terminator, scratch);
        run = {
          file,
          chunk: { index: chunk.index, startByte: chunk.startByte, endByte: chunk.endByte, firstLine: chunk.firstLine, firstRecord: chunk.firstRecord, records: chunk.records },
          records: layout.records,
          recordBytes: layout.recordBytes,
          metaBytes: layout.metaBytes,
          indexBytes: layout.indexBytes,
          indexEntries: layout.indexEntries,
          maxRecordBytes: layout.maxRecordBytes,
          maxKeyBytes: layout.maxKeyBytes,
          intKeys: layout.intKeys,
          ordered: sorted.ordered,
          firstKey: layout.firstKey.toString('hex'),
          lastKey: layout.lastKey.toString('hex'),
          sha256: layout.sha256,
          ...(cur.inputSha256 === undefined ? {} : { inputSha256: cur.inputSha256 }),
        };
      }
      manifest.runs.push(run);
      await writeManifest(opts.spill, manifest);
      opts.onRun?.(run, cur.reuse !== undefined);
    }
  } catch (err) {
    next.catch(() => undefined);
    await it.return?.(undefined);
    throw err;
  }
  scratch.release(); // the merge takes its buffers from the same pool
  manifest.complete = true;
  await writeManifest(opts.spill, manifest);
  // Runs of chunks this input no longer has (an earlier, different cut) are of no use.
  const keep = new Set(manifest.runs.map((r) => r.file));
  for (const name of await readdir(opts.spill.path)) {
    if (/^run-\d+\.bin$/.test(name) && !keep.has(name)) await rm(opts.spill.file(name), { force: true });
  }
  return new RunSet(opts.spill, manifest, opts.key, pool);
}

/** Reads chunks of a plain file by byte range (RunOptions.read); close() when done. */
export async function fileChunkReader(path: string): Promise<{ read: RunOptions['read']; close: () => Promise<void> }> {
  const fh = await open(path, 'r');
  return {
    async read(chunk, into) {
      const len = chunk.endByte - chunk.startByte;
      let got = 0;
      while (got < len) {
        const { bytesRead } = await fh.read(into, got, len - got, chunk.startByte + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return into.subarray(0, got);
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
