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
