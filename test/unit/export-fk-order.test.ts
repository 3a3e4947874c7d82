import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foreignKeyNotes, foreignKeyOrder, type ForeignKeyEdge } from '../../src/export/fkOrder.js';

type Case = {
  name: string;
  sizes: Record<string, number>;
  /** child>parent */
  fks: string[];
  order: string[];
  waitsFor: Record<string, string[]>;
  cycles?: string[][];
  self?: string[];
};

const edges = (fks: string[]): ForeignKeyEdge[] =>
  fks.map((f) => {
    const [child, parent] = f.split('>');
    return { child: child!, parent: parent! };
  });

const cases: Case[] = [
  { name: 'no keys: smallest first', sizes: { a: 30, b: 10, c: 20 }, fks: [], order: ['b', 'c', 'a'], waitsFor: { a: [], b: [], c: [] } },
  { name: 'a small child waits for its big parent', sizes: { parent: 200, child: 10 }, fks: ['child>parent'], order: ['parent', 'child'], waitsFor: { parent: [], child: ['parent'] } },
  {
    name: 'an unrelated table still starts by size, before a parent bigger than it',
    sizes: { parent: 200, child: 10, other: 50 },
    fks: ['child>parent'],
    order: ['other', 'parent', 'child'],
    waitsFor: { parent: [], child: ['parent'], other: [] },
  },
  {
    name: 'a chain, and a child of two parents',
    sizes: { a: 1, b: 2, c: 3, d: 4 },
    fks: ['a>b', 'b>c', 'a>d'],
    order: ['c', 'b', 'd', 'a'],
    waitsFor: { a: ['b', 'd'], b: ['c'], c: [], d: [] },
  },
  { name: 'two keys between the same tables count once', sizes: { p: 5, c: 1 }, fks: ['c>p', 'c>p'], order: ['p', 'c'], waitsFor: { p: [], c: ['p'] } },
  { name: 'a key to a table outside the export orders nothing', sizes: { c: 1, x: 5 }, fks: ['c>elsewhere', 'elsewhere>x'], order: ['c', 'x'], waitsFor: { c: [], x: [] } },
  { name: 'a table that references itself', sizes: { tree: 5, a: 1 }, fks: ['tree>tree'], order: ['a', 'tree'], waitsFor: { tree: [], a: [] }, self: ['tree'] },
  {
    name: 'a cycle of two: the smaller starts first and waits for nothing',
    sizes: { a: 10, b: 5 },
    fks: ['a>b', 'b>a'],
    order: ['b', 'a'],
    waitsFor: { b: [], a: ['b'] },
    cycles: [['b', 'a']],
  },
  {
    name: 'a cycle of three with a parent before it, and a child that starts once its parent in the cycle has',
    sizes: { root: 100, x: 3, y: 2, z: 1, leaf: 0 },
    fks: ['x>y', 'y>z', 'z>x', 'x>root', 'leaf>z'],
    order: ['root', 'z', 'leaf', 'y', 'x'],
    waitsFor: { root: [], z: [], y: ['z'], x: ['y', 'root'], leaf: ['z'] },
    cycles: [['z', 'y', 'x']],
  },
  {
    name: 'a child of a cycle is not taken for part of it',
    sizes: { a: 5, b: 6, c: 1 },
    fks: ['a>b', 'b>a', 'c>a'],
    order: ['a', 'c', 'b'],
    waitsFor: { a: [], b: ['a'], c: ['a'] },
    cycles: [['a', 'b']],
  },
  {
    name: 'two separate cycles',
    sizes: { a: 1, b: 2, c: 3, d: 4 },
    fks: ['a>b', 'b>a', 'c>d', 'd>c'],
    order: ['a', 'b', 'c', 'd'],
    waitsFor: { a: [], b: ['a'], c: [], d: ['c'] },
    cycles: [['a', 'b'], ['c', 'd']],
  },
];

test('the start order over the foreign keys among the export tables', () => {
  for (const c of cases) {
    const tables = Object.entries(c.sizes).map(([key, sizeBytes]) => ({ key, sizeBytes }));
    const got = foreignKeyOrder(tables, edges(c.fks));
    assert.deepEqual(got.order.map((t) => t.key), c.order, c.name);
    const waits = Object.fromEntries([...got.waitsFor].map(([k, v]) => [k, [...v].sort()]));
    assert.deepEqual(waits, Object.fromEntries(Object.entries(c.waitsFor).map(([k, v]) => [k, [...v].sort()])), c.name);
    assert.deepEqual(got.cycles, c.cycles ?? [], c.name);
    assert.deepEqual(got.selfReferencing, c.self ?? [], c.name);
    // Whatever the keys, a table only ever waits for tables placed before it: the load cannot wait forever.
    for (const [k, ps] of got.waitsFor) for (const p of ps) assert.ok(c.order.indexOf(p) < c.order.indexOf(k), `${c.name}: ${k} waits for ${p}`);
  }
});

test('the notes name the waits, the cycles and the tables that reference themselves', () => {
  const got = foreignKeyOrder(
    [
      { key: 's.p', sizeBytes: 9 },
      { key: 's.c', sizeBytes: 1 },
      { key: 's.a', sizeBytes: 1 },
      { key: 's.b', sizeBytes: 2 },
    ],
    edges(['s.c>s.p', 's.a>s.b', 's.b>s.a', 's.p>s.p']),
  );
  const notes = foreignKeyNotes(got);
  assert.equal(notes.length, 3);
  assert.match(notes[0]!, /s\.c starts after s\.p has loaded; s\.b starts after s\.a has loaded/);
  assert.match(notes[1]!, /^s\.a, s\.b reference each other through foreign keys: .* s\.a starts first/);
  assert.match(notes[2]!, /^s\.p references itself/);
  assert.deepEqual(foreignKeyNotes(foreignKeyOrder([{ key: 'x', sizeBytes: 1 }], [])), []);
});
