/** Copying a record's bytes, the step the sort and the merge repeat for every record. */

export function viewOf(b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.length);
}

/**
 * Copies src[s, e) to dst at pos. A short record goes by 4-byte words in JS,
 * cheaper than a native call's overhead; a long one by Buffer.copy
 * (docs/ordering.md#7-speed). The last 8 bytes go as two words that may
 * overlap the ones before, rather than byte by byte.
 */
export function copyRecord(src: Buffer, srcView: DataView, s: number, e: number, dst: Buffer, dstView: DataView, pos: number): void {
  const len = e - s;
  if (len > 128) {
    src.copy(dst, pos, s, e);
    return;
  }
  if (len < 8) {
    for (let k = 0; k < len; k++) dst[pos + k] = src[s + k]!;
    return;
  }
  for (let k = 0; k < len - 8; k += 8) {
    dstView.setInt32(pos + k, srcView.getInt32(s + k, true), true);
    dstView.setInt32(pos + k + 4, srcView.getInt32(s + k + 4, true), true);
  }
  const end = pos + len;
  dstView.setInt32(end - 8, srcView.getInt32(e - 8, true), true);
  dstView.setInt32(end - 4, srcView.getInt32(e - 4, true), true);
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
