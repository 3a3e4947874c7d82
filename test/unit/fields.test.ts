/**
 * parseRecord: a record's field values as LOAD DATA reads them (unescaping,
 * quotes, SQL NULL, missing and extra fields, multi-byte text). Named cases;
 * fields-fuzz.test.ts checks it against the server's reader on random input.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import { parseRecord, type FieldValue } from '../../src/chunking/fields.js';

const fmt = (ft: string, lt: string, enc: string, esc: string): ScanFormat => ({
  fieldTerm: Buffer.from(ft, 'latin1'),
  lineTerm: Buffer.from(lt, 'latin1'),
  enclosure: enc ? enc.charCodeAt(0) : -1,
  escape: esc ? esc.charCodeAt(0) : -1,
});
const TSV = fmt('\t', '\n', '', '\\');
const CSV = fmt(',', '\n', '"', '\\');

/** Expected field: a latin1 string, null (SQL NULL) or undefined (the record ended before it). */
type Want = string | null | undefined;

interface Case {
  name: string;
  /** latin1: one byte a character. */
  data: string;
  fmt: ScanFormat;
  fields: number;
  want: Want[];
  extraData?: boolean;
  charset?: string;
  /** Per field: scanned as text in the charset (default all). */
  text?: boolean[];
}

const cases: Case[] = [
  { name: 'TSV: two fields', data: 'a\tb\n', fmt: TSV, fields: 2, want: ['a', 'b'] },
  { name: 'TSV: the last line needs no terminator', data: 'a\tb', fmt: TSV, fields: 2, want: ['a', 'b'] },
  { name: 'TSV: empty fields are empty strings, not NULL', data: '\t\n', fmt: TSV, fields: 2, want: ['', ''] },
  { name: 'an empty line is one empty field and no data for the rest', data: '\n', fmt: TSV, fields: 2, want: ['', undefined] },
  { name: 'too few fields: the rest has no data', data: 'a\n', fmt: TSV, fields: 3, want: ['a', undefined, undefined] },
  { name: 'too many fields: extra data', data: 'a\tb\tc\n', fmt: TSV, fields: 2, want: ['a', 'b'], extraData: true },
  // The last field's terminator is read with it; only bytes after it are extra (the server does not warn 1262 here).
  { name: 'a field terminator after the last field is not extra data', data: 'a\tb\t\n', fmt: TSV, fields: 2, want: ['a', 'b'] },
  { name: 'an empty extra field is', data: 'a\tb\t\t\n', fmt: TSV, fields: 2, want: ['a', 'b'], extraData: true },
  { name: '\\N is NULL', data: '\\N\tb\n', fmt: TSV, fields: 2, want: [null, 'b'] },
  { name: '\\N inside a value is the letter N', data: 'x\\Ny\n', fmt: TSV, fields: 1, want: ['xNy'] },
  { name: 'an escaped backslash before N is not NULL', data: '\\\\N\n', fmt: TSV, fields: 1, want: ['\\N'] },
  { name: 'the word NULL without an enclosure is text', data: 'NULL\tx\n', fmt: TSV, fields: 2, want: ['NULL', 'x'] },
  { name: 'escapes: \\t \\n \\r \\b \\0 \\Z and any other byte as itself', data: '\\t\\n\\r\\b\\0\\Z\\q\\\\\n', fmt: TSV, fields: 1, want: ['\t\n\r\b\0\x1aq\\'] },
  { name: 'an escaped terminator is data', data: 'a\\\tb\\\nc\n', fmt: TSV, fields: 1, want: ['a\tb\nc'] },
  { name: 'an escape at the end of the input is data', data: 'a\\', fmt: TSV, fields: 1, want: ['a\\'] },
  { name: 'no escape byte: backslashes are data', data: 'a\\tb\n', fmt: fmt('\t', '\n', '', ''), fields: 1, want: ['a\\tb'] },
  { name: 'CSV: quoted field terminators and line ends are data', data: '"a,b","c\nd"\n', fmt: CSV, fields: 2, want: ['a,b', 'c\nd'] },
  { name: 'CSV: a doubled quote is one quote', data: '"say ""hi""",x\n', fmt: CSV, fields: 2, want: ['say "hi"', 'x'] },
  { name: 'CSV: a quote that closes nothing is data', data: '"a"b",c\n', fmt: CSV, fields: 2, want: ['a"b', 'c'] },
  { name: 'CSV: a quote only opens at the start of a field', data: 'a"b,"c"\n', fmt: CSV, fields: 2, want: ['a"b', 'c'] },
  { name: 'CSV: NULL unquoted is NULL, quoted is the word', data: 'NULL,"NULL"\n', fmt: CSV, fields: 2, want: [null, 'NULL'] },
  { name: 'CSV: \\N is NULL', data: '\\N,""\n', fmt: CSV, fields: 2, want: [null, ''] },
  { name: 'CSV: an unterminated quoted field keeps its opening quote', data: '"abc', fmt: CSV, fields: 1, want: ['"abc'] },
  { name: 'CSV: a closing quote at the end of the input closes the field', data: 'x,"ab"', fmt: CSV, fields: 2, want: ['x', 'ab'] },
  { name: 'CSV: extra data after a quoted field', data: '"a",b,"c"\n', fmt: CSV, fields: 2, want: ['a', 'b'], extraData: true },
  { name: 'ESCAPED BY = ENCLOSED BY: a doubled quote is one quote', data: '"a""b",c\n', fmt: fmt(',', '\n', '"', '"'), fields: 2, want: ['a"b', 'c'] },
  { name: 'CRLF line terminator', data: 'a,b\r\n', fmt: fmt(',', '\r\n', '"', '\\'), fields: 2, want: ['a', 'b'] },
  { name: 'a lone CR is data under CRLF', data: 'a\rb,c\r\n', fmt: fmt(',', '\r\n', '"', '\\'), fields: 2, want: ['a\rb', 'c'] },
  { name: 'multi-byte terminators', data: 'a||b||\n', fmt: fmt('||', '||\n', '', '\\'), fields: 2, want: ['a', 'b'] },
  { name: 'FT = LT: no line terminator, a record is N fields', data: 'a,b', fmt: fmt(',', ',', '', '\\'), fields: 2, want: ['a', 'b'] },
  { name: 'no line terminator: a record is N fields', data: 'a,b', fmt: fmt(',', '', '', '\\'), fields: 2, want: ['a', 'b'] },
  // gbk: 81 5C is one character in a text field; in a binary field 5C is the escape.
  { name: 'gbk text: a 0x5C trail byte is not an escape', data: '\x81\\\tz\n', fmt: TSV, fields: 2, charset: 'gbk', want: ['\x81\\', 'z'] },
  { name: 'gbk binary: the same 0x5C escapes the tab', data: '\x81\\\tz\n', fmt: TSV, fields: 2, charset: 'gbk', text: [false, false], want: ['\x81\tz', undefined] },
  { name: 'gbk text: a 0x7C trail byte is not a field terminator', data: '\x81|x|y\n', fmt: fmt('|', '\n', '', '\\'), fields: 2, charset: 'gbk', want: ['\x81|x', 'y'] },
  { name: 'utf8mb4 text: a stray 3-byte lead swallows the terminator', data: '\xe4\tx\ty\n', fmt: TSV, fields: 2, charset: 'utf8mb4', want: ['\xe4\tx', 'y'] },
];

const show = (v: FieldValue): string | null | undefined => (v === undefined || v === null ? v : v.toString('latin1'));

for (const c of cases) {
  test(`parseRecord: ${c.name}`, () => {
    const bytes = Buffer.from(c.data, 'latin1');
    const cs = charsetInfo(c.charset ?? 'latin1');
    assert.ok(cs);
    const r = parseRecord(bytes, 0, bytes.length, c.fmt, cs, { fields: c.fields, textField: c.text ?? Array.from({ length: c.fields }, () => true) });
    assert.deepEqual(r.values.map(show), c.want);
    assert.equal(r.extraData, c.extraData ?? false);
  });
}

test('parseRecord reads only [start, end): the record between others', () => {
  const bytes = Buffer.from('1\tx\n2\ty\tz\n3\n', 'latin1');
  const cs = charsetInfo('latin1');
  assert.ok(cs);
  const targets = { fields: 2, textField: [true, true] };
  assert.deepEqual(parseRecord(bytes, 4, 10, TSV, cs, targets), { values: [Buffer.from('2'), Buffer.from('y')], extraData: true });
  assert.deepEqual(parseRecord(bytes, 10, 12, TSV, cs, targets).values.map(show), ['3', undefined]);
});
