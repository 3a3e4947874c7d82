/**
 * A binary min-heap of small integers (run numbers) ordered by `less`,
 * which the merge supplies: k-way merging needs only top, replace-top
 * (siftDown after the top run advanced) and pop.
 */
export class IndexHeap {
  private readonly items: Int32Array;
  size = 0;

  constructor(
    capacity: number,
    private readonly less: (a: number, b: number) => boolean,
  ) {
    this.items = new Int32Array(Math.max(1, capacity));
  }

  get top(): number {
    return this.items[0]!;
  }

  push(x: number): void {
    const a = this.items;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(x, a[parent]!)) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = x;
  }

  /** Restores order after the top element's key grew. */
  siftDown(): void {
    const a = this.items;
    const n = this.size;
    const x = a[0]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.less(a[c + 1]!, a[c]!)) c++;
      if (!this.less(a[c]!, x)) break;
      a[i] = a[c]!;
      i = c;
    }
    a[i] = x;
  }

  pop(): void {
    this.size--;
    if (this.size > 0) {
      this.items[0] = this.items[this.size]!;
      this.siftDown();
    }
  }
}
