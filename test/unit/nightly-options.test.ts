/**
 * The nightly-job options, pure parts: --columns header (the header's names
 * to columns), --skip-fields, choosing an export's tables, the exporter's
 * figures (--expect-rows/--expect-checksum, mydumper's metadata, a
 * manifest's rows/checksum) and the comparison, and their option checks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { toLoadOptions, type Expectation } from '../../src/config/loadOptions.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { parseManifest } from '../../src/export/manifest.js';
import { parseMydumperMetadata } from '../../src/export/metadata.js';
import type { ExportTable } from '../../src/export/names.js';
import { parseSelection, selectTables } from '../../src/export/select.js';
import { headerNames, mapHeader } from '../../src/introspect/header.js';
import { analyzeWanted } from '../../src/load/analyze.js';
import { compareExpectation } from '../../src/load/expect.js';
import { needsOfOp } from '../../src/plan/needs.js';
import { sqlOf } from '../../src/plan/ops.js';
import { planBinlog } from '../../src/plan/rules/binlog.js';
import { describeCheck } from '../../src/report/summary.js';
import { scanFormatOf } from '../../src/introspect/target.js';
import { mariadb1011, table, withVars } from './facts/index.js';

const throwsCode = (fn: () => unknown, code: string, re?: RegExp, label = ''): void => {
  assert.throws(fn, (e: unknown) => isFlatloadError(e) && e.code === code && (!re || re.test(e.message)), `${label}: expected ${code} ${String(re)}`);
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
  for (const [name, header, skip, code, re] of bad) throwsCode(() => mapHeader(header, t, skip, where), code, re, name);
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

test('export selection: --include / --exclude patterns match db.table or the bare name; --rename', () => {
  const t = (db: string | undefined, table: string): ExportTable => ({ db, table, files: [`/x/${db ? `${db}.` : ''}${table}.txt`], ddl: undefined, options: {} });
  const tables = [t('shop', 'orders'), t('shop', 'tmp_orders'), t(undefined, 'users'), t('crm', 'orders'), t(undefined, 'tmp_x')];
  const pick = (a: Parameters<typeof parseSelection>[0]): string[] => selectTables(tables, parseSelection(a), 'main').picked.map((x) => `${x.db ?? 'main'}.${x.table}`);
  const cases: Array<[string, Parameters<typeof parseSelection>[0], string[]]> = [
    ['nothing given: every table', {}, ['shop.orders', 'shop.tmp_orders', 'main.users', 'crm.orders', 'main.tmp_x']],
    ['a bare name matches in every database', { include: 'orders' }, ['shop.orders', 'crm.orders']],
    ['db.table matches one', { include: ['shop.orders'] }, ['shop.orders']],
    ['the connection\'s database counts for files that name none', { include: 'main.*' }, ['main.users', 'main.tmp_x']],
    ['a comma list is several patterns', { include: 'users,crm.*' }, ['main.users', 'crm.orders']],
    ['exclude wins over include', { include: '*', exclude: 'tmp_*' }, ['shop.orders', 'main.users', 'crm.orders']],
    ['? is one character', { exclude: ['tmp_?'] }, ['shop.orders', 'shop.tmp_orders', 'main.users', 'crm.orders']],
    ['rename a bare name to another database', { include: 'shop.orders', rename: 'orders=staging.orders_new' }, ['staging.orders_new']],
    ['rename keeps the database when TO has none', { include: 'users', rename: ['users=users_v2'] }, ['main.users_v2']],
  ];
  for (const [name, a, want] of cases) assert.deepEqual(pick(a), want, name);
  const left = selectTables(tables, parseSelection({ include: 'shop.*', exclude: 'shop.tmp_*,nothing_*' }), 'main');
  assert.deepEqual(left.left.map((l) => [l.table, l.reason]), [
    ['shop.tmp_orders', '--exclude shop.tmp_*'],
    ['main.users', 'matched by no --include (shop.*)'],
    ['crm.orders', 'matched by no --include (shop.*)'],
    ['main.tmp_x', 'matched by no --include (shop.*)'],
  ]);
  assert.deepEqual(left.notes, ['--exclude nothing_* matched no table']);
  assert.equal(left.picked[0]!.renamedFrom, undefined);
  assert.equal(selectTables(tables, parseSelection({ rename: 'crm.orders=crm.o2' }), 'main').picked.find((x) => x.table === 'o2')?.renamedFrom, 'crm.orders');
  const bad: Array<[string, Parameters<typeof parseSelection>[0], RegExp]> = [
    ['an include that matches nothing', { include: 'order' }, /--include order matches no table of the export/],
    ['nothing left', { exclude: '*' }, /leave no table of the export to load/],
    ['a bad pattern', { include: 'a.b.c' }, /"a\.b\.c" is not a table name or pattern/],
    ['a pattern with a quote', { exclude: "o'x" }, /is not a table name or pattern/],
    ['rename without =', { rename: 'orders' }, /--rename takes FROM=TO/],
    ['rename with a pattern', { rename: 'ord*=x' }, /--rename takes FROM=TO/],
    ['rename given twice', { rename: ['users=a', 'users=b'] }, /given twice/],
    ['rename of a table not loaded', { include: 'users', rename: 'tmp_x=y' }, /loads no table tmp_x/],
    ['rename of an ambiguous bare name', { rename: 'orders=o2' }, /names 2 tables/],
    ['two tables into one', { rename: 'users=tmp_x' }, /two tables of the export would load into main\.tmp_x/],
  ];
  for (const [name, a, re] of bad) throwsCode(() => selectTables(tables, parseSelection(a), 'main'), 'USAGE', re, name);
});

test('--expect-rows / --expect-checksum: option cases', () => {
  const e = (rows?: string, checksum?: string) => toLoadOptions({ ...base, ...(rows === undefined ? {} : { expectRows: rows }), ...(checksum === undefined ? {} : { expectChecksum: checksum }) }).expect;
  assert.equal(e(), undefined);
  assert.deepEqual(e('1000'), { rows: 1000, checksum: undefined, source: '--expect-rows/--expect-checksum' });
  assert.deepEqual(e('0', '0042'), { rows: 0, checksum: '42', source: '--expect-rows/--expect-checksum' });
  assert.deepEqual(e(undefined, '3194712081'), { rows: undefined, checksum: '3194712081', source: '--expect-rows/--expect-checksum' });
  throwsCode(() => e('-1'), 'USAGE', /--expect-rows: "-1" is not a whole number/);
  throwsCode(() => e('1e3'), 'USAGE', /--expect-rows: "1e3"/);
  throwsCode(() => e('99999999999999999999'), 'USAGE', /too large/);
  throwsCode(() => e(undefined, 'abc'), 'USAGE', /--expect-checksum: "abc" .*CHECKSUM TABLE/);
});

test('compareExpectation: each figure that differs is named, with the table and the source', () => {
  const cases: Array<[string, Expectation, number, string | null, boolean, RegExp | undefined]> = [
    ['rows equal', { rows: 5, checksum: undefined, source: 's' }, 5, null, true, undefined],
    ['rows and checksum equal', { rows: 5, checksum: '77', source: 's' }, 5, '77', true, undefined],
    ['rows differ', { rows: 1000, checksum: undefined, source: '--expect-rows' }, 999, null, false, /^db\.t does not match the export: 999 rows, 1,000 expected \(--expect-rows\)$/],
    ['checksum differs', { rows: 5, checksum: '77', source: 'manifest m.json' }, 5, '78', false, /CHECKSUM TABLE 78, 77 expected \(manifest m\.json\)/],
    ['both differ', { rows: 5, checksum: '77', source: 's' }, 4, '78', false, /4 rows, 5 expected; CHECKSUM TABLE 78, 77 expected/],
    ['no checksum where one is expected (an empty engine answer)', { rows: undefined, checksum: '1', source: 's' }, 0, null, false, /CHECKSUM TABLE NULL, 1 expected/],
  ];
  for (const [name, e, rows, checksum, equal, re] of cases) {
    const { result, error } = compareExpectation(e, rows, checksum, 'db.t');
    assert.equal(result.equal, equal, name);
    if (re) {
      assert.equal(error?.code, 'EXPECTATION_MISMATCH', name);
      assert.equal(error?.exitCode, 9, name);
      assert.match(error.message, re, name);
      assert.equal(error.context.table, 'db.t');
    } else assert.equal(error, undefined, name);
  }
  assert.match(describeCheck(compareExpectation({ rows: 5, checksum: '77', source: 'x' }, 5, '77', 'db.t').result), /^COUNT\(\*\) 5 \(5 expected\), CHECKSUM TABLE 77 \(77 expected\) from x: equal$/);
});

test('mydumper metadata: rows and data_checksum per table, views and old formats ignored', () => {
  const text = [
    '[config]',
    'quote-character = BACKTICK',
    '',
    '[`shop`]',
    'real_database_name=shop',
    '',
    '[`shop`.`orders`]',
    'real_table_name=orders',
    'rows = 40000',
    'data_checksum = 3194712081',
    'schema_checksum = 1a2b',
    '',
    '[`shop`.`my@0020table`]',
    'real_table_name=my table',
    'rows = 0',
    '',
    '[`shop`.`v`]',
    'real_table_name=v',
    'rows = 0',
    'is_view = 1',
    '',
    '["crm"."users"]',
    'real_table_name=users',
    'rows = 12',
    '[source]',
    'File = binlog.000001',
  ].join('\n');
  assert.deepEqual(parseMydumperMetadata(text), [
    { db: 'shop', table: 'orders', fileTable: 'orders', rows: 40000, checksum: '3194712081' },
    { db: 'shop', table: 'my table', fileTable: 'my@0020table', rows: 0, checksum: undefined },
    { db: 'crm', table: 'users', fileTable: 'users', rows: 12, checksum: undefined },
  ]);
  // mydumper before 0.12: start and end times and the binary log position, no tables.
  assert.deepEqual(parseMydumperMetadata('Started dump at: 2011-05-05 13:57:17\nSHOW MASTER STATUS:\n\tLog: bin.000001\n\tPos: 106\n\nFinished dump at: 2011-05-05 13:57:17\n'), []);
});

test('a manifest\'s rows and checksum per table', () => {
  const m = (t: Record<string, unknown>): ReturnType<typeof parseManifest> => parseManifest(JSON.stringify({ tables: [{ table: 'shop.orders', files: ['o.csv'], ...t }] }), 'm.json', '/x');
  assert.deepEqual(m({ rows: 40000, checksum: '3194712081' })[0]!.expect, { rows: 40000, checksum: '3194712081', source: 'manifest m.json' });
  assert.deepEqual(m({ rows: '12' })[0]!.expect, { rows: 12, checksum: undefined, source: 'manifest m.json' });
  assert.equal(m({})[0]!.expect, undefined);
  throwsCode(() => m({ rows: -1 }), 'USAGE', /tables\[0\]\.rows must be a whole number >= 0, got -1/);
  throwsCode(() => m({ checksum: 'ab' }), 'USAGE', /tables\[0\]\.checksum must be a whole number >= 0 \(the value CHECKSUM TABLE returns\)/);
  throwsCode(() => m({ count: 1 }), 'USAGE', /unknown field "count"/);
});

test('--binlog / --analyze: option cases', () => {
  assert.equal(toLoadOptions(base).binlog, undefined, 'default: the server\'s own setting');
  assert.equal(toLoadOptions({ ...base, binlog: 'off' }).binlog, 'off');
  assert.equal(toLoadOptions({ ...base, binlog: 'on' }).binlog, 'on');
  throwsCode(() => toLoadOptions({ ...base, binlog: '0' }), 'USAGE', /--binlog: "0" is not one of on, off/);
  assert.equal(toLoadOptions(base).analyze, 'auto');
  assert.equal(toLoadOptions({ ...base, analyze: 'off' }).analyze, 'off');
  throwsCode(() => toLoadOptions({ ...base, analyze: 'yes' }), 'USAGE', /--analyze: "yes" is not one of on, off, auto/);
  const cases: Array<['on' | 'off' | 'auto', boolean, boolean]> = [
    ['auto', true, true],
    ['auto', false, false],
    ['on', false, true],
    ['off', true, false],
  ];
  for (const [choice, empty, want] of cases) assert.equal(analyzeWanted(choice, empty), want, `${choice} ${String(empty)}`);
});

test('planBinlog: the server\'s setting by default, sql_log_bin=0 for off (a need for BINLOG ADMIN or SUPER), refusals', () => {
  const srv = (logBin: string, sqlLogBin?: string) => withVars(mariadb1011(), { log_bin: logBin, ...(sqlLogBin === undefined ? {} : { sql_log_bin: sqlLogBin }) });
  const cases: Array<[string, ReturnType<typeof srv>, 'on' | 'off' | undefined, boolean, string[], RegExp, boolean]> = [
    ['default, log on', srv('ON', 'ON'), undefined, false, [], /^binary log: on, replicas receive the rows, the server's own setting .*log_bin=ON, sql_log_bin=ON/, false],
    ['default, log off', srv('OFF', 'ON'), undefined, false, [], /^binary log: off, the server's own setting .*log_bin=OFF/, false],
    ['off, log on', srv('ON', 'ON'), 'off', false, ['SET SESSION sql_log_bin = 0'], /SET SESSION sql_log_bin = 0 on every connection/, true],
    ['off, no log anyway', srv('OFF'), 'off', false, [], /the server writes none anyway/, false],
    ['on, log on', srv('ON', 'ON'), 'on', false, [], /^binary log: on, replicas receive the rows, as asked/, false],
    ['on, sessions start off', srv('ON', 'OFF'), 'on', false, ['SET SESSION sql_log_bin = 1'], /sessions start with it off/, false],
    ['off on Galera', srv('ON', 'ON'), 'off', true, ['SET SESSION sql_log_bin = 0'], /does not stop the rows from replicating to the other nodes/, true],
  ];
  for (const [name, server, choice, galera, sql, reason, warns] of cases) {
    const d = planBinlog(server, choice, galera);
    assert.deepEqual(d.session.map((s) => sqlOf(s.op)), sql, name);
    assert.match(d.reason, reason, name);
    assert.equal(d.warnings.some((w) => /replicas will not receive them/.test(w)), warns, name);
    // The statement's privilege comes from the operation itself: BINLOG ADMIN, or SUPER instead.
    for (const s of d.session) assert.deepEqual(needsOfOp(s.op, 'x').map((n) => [n.privilege, n.alternatives]), [['BINLOG ADMIN', ['SUPER']]], name);
  }
  throwsCode(() => planBinlog(srv('OFF'), 'on', false), 'UNSUPPORTED', /--binlog on: the server writes no binary log/);
});
