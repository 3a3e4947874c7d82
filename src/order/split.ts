import { compareKeys, type SortKey } from './key.js';
import type { RunSet } from './runs.js';

/** A key range [lo, hi) of the merged stream; undefined bounds are open. */
export interface KeyRange {
  index: number;
  lo: SortKey | undefined;
  hi: SortKey | undefined;
  /** Record bytes in the range, estimated from the sparse indexes (off by at most K records per run at each bound). */
  estimatedBytes: number;
}

interface Piece {
  key: SortKey;
  run: number;
  bytes: number;
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

async function quantiles(set: RunSet, parts: number): Promise<{ keys: SortKey[]; below: number[] }> {
  const pieces: Piece[] = [];
  for (let r = 0; r < set.runs.length; r++) {
    const index = await set.index(r);
    const end = set.runs[r]!.recordBytes;
    for (let e = 0; e < index.length; e++) {
      pieces.push({ key: index[e]!.key, run: r, bytes: (e + 1 < index.length ? index[e + 1]!.recPos : end) - index[e]!.recPos });
    }
  }
  pieces.sort((a, b) => compareKeys(a.key, b.key) || a.run - b.run);
  const total = pieces.reduce((a, p) => a + p.bytes, 0);
  const keys: SortKey[] = [];
  const below: number[] = [];
  let acc = 0;
  let q = 1;
  for (const p of pieces) {
    if (q >= parts) break;
    // A piece whose start is past the q-th quantile starts a range, unless its key is the previous bound
    // (equal keys never straddle) or the smallest key (the first range would be empty).
    if (acc >= (total * q) / parts) {
      const prev = keys[keys.length - 1];
      if (acc > 0 && (prev === undefined || compareKeys(p.key, prev) > 0) && compareKeys(p.key, pieces[0]!.key) > 0) {
        keys.push(p.key);
        below.push(acc);
      }
      while (q < parts && acc >= (total * q) / parts) q++;
    }
    acc += p.bytes;
  }
  return { keys, below };
}
