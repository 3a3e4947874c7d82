#!/usr/bin/env node
/**
 * Ordering by the clustered key, alone (no server): flatload's run
 * generation and merge against GNU sort on the same generated user_summary
 * file, in one run, rotating the order, median of the repeats; each case in
 * a fresh process under GNU time (wall, CPU, peak RSS).
 *
 *   npm run build:dev && node dist/bench/research/order.js [--rows 3000000,5000000] [--repeat 3] [--chunk-mib 64] [--target-mib 64]
 *
 * The merge is timed as a loader would drive it: every chunk is built,
 * handed over and released, nothing else (a loader at 600k rows/s needs it
 * to run well above that). `--workers 0` is the in-memory sort of an input
 * within --sort-memory: the same boundary scan, then the whole file read and
 * sorted in one piece ("run generation"), then its chunks handed over ("merge").
 */
import { FlatloadError } from '../../src/errors/index.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateToFile } from '../../fixtures/generate.js';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { cutChunks } from '../../src/chunking/cut.js';
import type { CutChunk } from '../../src/chunking/types.js';
import { fileChunkReader, generateRuns, mergeRuns, SpillDir, type KeyContext, type OrderedChunk } from '../../src/order/index.js';
import { MemorySort } from '../../src/order/memorySort.js';
import { readAt } from '../../src/order/runFile.js';
import { recordTerminator } from '../../src/order/sortChunk.js';

interface ChildResult {
  runsSeconds: number;
  mergeSeconds: number;
  runsCpu: number;
  mergeCpu: number;
  /** Peak RSS once the runs were written (MiB). */
  runsPeakRssMiB: number;
  records: number;
  chunks: number;
  runs: number;
  spillBytes: number;
}

interface Timed {
  wall: number;
  cpu: number;
  peakRssMiB: number;
  stdout: string;
}

const BLOCK = 4 << 20;

/** The bench's own child: order one file, print what it measured. */
async function child(file: string, chunkMiB: number, targetMiB: number, workers: number, spillParent: string): Promise<void> {
  const ctx: KeyContext = {
    spec: { fields: [0], numeric: [true] },
    fmt: { fieldTerm: Buffer.from('\t'), lineTerm: Buffer.from('\n'), enclosure: -1, escape: 0x5c },
    cs: charsetInfo('utf8mb4')!,
    targets: { fields: 5, textField: [false, true, true, true, false] },
  };
  // Blocks as the loader reads a plain file for its boundary scan.
  async function* blocks(): AsyncGenerator<Buffer> {
    const fh = await open(file, 'r');
    try {
      for (let pos = 0; ; ) {
        const buf = Buffer.allocUnsafe(BLOCK);
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
      }
    } finally {
      await fh.close();
    }
  }
  const spill = await SpillDir.open({ jobId: `bench-${process.pid}`, tmpdir: spillParent });
  const reader = await fileChunkReader(file);
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const chunks = cutChunks(blocks(), {
      format: ctx.fmt,
      charset: ctx.cs,
      targets: ctx.targets,
      chunkSizeBytes: chunkMiB << 20,
      maxRecordBytes: 1 << 20,
      ignoreLines: 0,
      stripBom: false,
      keepBytes: false,
      file,
    });
    if (workers === 0) return await inMemory(file, chunks, ctx, targetMiB, cpu0, t0);
    const set = await generateRuns(chunks, { key: ctx, spill, read: reader.read, identity: 'bench', workers });
    await handOver(mergeRuns(set, { targetBytes: targetMiB << 20 }), { t0, cpu0 }, set.runs.length, set.spillBytes);
  } finally {
    await reader.close();
    await spill.dispose();
  }
}

/** The in-memory sort as OrderedInput drives it: boundary scan, one read, one sort, the chunks. */
async function inMemory(file: string, chunks: AsyncIterable<CutChunk>, ctx: KeyContext, targetMiB: number, cpu0: NodeJS.CpuUsage, t0: number): Promise<void> {
  let records = 0;
  for await (const c of chunks) records += c.records;
  const size = statSync(file).size;
  const bytes = Buffer.allocUnsafeSlow(size + recordTerminator(ctx.fmt).length);
  const fh = await open(file, 'r');
  try {
    await readAt(fh, bytes, 0, size, 0);
  } finally {
    await fh.close();
  }
  const sorted = MemorySort.sort(bytes, size, ctx, records, { startByte: 0, firstLine: 1 }, targetMiB << 20, undefined);
  await handOver((function* () {
    for (let i = 0; i < sorted.spans.length; i++) yield sorted.chunk(i);
  })(), { t0, cpu0 }, 0, 0);
}

/** Hands every chunk over (each released at once) after the sort that began at t0, and prints what was measured. */
async function handOver(chunks: AsyncIterable<OrderedChunk> | Iterable<OrderedChunk>, from: { t0: number; cpu0: NodeJS.CpuUsage }, runs: number, spillBytes: number): Promise<void> {
  const t1 = performance.now();
  const cpu1 = process.cpuUsage(from.cpu0);
  const runsPeakRssMiB = process.resourceUsage().maxRSS / 1024;
  let records = 0;
  let n = 0;
  for await (const c of chunks) {
    records += c.records;
    n++;
    c.release();
  }
  const t2 = performance.now();
  const cpu2 = process.cpuUsage(from.cpu0);
  const result: ChildResult = {
    runsSeconds: (t1 - from.t0) / 1000,
    mergeSeconds: (t2 - t1) / 1000,
    runsCpu: (cpu1.user + cpu1.system) / 1e6,
    mergeCpu: (cpu2.user + cpu2.system - cpu1.user - cpu1.system) / 1e6,
    runsPeakRssMiB,
    records,
    chunks: n,
    runs,
    spillBytes,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Runs a command under GNU time: wall seconds, user+system CPU seconds, peak RSS. */
function timed(cmd: string, args: string[]): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const p = spawn('/usr/bin/time', ['-f', '@@%e %U %S %M', cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => {
      const m = /@@([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
      if (code !== 0 || !m) return reject(new FlatloadError('INTERNAL', `${cmd} ${args.join(' ')} failed (${code}): ${stderr.slice(-500)}`));
      resolve({ wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), peakRssMiB: Number(m[4]) / 1024, stdout });
    });
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '3000000,5000000' },
      repeat: { type: 'string', default: '3' },
      'chunk-mib': { type: 'string', default: '64' },
      'target-mib': { type: 'string', default: '64' },
      workers: { type: 'string', default: '1,2' },
      child: { type: 'string' },
      spill: { type: 'string' },
    },
  });
  const chunkMiB = Number(values['chunk-mib']);
  const targetMiB = Number(values['target-mib']);
  if (values.child) return child(values.child, chunkMiB, targetMiB, Number(values.workers), values.spill ?? tmpdir());
  const workerCounts = values.workers.split(',').map(Number);

  const self = fileURLToPath(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'flatload-order-bench-'));
  try {
    for (const rows of values.rows.split(',').map(Number)) {
      const file = join(dir, `user_summary_${rows}.tsv`);
      await generateToFile(file, { table: 'user_summary', rows, seed: 1 });
      const size = statSync(file).size;
      const sortName = 'GNU sort -n -k1,1';
      const cases: Array<{ name: string; run: () => Promise<Timed> }> = [
        ...workerCounts.map((w) => ({
          name: w === 0 ? 'flatload, in memory' : `flatload, ${w} sort thread${w > 1 ? 's' : ''}`,
          run: () => timed(process.execPath, [self, '--child', file, '--chunk-mib', String(chunkMiB), '--target-mib', String(targetMiB), '--workers', String(w), '--spill', dir]),
        })),
        { name: sortName, run: () => timed('sort', ['-n', '-k1,1', '-t', '\t', '-T', dir, '-o', join(dir, 'sorted.tsv'), file]) },
      ];
      const results = new Map<string, Timed[]>(cases.map((c) => [c.name, []]));
      const reps = Number(values.repeat);
      for (let r = 0; r < reps; r++) {
        for (let i = 0; i < cases.length; i++) {
          const c = cases[(i + r) % cases.length]!;
          results.get(c.name)!.push(await c.run());
        }
      }
      rmSync(join(dir, 'sorted.tsv'), { force: true });
      const s = results.get(sortName)!;
      const sortWall = median(s.map((t) => t.wall));
      const sortCpu = median(s.map((t) => t.cpu));
      const out = [`${rows.toLocaleString('en-US')} user_summary rows, ${(size / 1e6).toFixed(1)} MB, runs of ${chunkMiB} MiB, chunks of ${targetMiB} MiB; median of ${reps}:`];
      for (const c of cases) {
        const f = results.get(c.name)!;
        const wall = median(f.map((t) => t.wall));
        const cpu = median(f.map((t) => t.cpu));
        const rss = median(f.map((t) => t.peakRssMiB));
        if (c.name === sortName) {
          out.push(`  ${c.name}: wall ${wall.toFixed(2)} s, CPU ${cpu.toFixed(2)} s, peak RSS ${rss.toFixed(0)} MiB`);
          continue;
        }
        const k = f.map((t) => JSON.parse(t.stdout) as ChildResult);
        const mergeS = median(k.map((x) => x.mergeSeconds));
        out.push(
          `  ${c.name}: run generation ${median(k.map((x) => x.runsSeconds)).toFixed(2)} s (CPU ${median(k.map((x) => x.runsCpu)).toFixed(2)} s), ` +
            `merge ${mergeS.toFixed(2)} s (CPU ${median(k.map((x) => x.mergeCpu)).toFixed(2)} s, ${Math.round(rows / mergeS).toLocaleString('en-US')} rows/s); ` +
            `process wall ${wall.toFixed(2)} s (${(wall / sortWall).toFixed(2)}x sort), CPU ${cpu.toFixed(2)} s (${(cpu / sortCpu).toFixed(2)}x sort), ` +
            `peak RSS ${median(k.map((x) => x.runsPeakRssMiB)).toFixed(0)} MiB after the runs, ${rss.toFixed(0)} MiB in all; ` +
            `${k[0]!.runs} runs, ${k[0]!.chunks} chunks, spill ${(k[0]!.spillBytes / 1e6).toFixed(1)} MB`,
        );
      }
      process.stdout.write(`${out.join('\n')}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
