/**
 * SQL built from user input: hostile database, table and column names
 * (backquotes, quotes, dots, spaces, semicolons, comment markers, Unicode)
 * go through the CLI — `--table` written with backquotes, `--columns`
 * naming them — and the data lands exactly, in every mode and strategy.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { quoteId, quoteQualified } from '../../src/db/quote.js';
import { runCli } from '../support/cli.js';
import { adminConnection, serverUrl } from '../support/db.js';

const DB = 'we;ird`db -- Zoë';
const COL_C = 'c`1; DROP';
const COL_Z = 'Zoë "名" \'x\'';
const TABLES = ["t.a ble'\"", 'x`; DROP DATABASE mysql; --', '東京 /* c */', 'back\\slash'];

/** `--table` as a user types it: both parts backquoted. */
const tableArg = (t: string): string => quoteQualified(DB, t);
const columnsArg = `id,${quoteId(COL_C)},${quoteId(COL_Z)}`;

const ROWS: Array<[number, string, string | null]> = [
  [1, "O'Brien", '"quoted"'],
  [2, 'back\\slash', 'Zoë 東京'],
  [3, '; DROP TABLE x; --', '`tick`'],
  [4, '/* not a comment */', null],
];
/** TSV with the mysql defaults: backslash escapes, \N for NULL. */
const TSV = ROWS.map(([id, c, z]) => `${id}\t${c.replace(/\\/g, '\\\\')}\t${z === null ? '\\N' : z.replace(/\\/g, '\\\\')}\n`).join('');

let admin: Connection;
let dir: string;
let file: string;

before(async () => {
  admin = await adminConnection();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteId(DB)}`);
  await admin.query(`CREATE DATABASE ${quoteId(DB)}`);
  dir = mkdtempSync(join(tmpdir(), 'flatload-names-'));
  file = join(dir, 'rows.tsv');
  writeFileSync(file, TSV);
});
after(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${quoteId(DB)}`).catch(() => undefined);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});

async function createTable(t: string, rows: Array<[number, string, string | null]> = []): Promise<void> {
  const q = quoteQualified(DB, t);
  await admin.query(`DROP TABLE IF EXISTS ${q}`);
  await admin.query(
    `CREATE TABLE ${q} (id INT NOT NULL PRIMARY KEY, ${quoteId(COL_C)} VARCHAR(60) NULL, ${quoteId(COL_Z)} VARCHAR(60) NULL, KEY ${quoteId('k`; --')} (${quoteId(COL_C)})) ENGINE=InnoDB`,
  );
  for (const r of rows) await admin.query(`INSERT INTO ${q} VALUES (?, ?, ?)`, r);
}

async function contents(t: string): Promise<Array<[number, string, string | null]>> {
  const [rows] = await admin.query({ sql: `SELECT id, ${quoteId(COL_C)}, ${quoteId(COL_Z)} FROM ${quoteQualified(DB, t)} ORDER BY id`, rowsAsArray: true });
  return (rows as Array<[number, string, string | null]>).map(([a, b, c]) => [Number(a), b, c]);
}

async function tablesInDb(): Promise<string[]> {
  const [rows] = await admin.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1', [DB]);
  return (rows as Array<{ t: string }>).map((r) => r.t);
}

async function load(t: string, extra: string[] = []) {
  const r = await runCli(['load', file, '--table', tableArg(t), '--columns', columnsArg, '--json', '--progress', 'none', '--no-defaults', ...extra], {
    env: { DATABASE_URL: serverUrl() },
  });
  assert.equal(r.code, 0, `${t} ${extra.join(' ')}:\n${r.stderr}`);
  return JSON.parse(r.stdout) as { rows: number; table: string; mode: string; strategy: string };
}

describe('hostile identifiers through the CLI', () => {
  for (const t of TABLES) {
    test(`append into ${JSON.stringify(DB)}.${JSON.stringify(t)}`, async () => {
      await createTable(t);
      const report = await load(t);
      assert.equal(report.rows, ROWS.length);
      assert.deepEqual(await contents(t), ROWS);
      // Nothing was created or dropped beside it but flatload's own bookkeeping.
      assert.ok((await tablesInDb()).includes(t));
    });
  }

  test('--mode replace (empties the table first)', async () => {
    const t = TABLES[0]!;
    await createTable(t, [[99, 'old', 'old']]);
    const report = await load(t, ['--mode', 'replace']);
    assert.equal(report.rows, ROWS.length);
    assert.deepEqual(await contents(t), ROWS);
  });

  test('--mode swap (shadow table, RENAME, DROP of the old one)', async () => {
    const t = TABLES[1]!;
    await createTable(t, [[99, 'old', 'old']]);
    const report = await load(t, ['--mode', 'swap']);
    assert.equal(report.rows, ROWS.length);
    assert.deepEqual(await contents(t), ROWS);
    const left = (await tablesInDb()).filter((x) => x.includes('__flatload_'));
    assert.deepEqual(left, [], `shadow/old tables left behind: ${left.join(', ')}`);
  });

  test('--strategy insert (INSERT statements instead of LOAD DATA)', async () => {
    const t = TABLES[2]!;
    await createTable(t);
    const report = await load(t, ['--strategy', 'insert']);
    assert.equal(report.rows, ROWS.length);
    assert.deepEqual(await contents(t), ROWS);
  });

  test('--on-duplicate replace over existing rows', async () => {
    const t = TABLES[3]!;
    await createTable(t, [[1, 'stale', 'stale'], [2, 'stale', 'stale']]);
    await load(t, ['--on-duplicate', 'replace']);
    assert.deepEqual(await contents(t), ROWS);
  });

  test('the database in the URL path (percent-encoded) and the table alone in --table', async () => {
    const t = 'plain table';
    await createTable(t);
    const u = new URL(serverUrl());
    u.pathname = `/${encodeURIComponent(DB)}`;
    const r = await runCli(['load', file, '--table', quoteId(t), '--columns', columnsArg, '--json', '--progress', 'none', '--no-defaults', '--url', u.toString()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await contents(t), ROWS);
  });

  test('a --columns name that is not in the table is refused by name, nothing loaded', async () => {
    const t = TABLES[0]!;
    await createTable(t);
    const r = await runCli(['load', file, '--table', tableArg(t), '--columns', `id,${quoteId('c`1; DROP TABLE x')},${quoteId(COL_Z)}`, '--progress', 'none', '--no-defaults'], {
      env: { DATABASE_URL: serverUrl() },
    });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /c`1; DROP TABLE x/);
    assert.deepEqual(await contents(t), []);
  });
});
