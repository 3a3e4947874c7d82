import { blockBytesOf, compressBlock } from '../order/codec.js';
import { putVarint } from '../order/runFile.js';

/**
 * How the sorted runs' codec shrinks the sample laid out as a run would be:
 * its records in blocks, then their meta entries (varint offset,
 * length, line) in a shuffled order, as a sort of unordered input leaves
 * them. Compressed bytes over raw bytes; undefined for an empty sample.
 */
export function sampleRunRatio(head: Buffer, records: ReadonlyArray<{ offset: number; length: number }>): number | undefined {
  if (records.length === 0) return undefined;
  const first = records[0]!.offset;
  const last = records[records.length - 1]!;
  const body = head.subarray(first, last.offset + last.length);
  const meta = Buffer.alloc(records.length * 15);
  let pos = 0;
  for (const i of shuffled(records.length)) {
    pos = putVarint(meta, pos, records[i]!.offset - first);
    pos = putVarint(meta, pos, records[i]!.length);
    pos = putVarint(meta, pos, i);
  }
  const raw = body.length + pos;
  return raw === 0 ? undefined : (packed(body, blockBytesOf('records')) + packed(meta.subarray(0, pos), blockBytesOf('meta'))) / raw;
}

function packed(section: Buffer, block: number): number {
  let n = 0;
  for (let p = 0; p < section.length; p += block) n += compressBlock(section.subarray(p, p + block)).length;
  return n;
}

/** 0..n-1 in a fixed pseudo-random order (the same sample always gives the same ratio). */
function shuffled(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  let s = 0x9e3779b9;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
  return a;
}
