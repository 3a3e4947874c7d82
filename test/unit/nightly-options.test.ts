/**
 * The nightly-job options, pure parts: --columns header (the header's names
 * to columns), --skip-fields, and their option checks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { toLoadOptions } from '../../src/config/loadOptions.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { headerNames, mapHeader } from '../../src/introspect/header.js';
import { scanFormatOf } from '../../src/introspect/target.js';
import { table } from './facts/index.js';

const throwsCode = (fn: () => unknown, code: string, re?: RegExp): void => {
  assert.throws(fn, (e: unknown) => isFlatloadError(e) && e.code === code && (!re || re.test(e.message)), `expected ${code} ${String(re)}`);
};

const base = { file: 'f.csv', table: 'db.t' };
const utf8 = charsetInfo('utf8mb4')!;

test('--columns header: option cases', () => {
  const h = toLoadOptions({ ...base, columns: 'header' });
  assert.equal(h.columnsFromHeader, true);
  assert.equal(h.columns, undefined);
  assert.equal(h.format.ignoreLines, 1, 'the header line is skipped without --ignore-lines');
  assert.equal(toLoadOptions({ ...base, columns: ' HEADER ' }).columnsFromHeader, true);
  assert.equal(toLoadOptions({ ...base, columns: 'header', ignoreLines: 3 }).format.ignoreLines, 3);
  // A column called header is still reachable, backquoted.
  const quoted = toLoadOptions({ ...base, columns: '`header`' });
  assert.equal(quoted.columnsFromHeader, false);
  assert.deepEqual(quoted.columns, [{ name: 'header', isVariable: false }]);
  // Positional stays the default, for csv too: old commands keep their meaning.
  const csv = toLoadOptions({ ...base, dialect: 'csv', ignoreLines: 1 });
  assert.equal(csv.columnsFromHeader, false);
  assert.equal(csv.columns, undefined);
  assert.deepEqual(toLoadOptions({ ...base, columns: 'header', skipFields: 'a, b' }).skipFields, ['a', 'b']);
  throwsCode(() => toLoadOptions({ ...base, columns: 'header', ignoreLines: 0 }), 'USAGE', /--ignore-lines 0/);
  throwsCode(() => toLoadOptions({ ...base, skipFields: 'a' }), 'USAGE', /--columns header/);
  throwsCode(() => toLoadOptions({ ...base, columns: 'a,b', skipFields: 'a' }), 'USAGE', /--columns header/);
  throwsCode(() => toLoadOptions({ ...base, columns: 'header', skipFields: 'a,,b' }), 'USAGE', /empty name/);
});

test('headerNames reads the first record as the server would split it', () => {
  const csv = scanFormatOf(toLoadOptions({ ...base, dialect: 'csv' }));
  const tsv = scanFormatOf(toLoadOptions(base));
  const cases: Array<[string, typeof csv, string, number, boolean, string[] | undefined]> = [
    ['csv', csv, 'id,user_id,weight\r\n1,2,3\r\n', 0, true, ['id', 'user_id', 'weight']],
    ['quoted, with a comma', csv, '"id","a,b", Weight \r\n1,2,3\r\n', 0, true, ['id', 'a,b', 'Weight']],
    ['after a BOM', csv, '\ufeffid,x\r\n', 3, true, ['id', 'x']],
    ['tsv', tsv, 'id\tuser_id\n1\t2\n', 0, true, ['id', 'user_id']],
    ['only the header, no terminator, whole file', tsv, 'id\tuser_id', 0, true, ['id', 'user_id']],
    ['no terminator in a partial sample', tsv, 'id\tuser_id', 0, false, undefined],
    ['empty input', tsv, '', 0, true, undefined],
    ['an empty name', csv, 'id,,x\r\n', 0, true, ['id', '', 'x']],
  ];
  for (const [name, fmt, text, start, complete, want] of cases) {
    assert.deepEqual(headerNames(Buffer.from(text, 'utf8'), start, complete, fmt, utf8), want, name);
  }
});

test('mapHeader: header names to columns, case-insensitively; clear errors', () => {
  const t = table('user3', 'InnoDB'); // id AUTO_INCREMENT, user_id NOT NULL no default, weight … level_num NULL
  const where = { file: 'u.csv', display: 'db.user3', byteOffset: 0 };
  const names = (cols: ReturnType<typeof mapHeader>): string[] => cols.map((c) => (c.isVariable ? `@${c.name}` : c.name));
  const ok: Array<[string, string[], string[], string[]]> = [
    ['same order', ['id', 'user_id', 'weight', 'level', 'beat_rate', 'level_num'], [], ['id', 'user_id', 'weight', 'level', 'beat_rate', 'level_num']],
    ['another order, other case', ['LEVEL', 'User_Id', 'id'], [], ['level', 'user_id', 'id']],
    ['auto-increment and NULL-able columns may be absent', ['user_id'], [], ['user_id']],
    ['a skipped field', ['user_id', 'comment', 'weight'], ['Comment'], ['user_id', '@skip2', 'weight']],
  ];
  for (const [name, header, skip, want] of ok) assert.deepEqual(names(mapHeader(header, t, skip, where)), want, name);
  const bad: Array<[string, string[], string[], string, RegExp]> = [
    ['a field the table lacks', ['user_id', 'comment', 'extra'], [], 'UNKNOWN_COLUMN', /"comment", "extra", not columns of db\.user3/],
    ['a NOT NULL column without default missing', ['id', 'weight'], [], 'UNKNOWN_COLUMN', /`user_id` \(NOT NULL, no default\)/],
    ['a name given twice', ['user_id', 'USER_ID'], [], 'INPUT_MALFORMED', /names "USER_ID" twice/],
    ['an empty name', ['user_id', ''], [], 'INPUT_MALFORMED', /field 2 of the header line has no name/],
    ['--skip-fields names no field', ['user_id'], ['nope'], 'USAGE', /"nope", not a field of the header/],
  ];
  for (const [name, header, skip, code, re] of bad) throwsCode(() => mapHeader(header, t, skip, where), code, re);
  // The error says where: file, line 1, byte offset; and the hint how to go on.
  try {
    mapHeader(['user_id', 'comment'], t, [], { ...where, byteOffset: 3 });
    assert.fail('expected an error');
  } catch (e) {
    assert.ok(isFlatloadError(e));
    assert.deepEqual([e.context.file, e.context.line, e.context.byteOffset], ['u.csv', 1, 3]);
    assert.match(e.context.hint ?? '', /--skip-fields 'comment'/);
  }
});
