/**
 * The merge's queue of runs: which run holds the smallest current record,
 * ties to the earlier run (so equal keys keep input order). After the top
 * run moves to its next record, or ends, the merge calls advanced().
 */
export interface RunQueue {
  readonly top: number;
  readonly empty: boolean;
  advanced(ended: boolean): void;
}

/**
 * A binary min-heap of small integers (run numbers) ordered by `less`,
 * which the merge supplies: k-way merging needs only top, replace-top
 * (siftDown after the top run advanced) and pop. For keys compared as bytes.
 */
export class IndexHeap implements RunQueue {
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

  get empty(): boolean {
    return this.size === 0;
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

  advanced(ended: boolean): void {
    if (ended) this.pop();
    else this.siftDown();
  }
}

/**
 * A tournament tree of losers over k runs keyed by numbers (plain integer
 * keys): one comparison per level, log2 k per record, where a heap makes
 * two per level and calls a comparator for each. Run r is leaf k + r; node
 * n > 0 holds the loser of the match below it, node 0 the winner. A run
 * that ended has key +Infinity (integer keys are finite).
 */
export class LoserTree implements RunQueue {
  private readonly tree: Int32Array;
  private readonly keys: Float64Array;
  private live: number;

  constructor(
    private readonly k: number,
    /** Run r's current key, read when r is the top and advanced; undefined when r has no record. */
    private readonly keyOf: (r: number) => number | undefined,
  ) {
    this.tree = new Int32Array(Math.max(1, k));
    this.keys = new Float64Array(k);
    this.live = 0;
    for (let r = 0; r < k; r++) {
      const key = keyOf(r);
      this.keys[r] = key ?? Number.POSITIVE_INFINITY;
      if (key !== undefined) this.live++;
    }
    const winner = new Int32Array(2 * k);
    for (let r = 0; r < k; r++) winner[k + r] = r;
    for (let n = k - 1; n >= 1; n--) {
      const a = winner[2 * n]!;
      const b = winner[2 * n + 1]!;
      const aWins = this.less(a, b);
      winner[n] = aWins ? a : b;
      this.tree[n] = aWins ? b : a;
    }
    this.tree[0] = k > 1 ? winner[1]! : 0;
  }

  get top(): number {
    return this.tree[0]!;
  }

  get empty(): boolean {
    return this.live === 0;
  }

  /** The top run's key (+Infinity when every run ended). */
  get topKey(): number {
    return this.keys[this.tree[0]!]!;
  }

  advanced(ended: boolean): void {
    this.replace(ended ? Number.POSITIVE_INFINITY : this.keyOf(this.tree[0]!)!);
  }

  /** The top run moved to a record with this key (+Infinity: it ended); the merge's hot path, which knows the key. */
  replace(key: number): void {
    const tree = this.tree;
    const keys = this.keys;
    let w = tree[0]!;
    if (key === Number.POSITIVE_INFINITY) this.live--;
    keys[w] = key;
    for (let n = (w + this.k) >> 1; n >= 1; n >>= 1) {
      const l = tree[n]!;
      const y = keys[l]!;
      const x = keys[w]!;
      // Without branches (which random keys mispredict half the time): m is all ones when l wins, and swaps l and w.
      const m = -(+(y < x) | (+(y === x) & +(l < w)));
      const d = (l ^ w) & m;
      tree[n] = l ^ d;
      w ^= d;
    }
    tree[0] = w;
  }

  private less(a: number, b: number): boolean {
    const x = this.keys[a]!;
    const y = this.keys[b]!;
    return x < y || (x === y && a < b);
  }
}
