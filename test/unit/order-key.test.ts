/**
 * The one key comparator: key extraction from records as LOAD DATA reads
 * them (tsv, csv with quotes, escapes, NULL), the order of numbers (exact
 * beyond 2^53, negatives, decimals, exponents), malformed numbers, text,
 * composite keys; the fast integer reader agrees with the general path;
 * keys decode back to SQL-ready parts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import {
  compareKeys,
  decodeKey,
  formatKey,
  integerKey,
  keyReader,
  plainInteger,
  plainIntegerReader,
  recordKey,
  type KeyContext,
  type KeySpec,
} from '../../src/order/key.js';
import { rng } from './chunking-support.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const CSV: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c };
const CSV_RFC: ScanFormat = { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x22 };
const utf8 = charsetInfo('utf8mb4')!;
const gbk = charsetInfo('gbk')!;

function ctx(fmt: ScanFormat, spec: KeySpec, fields = 4, cs = utf8): KeyContext {
  return { spec, fmt, cs, targets: { fields, textField: Array.from({ length: fields }, () => true) } };
}

const num = (field = 0): KeySpec => ({ fields: [field], numeric: [true] });
const text = (field = 0): KeySpec => ({ fields: [field], numeric: [false] });

function keyOf(record: string, c: KeyContext): Buffer {
  const bytes = b(record);
  return recordKey(bytes, 0, bytes.length, keyReader(c));
}

test('numeric fields order by value, exactly', () => {
  // Each list is strictly increasing by value.
  const ordered = [
    ['-18446744073709551617', '-18446744073709551616', '-9007199254740993', '-9007199254740992', '-100', '-99.5', '-1', '-0.001', '0'],
    ['0', '0.001', '0.01', '0.0100001', '0.1', '1', '1.5', '2', '9', '10', '10.01', '99', '100'],
    ['9007199254740991', '9007199254740992', '9007199254740993', '18446744073709551615', '18446744073709551616', '1e30'],
    ['1e-5', '0.0001', '1E-3', '.5', '+7'],
    ['12345678901234567890123456789', '12345678901234567890123456790', '1.2345678901234567890123456791e28'],
  ];
  const c = ctx(TSV, num());
  for (const list of ordered) {
    for (let i = 1; i < list.length; i++) {
      const x = keyOf(`${list[i - 1]}\tx\n`, c);
      const y = keyOf(`${list[i]}\tx\n`, c);
      assert.ok(compareKeys(x, y) < 0, `${list[i - 1]} < ${list[i]}`);
      assert.ok(compareKeys(y, x) > 0, `${list[i]} > ${list[i - 1]}`);
    }
  }
});

test('equal numbers written differently are equal keys', () => {
  const c = ctx(TSV, num());
  const groups = [
    ['0', '-0', '+0', '000', '0.000', '0e5', '.0', '0.'],
    ['7', '+7', '007', '7.0', '7.', '0.7e1', '70e-1', ' 7', '7 '],
    ['-12.5', '-12.50', '-1.25e1', '-125E-1', '-0012.5000'],
    ['1200', '1.2e3', '12e2', '1200.00'],
    ['18446744073709551616', '1.8446744073709551616e19'],
  ];
  for (const g of groups) {
    const first = keyOf(`${g[0]}\tx\n`, c);
    for (const v of g.slice(1)) assert.equal(compareKeys(first, keyOf(`${v}\tx\n`, c)), 0, `${g[0]} = ${v}`);
  }
});

/** An exact column's key: the value rounded to `scale` fraction digits, as the server stores it. */
const scaled = (scale: number, field = 0): KeySpec => ({ fields: [field], numeric: [true], forms: [{ kind: 'number', scale }] });

test('exact columns: values the server stores as one value are one key (rounded half away from zero to the scale)', () => {
  // [scale, groups of values stored equal, in increasing order of the stored value]
  const cases: Array<[number, string[][]]> = [
    [0, [
      ['-3', '-2.5', '-2.50', '-3.4', '-25e-1'],
      ['-2', '-2.4999', '-1.5'],
      ['0', '0.4', '-0.4', '0.49999999999999999999', '-0', '4e-1', '0.0001', '1e-40'],
      ['1', '0.5', '.5', '1.4', '5e-1'],
      ['7', '6.5', '7.49'],
      ['8', '7.5', '8.0', '75e-1', '7.5e0', '0.75E1', '8.4999', ' 7.5 '],
      ['10', '9.5', '9.99', '10.4', '1e1'],
      ['100', '99.5', '99.9999'],
      ['18446744073709551615', '18446744073709551614.5', '18446744073709551615.49'],
    ]],
    [2, [
      ['-1.01', '-1.005', '-1.0149'],
      ['0', '0.004', '-0.004', '0.00499'],
      ['0.01', '0.005', '0.0149'],
      ['1', '0.995', '0.9999', '1.00', '1.004', '100e-2'],
      ['1.01', '1.005', '1.0149', '1.01', '1005e-3', '0.1005E1'],
      ['1.1', '1.095', '1.1', '1.10'],
      ['10', '9.995', '9.9951'],
      ['123.46', '123.455', '123.4567'],
    ]],
    [4, [
      ['0.0001', '0.00005', '0.00014999'],
      ['1.2346', '1.23455', '1.234550000001'],
    ]],
  ];
  for (const [scale, groups] of cases) {
    const c = ctx(TSV, scaled(scale));
    const keys = groups.map((g) => g.map((v) => keyOf(`${v}\tx\n`, c)));
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]!;
      // The first of each group is the stored value itself: its key is the plain number's key.
      assert.deepEqual(keys[i]![0], keyOf(`${g[0]}\tx\n`, ctx(TSV, num())), `scale ${scale}: ${g[0]} is kept as it is`);
      for (let j = 1; j < g.length; j++) assert.equal(compareKeys(keys[i]![0]!, keys[i]![j]!), 0, `scale ${scale}: ${g[0]} = ${g[j]}`);
      if (i > 0) for (const x of keys[i - 1]!) for (const y of keys[i]!) assert.ok(compareKeys(x, y) < 0, `scale ${scale}: ${groups[i - 1]![0]} < ${g[0]}`);
    }
  }
  // Malformed values stay malformed (after every number), rounding or not.
  const c = ctx(TSV, scaled(0));
  for (const v of ['7.5x', '--1', '1e', 'e5', '1e-99999999']) assert.equal(keyOf(`${v}\tx\n`, c)[0], 0x05, v);
  assert.deepEqual(decodeKey(keyOf('-2.5\tx\n', c)), [{ kind: 'number', decimal: '-3' }]);
  assert.deepEqual(decodeKey(keyOf('0.995\tx\n', ctx(TSV, scaled(2)))), [{ kind: 'number', decimal: '1' }]);
});

test('exact columns: random values round as a BigInt reference does', () => {
  const rand = rng(11);
  const digits = (n: number): string => Array.from({ length: n }, () => String(Math.floor(rand() * 10))).join('');
  for (let t = 0; t < 3000; t++) {
    const scale = Math.floor(rand() * 4);
    const int = digits(Math.floor(rand() * 5));
    const frac = digits(Math.floor(rand() * 6));
    const exp = rand() < 0.3 ? Math.floor(rand() * 9) - 4 : 0;
    const neg = rand() < 0.4;
    const text = `${neg ? '-' : ''}${int || (frac ? '' : '0')}${frac ? `.${frac}` : ''}${exp ? `e${exp}` : ''}`;
    // value = m × 10^x; the stored value is round(m × 10^(x + scale)) × 10^-scale, half away from zero.
    const m = BigInt(`${int}${frac}` || '0');
    const x = exp - frac.length;
    let r: bigint;
    if (x + scale >= 0) r = m * 10n ** BigInt(x + scale);
    else {
      const d = 10n ** BigInt(-(x + scale));
      r = m / d + (2n * (m % d) >= d ? 1n : 0n);
    }
    const abs = r.toString().padStart(scale + 1, '0');
    const stored = `${neg && r !== 0n ? '-' : ''}${abs.slice(0, abs.length - scale)}${scale ? `.${abs.slice(abs.length - scale)}` : ''}`;
    assert.deepEqual(keyOf(`${text}\tx\n`, ctx(TSV, scaled(scale))), keyOf(`${stored}\tx\n`, ctx(TSV, num())), `${text} at scale ${scale} is ${stored}`);
  }
});

test('NULL first, malformed numbers after every number, byte-wise among themselves', () => {
  const c = ctx(TSV, num());
  const ordered = ['\\N', '-1e300', '-5', '0', '3', '1e300', '', ' ', '+', '1.2.3', '12abc', '1e', 'abc', 'x'];
  for (let i = 1; i < ordered.length; i++) {
    const x = keyOf(`${ordered[i - 1]}\tv\n`, c);
    const y = keyOf(`${ordered[i]}\tv\n`, c);
    assert.ok(compareKeys(x, y) < 0, `${JSON.stringify(ordered[i - 1])} < ${JSON.stringify(ordered[i])}`);
  }
  // A record without the key field: like NULL.
  const short = ctx(TSV, num(2), 3);
  assert.equal(compareKeys(keyOf('5\tx\n', short), keyOf('\\N\tx\t\\N\n', short)), 0);
  // Exponents beyond any column type are malformed, not wrapped.
  assert.deepEqual(decodeKey(keyOf('1e99999\tx\n', c)), [{ kind: 'malformed', bytes: b('1e99999') }]);
});

test('keys are read as LOAD DATA reads the fields', () => {
  interface Case {
    name: string;
    fmt: ScanFormat;
    spec: KeySpec;
    record: string;
    parts: ReturnType<typeof decodeKey>;
  }
  const t = (s: string): { kind: 'text'; bytes: Buffer } => ({ kind: 'text', bytes: b(s) });
  const n = (s: string): { kind: 'number'; decimal: string } => ({ kind: 'number', decimal: s });
  const cases: Case[] = [
    { name: 'tsv second field', fmt: TSV, spec: num(1), record: 'a\t42\tz\n', parts: [n('42')] },
    { name: 'tsv escaped tab in an earlier field', fmt: TSV, spec: num(1), record: 'a\\\tb\t42\n', parts: [n('42')] },
    { name: 'tsv escapes in a text key', fmt: TSV, spec: text(0), record: 'a\\tb\\\\c\\n\t1\n', parts: [t('a\tb\\c\n')] },
    { name: 'tsv \\N is NULL', fmt: TSV, spec: text(1), record: 'x\t\\N\n', parts: [{ kind: 'null' }] },
    { name: 'csv quoted number', fmt: CSV, spec: num(0), record: '"12",x\r\n', parts: [n('12')] },
    { name: 'csv quoted field with separator before the key', fmt: CSV, spec: num(1), record: '"a,b",7\r\n', parts: [n('7')] },
    { name: 'csv embedded newline before the key', fmt: CSV, spec: num(1), record: '"l1\nl2\r\nl3",-3\r\n', parts: [n('-3')] },
    { name: 'csv doubled quote in a text key', fmt: CSV, spec: text(0), record: '"say ""hi""",1\r\n', parts: [t('say "hi"')] },
    { name: 'csv unquoted NULL word', fmt: CSV, spec: text(0), record: 'NULL,1\r\n', parts: [{ kind: 'null' }] },
    { name: 'csv quoted NULL word is text', fmt: CSV, spec: text(0), record: '"NULL",1\r\n', parts: [t('NULL')] },
    { name: 'rfc csv doubled quote', fmt: CSV_RFC, spec: text(1), record: '1,"a""b"\n', parts: [t('a"b')] },
    { name: 'composite (number, text)', fmt: TSV, spec: { fields: [1, 0], numeric: [true, false] }, record: 'k\t-0.50\n', parts: [n('-0.5'), t('k')] },
    { name: 'text with a NUL byte', fmt: TSV, spec: text(0), record: 'a\\0b\t1\n', parts: [t('a\0b')] },
    { name: 'big integer', fmt: TSV, spec: num(0), record: '123456789012345678901234567890\n', parts: [n('123456789012345678901234567890')] },
    { name: 'small decimal', fmt: TSV, spec: num(0), record: '-0.000120\n', parts: [n('-0.00012')] },
    { name: 'exponent to integer', fmt: TSV, spec: num(0), record: '25e3\n', parts: [n('25000')] },
    { name: 'malformed number keeps its text', fmt: TSV, spec: num(0), record: '12abc\tx\n', parts: [{ kind: 'malformed', bytes: b('12abc') }] },
  ];
  for (const c of cases) {
    const kc = ctx(c.fmt, c.spec);
    assert.deepEqual(decodeKey(keyOf(c.record, kc)), c.parts, c.name);
  }
});

test('text compares byte-wise; composite keys part by part', () => {
  const c = ctx(TSV, text(0));
  const ordered = ['\\N', '', '\\0', 'A', 'B', 'a', 'a\\0', 'a\\0\\0', 'ab', 'b', 'é', '東'];
  for (let i = 1; i < ordered.length; i++) {
    assert.ok(compareKeys(keyOf(`${ordered[i - 1]}\t1\n`, c), keyOf(`${ordered[i]}\t1\n`, c)) < 0, `${ordered[i - 1]} < ${ordered[i]}`);
  }
  // The first part decides before the second; a shorter text part never swallows the next part.
  const comp = ctx(TSV, { fields: [0, 1], numeric: [false, true] });
  const rows = ['a\t9', 'a\t10', 'a\\0\t1', 'ab\t-5', 'b\t\\N', 'b\t0'];
  for (let i = 1; i < rows.length; i++) assert.ok(compareKeys(keyOf(`${rows[i - 1]}\n`, comp), keyOf(`${rows[i]}\n`, comp)) < 0, `${rows[i - 1]} < ${rows[i]}`);
});

test('the fast integer reader: plain integers only, the same order as the general path', () => {
  interface Case {
    name: string;
    fmt: ScanFormat;
    field: number;
    record: string;
    value: number | 'general';
  }
  const cases: Case[] = [
    { name: 'first field', fmt: TSV, field: 0, record: '13800138000\tx\n', value: 13800138000 },
    { name: 'negative', fmt: TSV, field: 0, record: '-42\tx\n', value: -42 },
    { name: 'minus zero', fmt: TSV, field: 0, record: '-0\tx\n', value: 0 },
    { name: 'leading zeros', fmt: TSV, field: 0, record: '007\n', value: 7 },
    { name: 'last field, no terminator', fmt: TSV, field: 1, record: 'a\t15', value: 15 },
    { name: 'third field', fmt: TSV, field: 2, record: 'a\tb\t99\tc\n', value: 99 },
    { name: '15 digits', fmt: TSV, field: 0, record: '999999999999999\n', value: 999999999999999 },
    { name: '16 digits', fmt: TSV, field: 0, record: '9999999999999999\n', value: 'general' },
    { name: 'plus sign', fmt: TSV, field: 0, record: '+5\n', value: 'general' },
    { name: 'decimal', fmt: TSV, field: 0, record: '5.0\n', value: 'general' },
    { name: 'space', fmt: TSV, field: 0, record: ' 5\n', value: 'general' },
    { name: 'NULL', fmt: TSV, field: 0, record: '\\N\n', value: 'general' },
    { name: 'escape before the key field', fmt: TSV, field: 1, record: 'a\\\tb\t5\n', value: 'general' },
    { name: 'empty', fmt: TSV, field: 0, record: '\tx\n', value: 'general' },
    { name: 'missing field', fmt: TSV, field: 3, record: 'a\tb\n', value: 'general' },
    { name: 'csv crlf', fmt: CSV, field: 1, record: 'a,17\r\n', value: 17 },
    { name: 'csv quoted key', fmt: CSV, field: 0, record: '"17",a\r\n', value: 'general' },
    { name: 'csv quote before the key', fmt: CSV, field: 1, record: '"a,b",17\r\n', value: 'general' },
  ];
  for (const c of cases) {
    const kc = ctx(c.fmt, num(c.field));
    const reader = plainIntegerReader(kc, true)!;
    const bytes = b(c.record);
    const v = plainInteger(bytes, 0, bytes.length, reader);
    if (c.value === 'general') assert.ok(Number.isNaN(v), c.name);
    else {
      assert.ok(Object.is(v, c.value), `${c.name}: ${v}`);
      assert.equal(compareKeys(integerKey(v), keyOf(c.record, kc)), 0, `${c.name}: same key as the general path`);
    }
  }
  // Double-byte sets: a byte >= 0x80 before the key field sends the record to the general path
  // (a gbk trail byte can be a separator byte); the key field itself is read byte-wise.
  const g = plainIntegerReader(ctx(TSV, num(1), 4, gbk), true)!;
  const mb = Buffer.concat([Buffer.from([0x81, 0x40]), b('\t5\n')]);
  assert.ok(Number.isNaN(plainInteger(mb, 0, mb.length, g)));
  // Malformed UTF-8 can swallow a separator: only well-formed chunks read past text fields.
  assert.ok(Number.isNaN(plainInteger(Buffer.concat([Buffer.from([0xe4]), b('\t5\n')]), 0, 4, plainIntegerReader(ctx(TSV, num(1)), false)!)));
  // Terminators that overlap each other: no fast reader at all.
  assert.equal(plainIntegerReader(ctx({ ...TSV, fieldTerm: b('\n'), lineTerm: b('\n\n') }, num(0)), true), undefined);
  assert.equal(plainIntegerReader(ctx(TSV, { fields: [0, 1], numeric: [true, true] }), true), undefined);
  assert.equal(plainIntegerReader(ctx(TSV, text(0)), true), undefined);
});

test('random integers: integerKey order is numeric order, decodeKey gives them back', () => {
  const rand = rng(7);
  const values: number[] = [0, 1, -1, 2 ** 53 - 1, -(2 ** 53 - 1), 10, 100, 99, -10, -100];
  for (let i = 0; i < 2000; i++) {
    const digits = 1 + Math.floor(rand() * 15);
    const v = Math.floor(rand() * 10 ** digits) * (rand() < 0.3 ? -1 : 1);
    values.push(v + 0);
  }
  const keys = values.map((v) => ({ v, k: integerKey(v) }));
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1]!;
    const c = keys[i]!;
    assert.equal(Math.sign(compareKeys(a.k, c.k)), Math.sign(a.v - c.v), `${a.v} vs ${c.v}`);
  }
  for (const { v, k } of keys) assert.deepEqual(decodeKey(k), [{ kind: 'number', decimal: String(v) }]);
});

test('formatKey for messages', () => {
  const c = ctx(TSV, { fields: [0, 1, 2], numeric: [true, false, true] });
  assert.equal(formatKey(keyOf('-1.50\tab"c\t\\N\n', c)), '(-1.5, "ab\\"c", NULL)');
});
