/**
 * The names flatload derives from a table's: its swap shadow and old copy, and the lock a load
 * that replaces the table holds. Long names must stay distinct, fit 64 characters, and be the
 * same on every run.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TABLE_LOCK_PREFIX, tableLeaseKey, tableLockName } from '../../src/checkpoint/lock.js';
import { derivedName, OLD_SUFFIX, SHADOW_SUFFIX } from '../../src/plan/rules/modes.js';

const P50 = 'x'.repeat(50);
const P60 = 'é'.repeat(60);

describe('derivedName', () => {
  const cases: Array<{ table: string; suffix: string; expect: string | RegExp }> = [
    { table: 'users', suffix: SHADOW_SUFFIX, expect: 'users__flatload_new' },
    { table: 'users', suffix: OLD_SUFFIX, expect: 'users__flatload_old' },
    // Exactly 64 with the suffix: kept as it is.
    { table: 'y'.repeat(50), suffix: SHADOW_SUFFIX, expect: `${'y'.repeat(50)}__flatload_new` },
    // One character over: cut, then `_` and 8 hex digits before the suffix.
    { table: 'y'.repeat(51), suffix: SHADOW_SUFFIX, expect: new RegExp(`^${'y'.repeat(41)}_[0-9a-f]{8}__flatload_new$`) },
    { table: `${P50}_alpha`, suffix: OLD_SUFFIX, expect: new RegExp(`^${P50.slice(0, 41)}_[0-9a-f]{8}__flatload_old$`) },
    // Characters, not bytes: MariaDB's limit counts characters.
    { table: P60, suffix: SHADOW_SUFFIX, expect: new RegExp(`^${'é'.repeat(41)}_[0-9a-f]{8}__flatload_new$`) },
  ];
  for (const c of cases) {
    test(`${c.table.slice(0, 12)}… (${[...c.table].length} characters) ${c.suffix}`, () => {
      const got = derivedName(c.table, c.suffix);
      if (typeof c.expect === 'string') assert.equal(got, c.expect);
      else assert.match(got, c.expect);
      assert.ok([...got].length <= 64, `${got} is longer than 64 characters`);
      assert.ok(got.endsWith(c.suffix), 'the suffix that marks flatload\'s own tables stays at the end');
    });
  }

  test('tables sharing their first 50 characters get different shadows and old copies', () => {
    for (const suffix of [SHADOW_SUFFIX, OLD_SUFFIX]) {
      assert.notEqual(derivedName(`${P50}_alpha`, suffix), derivedName(`${P50}_bravo`, suffix));
      assert.notEqual(derivedName(`${P60}a`, suffix), derivedName(`${P60}b`, suffix));
    }
  });

  test('the same name every time (a resumed swap finds its shadow)', () => {
    assert.equal(derivedName(`${P50}_alpha`, SHADOW_SUFFIX), derivedName(`${P50}_alpha`, SHADOW_SUFFIX));
  });
});

describe('tableLockName', () => {
  const cases: Array<{ why: string; a: [string, string, boolean]; b: [string, string, boolean]; same: boolean }> = [
    { why: 'the same table', a: ['db', 't', false], b: ['db', 't', false], same: true },
    { why: 'another table', a: ['db', 't', false], b: ['db', 'u', false], same: false },
    { why: 'another database', a: ['db', 't', false], b: ['db2', 't', false], same: false },
    { why: 'a dot in the name is not a separator', a: ['a.b', 'c', false], b: ['a', 'b.c', false], same: false },
    { why: 'case folded where the server folds names', a: ['DB', 'T', true], b: ['db', 't', true], same: true },
    { why: 'case kept where the server keeps it', a: ['DB', 'T', false], b: ['db', 't', false], same: false },
    { why: 'long names sharing a prefix', a: ['db', `${P50}_alpha`, false], b: ['db', `${P50}_bravo`, false], same: false },
  ];
  for (const c of cases) {
    test(c.why, () => {
      const a = tableLockName(...c.a);
      const b = tableLockName(...c.b);
      assert.equal(a === b, c.same);
      for (const n of [a, b]) {
        assert.ok(n.startsWith(TABLE_LOCK_PREFIX));
        assert.ok(n.length <= 64, `${n}: GET_LOCK names are limited to 64 characters`);
      }
    });
  }

  test('its lease key fits the lease table (24 characters) and cannot be a job id (hex)', () => {
    const key = tableLeaseKey(tableLockName('db', `${P60}x`, false));
    assert.equal(key.length, 24);
    assert.doesNotMatch(key, /^[0-9a-f]{24}$/);
  });
});
