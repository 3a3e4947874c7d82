/**
 * fixtures/generate against the server: every table × format loads with
 * server-side LOAD DATA INFILE with zero warnings and reads back exactly what
 * was generated (awkward values included). The generator's own properties
 * are in test/unit/fixtures.test.ts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AWKWARD_VALUES,
  FIXTURE_TABLES,
  ddl,
  fileColumns,
  generateRows,
  generateToFile,
  loadDataStatement,
  type FieldValue,
  type FixtureTable,
  type GenerateOptions,
} from '../../fixtures/generate.js';
import { createTestDatabase } from '../support/db.js';

const dir = mkdtempSync(join(tmpdir(), 'flatload-fx-'));
after(() => rmSync(dir, { recursive: true, force: true }));

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
          for (const col of rb.columns) {
            const v = r[col] as string | number | null;
            rec[col] = v === null ? null : String(v);
          }
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
