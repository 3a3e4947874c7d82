/**
 * Reads a whole input in blocks for one pass over it (the boundary scan).
 * Two buffers are read into in turn instead of a fresh one per block: a fresh
 * 4 MiB buffer is a fresh mapping the kernel must fault in and zero, which
 * made reading a 33 MB file from the page cache take 80-120 ms instead of
 * 5-20 ms, and the scan of the first table is on the path to the first row.
 */

/** Reads into buf[0, buf.length) from byte `position`; resolves to the bytes read (0 at the end). */
export type ReadAt = (buf: Buffer, position: number) => Promise<number>;

/**
 * The input's blocks in order. A block stays valid until the block after the
 * next one is read (its memory is then reused): a consumer may carry a view
 * of one block over to the next, as cutChunks does with a record's start,
 * but must copy whatever it keeps longer. Each block is a new view, so a
 * cache keyed on the Buffer object never mistakes one block for another.
 */
export async function* blocksInTurn(read: ReadAt, blockBytes: number, onRead?: (position: number) => void): AsyncGenerator<Buffer> {
  // The second buffer only once a second block is read: a file of up to one block needs one.
  const buffers: Array<Buffer | undefined> = [undefined, undefined];
  let position = 0;
  for (let turn = 0; ; turn ^= 1) {
    const buf = (buffers[turn] ??= Buffer.allocUnsafe(blockBytes));
    const n = await read(buf, position);
    if (n === 0) return;
    position += n;
    onRead?.(position);
    yield buf.subarray(0, n);
  }
}
