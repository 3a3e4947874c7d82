import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunkDigestKind, skippingDone } from '../../src/load/resume.js';
import type { DoneChunk } from '../../src/checkpoint/store.js';
import type { CutChunk } from '../../src/chunking/types.js';

const chunk = (index: number, digest = `s${index}`): CutChunk & { digest: string } =>
  ({ index, startByte: index * 10, endByte: index * 10 + 10, records: 2, firstLine: index * 2 + 1, firstRecord: index * 2, digest }) as unknown as CutChunk & { digest: string };
const doneChunk = (i: number, digest: string | null): DoneChunk => ({ index: i, startByte: i * 10, endByte: i * 10 + 10, records: 2, rowsLoaded: 2, rejected: 0, digest, rejects: null });
const done = (...indexes: number[]): Map<number, DoneChunk> => new Map(indexes.map((i) => [i, doneChunk(i, `s${i}`)]));
const doneWith = (digests: Array<string | null>): Map<number, DoneChunk> => new Map(digests.map((d, i) => [i, doneChunk(i, d)]));

async function* from(chunks: CutChunk[]): AsyncGenerator<CutChunk> {
  yield* chunks;
}

test('every committed chunk is checked before a chunk not committed before it is handed on', async () => {
  const out: string[] = [];
  for await (const c of skippingDone(from([0, 1, 2, 3, 4].map((i) => chunk(i))), done(0, 1, 3), 'f', 'append')) out.push(`${c.index}${c.alreadyDone ? 'd' : ''}`);
  assert.deepEqual(out, ['0d', '1d', '3d', '2', '4']);
});

test('a committed chunk with other bytes is refused before any chunk not committed loads', async () => {
  const out: number[] = [];
  const chunks = [chunk(0), chunk(1), chunk(2, 'other'), chunk(3)];
  await assert.rejects(
    (async () => {
      for await (const c of skippingDone(from(chunks), done(0, 2), 'standard input', 'swap')) if (!c.alreadyDone) out.push(c.index);
    })(),
    (err: Error) =>
      /chunk 2 is not what the interrupted run committed: the input changed \(the bytes 20-30 differ: digest s2… then, other… now\)/.test(err.message) &&
      // A swap's discarded run leaves no rows in the table: the hint does not say it does.
      (err as { context?: { hint?: string } }).context?.hint === 'pipe the same bytes again to finish it; or add --restart to discard it',
  );
  assert.deepEqual(out, [], 'chunk 1 was held back, never handed on');
});

test('an input that ends before the last committed chunk is refused', async () => {
  await assert.rejects(
    (async () => {
      for await (const _ of skippingDone(from([chunk(0), chunk(1)]), done(0, 2), 'f', 'append'));
    })(),
    (err: Error) =>
      /the input ends before chunk 2, which the interrupted run committed/.test(err.message) &&
      /add --restart to discard it \(its committed rows stay in the table, so remove them first if this run loads the same rows\)$/.test((err as { context?: { hint?: string } }).context?.hint ?? ''),
  );
});

test('the digest a streamed input\'s chunks are taken with, from the resumed job\'s committed chunks', () => {
  const b3 = `b3:${'a'.repeat(37)}`;
  const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
  const cases: Array<[string, Array<string | null>, string]> = [
    ['nothing committed yet (a new job, or --restart)', [], 'blake3'],
    ['a file\'s chunks, which keep no digest', [null, null], 'blake3'],
    ['chunks this flatload committed', [b3, b3, b3], 'blake3'],
    ['chunks an older flatload committed: bare SHA-1 hex', [sha1, sha1], 'sha1'],
    ['an older flatload\'s, the first of them kept no digest', [null, sha1], 'sha1'],
  ];
  for (const [name, digests, kind] of cases) assert.equal(chunkDigestKind(doneWith(digests)), kind, name);
});
