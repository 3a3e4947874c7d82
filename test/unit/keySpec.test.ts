/**
 * clusteredKeyInFile: where the clustered key's columns are among the
 * file's fields, whether each compares as a number, how text and dates are
 * read, and whether the sort's order and equality are the server's (what
 * duplicate handling and MyRocks' strict-order bulk load need).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusteredKeyInFile, type FileKey } from '../../src/introspect/keySpec.js';
import type { TableFacts } from '../../src/introspect/types.js';

function table(columns: Array<[name: string, dataType: string, characterSet?: string | null, collation?: string, columnType?: string]>, key: string[] | undefined): TableFacts {
  return {
    columns: columns.map(([name, dataType, characterSet, collation, columnType]) => ({
      name,
      dataType,
      columnType: columnType ?? dataType,
      characterSet: characterSet === undefined ? (/char|text/.test(dataType) ? 'utf8mb4' : null) : characterSet,
      collation: collation ?? (/char|text/.test(dataType) ? 'utf8mb4_general_ci' : null),
    })),
    clusteredKey: key ? { name: 'k', columns: key } : undefined,
  } as unknown as TableFacts;
}

const k = (fields: number[], numeric: boolean[], columns: string[], exact: boolean, more: Partial<FileKey> = {}): FileKey => ({ name: 'k', columns, fields, numeric, exact, ...more });
/** An exact number column's form: its values rounded to the column's scale. */
const n = (scale: number) => ({ kind: 'number', scale }) as const;
const CI = "code is text in utf8mb4_general_ci, which calls values equal or orders them otherwise than by their bytes (case, accents), and flatload does not compute that collation";

const cases: Array<[name: string, t: TableFacts, columns: Array<{ name: string; isVariable: boolean }> | undefined, expected: FileKey | undefined]> = [
  ['table order, numeric key', table([['id', 'bigint'], ['name', 'varchar']], ['id']), undefined, k([0], [true], ['id'], true, { forms: [n(0)] })],
  ['integer types have scale 0, whatever the display width', table([['a', 'int', null, undefined, 'int(11)'], ['b', 'bigint', null, undefined, 'bigint(20) unsigned'], ['c', 'tinyint', null, undefined, 'tinyint(4)']], ['a', 'b', 'c']), undefined, k([0, 1, 2], [true, true, true], ['a', 'b', 'c'], true, { forms: [n(0), n(0), n(0)] })],
  ['DECIMAL(p,s) has scale s', table([['d', 'decimal', null, undefined, 'decimal(6,2)'], ['e', 'decimal', null, undefined, 'decimal(20,10) unsigned'], ['f', 'decimal', null, undefined, 'decimal(10,0)']], ['d', 'e', 'f']), undefined, k([0, 1, 2], [true, true, true], ['d', 'e', 'f'], true, { forms: [n(2), n(10), n(0)] })],
  ['table order, text key in a collation: not exact, and says why', table([['code', 'char'], ['n', 'int']], ['code']), undefined, k([0], [false], ['code'], false, { inexact: CI })],
  ['text in a _bin collation: trailing spaces do not count (PAD SPACE)', table([['code', 'varchar', 'utf8mb4', 'utf8mb4_bin']], ['code']), undefined, k([0], [false], ['code'], true, { forms: [{ kind: 'pad-space' }] })],
  ['text in a NO PAD binary collation: every byte counts', table([['code', 'varchar', 'utf8mb4', 'utf8mb4_nopad_bin']], ['code']), undefined, k([0], [false], ['code'], true)],
  [
    'a NO PAD VARCHAR(5): spaces beyond its 5 characters do not count',
    (() => {
      const t = table([['code', 'varchar', 'utf8mb4', 'utf8mb4_nopad_bin']], ['code']);
      t.columns[0]!.maxChars = 5;
      return t;
    })(),
    undefined,
    k([0], [false], ['code'], true, { forms: [{ kind: 'nopad', chars: 5 }] }),
  ],
  ['YEAR reads as a number but is not exact', table([['y', 'year']], ['y']), undefined, k([0], [true], ['y'], false, { inexact: 'y is YEAR, whose values the server reads otherwise than as plain numbers' })],
  ['a fixed BINARY is padded with zero bytes: not exact', table([['h', 'binary', null]], ['h']), undefined, k([0], [false], ['h'], false, { inexact: "h is binary, whose equality and order flatload does not compute" })],
  ['a binary key is exact', table([['h', 'varbinary', null], ['n', 'int']], ['h']), undefined, k([0], [false], ['h'], true)],
  ['--columns moves the key; names match without case', table([['id', 'int'], ['name', 'varchar']], ['ID']), [{ name: 'name', isVariable: false }, { name: 'Id', isVariable: false }], k([1], [true], ['ID'], true, { forms: [n(0)] })],
  ['composite key: a date part is read as the server reads dates', table([['a', 'int'], ['b', 'date'], ['c', 'decimal']], ['c', 'b']), undefined, k([2, 1], [true, false], ['c', 'b'], true, { forms: [n(0), { kind: 'date' }] })],
  ['composite key: a TIMESTAMP part is not exact', table([['a', 'int'], ['t', 'timestamp']], ['a', 't']), undefined, k([0, 1], [true, false], ['a', 't'], false, { forms: [n(0), null], inexact: 't is timestamp, whose equality and order flatload does not compute' })],
  ['a key column read into a @variable is not in the file', table([['id', 'int']], ['id']), [{ name: 'id', isVariable: true }], undefined],
  ['a key column absent from --columns', table([['id', 'int'], ['v', 'int']], ['id']), [{ name: 'v', isVariable: false }], undefined],
  ['no clustered key', table([['v', 'int']], undefined), undefined, undefined],
];

for (const [name, t, columns, expected] of cases) {
  test(`clusteredKeyInFile: ${name}`, () => {
    assert.deepEqual(clusteredKeyInFile(t, columns), expected);
  });
}
