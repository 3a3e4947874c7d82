/**
 * CPU-seconds (user+sys) of ordering a tab-separated file by its first field
 * as an integer (the user_summary files of the benchmarks), with no server: the cut, the runs (one sort thread), the
 * merge into chunks of the key ranges of about 16 MiB a load plans (planRanges), whose sizes it prints too. Start-up
 * and module loading are not counted.
 *
 *   node --import tsx tools/order-cpu.ts FILE
 */
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { charsetInfo } from '../src/chunking/charsets.js';
import { cutChunks } from '../src/chunking/cut.js';
import type { KeyContext } from '../src/order/key.js';
import { mergeRuns } from '../src/order/merge.js';
import { fileChunkReader, generateRuns, runChunkBytes } from '../src/order/runs.js';
import { planRanges } from '../src/order/split.js';
import { SpillDir } from '../src/order/spillDir.js';

const file = process.argv[2];
if (!file) throw new Error('usage: node --import tsx tools/order-cpu.ts FILE');
const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const fmt = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const fields = 5;
const ctx: KeyContext = { spec: { fields: [0], numeric: [true] }, fmt, cs: charsetInfo('utf8mb4')!, targets: { fields, textField: [false, false, true, true, false] } }; // user_summary's columns
const dir = mkdtempSync(join(tmpdir(), 'flatload-order-cpu-'));
const size = statSync(file).size;
const seconds = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1e6;
try {
  const t0 = process.cpuUsage();
  const spill = await SpillDir.open({ jobId: 'order-cpu', tmpdir: dir });
  const chunks = cutChunks(createReadStream(file, { highWaterMark: 4 << 20 }) as AsyncIterable<Buffer>, {
    format: fmt,
    charset: ctx.cs,
    targets: ctx.targets,
    chunkSizeBytes: runChunkBytes(size, 64 << 20),
    maxRecordBytes: 1 << 20,
    ignoreLines: 0,
    stripBom: false,
    keepBytes: false,
    file,
  });
  const reader = await fileChunkReader(file);
  const set = await generateRuns(chunks, { key: ctx, spill, identity: 'order-cpu', read: reader.read });
  const runs = seconds(process.cpuUsage(t0));
  const target = 16 << 20;
  const cuts = (await planRanges(set, target)).slice(1).map((r) => r.lo!);
  let records = 0;
  const sizes: number[] = [];
  for await (const c of mergeRuns(set, { targetBytes: target, cuts })) {
    records += c.records;
    sizes.push(c.bytes.length / target);
    c.release();
  }
  sizes.sort((x, y) => x - y);
  const at = (q: number): string => (sizes[Math.min(sizes.length - 1, Math.floor(q * sizes.length))] ?? 0).toFixed(3);
  await reader.close();
  const all = seconds(process.cpuUsage(t0));
  console.log(`${records} records, ${(size / 1e9).toFixed(3)} GB: runs ${runs.toFixed(2)} s, merge ${(all - runs).toFixed(2)} s, ordering ${all.toFixed(2)} CPU-seconds (${(all / (size / 1e9)).toFixed(1)} per GB); ${set.runs.length} runs, ${sizes.length} chunks of the target x min ${at(0)}, median ${at(0.5)}, max ${at(1)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
