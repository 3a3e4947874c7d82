import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IndexHeap, LoserTree, type RunQueue } from '../../src/order/heap.js';

/** Merges runs of numbers through a queue; returns [key, run] in the order the queue gave them. */
function drain(runs: number[][], make: (key: (r: number) => number | undefined) => RunQueue): Array<[number, number]> {
  const at = runs.map(() => 0);
  const key = (r: number): number | undefined => runs[r]![at[r]!];
  const q = make(key);
  const out: Array<[number, number]> = [];
  while (!q.empty) {
    const r = q.top;
    out.push([key(r)!, r]);
    at[r]!++;
    q.advanced(at[r]! >= runs[r]!.length);
  }
  return out;
}

const tree = (runs: number[][]) => drain(runs, (key) => new LoserTree(runs.length, key));
const heap = (runs: number[][]) =>
  drain(runs, (key) => {
    const h = new IndexHeap(runs.length, (a, b) => key(a)! < key(b)! || (key(a) === key(b) && a < b));
    runs.forEach((run, r) => run.length > 0 && h.push(r));
    return h;
  });

/** The merge's contract: by key, ties to the earlier run. */
const expected = (runs: number[][]) =>
  runs
    .flatMap((run, r) => run.map((k): [number, number] => [k, r]))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);

const cases: Array<[string, number[][]]> = [
  ['one run', [[1, 2, 3]]],
  ['one empty run', [[]]],
  ['every run empty', [[], [], []]],
  ['two runs interleaved', [[1, 3, 5], [2, 4, 6]]],
  ['equal keys go to the earlier run first', [[5, 5, 7], [5, 6], [5]]],
  ['empty runs among full ones', [[], [3, 4], [], [1, 9], []]],
  ['three runs (not a power of two)', [[9], [1, 2, 3, 4], [0, 10]]],
  ['negative and large integers', [[-(10 ** 15) + 1, 0, 10 ** 15 - 1], [-5, 2 ** 53 - 1]]],
  ['one run far behind the others', [[100, 200], [1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]],
];

for (const [name, runs] of cases) {
  test(`LoserTree: ${name}`, () => assert.deepEqual(tree(runs), expected(runs)));
  test(`IndexHeap: ${name}`, () => assert.deepEqual(heap(runs), expected(runs)));
}

test('LoserTree and IndexHeap agree on random runs of 1 to 70 runs with many ties', () => {
  let s = 12345;
  const rand = (n: number) => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) % n);
  for (let round = 0; round < 200; round++) {
    const k = 1 + rand(70);
    const runs = Array.from({ length: k }, () => Array.from({ length: rand(30) }, () => rand(50)).sort((a, b) => a - b));
    assert.deepEqual(tree(runs), expected(runs), `round ${round}, ${k} runs`);
    assert.deepEqual(heap(runs), expected(runs), `round ${round}, ${k} runs`);
  }
});

test('LoserTree.replace (the merge hot path, told the key) and topKey: by key, ties to the earlier run, +Infinity once all ended', () => {
  let s = 777;
  const rand = (n: number) => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) % n);
  for (let round = 0; round < 200; round++) {
    const k = 1 + rand(40);
    const runs = Array.from({ length: k }, () => Array.from({ length: rand(20) }, () => rand(30) - 10).sort((a, b) => a - b));
    const at = runs.map(() => 0);
    const t = new LoserTree(k, (r) => runs[r]![0]);
    const out: Array<[number, number]> = [];
    while (!t.empty) {
      const r = t.top;
      assert.equal(t.topKey, runs[r]![at[r]!]);
      out.push([t.topKey, r]);
      t.replace(runs[r]![++at[r]!] ?? Number.POSITIVE_INFINITY);
    }
    assert.equal(t.topKey, Number.POSITIVE_INFINITY);
    assert.deepEqual(out, expected(runs), `round ${round}, ${k} runs`);
  }
});
