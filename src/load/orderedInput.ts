import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Activity } from '../report/activity.js';
import type { CutChunk, InputSummary } from '../chunking/types.js';
import { FlatloadError } from '../errors/index.js';
import { openPositional, readFully } from '../input/ranged.js';
import type { FileKey } from '../introspect/keySpec.js';
import type { KeyContext, SortKey } from '../order/key.js';
import { MemorySort, sortAside } from '../order/memorySort.js';
import { mergeRuns, type OrderedChunk } from '../order/merge.js';
import { recordTerminator } from '../order/sortChunk.js';
import { DEFAULT_SPARSE_EVERY, generateRuns, type RunSet } from '../order/runs.js';
import { cleanupOnExit, SpillDir } from '../order/spillDir.js';
import { planRanges } from '../order/split.js';
import type { ChunkInput } from './chunkInput.js';
import { heldPieces, OverChunkInput, type ChunkRecords, type ChunkSource, type ContentCheck } from './chunkSource.js';

/** A chunk of the merged stream: its records in key order, and the merge's chunk that holds them. */
interface OrderedCut extends CutChunk {
  ordered: OrderedChunk;
}

const orderedOf = (chunk: CutChunk): OrderedChunk => (chunk as OrderedCut).ordered;

export interface OrderOptions {
  key: FileKey;
  /** Bytes of records per loaded chunk (the plan's chunk size). */
  chunkSizeBytes: number;
  /** Records per loaded chunk at most (the plan's chunkMaxRecords: MyRocks' row locks), when a count binds. */
  maxRecords?: number | undefined;
  /** Where the spill directory goes. */
  tmpdir: string;
  /** Names the spill directory; a rerun of the same job finds (and verifies) the runs it left. */
  jobId: string;
  /** Spill bytes the planner estimated: checked against the free space before anything is written. */
  needBytes: number;
  /** The plan sorts this input in memory (no runs, no spill directory). */
  inMemory?: boolean | undefined;
  /** Sort in memory in the process's sort worker: other loads (an export's tables) send chunks from this thread meanwhile. */
  aside?: boolean | undefined;
  /** The in-memory sort is done. */
  onSortedInMemory?: (records: number) => void;
  /** Each run as it is written (progress). */
  onRun?: (runs: number, records: number) => void;
  /** Every run written; `reused` of them were an interrupted run's, found intact. */
  onSorted?: (records: number, reused: number) => void;
  /** The load is interrupted (Ctrl-C): the sort stops between two runs, before anything was loaded. */
  signal?: AbortSignal | undefined;
}

/**
 * The input sorted by the clustered key (src/order): the file is cut into
 * chunks in file order (which also finds every record boundary before
 * anything is loaded), each sorted into a run in a spill directory, and the
 * runs merged into chunks whose key ranges are disjoint and adjacent — or,
 * when the plan says the input fits in memory, read whole and sorted in one
 * piece. Either way the same chunks, numbered the same, on every run of the
 * same job (the stored plan keeps the choice), so resume works by chunk as
 * for a file-order load.
 */
export class OrderedInput extends OverChunkInput implements ChunkSource {
  /** A chunk is made when it is pulled (merged from the runs, or gathered in memory): one ahead keeps a single stream fed. */
  readonly pullAhead = true;
  private spill: SpillDir | undefined;
  private memory: MemorySort | undefined;
  private unregister: (() => void) | undefined;
  private set: RunSet | undefined;
  private cuts: SortKey[] = [];
  private rangeCount = 0;
  /** How far the sort is, for the job row (progress()). */
  private sorting = false;
  private runs = 0;
  private sortedBytes = 0;

  constructor(
    /** The input cut in file order, into the chunks that become runs. */
    file: ChunkInput,
    private readonly key: KeyContext,
    private readonly o: OrderOptions,
  ) {
    super(file);
  }

  /** The input's counts, with the loaded chunks (key ranges) in place of the runs. */
  override get summary(): InputSummary | undefined {
    const s = this.file.summary;
    return s && { ...s, chunks: this.rangeCount };
  }

  async scan(verify?: ContentCheck): Promise<void> {
    const streamed = this.source.stream !== undefined && !this.o.inMemory;
    // A streamed input is cut and sorted into runs in one pass (below); a plain file is scanned whole first.
    if (!streamed) await this.file.scan(verify);
    this.sorting = true;
    if (this.o.inMemory) {
      this.memory = await this.sortInMemory();
      this.rangeCount = this.memory.spans.length;
      this.o.onSortedInMemory?.(this.memory.records);
      return;
    }
    this.spill = await SpillDir.open({ jobId: this.o.jobId, tmpdir: this.o.tmpdir, needBytes: this.o.needBytes });
    // The CLI handles Ctrl-C itself (chunks in flight finish, and may need the runs): remove the runs at exit only.
    this.unregister = cleanupOnExit(this.spill, []);
    const input = streamed ? undefined : await openPositional(this.source);
    const reader = input && {
      read: async (chunk: CutChunk, into: Buffer) => into.subarray(0, await readFully(input, into, 0, chunk.endByte - chunk.startByte, chunk.startByte)),
      close: () => input.close(),
    };
    let records = 0;
    let reused = 0;
    // The sparse index is what key ranges are cut at: several entries per loaded chunk, even small ones. Before a
    // streamed input's pass its record count is unknown: records of 256 bytes are assumed (more entries, not fewer).
    const s = this.file.summary;
    const perChunk = streamed ? this.o.chunkSizeBytes / 256 : s && s.records > 0 ? (this.o.chunkSizeBytes * s.records) / Math.max(1, s.totalBytes) : 1e9;
    const sparseEvery = Math.max(16, Math.min(DEFAULT_SPARSE_EVERY, Math.floor(perChunk / 8)));
    try {
      this.set = await generateRuns(interruptible(streamed ? this.file.streamChunks() : this.file.chunks(), this.o.signal), {
        key: this.key,
        spill: this.spill,
        read: reader?.read ?? unreadable,
        // Runs hold the bytes of the input they were sorted from: a rerun reuses them only for the same bytes, which
        // size, modification time and the first and last MiB (the job id) do not vouch for. A streamed input's hash
        // is known only after its pass: each of its runs is checked against the bytes it was sorted from instead.
        identity: `${this.o.jobId}:${streamed ? 'streamed' : (this.file.contentHash ?? '')}`,
        sparseEvery,
        onRun: (run, found) => {
          this.sortedBytes = Math.max(this.sortedBytes, run.chunk.endByte);
          if (found) reused++;
          this.o.onRun?.(++this.runs, (records += run.records));
        },
      });
    } finally {
      await reader?.close();
    }
    if (streamed) verify?.(this.file.contentHash);
    this.o.onSorted?.(records, reused);
    // The key ranges depend on the runs only, so a resumed run cuts the same chunks.
    if (this.o.maxRecords !== undefined) {
      this.cuts = await exactCuts(this.set, this.o.chunkSizeBytes, this.o.maxRecords);
      this.rangeCount = this.cuts.length + 1;
      return;
    }
    const ranges = await planRanges(this.set, this.o.chunkSizeBytes);
    this.rangeCount = ranges.length;
    this.cuts = ranges.slice(1).map((r) => r.lo!);
  }

  /** Scanning (a plain file's boundaries first), then sorting: in memory, or into how many runs, over how much of the input. */
  override progress(): Activity {
    if (!this.sorting) return this.file.progress();
    const totalBytes = this.source.stream ? null : this.source.sizeBytes;
    if (this.o.inMemory) return { kind: 'sorting', bytes: null, totalBytes, runs: null };
    return { kind: 'sorting', bytes: this.sortedBytes, totalBytes, runs: this.runs };
  }

  /** The whole input read into one buffer (the data records only) and sorted there. */
  private async sortInMemory(): Promise<MemorySort> {
    const list: CutChunk[] = [];
    for await (const c of this.file.chunks()) list.push(c);
    const first = list[0];
    const last = list[list.length - 1];
    const length = first && last ? last.endByte - first.startByte : 0;
    const records = list.reduce((n, c) => n + c.records, 0);
    const bytes = Buffer.allocUnsafeSlow(length + recordTerminator(this.key.fmt).length);
    if (first) {
      const fh = await openPositional(this.source);
      try {
        if ((await readFully(fh, bytes, 0, length, first.startByte)) !== length) {
          throw new FlatloadError('INPUT_MALFORMED', `the input changed while it was read: it ends before byte ${first.startByte + length}`, { file: this.source.path });
        }
      } finally {
        await fh.close();
      }
    }
    const origin = { startByte: first?.startByte ?? 0, firstLine: first?.firstLine ?? 1 };
    const args = [bytes, length, this.key, records, origin, this.o.chunkSizeBytes, this.o.maxRecords] as const;
    return this.o.aside ? sortAside(...args) : MemorySort.sort(...args);
  }

  async *chunks(): AsyncGenerator<CutChunk> {
    // Positions in the sorted stream: what the bookkeeping checks a resumed chunk against.
    let startByte = 0;
    let firstRecord = 0;
    for await (const ordered of this.sortedChunks()) {
      const chunk: OrderedCut = {
        index: ordered.index,
        startByte,
        endByte: startByte + ordered.bytes.length,
        // Records of a chunk come from anywhere in the file: their lines are in records().
        firstLine: 0,
        firstRecord,
        records: ordered.records,
        newlines: 0,
        ordered,
      };
      startByte = chunk.endByte;
      firstRecord += ordered.records;
      yield chunk;
    }
  }

  /** The sorted chunks, made one at a time as they are asked for. */
  private async *sortedChunks(): AsyncGenerator<OrderedChunk> {
    const memory = this.memory;
    if (memory) {
      for (let i = 0; i < memory.spans.length; i++) yield memory.chunk(i);
      return;
    }
    if (!this.set) throw new FlatloadError('INTERNAL', 'the ordered input was read before it was sorted');
    yield* mergeRuns(this.set, { targetBytes: this.o.chunkSizeBytes, cuts: this.cuts });
  }

  open(chunk: CutChunk, pieceBytes: number): Readable {
    return heldPieces(orderedOf(chunk), pieceBytes);
  }

  records(chunk: CutChunk): Promise<ChunkRecords> {
    return sentRecords(orderedOf(chunk));
  }

  async readAll(chunk: CutChunk): Promise<Buffer> {
    return orderedOf(chunk).bytes;
  }

  release(chunk: CutChunk): void {
    orderedOf(chunk).release();
  }

  /** The chunk's first and last key (the merge knows them exactly). */
  keyBounds(chunk: CutChunk): { lo: SortKey; hi: SortKey } {
    const o = orderedOf(chunk);
    return { lo: o.firstKey, hi: o.lastKey };
  }

  /** Removes the spill directory (the sorted runs), or lets the sorted copy go. */
  dispose(): void {
    this.memory = undefined;
    this.unregister?.();
    this.spill?.disposeSync();
  }
}

/** A sorted chunk's records in the order they are sent, with their lines and offsets in the input. */
export async function sentRecords(o: OrderedChunk): Promise<ChunkRecords> {
  const from = await o.locate();
  const records = Array.from({ length: o.records }, (_, i) => ({
    pos: o.pos[i]!,
    length: o.pos[i + 1]! - o.pos[i]!,
    offset: from.offsets[i]!,
    line: from.lines[i]!,
  }));
  return { bytes: o.bytes, records };
}

/**
 * Tests hold a sort while the file this names exists, from when it asks for its second chunk (its first is sorted
 * into a run meanwhile): status and kill tests act on a load that is certainly sorting.
 */
const HOLD_SORT = process.env['FLATLOAD_TEST_HOLD_SORT'];

/**
 * The chunks to sort, stopped between two once the load is interrupted: nothing is in the table yet, so Ctrl-C need
 * not wait for the whole input to be sorted (nor the plan's first statements run). Held for a test, see HOLD_SORT.
 */
async function* interruptible(chunks: AsyncIterable<CutChunk>, signal: AbortSignal | undefined): AsyncGenerator<CutChunk> {
  let n = 0;
  for await (const c of chunks) {
    if (n++ === 1 && HOLD_SORT) while (existsSync(HOLD_SORT) && !signal?.aborted) await sleep(50);
    if (signal?.aborted) throw new FlatloadError('INTERRUPTED', 'interrupted while the input was being sorted: nothing was loaded');
    yield c;
  }
}

/** A streamed input's chunks carry their bytes: none is read back. */
function unreadable(): Promise<Buffer> {
  return Promise.reject(new FlatloadError('INTERNAL', 'a chunk of a streamed input was read back by range'));
}

/**
 * Cut keys for chunks that must stay under a record count: planRanges'
 * ranges can hold several times their target (docs/ordering.md §2), so a
 * merge that counts gives each chunk's first key exactly, an extra pass
 * paid only when a count binds.
 */
async function exactCuts(set: RunSet, targetBytes: number, maxRecords: number): Promise<SortKey[]> {
  const cuts: SortKey[] = [];
  for await (const chunk of mergeRuns(set, { targetBytes, maxRecords })) {
    if (chunk.index > 0) cuts.push(chunk.firstKey);
    chunk.release();
  }
  return cuts;
}
