/**
 * CPU per GB of the digests a load could take of every input byte, in
 * memory (no disk, no server): SHA-256 and SHA-1 from Node's OpenSSL, BLAKE3
 * through the binding the loader uses (src/input/digest.ts), over ~256 MB of
 * generated user_summary-like TSV fed in the scan's 4 MiB blocks. Rounds
 * rotate the order; each digest's median and spread are printed with the
 * 1-minute load average at each round's start (docs/benchmarks.md#the-quiet-machine-rule).
 *
 *   npm run build:dev && node dist/bench/research/digests.js [--repeat 5] [--megabytes 256] [--no-wait]
 */
import { createHash } from 'node:crypto';
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import { generateLines } from '../../fixtures/generate.js';
import { contentDigest } from '../../src/input/digest.js';
import { QuietSession } from '../quiet.js';

const BLOCK = 4 << 20;

const DIGESTS: Record<string, () => { update(b: Uint8Array): unknown }> = {
  'SHA-256 (node:crypto)': () => createHash('sha256'),
  'SHA-1 (node:crypto)': () => createHash('sha1'),
  'BLAKE3 (@napi-rs/blake-hash)': () => contentDigest('blake3'),
};

function input(megabytes: number): Buffer {
  const pattern = Buffer.concat([...generateLines({ table: 'user_summary', rows: 100_000, seed: 1 })]);
  const out = Buffer.allocUnsafe(megabytes << 20);
  for (let at = 0; at < out.length; at += pattern.copy(out, at));
  return out;
}

/** CPU seconds (user + system) of one pass over `bytes`, in BLOCK pieces. */
function cpuOf(make: () => { update(b: Uint8Array): unknown }, bytes: Buffer): number {
  const h = make();
  const t0 = process.cpuUsage();
  for (let at = 0; at < bytes.length; at += BLOCK) h.update(bytes.subarray(at, at + BLOCK));
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1e6;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function main(argv: string[]): Promise<void> {
  const arg = (name: string, dflt: number): number => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : dflt;
  };
  const repeat = arg('--repeat', 5);
  const bytes = input(arg('--megabytes', 256));
  const names = Object.keys(DIGESTS);
  for (const n of names) cpuOf(DIGESTS[n]!, bytes.subarray(0, BLOCK * 4)); // warm up
  const quiet = new QuietSession();
  quiet.waitSeconds = argv.includes('--no-wait') ? 0 : 300;
  const perGb: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const loads: number[] = [];
  for (let round = 0; round < repeat; round++) {
    loads.push(await quiet.quietStart(`round ${round + 1}`));
    for (let k = 0; k < names.length; k++) {
      const n = names[(round + k) % names.length]!;
      perGb[n]!.push(cpuOf(DIGESTS[n]!, bytes) / (bytes.length / 1e9));
    }
  }
  console.log(`${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${(bytes.length / 1e6).toFixed(0)} MB in ${BLOCK >> 20} MiB blocks, ${repeat} rotating rounds, 1-minute load average at the rounds' starts ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`);
  console.log('\n| digest | CPU s per GB, median [min–max] |\n|---|---:|');
  for (const n of names) {
    const xs = perGb[n]!;
    console.log(`| ${n} | ${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}] |`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
