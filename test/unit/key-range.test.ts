/**
 * The literals a resumed chunk's delete-key-range step bounds its rows with:
 * a record's key read as the sort reads it (so as the server stores it:
 * rounded to the column's scale, spaces past a NO PAD column's length cut,
 * dates canonical), each part written as a literal the server compares with
 * the stored value exactly.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import { quoteInCharset } from '../../src/db/quote.js';
import { keyLiterals } from '../../src/load/keyRange.js';
import { sqlOf, type Op } from '../../src/plan/ops.js';
import { keyReader, recordKey, type KeyForm, type KeySpec } from '../../src/order/key.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const hex = (s: string, enc: BufferEncoding = 'utf8'): string => Buffer.from(s, enc).toString('hex');

const INT: KeyForm = { kind: 'number', scale: 0 };
const DEC2: KeyForm = { kind: 'number', scale: 2 };

/** The literals of a one-record TSV file's key: `fields` are the record's fields (bytes as latin1 text). */
function literalsOf(fields: string[], forms: Array<KeyForm | null>, numeric: boolean[], charsets: string[], cs = 'utf8mb4'): string[] | undefined {
  const spec: KeySpec = { fields: forms.map((_, i) => i), numeric, forms };
  const bytes = b(`${fields.join('\t')}\n`);
  const key = recordKey(bytes, 0, bytes.length, keyReader({ spec, fmt: TSV, cs: charsetInfo(cs)!, targets: { fields: fields.length, textField: fields.map(() => true) } }));
  return keyLiterals(key, charsets);
}

test('a number key part: the value the column stores, as a plain decimal literal', () => {
  const cases: Array<[string, KeyForm, string | undefined]> = [
    ['7', INT, '7'],
    ['7.4', INT, '7'], // the lower bound of a chunk whose first key is 7.4: 7 is stored, `k >= 7.4` missed it
    ['7.5', INT, '8'], // the upper bound: 8 is stored, `k <= 7.5` missed it
    ['-7.5', INT, '-8'], // half away from zero
    ['-0.4', INT, '0'],
    ['+5', INT, '5'],
    [' 5 ', INT, '5'],
    ['007', INT, '7'],
    ['5e1', INT, '50'],
    ['75e-1', INT, '8'],
    ['1e-3', INT, '0'],
    ['9.999', INT, '10'],
    ['9007199254740993', INT, '9007199254740993'], // beyond a double's integers: exact
    ['123456789012345678901234567890', INT, '123456789012345678901234567890'],
    ['1.005', DEC2, '1.01'],
    ['1.004', DEC2, '1'],
    ['0.995', DEC2, '1'],
    ['-1.005', DEC2, '-1.01'],
    ['12.3', DEC2, '12.3'],
    ['0.001', DEC2, '0'],
    ['0x10', INT, undefined], // not a number the server reads without a warning: nothing bounds what it stored
    ['12abc', INT, undefined],
    ['', INT, undefined],
  ];
  for (const [field, form, want] of cases) {
    const got = literalsOf([field, 'v'], [form], [true], ['utf8mb4']);
    assert.deepEqual(got, want === undefined ? undefined : [want], `${JSON.stringify(field)} at scale ${form.kind === 'number' ? form.scale : '?'}`);
  }
});

test('a text key part: its stored bytes in the character set the server reads them in', () => {
  const cases: Array<{ field: string; form: KeyForm | null; charset: string; cs?: string; want: string; why: string }> = [
    { field: 'abc', form: { kind: 'pad-space' }, charset: 'utf8mb4', want: `_utf8mb4 0x${hex('abc')}`, why: 'plain text' },
    { field: 'abc  ', form: { kind: 'pad-space' }, charset: 'utf8mb4', want: `_utf8mb4 0x${hex('abc')}`, why: 'PAD SPACE: trailing spaces do not count' },
    { field: 'abcde   ', form: { kind: 'nopad', chars: 5 }, charset: 'utf8mb4', want: `_utf8mb4 0x${hex('abcde')}`, why: 'NO PAD: spaces past the length are cut' },
    { field: 'ab  ', form: { kind: 'nopad', chars: 5 }, charset: 'utf8mb4', want: `_utf8mb4 0x${hex('ab  ')}`, why: 'NO PAD: spaces within the length are kept' },
    { field: '\u00e9t\u00e9', form: { kind: 'pad-space' }, charset: 'latin1', cs: 'latin1', want: `_latin1 0x${hex('\u00e9t\u00e9', 'latin1')}`, why: 'a latin1 file: its bytes, read as latin1' },
    { field: '\u00e9\u00ff', form: null, charset: 'binary', want: '_binary 0xe9ff', why: 'a byte-string column: bytes that are not UTF-8, compared as bytes' },
    { field: '', form: { kind: 'pad-space' }, charset: 'utf8mb4', want: "_utf8mb4''", why: 'empty text' },
    { field: '7300-1-5', form: { kind: 'date' }, charset: 'binary', want: `_binary 0x${hex('7300-01-05')}`, why: 'a date in its canonical form' },
    { field: '\\N', form: { kind: 'pad-space' }, charset: 'utf8mb4', want: 'NULL', why: 'NULL' },
  ];
  for (const c of cases) assert.deepEqual(literalsOf([c.field, 'v'], [c.form], [false], [c.charset], c.cs), [c.want], c.why);
});

test('a composite key: one literal per part, each in its column order and set', () => {
  assert.deepEqual(literalsOf(['x ', '7.5', 'v'], [{ kind: 'pad-space' }, INT], [false, true], ['latin1', 'utf8mb4'], 'latin1'), ['_latin1 0x78', '8']);
  assert.equal(literalsOf(['x', 'seven', 'v'], [{ kind: 'pad-space' }, INT], [false, true], ['latin1', 'utf8mb4'], 'latin1'), undefined, 'one malformed part: no range');
});

test('quoteInCharset: only a character set name reaches the SQL', () => {
  assert.equal(quoteInCharset(b('a'), 'latin1'), '_latin1 0x61');
  assert.equal(quoteInCharset(b(''), 'utf8mb4'), "_utf8mb4''");
  assert.equal(quoteInCharset(b('a'), "latin1' OR 1=1 -- "), '_latin1OR11 0x61');
});

test('the delete: both ends inclusive, or the first left out when the chunk before ends with that key', () => {
  const op: Op = { kind: 'delete-key-range', table: { db: 'd', table: 't' }, columns: ['a', 'b'] };
  const cases: Array<[Parameters<typeof sqlOf>[1], string]> = [
    [{ keyRange: { lo: ['1', "_latin1 0x78"], hi: ['2', "_latin1''"] } }, "DELETE FROM `d`.`t` WHERE (`a`, `b`) >= (1, _latin1 0x78) AND (`a`, `b`) <= (2, _latin1'')"],
    [{ keyRange: { lo: ['8', '0'], hi: ['9', '0'], loExclusive: true } }, 'DELETE FROM `d`.`t` WHERE (`a`, `b`) > (8, 0) AND (`a`, `b`) <= (9, 0)'],
  ];
  for (const [values, want] of cases) assert.equal(sqlOf(op, values), want);
});

