/**
 * Key fields read the way the server compares them: text in a PAD SPACE
 * binary collation (trailing spaces do not count, a shorter value compares as
 * if padded with spaces) against a reference comparator on random strings,
 * in a NO PAD one (every byte, less spaces beyond the column's length),
 * and DATE/DATETIME values in the server's canonical form (equal dates
 * written differently are one key, canonical text orders as the dates do).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import { compareKeys, decodeKey, keyReader, recordKey, type KeyContext, type KeySpec } from '../../src/order/key.js';
import { canonicalTemporal } from '../../src/order/temporal.js';
import { rng } from './chunking-support.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: -1 };
const latin1 = charsetInfo('latin1')!;
const utf8mb4 = charsetInfo('utf8mb4')!;

function ctx(spec: KeySpec): KeyContext {
  return { spec, fmt: TSV, cs: latin1, targets: { fields: 3, textField: [true, true, true] } };
}
const padded: KeySpec = { fields: [0], numeric: [false], forms: [{ kind: 'pad-space' }] };

function keyOf(field: Buffer | string, c: KeyContext): Buffer {
  const bytes = Buffer.concat([typeof field === 'string' ? b(field) : field, b('\tv\n')]);
  return recordKey(bytes, 0, bytes.length, keyReader(c));
}

/** PAD SPACE over bytes: the shorter value padded with spaces, then byte by byte. */
function padSpaceCompare(x: Buffer, y: Buffer): number {
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const a = i < x.length ? x[i]! : 0x20;
    const c = i < y.length ? y[i]! : 0x20;
    if (a !== c) return a - c;
  }
  return 0;
}

const sign = (x: number): number => (x < 0 ? -1 : x > 0 ? 1 : 0);

test('PAD SPACE: equal and ordered as the collation compares them, by hand', () => {
  const c = ctx(padded);
  const cases: Array<[string, string, number]> = [
    ['x', 'x ', 0],
    ['x', 'x    ', 0],
    ['', '   ', 0],
    ['x\x01', 'x', -1], // 0x01 is below the space 'x' is padded with
    ['x', 'x!', -1],
    ['x \x01', 'x', -1],
    ['x  a', 'x', 1],
    ['abcdefgh', 'abcdefgh ', 0], // a whole segment, then only spaces
    ['abcdefgh\x01', 'abcdefgh', -1],
    ['abcdefghi', 'abcdefgh', 1],
    ['abcdefgh        \x1f', 'abcdefgh', -1],
    ['X', 'x', -1], // a binary collation: case counts
  ];
  for (const [x, y, want] of cases) {
    assert.equal(sign(compareKeys(keyOf(x, c), keyOf(y, c))), want, `${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
    assert.equal(sign(compareKeys(keyOf(y, c), keyOf(x, c))), 0 - want, `${JSON.stringify(y)} vs ${JSON.stringify(x)}`);
  }
});

test('NO PAD with a length: trailing spaces beyond the column\'s characters are cut, as the server stores the value', () => {
  const nopad = (chars: number, cs = latin1): KeyContext => ({ ...ctx({ fields: [0], numeric: [false], forms: [{ kind: 'nopad', chars }] }), cs });
  const c = nopad(5);
  const cases: Array<[string, string, number]> = [
    ['abcde', 'abcde  ', 0], // cut to 5 characters
    ['abcd ', 'abcd   ', 0], // the space within the 5 stays
    ['abcd', 'abcd ', -1], // within the length: every byte counts
    ['abcd', 'abcd   ', -1],
    ['ab', 'ab   ', -1],
    ['', '      ', -1], // '     ', not ''
    ['abcdef', 'abcdef ', -1], // too long anyway (rejected): as it is
    ['abcde  \x01', 'abcde', 1], // only trailing spaces are cut
  ];
  for (const [x, y, want] of cases) {
    assert.equal(sign(compareKeys(keyOf(x, c), keyOf(y, c))), want, `${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
    assert.equal(sign(compareKeys(keyOf(y, c), keyOf(x, c))), 0 - want, `${JSON.stringify(y)} vs ${JSON.stringify(x)}`);
  }
  assert.deepEqual(decodeKey(keyOf('abcde   ', c)), [{ kind: 'text', bytes: b('abcde') }]);
  assert.deepEqual(decodeKey(keyOf('ab      ', c)), [{ kind: 'text', bytes: b('ab   ') }]);
  // Characters, not bytes: 'ééééé' is 5 characters in utf8mb4 (10 bytes).
  const u = nopad(5, utf8mb4);
  const e5 = Buffer.from('ééééé', 'utf8');
  assert.equal(compareKeys(keyOf(e5, u), keyOf(Buffer.concat([e5, b('   ')]), u)), 0);
  assert.ok(compareKeys(keyOf(Buffer.from('éééé', 'utf8'), u), keyOf(Buffer.from('éééé  ', 'utf8'), u)) < 0);
  assert.equal(compareKeys(keyOf(Buffer.from('éééé ', 'utf8'), u), keyOf(Buffer.from('éééé  ', 'utf8'), u)), 0);
});

test('PAD SPACE: random strings of spaces, low bytes and letters compare as the reference does, and decode without trailing spaces', () => {
  const c = ctx(padded);
  const r = rng(20261204);
  const alphabet = [0x20, 0x20, 0x20, 0x01, 0x1f, 0x21, 0x41, 0x61, 0x7e, 0xff];
  const values: Buffer[] = [];
  for (let i = 0; i < 400; i++) {
    const len = Math.floor(r() * 20);
    values.push(Buffer.from(Array.from({ length: len }, () => alphabet[Math.floor(r() * alphabet.length)]!)));
  }
  const keys = values.map((v) => keyOf(v, c));
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < values.length; j += 7) {
      assert.equal(sign(compareKeys(keys[i]!, keys[j]!)), sign(padSpaceCompare(values[i]!, values[j]!)), `${values[i]!.toString('hex')} vs ${values[j]!.toString('hex')}`);
    }
    let e = values[i]!.length;
    while (e > 0 && values[i]![e - 1] === 0x20) e--;
    assert.deepEqual(decodeKey(keys[i]!), [{ kind: 'text', bytes: values[i]!.subarray(0, e) }]);
  }
});

test('DATE and DATETIME values: the canonical form of every form the server reads without a warning', () => {
  const cases: Array<[string, number | undefined, string | undefined]> = [
    ['2024-01-05', undefined, '2024-01-05'],
    ['7300-1-5', undefined, '7300-01-05'],
    ['73010101', undefined, '7301-01-01'],
    ['7301-01-01', undefined, '7301-01-01'],
    ['240105', undefined, '2024-01-05'],
    ['700105', undefined, '1970-01-05'],
    ['69-1-5', undefined, '2069-01-05'],
    ['2024/1/5', undefined, '2024-01-05'],
    ['2024.01.05', undefined, '2024-01-05'],
    [' 2024-01-05 ', undefined, '2024-01-05'],
    ['2024-02-29', undefined, '2024-02-29'],
    ['0000-00-00', undefined, '0000-00-00'],
    ['2023-02-29', undefined, undefined], // no such day
    ['2024-13-01', undefined, undefined],
    ['2024-01-05 10:00:00', undefined, undefined], // a time on a DATE: truncated with a note
    ['2024-01/05', undefined, undefined],
    ['24-1-5x', undefined, undefined],
    ['1234567', undefined, undefined],
    ['', undefined, undefined],
    ['2024-01-05', 0, '2024-01-05 00:00:00'],
    ['2024-1-5 7:8:9', 0, '2024-01-05 07:08:09'],
    ['2024-01-05T07:08:09', 0, '2024-01-05 07:08:09'],
    ['20240105070809', 0, '2024-01-05 07:08:09'],
    ['240105070809', 0, '2024-01-05 07:08:09'],
    ['2024-01-05 07:08:09.5', 3, '2024-01-05 07:08:09.500'],
    ['2024-01-05 07:08:09.000', 0, '2024-01-05 07:08:09'],
    ['2024-01-05 07:08:09.5', 0, undefined], // the server rounds or truncates it
    ['2024-01-05 24:00:00', 0, undefined],
    ['2024-01-05 07:08', 0, undefined],
  ];
  for (const [text, fsp, want] of cases) {
    const got = canonicalTemporal(b(text), 0, text.length, fsp);
    assert.equal(got?.toString('latin1'), want, `${JSON.stringify(text)} as ${fsp === undefined ? 'DATE' : `DATETIME(${fsp})`}`);
  }
});

test('DATE keys: equal dates are one key, dates order as dates, unreadable values apart from all of them', () => {
  const c = ctx({ fields: [0], numeric: [false], forms: [{ kind: 'date' }] });
  assert.equal(compareKeys(keyOf('7300-1-5', c), keyOf('7300-01-05', c)), 0);
  assert.equal(compareKeys(keyOf('73010101', c), keyOf('7301-01-01', c)), 0);
  const ordered = ['999-1-1', '0999-12-31', '1000-01-01', '2024-1-5', '2024-01-10', '20240201', '9999-12-31'].filter((d) => canonicalTemporal(b(d), 0, d.length, undefined));
  for (let i = 1; i < ordered.length; i++) assert.ok(compareKeys(keyOf(ordered[i - 1]!, c), keyOf(ordered[i]!, c)) < 0, `${ordered[i - 1]} < ${ordered[i]}`);
  assert.notEqual(compareKeys(keyOf('2024-02-30', c), keyOf('2024-03-01', c)), 0);
  assert.deepEqual(decodeKey(keyOf('7300-1-5', c)), [{ kind: 'text', bytes: b('7300-01-05') }]);
  const dt = ctx({ fields: [0], numeric: [false], forms: [{ kind: 'datetime', fsp: 0 }] });
  assert.equal(compareKeys(keyOf('2024-01-05', dt), keyOf('20240105000000', dt)), 0);
  assert.ok(compareKeys(keyOf('2024-01-05 9:00:00', dt), keyOf('2024-01-05 10:00:00', dt)) < 0);
});
