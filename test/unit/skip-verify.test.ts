import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skippingDone } from '../../src/load/resume.js';
import type { DoneChunk } from '../../src/checkpoint/store.js';
import type { CutChunk } from '../../src/chunking/types.js';

const chunk = (index: number, sha1 = `s${index}`): CutChunk & { sha1: string } =>
  ({ index, startByte: index * 10, endByte: index * 10 + 10, records: 2, firstLine: index * 2 + 1, firstRecord: index * 2, sha1 }) as unknown as CutChunk & { sha1: string };
const done = (...indexes: number[]): Map<number, DoneChunk> =>
  new Map(indexes.map((i) => [i, { index: i, startByte: i * 10, endByte: i * 10 + 10, records: 2, rowsLoaded: 2, rejected: 0, sha1: `s${i}`, rejects: null }]));

async function* from(chunks: CutChunk[]): AsyncGenerator<CutChunk> {
  yield* chunks;
}

test('every committed chunk is checked before a chunk not committed before it is handed on', async () => {
  const out: string[] = [];
  for await (const c of skippingDone(from([0, 1, 2, 3, 4].map((i) => chunk(i))), done(0, 1, 3), 'f')) out.push(`${c.index}${c.alreadyDone ? 'd' : ''}`);
  assert.deepEqual(out, ['0d', '1d', '3d', '2', '4']);
});

test('a committed chunk with other bytes is refused before any chunk not committed loads', async () => {
  const out: number[] = [];
  const chunks = [chunk(0), chunk(1), chunk(2, 'other'), chunk(3)];
  await assert.rejects(
    (async () => {
      for await (const c of skippingDone(from(chunks), done(0, 2), 'standard input')) if (!c.alreadyDone) out.push(c.index);
    })(),
    /chunk 2 is not what the interrupted run committed: the input changed \(the bytes 20-30 differ: sha1/,
  );
  assert.deepEqual(out, [], 'chunk 1 was held back, never handed on');
});

test('an input that ends before the last committed chunk is refused', async () => {
  await assert.rejects(
    (async () => {
      for await (const _ of skippingDone(from([chunk(0), chunk(1)]), done(0, 2), 'f'));
    })(),
    /the input ends before chunk 2, which the interrupted run committed/,
  );
});
