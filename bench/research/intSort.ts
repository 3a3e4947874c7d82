/**
 * Sorting one run's plain integer keys: the radix sort the run writer uses
 * (radixSort64 over the halves of key + 2^51, splitKey) against what it used before,
 * key and record number packed into one 64-bit value and sorted by
 * BigUint64Array's native sort. Both give the same permutation (by key, ties
 * in input order); it is checked on every round. CPU nanoseconds per key,
 * median of the rounds, in alternating order. No disk, no server.
 *
 *   node --import tsx bench/research/intSort.ts [--keys 450000] [--range 200000000] [--rounds 15]
 *
 * 450,000 keys is a 16 MiB run of user_summary rows; --range the spread of
 * the keys (user_id in the 200M-row file is below 2^28).
 */
import { parseArgs } from 'node:util';
import { endianness } from 'node:os';
import { radixSort64 } from '../../src/order/radix.js';
import { splitKey } from '../../src/order/sortChunk.js';
import { SortScratch } from '../../src/order/scratch.js';

const { values } = parseArgs({ options: { keys: { type: 'string' }, range: { type: 'string' }, rounds: { type: 'string' } } });
const n = Number(values.keys ?? 450_000);
const range = Number(values.range ?? 200_000_000);
const rounds = Number(values.rounds ?? 15);
const LOW_WORD = endianness() === 'LE' ? 0 : 1;
const scratch = new SortScratch();

function minOf(keys: Float64Array): number {
  let min = Number.POSITIVE_INFINITY;
  for (const k of keys) if (k < min) min = k;
  return min;
}

/** The sort before: (key - min) × 2^b + record in one 64-bit value, written over the keys. */
function packed(keys: Float64Array): Uint32Array {
  const min = minOf(keys);
  const ib = n <= 1 ? 1 : 32 - Math.clz32(n - 1);
  const words = new Uint32Array(keys.buffer, keys.byteOffset, 2 * n);
  const lowSpan = 2 ** (32 - ib);
  const recordSpan = 2 ** ib;
  for (let i = 0; i < n; i++) {
    const d = keys[i]! - min;
    const dl = d % lowSpan;
    words[2 * i + LOW_WORD] = dl * recordSpan + i;
    words[2 * i + 1 - LOW_WORD] = (d - dl) / lowSpan;
  }
  new BigUint64Array(keys.buffer, keys.byteOffset, n).sort();
  const perm = new Uint32Array(keys.buffer, keys.byteOffset, n);
  const mask = recordSpan - 1;
  for (let j = 0; j < n; j++) perm[j] = words[2 * j + LOW_WORD]! & mask;
  return perm;
}

/** The sort now: the run writer's own (a copy of its permutation: the scratch array is reused). */
function radix(keys: Float64Array): Uint32Array {
  const hi = scratch.uint32('hi', n);
  const lo = scratch.uint32('lo', n);
  for (let i = 0; i < n; i++) hi[i] = splitKey(keys[i]!, i, lo);
  return radixSort64(hi, lo, scratch).slice();
}

let seed = 42;
function keysOf(): Float64Array {
  const k = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    k[i] = seed % range;
  }
  return k;
}

const sorts = { packed, radix };
const times: Record<keyof typeof sorts, number[]> = { packed: [], radix: [] };
for (let r = 0; r < rounds; r++) {
  const keys = keysOf();
  const order: Array<keyof typeof sorts> = r % 2 === 0 ? ['packed', 'radix'] : ['radix', 'packed'];
  const perms: Partial<Record<keyof typeof sorts, Uint32Array>> = {};
  for (const name of order) {
    const copy = keys.slice();
    const t0 = process.cpuUsage();
    perms[name] = sorts[name](copy);
    const u = process.cpuUsage(t0);
    times[name].push(((u.user + u.system) * 1000) / n);
  }
  for (let j = 0; j < n; j++) if (perms.packed![j] !== perms.radix![j]) throw new Error(`round ${r}: the sorts disagree at ${j}`);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
console.log(`${n.toLocaleString('en-US')} keys below ${range.toLocaleString('en-US')}, ${rounds} rounds (the first of each warms up the JIT)`);
for (const name of Object.keys(sorts) as Array<keyof typeof sorts>) console.log(`${name.padEnd(7)} ${median(times[name]).toFixed(1)} ns per key [${spread(times[name])}]`);
console.log(`radix / packed: ${(median(times.radix) / median(times.packed)).toFixed(2)}`);
