/**
 * fixtures/generate: determinism, shapes, and that every table × format loads
 * with server-side LOAD DATA INFILE with zero warnings and reads back exactly
 * what was generated (awkward values included).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AWKWARD_VALUES,
  FIXTURE_TABLES,
  ddl,
  encodeCsvField,
  encodeTsvField,
  fileColumns,
  generateLines,
  generateRows,
  generateToFile,
  loadDataStatement,
  type FieldValue,
  type FixtureTable,
  type GenerateOptions,
} from '../../fixtures/generate.js';
import { createTestDatabase } from '../support/db.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'flatload-fx-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sha256OfLines(opts: GenerateOptions): string {
  const h = createHash('sha256');
  for (const b of generateLines(opts)) h.update(b);
  return h.digest('hex');
}

function sha256OfFile(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

const MOBILE = /^1(3\d|47|5[0-35-9]|66|77|8\d)\d{8}$/;

test('same options give identical bytes; a different seed gives different bytes', async () => {
  for (const table of FIXTURE_TABLES) {
    for (const format of ['tsv', 'csv'] as const) {
      const opts: GenerateOptions = { table, rows: 20_000, format, awkward: format === 'csv' };
      const a = sha256OfLines(opts);
      assert.equal(sha256OfLines(opts), a, `${table} ${format}: not deterministic`);
      assert.notEqual(sha256OfLines({ ...opts, seed: 2 }), a, `${table} ${format}: seed ignored`);
      const file = join(dir, `det-${table}.${format}`);
      const res = await generateToFile(file, opts);
      assert.equal(sha256OfFile(file), a, `${table} ${format}: file differs from generateLines`);
      assert.equal(res.rows, 20_000);
      assert.equal(res.bytes, readFileSync(file).length);
    }
  }
  // Pinned: an accidental change to the generator changes every benchmark input.
  const first = readFileSync(join(dir, 'det-user_summary.tsv'), 'utf8').split('\n', 1)[0];
  assert.match(first ?? '', /^1\d{10}\t\d\d\.\d\t[A-Za-z]+ [IV]+\t(\d{1,2}\.\d\d%|\\N)\t\d{1,3}$/);
});

test('row counts: TSV has exactly one line per row, also with awkward values; 0 rows is an empty file', async () => {
  for (const table of FIXTURE_TABLES) {
    const file = join(dir, `count-${table}.tsv`);
    const res = await generateToFile(file, { table, rows: 12_345, awkward: true });
    const bytes = readFileSync(file);
    let lines = 0;
    for (const b of bytes) if (b === 0x0a) lines++;
    assert.equal(lines, 12_345, table);
    assert.equal(res.rows, 12_345);
    assert.equal(bytes.includes(0x0d), false, `${table}: raw CR in TSV`);
    assert.deepEqual(res.columns, fileColumns({ table, rows: 1 }));
  }
  const empty = join(dir, 'empty.tsv');
  assert.deepEqual(await generateToFile(empty, { table: 'sbtest', rows: 0 }), { rows: 0, bytes: 0, columns: ['k', 'c', 'pad'] });
  assert.equal(readFileSync(empty).length, 0);
});

test('user_id is unique, mobile-shaped and in random order for 200k rows', () => {
  const seen = new Set<string>();
  let ascending = 0;
  let prev = -1;
  for (const row of generateRows({ table: 'user_summary', rows: 200_000 })) {
    const id = row[0]!;
    assert.match(id, MOBILE);
    seen.add(id);
    if (Number(id) > prev) ascending++;
    prev = Number(id);
  }
  assert.equal(seen.size, 200_000);
  // Random order: about half the steps go up.
  assert.ok(ascending > 90_000 && ascending < 110_000, `ascending steps: ${ascending}`);
});

test('sorted mode is strictly ascending and is the unsorted file sorted by user_id', () => {
  const sorted = [...generateRows({ table: 'user_summary', rows: 200_000, sorted: true })];
  for (let i = 1; i < sorted.length; i++) assert.ok(Number(sorted[i]![0]) > Number(sorted[i - 1]![0]), `row ${i}`);
  const unsorted = [...generateRows({ table: 'user_summary', rows: 200_000 })].sort((a, b) => Number(a[0]) - Number(b[0]));
  assert.deepEqual(unsorted, sorted);
});

test('withId numbers rows 1..N in file order; user_summary has no id', () => {
  const rows = [...generateRows({ table: 'user3', rows: 1000, withId: true, sorted: true })];
  assert.deepEqual(rows.map((r) => r[0]), rows.map((_, i) => String(i + 1)));
  assert.deepEqual(fileColumns({ table: 'user3', rows: 1, withId: true }), ['id', 'user_id', 'weight', 'level', 'beat_rate', 'level_num']);
  assert.deepEqual(fileColumns({ table: 'purchases_index', rows: 1, withId: true })[0], 'transactionid');
  assert.throws(() => fileColumns({ table: 'user_summary', rows: 1, withId: true }), /no AUTO_INCREMENT/);
  // user3 holds the same rows as user_summary for the same seed, ids aside.
  const user3 = [...generateRows({ table: 'user3', rows: 5000, withId: true, awkward: true })].map((r) => r.slice(1));
  assert.deepEqual(user3, [...generateRows({ table: 'user_summary', rows: 5000, awkward: true })]);
});

test('field encoders', () => {
  assert.equal(encodeTsvField(null), '\\N');
  assert.equal(encodeTsvField('a\\b\tc\nd\re\0'), 'a\\\\b\\tc\\nd\\re\\0');
  assert.equal(encodeTsvField('NULL'), 'NULL');
  assert.equal(encodeTsvField(''), '');
  assert.equal(encodeCsvField(null), '\\N');
  assert.equal(encodeCsvField(''), '""');
  assert.equal(encodeCsvField('NULL'), '"NULL"');
  assert.equal(encodeCsvField('\\N'), '\\\\N');
  assert.equal(encodeCsvField('say "hi"'), '"say ""hi"""');
  assert.equal(encodeCsvField('a,b\\'), '"a,b\\\\"');
  assert.equal(encodeCsvField('a\r\nb'), '"a\r\nb"');
  assert.equal(encodeCsvField('a\tb'), 'a\tb');
  assert.equal(encodeCsvField('Zoë'), 'Zoë');
});

test('ddl: one CREATE TABLE, no database, no ENGINE, no semicolon', () => {
  for (const table of FIXTURE_TABLES) {
    const sql = ddl(table);
    assert.ok(sql.startsWith(`CREATE TABLE ${table} (`), table);
    assert.ok(sql.endsWith(')'), table);
    assert.doesNotMatch(sql, /ENGINE|;/i);
  }
});

test('CLI writes the same file and prints one summary line', () => {
  const out = join(dir, 'cli.tsv');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'fixtures/generate.ts'), '--table', 'sbtest', '--rows', '1_000', '--with-id', '--seed', '7', '--out', out],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^wrote 1000 rows, \d+ bytes to .*cli\.tsv \(columns: id,k,c,pad\)\n$/);
  assert.equal(sha256OfFile(out), sha256OfLines({ table: 'sbtest', rows: 1000, withId: true, seed: 7 }));
  const bad = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'fixtures/generate.ts'), '--table', 'nope', '--rows', '1', '--out', out], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown fixture table "nope"/);
});

// ---------------------------------------------------------------------------
// Loads

interface ReadBack {
  /** Every column of the table, in DDL order, read back as text. */
  select: string;
  orderBy: string;
  /** All table columns (DDL order). */
  columns: string[];
  /** CHAR columns: the server strips trailing spaces on read. */
  charColumns: string[];
}

const READ_BACK: Record<FixtureTable, ReadBack> = {
  user_summary: {
    select: 'user_id, weight, level, beat_rate, level_num',
    orderBy: 'user_id',
    columns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'],
    charColumns: [],
  },
  user3: {
    select: 'id, user_id, weight, level, beat_rate, level_num',
    orderBy: 'id',
    columns: ['id', 'user_id', 'weight', 'level', 'beat_rate', 'level_num'],
    charColumns: [],
  },
  sbtest: { select: 'id, k, c, pad', orderBy: 'id', columns: ['id', 'k', 'c', 'pad'], charColumns: ['c', 'pad'] },
  purchases_index: {
    select: 'transactionid, dateandtime, cashregisterid, customerid, productid, CAST(price AS DECIMAL(10,2)) AS price, data',
    orderBy: 'transactionid',
    columns: ['transactionid', 'dateandtime', 'cashregisterid', 'customerid', 'productid', 'price', 'data'],
    charColumns: [],
  },
};

/** What the table should hold: generated rows completed with the AUTO_INCREMENT ids the load assigns (1..N in file order). */
function expectedTable(opts: GenerateOptions): Array<Record<string, FieldValue>> {
  const rb = READ_BACK[opts.table];
  const fileCols = fileColumns(opts);
  const out: Array<Record<string, FieldValue>> = [];
  let i = 0;
  for (const row of generateRows(opts)) {
    i++;
    const rec: Record<string, FieldValue> = {};
    for (const c of rb.columns) {
      const k = fileCols.indexOf(c);
      let v: FieldValue = k >= 0 ? row[k]! : String(i); // absent => the AUTO_INCREMENT key
      if (v !== null && rb.charColumns.includes(c)) v = v.replace(/ +$/, '');
      rec[c] = v;
    }
    out.push(rec);
  }
  if (opts.table === 'user_summary') out.sort((a, b) => Number(a['user_id']) - Number(b['user_id']));
  return out;
}

const LOAD_CASES: Array<{ name: string; opts: Omit<GenerateOptions, 'table' | 'rows'> }> = [
  { name: 'tsv', opts: { format: 'tsv', withId: true } },
  { name: 'tsv+awkward', opts: { format: 'tsv', awkward: true } },
  { name: 'csv+awkward', opts: { format: 'csv', awkward: true } },
];

for (const table of FIXTURE_TABLES) {
  for (const c of LOAD_CASES) {
    test(`LOAD DATA INFILE ${table} ${c.name}: zero warnings, every value round-trips`, async () => {
      // purchases_index has one string column, so it needs more rows for every trap to occur.
      const rows = table === 'purchases_index' ? 6000 : 2000;
      const opts: GenerateOptions = { table, rows, ...c.opts, withId: table !== 'user_summary' && (c.opts.withId ?? false) };
      const format = opts.format ?? 'tsv';
      const file = join(dir, `load-${table}-${c.name}.${format}`);
      const gen = await generateToFile(file, opts);
      const db = await createTestDatabase('fx');
      try {
        await db.conn.query(ddl(table));
        const [res] = await db.conn.query(loadDataStatement(file, table, format, gen.columns));
        const { affectedRows, warningStatus } = res as { affectedRows: number; warningStatus: number };
        const [warnings] = await db.conn.query('SHOW WARNINGS');
        assert.deepEqual(warnings, [], 'SHOW WARNINGS after LOAD DATA');
        assert.equal(warningStatus, 0);
        assert.equal(affectedRows, gen.rows);
        const [cnt] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${table}`);
        assert.equal(String((cnt as Array<{ n: unknown }>)[0]!.n), String(gen.rows));

        const rb = READ_BACK[table];
        const [rows] = await db.conn.query(`SELECT ${rb.select} FROM ${table} ORDER BY ${rb.orderBy}`);
        const actual = (rows as Array<Record<string, unknown>>).map((r) => {
          const rec: Record<string, FieldValue> = {};
          for (const col of rb.columns) rec[col] = r[col] === null ? null : String(r[col]);
          return rec;
        });
        const expected = expectedTable(opts);
        assert.equal(actual.length, expected.length);
        for (let i = 0; i < expected.length; i++) assert.deepEqual(actual[i], expected[i], `row ${i + 1} (ordered by ${rb.orderBy})`);

        if (opts.awkward) await spotCheckAwkward(db.conn, table, expected);
      } finally {
        await db.drop();
      }
    });
  }
}

type Conn = Awaited<ReturnType<typeof createTestDatabase>>['conn'];

/** Explicit checks of the traps, on top of the full comparison: each must actually occur in the file and read back. */
async function spotCheckAwkward(conn: Conn, table: FixtureTable, expected: Array<Record<string, FieldValue>>): Promise<void> {
  const stringCols: Record<FixtureTable, string[]> = {
    user_summary: ['weight', 'level', 'beat_rate'],
    user3: ['weight', 'level', 'beat_rate'],
    sbtest: ['c', 'pad'],
    purchases_index: ['data'],
  };
  const cols = stringCols[table];
  const key = READ_BACK[table].orderBy;
  const count = (pred: (v: FieldValue) => boolean): number =>
    expected.reduce((n, r) => n + cols.filter((c) => pred(r[c] ?? null)).length, 0);
  const sum = (cond: (c: string) => string): string => cols.map((c) => `SUM(${cond(c)})`).join(' + ');
  const checks: Array<[string, (v: FieldValue) => boolean, (c: string) => string]> = [
    ['empty string', (v) => v === '', (c) => `${c} = BINARY ''`],
    ["the text 'NULL'", (v) => v === 'NULL', (c) => `${c} = BINARY 'NULL'`],
    ['the text \\N', (v) => v === '\\N', (c) => `${c} = BINARY '\\\\N'`],
    ['embedded LF', (v) => v !== null && v.includes('\n'), (c) => `LOCATE('\\n', ${c}) > 0`],
    ['embedded CRLF', (v) => v !== null && v.includes('\r\n'), (c) => `LOCATE('\\r\\n', ${c}) > 0`],
    ['a comma', (v) => v !== null && v.includes(','), (c) => `LOCATE(',', ${c}) > 0`],
    ['a double quote', (v) => v !== null && v.includes('"'), (c) => `LOCATE('"', ${c}) > 0`],
    ['a backslash', (v) => v !== null && v.includes('\\'), (c) => `LOCATE('\\\\', ${c}) > 0`],
    ['a tab', (v) => v !== null && v.includes('\t'), (c) => `LOCATE('\\t', ${c}) > 0`],
    ['the rocket emoji', (v) => v !== null && v.includes('🚀'), (c) => `LOCATE(_utf8mb4'🚀' COLLATE utf8mb4_bin, ${c}) > 0`],
  ];
  if (table !== 'sbtest') checks.push(['NULL (awkward or generated)', (v) => v === null, (c) => `${c} IS NULL`]);
  for (const [what, pred, cond] of checks) {
    const want = count(pred);
    assert.ok(want > 0, `${table}: the awkward file has no value with ${what}`);
    const [r] = await conn.query(`SELECT ${sum(cond)} AS n FROM ${table}`);
    assert.equal(Number((r as Array<{ n: unknown }>)[0]!.n), want, `${table}: rows with ${what}`);
  }
  // One multi-line value and one emoji value fetched by key, byte for byte.
  for (const pick of [(v: FieldValue) => v !== null && v.includes('\r\n'), (v: FieldValue) => v !== null && v.includes('🚀')]) {
    const rec = expected.find((r) => cols.some((c) => pick(r[c] ?? null)))!;
    const col = cols.find((c) => pick(rec[c] ?? null))!;
    const [r] = await conn.query(`SELECT HEX(${col}) AS h FROM ${table} WHERE ${key} = ?`, [rec[key]]);
    assert.equal((r as Array<{ h: string }>)[0]!.h, Buffer.from(rec[col]!, 'utf8').toString('hex').toUpperCase());
  }
  // Every awkward value the column can take shows up somewhere in a 2000-row file of user rows.
  if (table === 'user_summary' || table === 'user3') {
    const present = new Set(expected.flatMap((r) => cols.map((c) => r[c] ?? null)));
    const missing = AWKWARD_VALUES.filter((v) => !present.has(v));
    assert.deepEqual(missing, [], 'awkward values never generated');
  }
}
