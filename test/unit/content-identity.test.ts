/**
 * A resume over other bytes: contentDifference compares the digest of every
 * byte an unfinished job's first run read with this run's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentDifference } from '../../src/checkpoint/identity.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

const CASES: Array<{ name: string; stored: string | null; now: string | undefined; differs: boolean }> = [
  { name: 'the same bytes', stored: A, now: A, differs: false },
  { name: 'other bytes', stored: A, now: B, differs: true },
  { name: 'a job recorded by an older flatload (no hash): the identity alone decides', stored: null, now: A, differs: false },
  { name: 'an input not read whole (one unsplit chunk): nothing to compare', stored: A, now: undefined, differs: false },
];

for (const c of CASES) {
  test(c.name, () => {
    const d = contentDifference(c.stored, c.now);
    assert.equal(d !== undefined, c.differs);
    if (d) assert.match(d, /its contents differ from what the interrupted run read \(digest of every byte: a{16}… then, b{16}… now\)/);
  });
}
