/**
 * Key-ordered chunks: recordEnds splits a chunk into records, sortPermutation
 * orders them by the clustered key (ties in file order), permuteRecords
 * writes them in that order, keySpecOf finds the key among the file's fields.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo, type CharsetInfo } from '../../src/chunking/charsets.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import type { TableFacts } from '../../src/introspect/types.js';
import { keySpecOf, permuteRecords, recordEnds, sortPermutation, type KeySpec } from '../../src/load/keyOrder.js';

const TSV: ScanFormat = { fieldTerm: Buffer.from('\t'), lineTerm: Buffer.from('\n'), enclosure: -1, escape: 0x5c };
const CSV: ScanFormat = { fieldTerm: Buffer.from(','), lineTerm: Buffer.from('\n'), enclosure: 0x22, escape: 0x5c };
const CRLF: ScanFormat = { ...CSV, lineTerm: Buffer.from('\r\n') };

function charset(name: string): CharsetInfo {
  const cs = charsetInfo(name);
  assert.ok(cs, name);
  return cs;
}

interface Case {
  name: string;
  data: string;
  fmt?: ScanFormat;
  spec: KeySpec;
  fields?: number;
  /** The records in the order they must be sent, by their 0-based position in the file. */
  order: number[];
}

const cases: Case[] = [
  { name: 'one numeric key', data: '3\ta\n1\tb\n2\tc\n', spec: { fields: [0], numeric: [true] }, order: [1, 2, 0] },
  { name: 'ties stay in file order', data: '2\ta\n1\tb\n2\tc\n1\td\n', spec: { fields: [0], numeric: [true] }, order: [1, 3, 0, 2] },
  { name: 'negative numbers', data: '-1\n5\n-10\n0\n', spec: { fields: [0], numeric: [true] }, fields: 1, order: [2, 0, 3, 1] },
  { name: 'numbers compare as numbers, not text', data: '10\n9\n100\n', spec: { fields: [0], numeric: [true] }, fields: 1, order: [1, 0, 2] },
  { name: 'the key in the second field', data: 'a\t3\nb\t1\nc\t2\n', spec: { fields: [1], numeric: [true] }, order: [1, 2, 0] },
  { name: 'the last record without a line terminator', data: '2\tx\n1\ty', spec: { fields: [0], numeric: [true] }, order: [1, 0] },
  // Read as 12 and 12 by the digit reader they would tie and keep file order.
  { name: 'a number that is not the whole field is compared whole', data: '12b\t1\n12a\t2\n', spec: { fields: [0], numeric: [true] }, order: [1, 0] },
  { name: 'NULL (\\N) sorts first', data: '5\n\\N\n3\n', spec: { fields: [0], numeric: [true] }, fields: 1, order: [1, 2, 0] },
  { name: 'more than 15 digits go through the parser, still as numbers', data: '12345678901234567\n2\n', spec: { fields: [0], numeric: [true] }, fields: 1, order: [1, 0] },
  { name: 'text keys compare byte-wise', data: 'b\na\nB\nab\n', spec: { fields: [0], numeric: [false] }, fields: 1, order: [2, 1, 3, 0] },
  { name: 'composite key: number then text', data: '1\tb\n1\ta\n0\tz\n', spec: { fields: [0, 1], numeric: [true, false] }, order: [2, 1, 0] },
  { name: 'composite key in field order other than the file', data: 'x\t2\ny\t1\nx\t1\n', spec: { fields: [1, 0], numeric: [true, false] }, order: [2, 1, 0] },
  { name: 'quoted numeric keys (CSV)', data: '"30",a\n"4",b\n5,c\n', fmt: CSV, spec: { fields: [0], numeric: [true] }, order: [1, 2, 0] },
  { name: 'quoted text keys with escapes and embedded line ends', data: '"b\nx",1\n"a\\"q",2\n"a",3\n', fmt: CSV, spec: { fields: [0], numeric: [false] }, order: [2, 1, 0] },
  { name: 'CRLF line ends', data: '2,a\r\n1,b\r\n', fmt: CRLF, spec: { fields: [0], numeric: [true] }, order: [1, 0] },
  { name: 'one record', data: '7\tx\n', spec: { fields: [0], numeric: [true] }, order: [0] },
];

for (const c of cases) {
  test(`sortPermutation: ${c.name}`, () => {
    const bytes = Buffer.from(c.data, 'utf8');
    const fmt = c.fmt ?? TSV;
    const cs = charset('utf8mb4');
    const fields = c.fields ?? 2;
    const targets = { fields, textField: Array.from({ length: fields }, () => true) };
    const ends = recordEnds(bytes, fmt, cs, targets);
    assert.equal(ends.length, c.order.length, 'records');
    assert.equal(ends[ends.length - 1], bytes.length);
    const perm = sortPermutation(bytes, ends, { spec: c.spec, fmt, cs, targets });
    assert.deepEqual([...perm], c.order);
    // The permuted chunk holds the same records, each terminated, in that order.
    const out = permuteRecords(bytes, ends, perm, fmt.lineTerm);
    const record = (i: number): string => {
      const r = bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i]).toString('utf8');
      return r.endsWith(fmt.lineTerm.toString()) ? r : r + fmt.lineTerm.toString();
    };
    assert.equal(out.toString('utf8'), c.order.map(record).join(''));
  });
}

test('recordEnds: quoted line ends stay inside their record; an empty chunk has none', () => {
  const cs = charset('utf8mb4');
  const targets = { fields: 2, textField: [true, true] };
  assert.deepEqual([...recordEnds(Buffer.from('"a\nb",1\nc,2\n'), CSV, cs, targets)], [8, 12]);
  assert.deepEqual([...recordEnds(Buffer.alloc(0), CSV, cs, targets)], []);
  const many = Buffer.from('1\tx\n'.repeat(5000));
  const ends = recordEnds(many, TSV, cs, targets);
  assert.equal(ends.length, 5000);
  assert.equal(ends[4999], many.length);
});

function table(columns: Array<[name: string, dataType: string]>, key: string[] | undefined): TableFacts {
  return {
    columns: columns.map(([name, dataType]) => ({ name, dataType })),
    clusteredKey: key ? { columns: key } : undefined,
  } as unknown as TableFacts;
}

const specs: Array<[name: string, t: TableFacts, columns: Array<{ name: string; isVariable: boolean }> | undefined, expected: KeySpec | undefined]> = [
  ['table order, numeric key', table([['id', 'bigint'], ['name', 'varchar']], ['id']), undefined, { fields: [0], numeric: [true] }],
  ['table order, text key', table([['code', 'char'], ['n', 'int']], ['code']), undefined, { fields: [0], numeric: [false] }],
  ['--columns moves the key; names match without case', table([['id', 'int'], ['name', 'varchar']], ['ID']), [{ name: 'name', isVariable: false }, { name: 'Id', isVariable: false }], { fields: [1], numeric: [true] }],
  ['composite key', table([['a', 'int'], ['b', 'date'], ['c', 'decimal']], ['c', 'b']), undefined, { fields: [2, 1], numeric: [true, false] }],
  ['a key column read into a @variable is not in the file', table([['id', 'int']], ['id']), [{ name: 'id', isVariable: true }], undefined],
  ['a key column absent from --columns', table([['id', 'int'], ['v', 'int']], ['id']), [{ name: 'v', isVariable: false }], undefined],
  ['no clustered key', table([['v', 'int']], undefined), undefined, undefined],
];

for (const [name, t, columns, expected] of specs) {
  test(`keySpecOf: ${name}`, () => {
    assert.deepEqual(keySpecOf(t, columns), expected);
  });
}
