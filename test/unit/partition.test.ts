import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { keyHash, parseIntField, type KeyColumn } from '../../src/shard/keyHash.js';
import { linearHashMask, linearHashPartition, partitionIndex, unevaluableReason, type PartitionRule } from '../../src/shard/partition.js';

/**
 * Fixture: rows whose partition MariaDB 10.11 chose, written by
 * `node --import tsx bench/research/partitionCheck.ts --fixture test/unit/fixtures/partition-cases.json`
 * (that run compared ~215k rows with zero mismatches; this is a sample).
 */
interface Fixture {
  cases: Array<{ name: string; partitionBy: string; rule: PartitionRule; rows: Array<{ values: Array<string | null>; partition: number }> }>;
}

function revive(rule: PartitionRule): PartitionRule {
  const big = (v: unknown): bigint | 'MAXVALUE' | null => (v === null ? null : v === 'MAXVALUE' ? 'MAXVALUE' : BigInt(v as string));
  return {
    ...rule,
    ...(rule.rangeBounds ? { rangeBounds: rule.rangeBounds.map((b) => b.map((v) => big(v) as bigint | 'MAXVALUE')) } : {}),
    ...(rule.listValues ? { listValues: rule.listValues.map((l) => (l === 'default' ? l : l.map((t) => t.map((v) => big(v) as bigint | null)))) } : {}),
  };
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/partition-cases.json', import.meta.url), 'utf8')) as Fixture;
const buf = (v: string | null): Buffer | null => (v === null ? null : Buffer.from(v, 'utf8'));

test('every server-verified row lands where MariaDB put it', () => {
  let n = 0;
  for (const c of fixture.cases) {
    const rule = revive(c.rule);
    for (const r of c.rows) {
      assert.equal(partitionIndex(rule, r.values.map(buf)), r.partition, `${c.name}: ${JSON.stringify(r.values)}`);
      n++;
    }
  }
  assert.ok(n > 2000, `fixture has ${n} rows`);
  const methods = new Set(fixture.cases.map((c) => c.rule.method));
  for (const m of ['HASH', 'LINEAR HASH', 'KEY', 'LINEAR KEY', 'RANGE', 'RANGE COLUMNS', 'LIST', 'LIST COLUMNS']) assert.ok(methods.has(m as never), `fixture covers ${m}`);
});

const INT: KeyColumn = { kind: 'int', bytes: 4, unsigned: false };
const UBIG: KeyColumn = { kind: 'int', bytes: 8, unsigned: true };
const hash = (n: number, type: KeyColumn = INT, method: PartitionRule['method'] = 'HASH'): PartitionRule => ({
  method,
  expression: '`id`',
  columns: [{ name: 'id', type }],
  partitionCount: n,
});

test('HASH: value MOD n without the sign; NULL as LONGLONG_MIN; unsigned BIGINT wraps', () => {
  const cases: Array<[PartitionRule, string | null, number]> = [
    [hash(2), '0', 0],
    [hash(2), '7', 1],
    [hash(3), '-7', 1], // C: -7 % 3 = -1, sign dropped
    [hash(3), '-9', 0],
    [hash(3), null, 2], // LONGLONG_MIN % 3 = -2
    [hash(2), null, 0],
    [hash(4, UBIG), '18446744073709551615', 1], // wraps to -1
    [hash(3, UBIG), '9223372036854775808', 2], // wraps to LONGLONG_MIN
    [hash(5), '007', 2],
    [hash(5), '+12', 2],
  ];
  for (const [rule, v, want] of cases) assert.equal(partitionIndex(rule, [buf(v)]), want, `${rule.method}/${rule.partitionCount} ${v}`);
});

test('LINEAR HASH: AND with the next power of two minus one, halved past the last partition', () => {
  assert.equal(linearHashMask(5), 7);
  assert.equal(linearHashMask(8), 7);
  assert.equal(linearHashMask(1), 0);
  const cases: Array<[number, bigint, number]> = [
    [5, 4n, 4],
    [5, 5n, 1], // 5 & 7 = 5 >= 5 -> 5 & 3 = 1
    [5, 7n, 3],
    [6, -1n, 3], // all bits set: 7 -> 7 & 3
    [8, 13n, 5],
  ];
  for (const [n, v, want] of cases) assert.equal(linearHashPartition(v, n), want, `${v} over ${n}`);
});

test('values flatload does not read exactly are not evaluated', () => {
  for (const v of ['', ' 12', '12 ', '1e3', '12abc', '0x10', '2147483648', '-2147483649', '1.5', '--1']) {
    assert.equal(partitionIndex(hash(4), [Buffer.from(v)]), undefined, JSON.stringify(v));
  }
  assert.equal(partitionIndex(hash(4), [undefined]), undefined, 'a missing field takes the column default');
  assert.equal(partitionIndex(hash(4), []), undefined, 'wrong arity');
  assert.equal(parseIntField(Buffer.from('-0'), 4, true), 0n);
  assert.equal(parseIntField(Buffer.from('-1'), 4, true), undefined);
  assert.equal(parseIntField(Buffer.from('255'), 1, true), 255n);
  assert.equal(parseIntField(Buffer.from('128'), 1, false), undefined);
});

test('rules flatload does not evaluate say why', () => {
  const expr: PartitionRule = { method: 'HASH', expression: 'year(`d`)', columns: undefined, partitionCount: 4 };
  assert.match(unevaluableReason(expr)!, /not a plain column/);
  assert.equal(partitionIndex(expr, [Buffer.from('1')]), undefined);
  const str: PartitionRule = { method: 'RANGE', expression: '`s`', columns: [{ name: 's', type: { kind: 'string', collation: 'utf8mb4_general_ci', maxChars: 10 } }], partitionCount: 1, rangeBounds: [['MAXVALUE']] };
  assert.match(unevaluableReason(str)!, /integer columns only/);
  assert.equal(unevaluableReason(hash(4)), undefined);
  const key: PartitionRule = { method: 'KEY', expression: '`s`', columns: str.columns, partitionCount: 3 };
  assert.equal(unevaluableReason(key), undefined);
});

test('RANGE and LIST: first bound above the value; NULL lowest in RANGE; no partition, no answer', () => {
  const range: PartitionRule = { method: 'RANGE', expression: '`id`', columns: [{ name: 'id', type: INT }], partitionCount: 3, rangeBounds: [[0n], [100n], [200n]] };
  const cases: Array<[string | null, number | undefined]> = [
    ['-5', 0],
    ['0', 1],
    ['99', 1],
    ['100', 2],
    ['199', 2],
    ['200', undefined], // the server rejects it (no partition)
    [null, 0],
  ];
  for (const [v, want] of cases) assert.equal(partitionIndex(range, [buf(v)]), want, `RANGE ${v}`);
  const list: PartitionRule = { method: 'LIST', expression: '`id`', columns: [{ name: 'id', type: INT }], partitionCount: 2, listValues: [[[1n], [2n]], [[null], [3n]]] };
  assert.equal(partitionIndex(list, [buf('2')]), 0);
  assert.equal(partitionIndex(list, [null]), 1);
  assert.equal(partitionIndex(list, [buf('4')]), undefined);
  const withDefault: PartitionRule = { ...list, partitionCount: 3, listValues: [...list.listValues!, 'default'] };
  assert.equal(partitionIndex(withDefault, [buf('4')]), 2);
});

test('KEY hash: strings only when ASCII in a collation flatload reproduces', () => {
  const gci: KeyColumn = { kind: 'string', collation: 'utf8mb4_general_ci', maxChars: 10 };
  // general_ci hashes case-insensitively and ignores trailing spaces, like its comparisons.
  assert.equal(keyHash([gci], [Buffer.from('abc')]), keyHash([gci], [Buffer.from('ABC  ')]));
  const bin: KeyColumn = { kind: 'string', collation: 'utf8mb4_bin', maxChars: 10 };
  assert.notEqual(keyHash([bin], [Buffer.from('abc')]), keyHash([bin], [Buffer.from('ABC')]));
  assert.equal(keyHash([gci], [Buffer.from('é')]), undefined);
  assert.equal(keyHash([gci], [Buffer.from('x'.repeat(11))]), undefined, 'longer than the column');
  assert.equal(keyHash([{ kind: 'string', collation: 'utf8mb4_unicode_ci', maxChars: 10 }], [Buffer.from('a')]), undefined);
  // NULL changes the hash (nr1 ^= (nr1 << 1) | 1 from nr1 = 1): 1 ^ 3 = 2.
  assert.equal(keyHash([INT], [null]), 2);
  // ALGORITHM=1 hashes a number's raw little-endian bytes; ALGORITHM=2 maps them through
  // latin1_swedish_ci (0x61 sorts as 0x41) and drops trailing bytes that sort like a space.
  const one = (v: string, alg: 1 | 2): number | undefined => keyHash([INT], [Buffer.from(v)], alg);
  assert.notEqual(one('97', 1), one('97', 2)); // 61 00 00 00
  assert.equal(one('97', 2), one('65', 2)); // 41 00 00 00
  assert.equal(one('538968064', 2), keyHash([{ kind: 'int', bytes: 2, unsigned: false }], [Buffer.from('0')], 2)); // 00 00 20 20 -> 00 00
  assert.equal(one('32', 1), one('32', 2)); // 20 00 00 00: nothing trailing to drop
});
