/**
 * A stable LSD radix sort of 64-bit unsigned keys given as (hi, lo) 32-bit
 * halves: returns the permutation that orders them, ties in index order.
 * Four passes of 16 bits at most; a pass whose digit is the same for every
 * key is skipped (integer keys of a narrow range need two or three). The
 * low halves travel with their indexes, so a pass over them reads
 * sequentially; a high half is read where it is, through the permutation.
 * `hi` undefined: every key's high half is the same; `hi` is only read, and
 * may hold them in bytes (an in-memory sort's, offset to fit).
 * `lo` is used as working space (its contents are lost; the permutation may
 * be returned in it), and so are the scratch arrays.
 */
import type { SortScratch } from './scratch.js';

const DIGIT_BITS = 16;
const BUCKETS = 1 << DIGIT_BITS;
const MASK = BUCKETS - 1;

export function radixSort64(hiIn: Uint8Array | Uint32Array | undefined, loIn: Uint32Array, scratch: SortScratch): Uint32Array {
  const n = loIn.length;
  if (n < 2) return identityPermutation(scratch, n);
  const counts = histograms(hiIn, loIn);
  const needed = [0, 1, 2, 3].filter((d) => counts[d * BUCKETS + digitOf(d, loIn[0]!, hiIn?.[0] ?? 0)] !== n);
  if (needed.length === 0) return identityPermutation(scratch, n);
  // Arrays no longer read go back here and are written by a later pass: two arrays of 4 bytes per key besides the
  // halves, the permutation ending in one of them or in lo's (an in-memory sort holds the input beside them).
  const spare: Uint32Array[] = [];
  let made = 0;
  const take = (): Uint32Array => spare.pop() ?? scratch.uint32(`radix.${made++}`, n);
  let lo = loIn;
  // The first pass reads the identity permutation without an array for it.
  let idx: Uint32Array | undefined;
  for (let p = 0; p < needed.length; p++) {
    const d = needed[p]!;
    const base = prefixSums(counts, d);
    const shift = (d & 1) * 16;
    // The low halves move with the keys only for the pass over their high digit.
    const lo2 = d === 0 && needed[p + 1] === 1 ? take() : undefined;
    const out = take();
    if (d < 2) {
      for (let j = 0; j < n; j++) {
        const l = lo[j]!;
        const at = counts[base + ((l >>> shift) & MASK)]!++;
        if (lo2) lo2[at] = l;
        out[at] = idx ? idx[j]! : j;
      }
      spare.push(lo);
      if (lo2) lo = lo2;
    } else {
      // The high halves never move: each is read where its record started, through the permutation so far.
      const hi = hiIn!;
      for (let j = 0; j < n; j++) {
        const r = idx ? idx[j]! : j;
        const at = counts[base + ((hi[r]! >>> shift) & MASK)]!++;
        out[at] = r;
      }
    }
    if (idx) spare.push(idx);
    idx = out;
  }
  return idx!;
}

/** Digit d's counts turned into where each value's run starts; returns the digit's offset in counts. */
function prefixSums(counts: Uint32Array, d: number): number {
  const base = d * BUCKETS;
  let sum = 0;
  for (let b = 0; b < BUCKETS; b++) {
    const c = counts[base + b]!;
    counts[base + b] = sum;
    sum += c;
  }
  return base;
}

/** The four 16-bit digits' histograms in one pass: lo low, lo high, hi low, hi high. */
function histograms(hi: Uint8Array | Uint32Array | undefined, lo: Uint32Array): Uint32Array {
  const n = lo.length;
  const counts = new Uint32Array(4 * BUCKETS);
  for (let i = 0; i < n; i++) {
    const l = lo[i]!;
    counts[l & MASK]!++;
    counts[BUCKETS + (l >>> 16)]!++;
  }
  if (!hi) {
    counts[2 * BUCKETS] = n;
    counts[3 * BUCKETS] = n;
    return counts;
  }
  for (let i = 0; i < n; i++) {
    const h = hi[i]!;
    counts[2 * BUCKETS + (h & MASK)]!++;
    counts[3 * BUCKETS + (h >>> 16)]!++;
  }
  return counts;
}

/** The permutation that leaves n records where they are, in a scratch array. */
export function identityPermutation(scratch: SortScratch, n: number): Uint32Array {
  const idx = scratch.uint32('radix.0', n);
  for (let i = 0; i < n; i++) idx[i] = i;
  return idx;
}

function digitOf(d: number, l: number, h: number): number {
  const w = d < 2 ? l : h;
  return (w >>> ((d & 1) * 16)) & MASK;
}
