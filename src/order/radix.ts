/**
 * A stable LSD radix sort of 64-bit unsigned keys given as (hi, lo) 32-bit
 * halves: returns the permutation that orders them, ties in index order.
 * Four passes of 16 bits at most; a pass whose digit is the same for every
 * key is skipped (integer keys of a narrow range need two or three). The
 * keys travel with their indexes, so every pass reads sequentially. `hi`
 * and `lo` are used as working space (their contents are lost), and so are
 * the scratch arrays.
 */
import type { SortScratch } from './scratch.js';

const DIGIT_BITS = 16;
const BUCKETS = 1 << DIGIT_BITS;
const MASK = BUCKETS - 1;

export function radixSort64(hiIn: Uint32Array, loIn: Uint32Array, scratch: SortScratch): Uint32Array {
  const n = loIn.length;
  let idx = scratch.uint32('radix.idx', n);
  for (let i = 0; i < n; i++) idx[i] = i;
  if (n < 2) return idx;
  // Histograms of the four digits in one pass: lo low, lo high, hi low, hi high.
  const counts = new Uint32Array(4 * BUCKETS);
  for (let i = 0; i < n; i++) {
    const l = loIn[i]!;
    const h = hiIn[i]!;
    counts[l & MASK]!++;
    counts[BUCKETS + (l >>> 16)]!++;
    counts[2 * BUCKETS + (h & MASK)]!++;
    counts[3 * BUCKETS + (h >>> 16)]!++;
  }
  const needed = [0, 1, 2, 3].filter((d) => counts[d * BUCKETS + digitOf(d, loIn[0]!, hiIn[0]!)] !== n);
  if (needed.length === 0) return idx;
  const lastHiPass = Math.max(...needed);
  const moveHi = lastHiPass >= 2;
  let lo = loIn;
  let hi = hiIn;
  let lo2 = scratch.uint32('radix.lo', n);
  let hi2 = moveHi ? scratch.uint32('radix.hi', n) : hi;
  let idx2 = scratch.uint32('radix.idx2', n);
  for (const d of needed) {
    let sum = 0;
    const base = d * BUCKETS;
    for (let b = 0; b < BUCKETS; b++) {
      const c = counts[base + b]!;
      counts[base + b] = sum;
      sum += c;
    }
    // hi must travel until the last pass that reads it.
    const carryHi = d < lastHiPass && moveHi;
    const word = d < 2 ? lo : hi;
    const shift = (d & 1) * 16;
    for (let j = 0; j < n; j++) {
      const at = counts[base + ((word[j]! >>> shift) & MASK)]!++;
      lo2[at] = lo[j]!;
      if (carryHi) hi2[at] = hi[j]!;
      idx2[at] = idx[j]!;
    }
    [lo, lo2] = [lo2, lo];
    if (carryHi) [hi, hi2] = [hi2, hi];
    [idx, idx2] = [idx2, idx];
  }
  return idx;
}

function digitOf(d: number, l: number, h: number): number {
  const w = d < 2 ? l : h;
  return (w >>> ((d & 1) * 16)) & MASK;
}
