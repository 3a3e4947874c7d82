/** Copying a record's bytes, the step the sort and the merge repeat for every record. */

export function viewOf(b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.length);
}

/**
 * Copies src[s, e) to dst at pos. A short record goes by 4-byte words in JS,
 * cheaper than a native call's overhead; a long one by Buffer.copy
 * (docs/ordering.md#7-speed).
 */
export function copyRecord(src: Buffer, srcView: DataView, s: number, e: number, dst: Buffer, dstView: DataView, pos: number): void {
  const len = e - s;
  if (len > 128) {
    src.copy(dst, pos, s, e);
    return;
  }
  let k = 0;
  for (; k + 4 <= len; k += 4) dstView.setUint32(pos + k, srcView.getUint32(s + k, true), true);
  for (; k < len; k++) dst[pos + k] = src[s + k]!;
}

/** Records gathered at random go this many at a time: their bounds, then touchRecords, then the copies. */
export const GATHER_BATCH = 64;
/** Where the touching loads' sum goes, so they are not optimized away. */
let _touchSink = 0;

/**
 * Loads one byte at each end of records [from, from + m) (bounds starts[k],
 * stops[k]) before any is copied: the loads do not depend on one another, so
 * their cache misses overlap; one record at a time they came one after the
 * other (docs/ordering.md, where the CPU goes).
 */
export function touchRecords(bytes: Buffer, starts: Uint32Array, stops: Uint32Array, from: number, m: number): void {
  let touched = 0;
  for (let k = from; k < from + m; k++) touched += bytes[starts[k]!]! + bytes[stops[k]! - 1]!;
  _touchSink ^= touched;
}
