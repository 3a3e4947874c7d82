/**
 * The server-validated cases (LOAD DATA cases run on MariaDB 10.11.19; how
 * the fixture was made is in tools/README.md): RecordScanner and cutChunks
 * must find exactly the record ends the server used.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cutCase, describe, readCases, scanCase } from './chunking-support.js';

const cases = readCases('./chunking-cases.json');

test('fixture is complete', () => {
  assert.ok(cases.length >= 60, `only ${cases.length} cases`);
});

for (const c of cases) {
  test(`server case ${c.name}: RecordScanner`, () => {
    const got = scanCase(c);
    assert.deepEqual(got.ends, c.ends, describe(c));
    assert.equal(got.openQuote ?? null, c.openQuote, `open quote: ${describe(c)}`);
  });

  test(`server case ${c.name}: cutChunks, one record per chunk, any block size`, async () => {
    for (const block of [1, 2, 3, 5, 7, 1 << 20]) {
      const r = await cutCase(c, 1, block);
      const where = `block ${block}: ${describe(c)}`;
      if (c.openQuote !== null) {
        assert.ok(r.error, `expected an unterminated-quote error, ${where}`);
        assert.equal(r.error.code, 'INPUT_MALFORMED', where);
        assert.equal(r.error.context.byteOffset, c.openQuote, where);
        assert.deepEqual(
          r.chunks.map((ch) => ch.endByte),
          c.ends.slice(0, r.chunks.length),
          where,
        );
        continue;
      }
      assert.equal(r.error, undefined, `${String(r.error)} ${where}`);
      assert.deepEqual(
        r.chunks.map((ch) => ch.endByte),
        c.ends,
        where,
      );
      assert.ok(r.chunks.every((ch) => ch.records === 1), where);
      assert.equal(r.summary?.records, c.ends.length, where);
    }
  });
}
