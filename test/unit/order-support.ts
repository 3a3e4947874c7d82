/**
 * Helpers for the ordering tests (not a test file itself): sorting an
 * in-memory input through cutChunks, generateRuns and mergeRuns in a
 * temporary spill directory, and the reference order to check against.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { cutChunks } from '../../src/chunking/cut.js';
import { locateRecords } from '../../src/chunking/records.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import type { CutChunk } from '../../src/chunking/types.js';
import { compareKeys, keyReader, recordKey, type KeyContext, type KeySpec, type SortKey } from '../../src/order/key.js';
import { collect, mergeRuns, type MergeOptions, type OrderedChunk } from '../../src/order/merge.js';
import type { RunInfo } from '../../src/order/manifest.js';
import { generateRuns, type RunSet } from '../../src/order/runs.js';
import { SpillDir } from '../../src/order/spillDir.js';
import { generateLines } from '../../fixtures/generate.js';
import { blocksOf } from './chunking-support.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
export const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
export const CSV: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c };
const utf8 = charsetInfo('utf8mb4')!;

export function keyContext(fmt: ScanFormat, spec: KeySpec, fields: number): KeyContext {
  return { spec, fmt, cs: utf8, targets: { fields, textField: Array.from({ length: fields }, () => true) } };
}

export const userSummary = (rows: number, seed: number, format: 'tsv' | 'csv' = 'tsv'): Buffer =>
  Buffer.concat([...generateLines({ table: 'user_summary', rows, seed, format, awkward: format === 'csv' })]);

// user_summary: user_id, weight, level, beat_rate, level_num
export const BY_ID = { fields: [0], numeric: [true] };
export const BY_LEVEL_NUM = { fields: [4], numeric: [true] }; // 100 distinct values: many ties
const BY_LEVEL_THEN_ID = { fields: [2, 0], numeric: [false, true] };

export interface Scenario {
  name: string;
  input: Buffer;
  ctx: KeyContext;
  chunkBytes: number;
  targetBytes: number;
  stream?: boolean;
}

/** Inputs every way of ordering must get right: both key paths, ties, quotes and newlines in fields, an unterminated last record. */
export const SCENARIOS: Scenario[] = [
  { name: 'tsv by user_id (fast path)', input: userSummary(20_000, 1), ctx: keyContext(TSV, BY_ID, 5), chunkBytes: 64 << 10, targetBytes: 100 << 10 },
  { name: 'tsv by level_num (ties)', input: userSummary(20_000, 2), ctx: keyContext(TSV, BY_LEVEL_NUM, 5), chunkBytes: 50 << 10, targetBytes: 30 << 10 },
  {
    name: 'tsv by a small integer (fast path, many ties)',
    input: Buffer.from(Array.from({ length: 30_000 }, (_, i) => `${(i * 7919) % 101}\trow ${i}\n`).join('')),
    ctx: keyContext(TSV, BY_ID, 2),
    chunkBytes: 40 << 10,
    targetBytes: 30 << 10,
  },
  { name: 'tsv by (level, user_id) (general path)', input: userSummary(10_000, 3), ctx: keyContext(TSV, BY_LEVEL_THEN_ID, 5), chunkBytes: 40 << 10, targetBytes: 64 << 10 },
  { name: 'awkward csv by user_id, as a stream', input: userSummary(10_000, 4, 'csv'), ctx: keyContext(CSV, BY_ID, 5), chunkBytes: 48 << 10, targetBytes: 40 << 10, stream: true },
  { name: 'awkward csv by level (text with quotes, newlines)', input: userSummary(8_000, 5, 'csv'), ctx: keyContext(CSV, { fields: [2], numeric: [false] }, 5), chunkBytes: 32 << 10, targetBytes: 20 << 10 },
  {
    name: 'fast and general runs mixed, last record unterminated',
    input: Buffer.concat([userSummary(6_000, 6), Buffer.from('\\N\tx\ty\tz\t1\n+15000000000\ta\tb\tc\t2\n13000000001\tlast\tx\ty\t3')]),
    ctx: keyContext(TSV, BY_ID, 5),
    chunkBytes: 20 << 10,
    targetBytes: 25 << 10,
  },
];

/** A temporary directory, removed with the others after the file's tests. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'flatload-order-test-'));
  made.push(d);
  return d;
}

const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export interface SortedInput {
  set: RunSet;
  spill: SpillDir;
  /** Chunks whose bytes the sort read (plain-file mode). */
  reads: number[];
  /** Runs reported as reused. */
  reused: number[];
}

export interface SortOptions {
  chunkBytes: number;
  /** Chunks carry their bytes, as from a stream. */
  stream?: boolean;
  identity?: string;
  sparseEvery?: number;
  jobId?: string;
  workers?: number;
}

async function* asyncBlocks(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (const x of blocksOf(data, size)) yield x;
}

/** Runs an input through the chunk cutter and generateRuns into a spill directory under `dir`. */
export async function sortInput(input: Buffer, ctx: KeyContext, dir: string, o: SortOptions): Promise<SortedInput> {
  const spill = await SpillDir.open({ jobId: o.jobId ?? 'job', tmpdir: dir });
  const reads: number[] = [];
  const reused: number[] = [];
  const chunks: AsyncIterable<CutChunk> = cutChunks(asyncBlocks(input, 4096), {
    format: ctx.fmt,
    charset: ctx.cs,
    targets: ctx.targets,
    chunkSizeBytes: o.chunkBytes,
    maxRecordBytes: 1 << 20,
    ignoreLines: 0,
    stripBom: false,
    keepBytes: o.stream === true,
    file: 'input',
  });
  const set = await generateRuns(chunks, {
    key: ctx,
    spill,
    identity: o.identity ?? 'test',
    sparseEvery: o.sparseEvery ?? 16,
    workers: o.workers,
    read: async (c, into) => {
      reads.push(c.index);
      return into.subarray(0, input.copy(into, 0, c.startByte, c.endByte));
    },
    onRun: (run: RunInfo, wasReused: boolean) => {
      if (wasReused) reused.push(run.chunk.index);
    },
  });
  return { set, spill, reads, reused };
}

export function merge(set: RunSet, opts: MergeOptions): Promise<OrderedChunk[]> {
  return collect(mergeRuns(set, opts));
}

/** A record of the merged stream: where it came from and its key. */
export interface Located {
  offset: number;
  line: number;
  bytes: Buffer;
  key: SortKey;
}

/** Every record of the chunks, in order, with its origin (located from the runs) and its key. */
export async function flatten(chunks: OrderedChunk[], ctx: KeyContext): Promise<Located[]> {
  const out: Located[] = [];
  const r = keyReader(ctx);
  for (const c of chunks) {
    const { offsets, lines } = await c.locate();
    for (let i = 0; i < c.records; i++) {
      const bytes = c.bytes.subarray(c.pos[i], c.pos[i + 1]);
      out.push({ offset: offsets[i]!, line: lines[i]!, bytes, key: recordKey(bytes, 0, bytes.length, r) });
    }
  }
  return out;
}

/** The input's records stably sorted by the one comparator: what the merged stream must be. */
export function reference(input: Buffer, ctx: KeyContext): Array<{ offset: number; line: number; length: number; key: SortKey }> {
  const r = keyReader(ctx);
  const recs = locateRecords(input, 0, 1, ctx.fmt, ctx.cs, ctx.targets).map((x) => ({ ...x, key: recordKey(input, x.offset, x.offset + x.length, r) }));
  return recs.map((x, i) => ({ x, i })).sort((p, q) => compareKeys(p.x.key, q.x.key) || p.i - q.i).map((p) => p.x);
}
