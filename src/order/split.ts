import { compareKeys, type SortKey } from './key.js';
import type { RunSet } from './runs.js';
import type { SparseIndex } from './runFile.js';

/** A key range [lo, hi) of the merged stream; undefined bounds are open. */
export interface KeyRange {
  index: number;
  lo: SortKey | undefined;
  hi: SortKey | undefined;
  /** Record bytes in the range, estimated from the sparse indexes (off by at most K records per run at each bound). */
  estimatedBytes: number;
}

/**
 * Up to parts - 1 keys that cut the merged stream into `parts` ranges of
 * about equal bytes, strictly increasing, from the runs' sparse indexes
 * alone (no record is read): each index entry stands for the K records
 * after it in its run. A deterministic function of the runs, so a rerun of
 * the same job gets the same ranges.
 */
export async function splitKeys(set: RunSet, parts: number): Promise<SortKey[]> {
  return (await quantiles(set, parts)).keys;
}

/**
 * The merged stream as consecutive ranges of about targetBytes of records
 * each: merged one by one (mergeRuns with the range's lo/hi and one chunk
 * per range), they are chunks whose identity (index and key range) does not
 * depend on how many streams load them.
 */
export async function planRanges(set: RunSet, targetBytes: number): Promise<KeyRange[]> {
  const parts = Math.max(1, Math.ceil(set.recordBytes / Math.max(1, targetBytes)));
  const { keys, below } = await quantiles(set, parts);
  const total = set.recordBytes;
  const ranges: KeyRange[] = [];
  for (let i = 0; i <= keys.length; i++) {
    const start = i === 0 ? 0 : below[i - 1]!;
    const end = i === keys.length ? total : below[i]!;
    ranges.push({ index: i, lo: i === 0 ? undefined : keys[i - 1], hi: keys[i], estimatedBytes: end - start });
  }
  return ranges;
}

/**
 * Every sparse index entry of every run (a piece: the K records after it), in
 * key order, ties by run. Pieces are numbers into flat arrays, not objects:
 * a 200M-row input has 200,000 of them.
 */
async function sortedPieces(set: RunSet): Promise<{ order: number[]; run: Uint32Array; entry: Uint32Array; bytes: Float64Array; indexes: SparseIndex[] }> {
  const indexes: SparseIndex[] = [];
  for (let r = 0; r < set.runs.length; r++) indexes.push(await set.index(r));
  const n = indexes.reduce((a, x) => a + x.length, 0);
  const run = new Uint32Array(n);
  const entry = new Uint32Array(n);
  const bytes = new Float64Array(n);
  let i = 0;
  indexes.forEach((index, r) => {
    const end = set.runs[r]!.recordBytes;
    for (let e = 0; e < index.length; e++, i++) {
      run[i] = r;
      entry[i] = e;
      bytes[i] = (e + 1 < index.length ? index.recPos(e + 1) : end) - index.recPos(e);
    }
  });
  const cmp = (a: number, b: number): number => {
    const x = indexes[run[a]!]!;
    const y = indexes[run[b]!]!;
    const ea = entry[a]!;
    const eb = entry[b]!;
    return x.keys.compare(y.keys, y.keyStart(eb), y.keyEnd(eb), x.keyStart(ea), x.keyEnd(ea)) || run[a]! - run[b]!;
  };
  const order = Array.from({ length: n }, (_, j) => j).sort(cmp);
  return { order, run, entry, bytes, indexes };
}

async function quantiles(set: RunSet, parts: number): Promise<{ keys: SortKey[]; below: number[] }> {
  const { order, run, entry, bytes, indexes } = await sortedPieces(set);
  const keyOf = (i: number): SortKey => indexes[run[i]!]!.key(entry[i]!);
  const total = bytes.reduce((a, b) => a + b, 0);
  const keys: SortKey[] = [];
  const below: number[] = [];
  let acc = 0;
  let q = 1;
  for (const i of order) {
    if (q >= parts) break;
    // A piece whose start is past the q-th quantile starts a range, unless its key is the previous bound
    // (equal keys never straddle) or the smallest key (the first range would be empty).
    if (acc >= (total * q) / parts) {
      const prev = keys[keys.length - 1];
      const key = keyOf(i);
      if (acc > 0 && (prev === undefined || compareKeys(key, prev) > 0) && compareKeys(key, keyOf(order[0]!)) > 0) {
        keys.push(Buffer.from(key));
        below.push(acc);
      }
      while (q < parts && acc >= (total * q) / parts) q++;
    }
    acc += bytes[i]!;
  }
  return { keys, below };
}
