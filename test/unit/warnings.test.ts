/**
 * What a LOAD DATA LOCAL warning means for its row (classifyWarning), which
 * row it names (warningRow), and the OK packet's counts (parseLoadInfo).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeRejects } from '../../src/load/commit.js';
import { classifyWarning, describeWarnings, parseLoadInfo, problemPolicy, refusedRow, warningRow, type LoadInfo, type ServerWarning, type WarningClass } from '../../src/load/warnings.js';

const classes: Array<[level: string, code: number, message: string, expected: WarningClass]> = [
  ['Warning', 1062, "Duplicate entry '7' for key 'PRIMARY'", 'skipped'],
  ['Error', 1062, "Duplicate entry '7' for key 'PRIMARY'", 'skipped'],
  ['Warning', 1022, "Can't write; duplicate key in table 't'", 'skipped'],
  ['Warning', 1169, "Can't write, because of unique constraint, to table 't'", 'skipped'],
  ['Warning', 1586, "Duplicate entry '7' for key 'u'", 'skipped'],
  ['Warning', 1557, 'Upholding foreign key constraints for table failed, duplicate key', 'skipped'],
  ['Warning', 1261, "Row 3 doesn't contain data for all columns", 'malformed'],
  ['Warning', 1262, 'Row 4 was truncated; it contained more data than there were input columns', 'malformed'],
  ['Warning', 1263, "Column set to default value; NULL supplied to NOT NULL column 'a' at row 1", 'altered'],
  ['Warning', 1264, "Out of range value for column 'n' at row 2", 'altered'],
  ['Warning', 1265, "Data truncated for column 'd' at row 5", 'altered'],
  ['Warning', 1292, "Incorrect datetime value: 'x' for column 'ts' at row 1", 'altered'],
  ['Warning', 1300, 'Invalid utf8mb4 character string', 'altered'],
  ['Warning', 1366, "Incorrect integer value: 'abc' for column 'n' at row 1", 'altered'],
  ['Warning', 1406, "Data too long for column 'c' at row 1", 'altered'],
  ['Warning', 1048, "Column 'a' cannot be null", 'altered'],
  ['Warning', 1364, "Field 'b' doesn't have a default value", 'altered'],
  ['Warning', 1411, 'Incorrect datetime value', 'altered'],
  ['Warning', 4025, "CONSTRAINT `c` failed for `t`", 'altered'],
  ['Warning', 1690, 'BIGINT UNSIGNED value is out of range', 'altered'],
  ['Warning', 1918, 'Encountered illegal value when converting', 'altered'],
  // Unknown warnings are data changes until shown otherwise.
  ['Warning', 9999, 'something new', 'altered'],
  ['Warning', 1105, 'Unknown error', 'altered'],
  // A note never changes data, whatever its code.
  ['Note', 1265, 'Data truncated', 'note'],
  ['NOTE', 1062, 'Duplicate entry', 'note'],
  ['note', 1003, 'anything', 'note'],
];

for (const [level, code, message, expected] of classes) {
  test(`classifyWarning: ${level} ${code} is ${expected}`, () => {
    assert.equal(classifyWarning({ level, code, message }), expected);
  });
}

const rows: Array<[message: string, row: number | undefined]> = [
  ["Data truncated for column 'd' at row 5", 5],
  ["Incorrect integer value: 'abc' for column 'n' at row 12345", 12345],
  ["Out of range value for column 'n' AT ROW 2", 2],
  ["Row 3 doesn't contain data for all columns", 3],
  ['Row 4 was truncated; it contained more data than there were input columns', 4],
  ["Duplicate entry '7' for key 'PRIMARY'", undefined],
  ["Data truncated for column 'row 9' at rowing", undefined],
  ['', undefined],
];

for (const [message, row] of rows) {
  test(`warningRow: ${JSON.stringify(message)} names ${String(row)}`, () => {
    assert.equal(warningRow(message), row);
  });
}

const infos: Array<[info: string | undefined, parsed: LoadInfo | undefined]> = [
  ['Records: 3  Deleted: 0  Skipped: 1  Warnings: 2', { records: 3, deleted: 0, skipped: 1, warnings: 2 }],
  ['Records: 1000000  Deleted: 7  Skipped: 0  Warnings: 65535', { records: 1000000, deleted: 7, skipped: 0, warnings: 65535 }],
  ['Records: 5', { records: 5, deleted: 0, skipped: 0, warnings: 0 }],
  ['Rows matched: 1  Changed: 1  Warnings: 0', undefined],
  ['', undefined],
  [undefined, undefined],
];

for (const [info, parsed] of infos) {
  test(`parseLoadInfo: ${JSON.stringify(info)}`, () => {
    assert.deepEqual(parseLoadInfo(info), parsed);
  });
}

const short = (row: number): ServerWarning => ({ level: 'Warning', code: 1261, message: `Row ${row} doesn't contain data for all columns` });
const bad = (row: number): ServerWarning => ({ level: 'Warning', code: 1366, message: `Incorrect integer value: 'x' for column 'n' at row ${row}` });
const sent = [
  { line: 10, offset: 100 },
  { line: 11, offset: 140 },
  { line: 12, offset: 180 },
];
const describeCases: Array<[name: string, problems: ServerWarning[], total: number | undefined, limit: number | undefined, expected: string[]]> = [
  ['one warning per row: a line each', [short(1), bad(3)], undefined, undefined, ["    line 10 (byte offset 100): [1261] Row 1 doesn't contain data for all columns", "    line 12 (byte offset 180): [1366] Incorrect integer value: 'x' for column 'n' at row 3"]],
  [
    'a row short of three columns: one line with its count',
    [short(2), short(2), short(2), bad(3)],
    undefined,
    undefined,
    ["    line 11 (byte offset 140): [1261] Row 2 doesn't contain data for all columns (3 warnings)", "    line 12 (byte offset 180): [1366] Incorrect integer value: 'x' for column 'n' at row 3"],
  ],
  ['the same warning for two rows stays two lines', [short(1), short(2)], undefined, undefined, ["    line 10 (byte offset 100): [1261] Row 1 doesn't contain data for all columns", "    line 11 (byte offset 140): [1261] Row 2 doesn't contain data for all columns"]],
  ['a row the chunk did not send, and one not named', [short(9), { level: 'Warning', code: 1265, message: "Data truncated for column 'd'" }], undefined, undefined, ["    row not named by the server: [1261] Row 9 doesn't contain data for all columns", "    row not named by the server: [1265] Data truncated for column 'd'"]],
  ['past the limit, and warnings the server did not list, counted', [short(1), short(1), bad(2), bad(3)], 9, 1, ["    line 10 (byte offset 100): [1261] Row 1 doesn't contain data for all columns (2 warnings)", '    … and 7 more']],
];

for (const [name, problems, total, limit, expected] of describeCases) {
  test(`describeWarnings: ${name}`, () => {
    assert.deepEqual(describeWarnings(problems, sent, total, limit).split('\n'), expected);
  });
}

test('describeRejects: a rejected row\'s repeated errors once, with their count; different ones each', () => {
  const row = (line: number, errors: Array<[number, string]>) => ({ line, byteOffset: line * 10, bytes: Buffer.from('x\n'), errors: errors.map(([code, message]) => ({ code, message })) });
  const text = describeRejects([
    row(4, [
      [1261, "Row 1 doesn't contain data for all columns"],
      [1261, "Row 1 doesn't contain data for all columns"],
      [1261, "Row 1 doesn't contain data for all columns"],
    ]),
    row(9, [
      [1366, "Incorrect integer value: 'x' for column 'n' at row 2"],
      [1265, "Data truncated for column 'd' at row 2"],
    ]),
    row(12, [[1366, "Incorrect integer value: 'y' for column 'n' at row 3"]]),
  ], 2);
  assert.deepEqual(text.split('\n'), [
    "    line 4 (byte offset 40): [1261] Row 1 doesn't contain data for all columns (3 warnings)",
    "    line 9 (byte offset 90): [1366] Incorrect integer value: 'x' for column 'n' at row 2; [1265] Data truncated for column 'd' at row 2",
    '    … and 1 more',
  ]);
});

test('refusedRow: a statement error at one row becomes that row\'s problem, whatever --allow-truncation accepts; other errors do not', () => {
  const cases: Array<[string, unknown, number | undefined]> = [
    ['extra field', { errno: 1262, sqlMessage: 'Row 2 was truncated; it contained more data than there were input columns' }, 2],
    ['out of range', { errno: 1264, sqlMessage: "Out of range value for column 'qty' at row 13" }, 13],
    ['truncated', { errno: 1265, sqlMessage: "Data truncated for column 'v' at row 1" }, 1],
    ['too long', { errno: 1406, sqlMessage: "Data too long for column 'name' at row 4" }, 4],
    ['no row named', { errno: 1048, sqlMessage: "Column 'name' cannot be null" }, undefined],
    ['not a row error', { errno: 1205, sqlMessage: 'Lock wait timeout exceeded; try restarting transaction' }, undefined],
    ['no errno', new Error('socket hang up'), undefined],
    ['nothing', undefined, undefined],
  ];
  const lenient = problemPolicy({ duplicatesExpected: true, allowAltered: true });
  for (const [why, err, row] of cases) {
    const w = refusedRow(err);
    assert.equal(w && warningRow(w.message), row, why);
    if (w) assert.equal(lenient(w), true, `${why}: a refused row is never accepted`);
  }
  // SHOW WARNINGS' own 'Error' rows keep their classes: a duplicate skipped on purpose is no problem.
  assert.equal(lenient({ level: 'Error', code: 1062, message: "Duplicate entry '7' for key 'PRIMARY'" }), false);
});
