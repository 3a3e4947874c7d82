import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allStatements } from '../../src/export/ddl.js';
import { parseManifest } from '../../src/export/manifest.js';
import { globMatcher, groupFiles, isRejectFile, parseFileName, type FileName } from '../../src/export/names.js';
import { exportStatus, exportTotals, renderExportReport, type ExportTableReport } from '../../src/export/report.js';
import { connectionLayout, StreamBudget, startOrder, streamsFor, tablesAtOnce } from '../../src/export/slots.js';
import { exportStatusOf, renderExportStatus } from '../../src/export/status.js';
import { ExportProgress } from '../../src/export/progress.js';
import type { JobSummary } from '../../src/checkpoint/store.js';
import { sqlOf } from '../../src/plan/ops.js';
import { isFlatloadError } from '../../src/errors/index.js';

const throwsCode = (fn: () => unknown, code: string, re?: RegExp): void => {
  assert.throws(fn, (e: unknown) => isFlatloadError(e) && e.code === code && (!re || re.test(e.message)));
};

test('the table a file goes to, from its name (as mysqlimport: the name without its extensions)', () => {
  const cases: Array<[string, FileName]> = [
    ['/x/orders.csv', { db: undefined, table: 'orders', part: null, kind: 'data' }],
    ['orders.txt', { db: undefined, table: 'orders', part: null, kind: 'data' }],
    ['orders.tsv.gz', { db: undefined, table: 'orders', part: null, kind: 'data' }],
    ['orders.CSV.ZST', { db: undefined, table: 'orders', part: null, kind: 'data' }],
    ['orders.000.csv.gz', { db: undefined, table: 'orders', part: 0, kind: 'data' }],
    ['orders.17.txt', { db: undefined, table: 'orders', part: 17, kind: 'data' }],
    ['shop.orders.csv', { db: 'shop', table: 'orders', part: null, kind: 'data' }],
    ['shop.orders.003.csv.gz', { db: 'shop', table: 'orders', part: 3, kind: 'data' }],
    ['orders.sql', { db: undefined, table: 'orders', part: null, kind: 'ddl' }],
    ['orders', { db: undefined, table: 'orders', part: null, kind: 'other' }],
    ['orders.gz', { db: undefined, table: 'orders', part: null, kind: 'other' }],
    ['README.md', { db: 'README', table: 'md', part: null, kind: 'other' }],
    ['2024', { db: undefined, table: '2024', part: null, kind: 'other' }],
  ];
  for (const [path, want] of cases) assert.deepEqual(parseFileName(path), want, path);
  for (const bad of ['a.b.c.csv', '.hidden.csv', 'a..csv', 'x.y.z.001.txt']) throwsCode(() => parseFileName(bad), 'USAGE', /cannot tell the table/);
});

test('reject files a previous run wrote are not inputs', () => {
  const cases: Array<[string, boolean]> = [
    ['orders.rejects.csv', true],
    ['orders.rejects.csv.log', true],
    ['shop.orders.rejects.txt', true],
    ['orders.csv', false],
    ['rejects.csv', false],
  ];
  for (const [name, want] of cases) assert.equal(isRejectFile(name), want, name);
});

test('files grouped into tables: split files in part order, .sql as DDL, tables by name', () => {
  const t = groupFiles(['/d/orders.010.csv.gz', '/d/users.txt', '/d/orders.002.csv.gz', '/d/users.sql', '/d/orders.001.csv.gz', '/d/shop.items.csv', '/d/x.rejects.txt']);
  assert.deepEqual(
    t.map((x) => [x.db, x.table, x.files, x.ddl]),
    [
      [undefined, 'orders', ['/d/orders.001.csv.gz', '/d/orders.002.csv.gz', '/d/orders.010.csv.gz'], undefined],
      ['shop', 'items', ['/d/shop.items.csv'], undefined],
      [undefined, 'users', ['/d/users.txt'], '/d/users.sql'],
    ],
  );
  throwsCode(() => groupFiles(['/d/orders.csv', '/e/orders.csv']), 'USAGE', /not all have a part number/);
  throwsCode(() => groupFiles(['/d/orders.csv', '/d/orders.001.csv']), 'USAGE', /orders/);
  assert.deepEqual(groupFiles(['/d/v.sql', '/d/a.txt']).map((x) => x.table), ['a'], "a view's .sql (mysqldump --tab writes no .txt for it) is not a table to load");
});

test('globs match the last path component only', () => {
  const cases: Array<[string, string, boolean]> = [
    ['/d/*.csv.gz', 'orders.000.csv.gz', true],
    ['/d/*.csv.gz', 'orders.csv', false],
    ['/d/orders.???.csv', 'orders.001.csv', true],
    ['/d/orders.???.csv', 'orders.01.csv', false],
    ['/d/a+b(*).txt', 'a+b(1).txt', true],
  ];
  for (const [pattern, name, want] of cases) assert.equal(globMatcher(pattern).test(name), want, `${pattern} ${name}`);
});

test('a manifest maps files to tables with per-table options', () => {
  const text = JSON.stringify({
    tables: [
      { table: 'shop.orders', files: ['o1.csv', '/abs/o2.csv'], ddl: 'orders.sql', options: { dialect: 'csv', 'ignore-lines': 1, 'keep-bom': true, 'max-errors': '5' } },
      { table: 'users', files: ['u.dat'] },
    ],
  });
  assert.deepEqual(parseManifest(text, 'm.json', '/base'), [
    { db: 'shop', table: 'orders', files: ['/base/o1.csv', '/abs/o2.csv'], ddl: '/base/orders.sql', options: { dialect: 'csv', ignoreLines: 1, keepBom: true, maxErrors: 5 } },
    { db: undefined, table: 'users', files: ['/base/u.dat'], ddl: undefined, options: {} },
  ]);
  const bad: Array<[unknown, RegExp]> = [
    ['not json', /not JSON/],
    [{}, /expected \{"tables"/],
    [{ tables: [] }, /at least one table/],
    [{ tables: [{ files: ['a'] }] }, /table must be/],
    [{ tables: [{ table: 'a', files: [] }] }, /files must be/],
    [{ tables: [{ table: 'a', files: ['x'] }, { table: 'a', files: ['y'] }] }, /listed twice/],
    [{ tables: [{ table: 'a', files: ['x'], options: { jobs: 3 } }] }, /"jobs" is not one of/],
    [{ tables: [{ table: 'a', files: ['x'], options: { 'ignore-lines': 'one' } }] }, /not a whole number/],
    [{ tables: [{ table: 'a', files: ['x'], options: { 'keep-bom': 'yes' } }] }, /not true or false/],
    [{ tables: [{ table: 'a', files: ['x'], extra: 1 }] }, /unknown field "extra"/],
  ];
  for (const [doc, re] of bad) throwsCode(() => parseManifest(typeof doc === 'string' ? doc : JSON.stringify(doc), 'm.json', '/'), 'USAGE', re);
});

test("mysqldump's t.sql split into statements (--run-sql-files): comments, quotes, DELIMITER", () => {
  const dump = [
    '/*M!999999\\- enable the sandbox mode */ ',
    '-- MariaDB dump 10.19',
    '/*!40101 SET NAMES utf8mb4 */;',
    'DROP TABLE IF EXISTS `a`;',
    "CREATE TABLE `a;b` (",
    "  `s` varchar(5) DEFAULT 'x;y' COMMENT 'it''s \\'; ok',",
    '  `t` int /* a; comment */',
    ') ENGINE=InnoDB;',
    '# a hash comment',
    'DELIMITER ;;',
    '/*!50003 CREATE TRIGGER t BEFORE INSERT ON `a;b` FOR EACH ROW BEGIN SET @x = 1; SET @y = 2; END */;;',
    'DELIMITER ;',
    '/*!40101 SET character_set_client = @saved_cs_client */;',
  ].join('\n');
  assert.deepEqual(allStatements(dump, 'a.sql', 101106), [
    '/*!40101 SET NAMES utf8mb4 */',
    'DROP TABLE IF EXISTS `a`',
    "CREATE TABLE `a;b` (\n  `s` varchar(5) DEFAULT 'x;y' COMMENT 'it''s \\'; ok',\n  `t` int /* a; comment */\n) ENGINE=InnoDB",
    '/*!50003 CREATE TRIGGER t BEFORE INSERT ON `a;b` FOR EACH ROW BEGIN SET @x = 1; SET @y = 2; END */',
    '/*!40101 SET character_set_client = @saved_cs_client */',
  ]);
});

test('streams per table and the start order: smallest first, a small table on one stream', () => {
  const MiB = 1024 * 1024;
  const GiB = 1024 * MiB;
  const cases: Array<[size: number, budget: number, want: number]> = [
    [0, 4, 1],
    [100, 4, 1],
    [8 * MiB, 4, 1],
    [8 * MiB + 1, 4, 2],
    [33 * MiB, 2, 2],
    [GiB, 4, 4],
    [GiB, 1, 1],
    [10 * MiB, 8, 2],
  ];
  for (const [size, budget, want] of cases) assert.equal(streamsFor(size, budget), want, `${size} ${budget}`);
  assert.equal(tablesAtOnce(2), 3, 'every stream busy and one table reading its input');
  const order = startOrder([
    { key: 'c', sizeBytes: 50 },
    { key: 'b', sizeBytes: 5 },
    { key: 'd', sizeBytes: 7 },
    { key: 'a', sizeBytes: 5 },
  ]);
  assert.deepEqual(order.map((x) => x.key), ['a', 'b', 'd', 'c']);
});

/** Whether a promise has settled, after the microtasks queued so far. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

test('the stream budget: one stream per table while tables are still to start, every stream to the last ones', async () => {
  const b = new StreamBudget(2, ['big', 'mid', 'small']);
  const big = b.gateFor('big');
  const mid = b.gateFor('mid');
  const small = b.gateFor('small');
  await big.take();
  const bigSecond = big.take();
  assert.equal(await settled(bigSecond), false, 'a second stream waits while mid and small have not started');
  assert.equal(b.available, 1, 'the free stream stays for the next table to start');
  await mid.take();
  assert.equal(b.available, 0);
  const smallFirst = small.take();
  assert.equal(await settled(smallFirst), false, 'no stream is free');
  mid.give();
  assert.equal(await settled(smallFirst), true, 'the freed stream goes to small, holding none, not to big, holding one');
  assert.equal(await settled(bigSecond), false);
  // Every table has started: a table may now hold more than one stream.
  small.give();
  assert.equal(await settled(bigSecond), true, 'big takes its second stream once no table is still to start');
  assert.equal(b.available, 0);
  big.give();
  big.give();
  assert.equal(b.available, 2, 'every stream back');
});

test('the export\'s connections within the account\'s limit: fewer tables at once first, then fewer streams', () => {
  // [--jobs, connections left after the export's own, streams, tables at once, warned]
  const cases: Array<[number, number | undefined, number, number, boolean]> = [
    [2, undefined, 2, 3, false],
    [2, 5, 2, 3, false],
    [2, 4, 2, 2, true],
    [2, 3, 2, 1, true],
    [2, 2, 1, 1, true],
    [8, 20, 8, 9, false],
    [8, 12, 8, 4, true],
    [8, 6, 5, 1, true],
  ];
  for (const [jobs, left, streams, tables, warned] of cases) {
    const l = connectionLayout(jobs, left);
    assert.deepEqual([l.jobs, l.tables, l.warning !== undefined], [streams, tables, warned], `--jobs ${jobs}, ${left} left`);
    if (left !== undefined) assert.ok(l.jobs + l.tables <= left, 'never more connections than are left');
  }
});

test('the stream budget: a table that finishes without loading releases the wait on the others', async () => {
  const b = new StreamBudget(3, ['a', 'done-already']);
  const a = b.gateFor('a');
  await a.take();
  const second = a.take();
  assert.equal(await settled(second), false);
  b.started('done-already');
  assert.equal(await settled(second), true);
  await a.take();
  assert.equal(b.available, 0, 'never more than the budget');
  const fourth = a.take();
  assert.equal(await settled(fourth), false);
  a.give();
  assert.equal(await settled(fourth), true);
});

test('one RENAME TABLE swaps every table of the export', () => {
  const r = (table: string) => ({ db: 'd', table });
  assert.equal(
    sqlOf({ kind: 'swap-set', swaps: [{ target: r('a'), shadow: r('a_new'), old: r('a_old') }, { target: r('b'), shadow: r('b_new'), old: r('b_old') }] }),
    'RENAME TABLE `d`.`a` TO `d`.`a_old`, `d`.`a_new` TO `d`.`a`, `d`.`b` TO `d`.`b_old`, `d`.`b_new` TO `d`.`b`',
  );
});

test('the export report: status, totals and one line per table', () => {
  const row = (table: string, status: ExportTableReport['status'], rows: number, rejected: number, onDisk: number | null): ExportTableReport => ({
    table, files: [], status, engine: 'InnoDB', strategy: 'load-data', rows, rejected, seconds: 1, inputBytes: 1e6, onDiskBytes: onDisk, resumedChunks: 0, rejectFiles: [], error: null,
  });
  const cases: Array<[ExportTableReport[], string]> = [
    [[row('a', 'ok', 1, 0, 1), row('b', 'already-loaded', 2, 0, 1)], 'ok'],
    [[row('a', 'ok', 1, 0, 1), row('b', 'rejected-within-budget', 2, 1, 1)], 'rejected-within-budget'],
    [[row('a', 'rejected-within-budget', 1, 1, 1), row('b', 'stopped', 2, 0, null)], 'stopped'],
    [[row('a', 'ok', 1, 0, 1), row('b', 'not-started', 0, 0, null)], 'stopped'],
    [[row('a', 'already-loaded', 1, 0, 1)], 'already-loaded'],
  ];
  for (const [tables, want] of cases) assert.equal(exportStatus(tables), want);
  const tables = [row('d.a', 'ok', 1000, 0, 2e6), row('d.b', 'rejected-within-budget', 500, 3, 1e6)];
  assert.deepEqual(exportTotals(tables, 4), { rows: 1500, rejected: 3, inputBytes: 2e6, onDiskBytes: 3e6, seconds: 4 });
  assert.equal(exportTotals([...tables, row('d.c', 'ok', 1, 0, null)], 4).onDiskBytes, null, 'a size not measured makes the total unknown');
  const text = renderExportReport({ status: 'rejected-within-budget', exportId: 'x', source: '/dump', mode: 'append', jobs: 2, tables, totals: exportTotals(tables, 4), notes: ['n'] });
  assert.match(text, /^loaded export with rejected rows: \/dump \(mode append, 2 tables, 2 connections shared\)/);
  assert.match(text, /\n {2}d\.b +rejected-within-budget +500 +3 /);
  assert.match(text, /\n {2}total +rejected-within-budget +1,500 +3 /);
  assert.match(text, /\nnote: n$/);
});

test('status: an export as one job, each table from the loads of its files', () => {
  const job = (jobId: string, target: string, inputPath: string, state: JobSummary['state'], heldBy: number | null, rows: number, at: string): JobSummary => ({
    schema: 'd', jobId, target, inputPath, state, phase: 'prepared', chunksDone: 2, chunksTotal: 4, rowsDone: rows, rowsInInput: null,
    startedAt: at, lastProgressAt: at, idleSeconds: 0, message: null, owner: null, heldBy, activity: null,
  });
  const members = [
    { target: 'd.a', loadTarget: 'd.a', files: [{ path: '/x/a.txt', sizeBytes: 1, mtimeMs: 1 }] },
    { target: 'd.b', loadTarget: 'd.b', files: [{ path: '/x/b.000.txt', sizeBytes: 1, mtimeMs: 1 }, { path: '/x/b.001.txt', sizeBytes: 1, mtimeMs: 1 }] },
    { target: 'd.c', loadTarget: 'd.c', files: [{ path: '/x/c.txt', sizeBytes: 1, mtimeMs: 1 }] },
    { target: 'd.e', loadTarget: 'd.e', files: [{ path: '/x/e.txt', sizeBytes: 1, mtimeMs: 1 }] },
  ];
  const stored = { exportId: 'x1', source: '/x', mode: 'append', state: 'running' as const, phase: 'prepared' as const, members, startedAt: '2026-12-03 02:00:00.000', updatedAt: '2026-12-03 02:00:01.000', finishedAt: null, message: null, owner: 'etl@h pid 1', heldBy: null };
  const jobs = [
    job('j1', 'd.a', '/x/a.txt', 'done', null, 10, '2026-12-03 02:00:05'),
    job('j0', 'd.b', '/x/b.000.txt', 'abandoned', null, 99, '2026-12-02 02:00:00'),
    job('j2', 'd.b', '/x/b.000.txt', 'done', null, 5, '2026-12-03 02:00:06'),
    job('j3', 'd.b', '/x/b.001.txt', 'running', null, 3, '2026-12-03 02:00:09'),
    job('j4', 'd.c', '/x/c.txt', 'running', 77, 1, '2026-12-03 02:00:07'),
    job('j5', 'd.z', '/x/e.txt', 'done', null, 1, '2026-12-03 02:00:07'),
  ];
  const s = exportStatusOf(stored, jobs);
  assert.deepEqual(s.tables.map((t) => [t.table, t.state, `${t.filesDone}/${t.files}`, t.rowsDone]), [
    ['d.a', 'done', '1/1', 10],
    ['d.b', 'stopped', '1/2', 8],
    ['d.c', 'running', '0/1', 1],
    ['d.e', 'not started', '0/1', 0],
  ]);
  assert.deepEqual(s.jobIds, ['j1', 'j2', 'j3', 'j4'], 'the latest load of each file');
  assert.equal(s.updatedAt, '2026-12-03 02:00:09');
  assert.match(s.state, /^stopped \(prepared\): no process holds it/);
  assert.match(exportStatusOf({ ...stored, heldBy: 12 }, jobs).state, /^running \(prepared\) by etl@h pid 1/);
  const done = exportStatusOf({ ...stored, state: 'done' }, []);
  assert.deepEqual(done.tables.map((t) => t.state), ['done', 'done', 'done', 'done']);
  assert.match(renderExportStatus(s), /^export x1 {2}stopped[^\n]*tables 1\/4 done[\s\S]*\n {2}d\.b +stopped +1\/2 +4 +8\n/);
  // A table whose load still sorts its input (its job recorded, nothing loaded): shown with how far the sort is.
  const sorting = { kind: 'sorting' as const, bytes: 3 << 20, totalBytes: 9 << 20, runs: 3 };
  const early = { ...job('j6', 'd.e', '/x/e.txt', 'running', 78, 0, '2026-12-03 02:00:10'), phase: 'created' as const, activity: sorting };
  const e = exportStatusOf({ ...stored, heldBy: 12 }, [...jobs, early]).tables.find((t) => t.table === 'd.e')!;
  assert.deepEqual([e.state, e.shown, e.activity], ['running', 'running (sorting: 3 runs, 3.0 MiB of 9.0 MiB)', sorting]);
  assert.match(renderExportStatus(exportStatusOf({ ...stored, heldBy: 12 }, [...jobs, early])), /\n {2}d\.e +running \(sorting: 3 runs, 3\.0 MiB of 9\.0 MiB\) +0\/1 +2 +0/);
  const killed = exportStatusOf(stored, [...jobs, { ...early, heldBy: null }]).tables.find((t) => t.table === 'd.e')!;
  assert.equal(killed.shown, 'stopped (sorting)');
});

test('one progress display: overall and per table, notes prefixed with their table', () => {
  let written = '';
  const out = { write: (s: string) => ((written += s), true) } as unknown as NodeJS.WriteStream;
  const p = new ExportProgress(out, 'none', [
    { key: 'd.a', sizeBytes: 1000 },
    { key: 'd.b', sizeBytes: 3000 },
  ]);
  const a = p.hubFor('d.a');
  const b = p.hubFor('d.b');
  assert.equal(p.line(), '0.0% (0.0 MB of 0.0 MB), 0 rows, tables 0/2 done');
  a.emit({ type: 'start', totalBytes: 1000, jobs: 1, table: 'd.a', strategy: 'load-data', resumedChunks: 1, resumedBytes: 200, resumedRows: 20 });
  b.emit({ type: 'start', totalBytes: 3000, jobs: 1, table: 'd.b', strategy: 'load-data', resumedChunks: 0, resumedBytes: 0, resumedRows: 0 });
  b.emit({ type: 'chunk-committed', chunk: 0, slot: 1, records: 50, rowsLoaded: 50, rejected: 0, bytes: 1500, elapsedMs: 5, atMs: 5 });
  b.emit({ type: 'warning', message: 'careful' });
  assert.equal(p.line(), '42.5% (0.0 MB of 0.0 MB), 70 rows, tables 0/2 done; loading: d.a 20.0%, d.b 50.0%');
  p.finished('d.a', true, 100);
  assert.equal(p.line(), '62.5% (0.0 MB of 0.0 MB), 150 rows, tables 1/2 done; loading: d.b 50.0%');
  p.close();
  assert.equal(written, 'warning: d.b: careful\nd.a: done, 100 rows\n');
});
