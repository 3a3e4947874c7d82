/**
 * clusteredKeyInFile: where the clustered key's columns are among the
 * file's fields, whether each compares as a number, and whether byte order
 * is the engine's order (what MyRocks' strict-order bulk load needs).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusteredKeyInFile, type FileKey } from '../../src/introspect/keySpec.js';
import type { TableFacts } from '../../src/introspect/types.js';

function table(columns: Array<[name: string, dataType: string, characterSet?: string | null]>, key: string[] | undefined): TableFacts {
  return {
    columns: columns.map(([name, dataType, characterSet]) => ({ name, dataType, characterSet: characterSet === undefined ? (/char|text/.test(dataType) ? 'utf8mb4' : null) : characterSet })),
    clusteredKey: key ? { name: 'k', columns: key } : undefined,
  } as unknown as TableFacts;
}

const k = (fields: number[], numeric: boolean[], columns: string[], exact: boolean): FileKey => ({ name: 'k', columns, fields, numeric, exact });

const cases: Array<[name: string, t: TableFacts, columns: Array<{ name: string; isVariable: boolean }> | undefined, expected: FileKey | undefined]> = [
  ['table order, numeric key', table([['id', 'bigint'], ['name', 'varchar']], ['id']), undefined, k([0], [true], ['id'], true)],
  ['table order, text key in a collation: not exact', table([['code', 'char'], ['n', 'int']], ['code']), undefined, k([0], [false], ['code'], false)],
  ['a binary key is exact', table([['h', 'varbinary', null], ['n', 'int']], ['h']), undefined, k([0], [false], ['h'], true)],
  ['--columns moves the key; names match without case', table([['id', 'int'], ['name', 'varchar']], ['ID']), [{ name: 'name', isVariable: false }, { name: 'Id', isVariable: false }], k([1], [true], ['ID'], true)],
  ['composite key: a date part is not exact', table([['a', 'int'], ['b', 'date'], ['c', 'decimal']], ['c', 'b']), undefined, k([2, 1], [true, false], ['c', 'b'], false)],
  ['a key column read into a @variable is not in the file', table([['id', 'int']], ['id']), [{ name: 'id', isVariable: true }], undefined],
  ['a key column absent from --columns', table([['id', 'int'], ['v', 'int']], ['id']), [{ name: 'v', isVariable: false }], undefined],
  ['no clustered key', table([['v', 'int']], undefined), undefined, undefined],
];

for (const [name, t, columns, expected] of cases) {
  test(`clusteredKeyInFile: ${name}`, () => {
    assert.deepEqual(clusteredKeyInFile(t, columns), expected);
  });
}
