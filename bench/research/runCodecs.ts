/**
 * Codecs for the sorted runs' blocks: compression ratio and CPU-seconds per
 * GB (of uncompressed bytes) to compress and to decompress, over a file cut
 * into independent blocks as the run writer cuts a run (a run holds records
 * in key order, so give it a file sorted by key: fixtures/generate.ts
 * --sorted). No disk, no server: the file is read once into memory.
 *
 *   node --import tsx fixtures/generate.ts --table user_summary --rows 10M --sorted --out /tmp/us.tsv
 *   node --import tsx bench/research/runCodecs.ts /tmp/us.tsv [--block 65536] [--repeat 5] [--modules DIR]
 *
 * deflateRaw level 1 is node:zlib; lz4-napi and zstd-napi are tried from
 * --modules (a node_modules directory where they are installed) or from
 * the project's own dependencies, and skipped when absent.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { tuneRunContext, ZSTD_RUN_PARAMS, type ZstdNapi } from '../../src/order/codec.js';
import { median } from '../rounds.js';

interface Codec {
  name: string;
  compress(block: Buffer): Buffer | Promise<Buffer>;
  decompress(packed: Buffer, into: Buffer): number | Promise<number>;
}

type Lz4 = { compressSync(b: Buffer): Buffer; uncompressSync(b: Buffer): Buffer };
type AsyncZstd = { compress(b: Buffer, level: number): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };

function codecs(modules: string | undefined): Codec[] {
  const req = createRequire(modules ? join(modules, 'noop.js') : import.meta.url);
  const out: Codec[] = [
    {
      name: 'node:zlib deflateRaw level 1',
      compress: (b) => deflateRawSync(b, { level: 1 }),
      decompress: (p, into) => inflateRawSync(p, { info: false, finishFlush: constants.Z_SYNC_FLUSH }).copy(into),
    },
  ];
  try {
    const lz4 = req('lz4-napi') as Lz4;
    out.push({ name: 'lz4-napi (LZ4 block)', compress: (b) => lz4.compressSync(b), decompress: (p, into) => lz4.uncompressSync(p).copy(into) });
  } catch {
    process.stderr.write('lz4-napi not found: skipped\n');
  }
  try {
    const z = req('zstd-napi/binding') as ZstdNapi;
    for (const [level, tuned] of [[-1, false], [1, false], [1, true]] as const) {
      // As src/order/codec.ts uses it (tuned: with its parameters): one context each way, reused; decompressed straight into the reader's buffer.
      const dst = Buffer.allocUnsafe(z.compressBound(1 << 22));
      const cctx = new z.CCtx();
      cctx.setParameter(z.CParameter.compressionLevel, level);
      if (tuned) tuneRunContext(z, cctx);
      const dctx = new z.DCtx();
      out.push({
        name: `zstd-napi level ${level}${tuned ? ` ${Object.entries(ZSTD_RUN_PARAMS).map(([k, v]) => `${k} ${v}`).join(' ')}` : ''} (contexts reused)`,
        compress: (b) => Buffer.from(dst.subarray(0, cctx.compress2(dst, b))),
        decompress: (p, into) => dctx.decompress(into, p),
      });
    }
  } catch {
    process.stderr.write('zstd-napi not found: skipped\n');
  }
  try {
    type Coder = { encodeSync(b: Buffer): Buffer; decodeSync(b: Buffer): Buffer };
    const z = req('@toondepauw/node-zstd') as { Encoder: new (level: number) => Coder; Decoder: new () => Coder };
    for (const level of [1, 3]) {
      const enc = new z.Encoder(level);
      const dec = new z.Decoder();
      out.push({ name: `@toondepauw/node-zstd level ${level} (sync)`, compress: (b) => enc.encodeSync(b), decompress: (p, into) => dec.decodeSync(p).copy(into) });
    }
  } catch {
    process.stderr.write('@toondepauw/node-zstd not found: skipped\n');
  }
  try {
    const z = req('@mongodb-js/zstd') as AsyncZstd;
    out.push({ name: '@mongodb-js/zstd 1.x level 1 (async)', compress: (b) => z.compress(b, 1), decompress: async (p, into) => (await z.decompress(p)).copy(into) });
  } catch {
    process.stderr.write('@mongodb-js/zstd not found: skipped\n');
  }
  return out;
}

async function cpuSeconds(f: () => Promise<void>): Promise<number> {
  const t = process.cpuUsage();
  await f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1e6;
}

/** The median of xs and their spread, as "median [min–max]". */
function spread(xs: number[]): string {
  const mid = median(xs).toFixed(2);
  return xs.length === 1 ? mid : `${mid} [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
}

/** Each codec `rounds` times, the codecs taking turns within a round; CPU-seconds per GB as medians with their spread. */
export async function measure(data: Buffer, block: number, list: Codec[], rounds = 1): Promise<string[]> {
  const gb = data.length / 1e9;
  const rows = [`| codec (blocks of ${block} bytes) | ratio (packed / plain) | compress CPU s/GB | decompress CPU s/GB | both |`, '|---|---:|---:|---:|---:|'];
  const into = Buffer.allocUnsafe(block);
  const runs = list.map(() => ({ ratio: 0, comp: [] as number[], dec: [] as number[], both: [] as number[] }));
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of list.entries()) {
      const packed: Buffer[] = [];
      const comp = await cpuSeconds(async () => {
        for (let p = 0; p < data.length; p += block) packed.push(await c.compress(data.subarray(p, Math.min(data.length, p + block))));
      });
      let total = 0;
      for (const p of packed) total += p.length;
      let plain = 0;
      const dec = await cpuSeconds(async () => {
        for (const p of packed) plain += await c.decompress(p, into);
      });
      if (plain !== data.length) throw new Error(`${c.name}: decompressed ${plain} bytes of ${data.length}`);
      const r = runs[i]!;
      r.ratio = total / data.length;
      r.comp.push(comp / gb);
      r.dec.push(dec / gb);
      r.both.push((comp + dec) / gb);
    }
  }
  for (const [i, c] of list.entries()) {
    const r = runs[i]!;
    rows.push(`| ${c.name} | ${r.ratio.toFixed(3)} | ${spread(r.comp)} | ${spread(r.dec)} | ${spread(r.both)} |`);
  }
  return rows;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const file = args.find((a, i) => !a.startsWith('--') && (i === 0 || !args[i - 1]!.startsWith('--')));
  if (!file) throw new Error('usage: runCodecs.ts FILE [--block BYTES] [--repeat N] [--modules DIR]');
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const block = Number(opt('--block') ?? 65536);
  const rounds = Number(opt('--repeat') ?? 1);
  const data = readFileSync(file);
  const load = loadavg()[0]!.toFixed(2);
  const table = await measure(data, block, codecs(opt('--modules')), rounds);
  process.stdout.write(`${file}: ${data.length} bytes, ${rounds} round(s), load average ${load} at the start\n${table.join('\n')}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
