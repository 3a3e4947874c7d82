/**
 * Large ArrayBuffers passed around instead of left to the collector: the
 * run sort's chunk buffers and working arrays, then the merge's output
 * chunks (which a consumer hands back with release()). Memory then stays at
 * what is in use at once, whatever the number of chunks.
 */
export class SlabPool {
  private readonly free: ArrayBuffer[] = [];

  constructor(
    /** Free slabs kept at most (beyond that, handed-back slabs go to the collector). */
    private readonly keep = 8,
  ) {}

  /**
   * A slab of at least `bytes`: the smallest free one that fits and is at
   * most twice as large (a chunk's bytes are not lent to its much smaller
   * record arrays, which would make the next chunk allocate its bytes again),
   * else a new one `spare` times as large (so it fits a slightly larger
   * request later), uninitialised.
   */
  take(bytes: number, spare = 1): ArrayBuffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i]!.byteLength;
      if (len >= bytes && len <= 2 * Math.max(bytes, 4096) && (best < 0 || len < this.free[best]!.byteLength)) best = i;
    }
    if (best >= 0) return this.free.splice(best, 1)[0]!;
    return Buffer.allocUnsafeSlow(Math.max(8, Math.ceil(bytes * spare))).buffer;
  }

  give(slab: ArrayBuffer): void {
    if (this.free.length < this.keep) this.free.push(slab);
  }

  /** Bytes held by free slabs. */
  get freeBytes(): number {
    return this.free.reduce((a, s) => a + s.byteLength, 0);
  }
}

/**
 * Named working arrays reused from chunk to chunk (sized by the largest
 * chunk, with 3% to spare), taken from a pool and given back by release().
 */
export class SortScratch {
  private readonly slabs = new Map<string, ArrayBuffer>();

  constructor(readonly pool = new SlabPool()) {}

  private slab(name: string, bytes: number): ArrayBuffer {
    let s = this.slabs.get(name);
    if (!s || s.byteLength < bytes) {
      if (s) this.pool.give(s);
      s = this.pool.take(bytes, 1.03);
      this.slabs.set(name, s);
    }
    return s;
  }

  uint32(name: string, n: number): Uint32Array {
    return new Uint32Array(this.slab(name, 4 * n), 0, n);
  }

  uint8(name: string, n: number): Uint8Array {
    return new Uint8Array(this.slab(name, n), 0, n);
  }

  buffer(name: string, n: number): Buffer {
    return Buffer.from(this.slab(name, n), 0, n);
  }

  /** Gives one array back to the pool, for the next array asked for to reuse. */
  drop(name: string): void {
    const s = this.slabs.get(name);
    if (!s) return;
    this.slabs.delete(name);
    this.pool.give(s);
  }

  /**
   * Gives every array back to the pool, but those on `kept` memory (a result that outlives the sort) and those of
   * a size `wanted` refuses (left to the collector).
   */
  release(kept: ArrayBufferLike[] = [], wanted = (_bytes: number): boolean => true): void {
    for (const s of this.slabs.values()) if (!kept.includes(s) && wanted(s.byteLength)) this.pool.give(s);
    this.slabs.clear();
  }
}
