/**
 * MariaDB's empty-table bulk insert (docs/rules.md#mariadb-empty-table-bulk-insert):
 * the load is one LOAD DATA in one transaction, the server takes its bulk
 * path, and whatever gives it up (a bad row, a duplicate found building the index, an
 * interruption) leaves the table as empty as it was — then the load by
 * chunks names the rows, or the rerun starts again from the first record.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PoolConnection } from 'mysql2/promise';
import { ddl, fileColumns, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { takingBulkPath } from '../../src/load/bulkInsert.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { prng, spawnCli } from '../support/spawn.js';

let db: TestDatabase;
let dir: string;

before(async () => {
  db = await createTestDatabase('bulk');
  dir = mkdtempSync(join(tmpdir(), 'flatload-bulk-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });
const ROWS = 20_000;
const gen = { table: 'user3' as const, rows: ROWS, seed: 5 };
const columns = fileColumns(gen);

async function count(table: string): Promise<number> {
  const [r] = await db.conn.query(`SELECT COUNT(*) AS n FROM \`${table}\``);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

async function bulkOperations(): Promise<number> {
  const [r] = await db.conn.query("SELECT VARIABLE_VALUE AS n FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_BULK_OPERATIONS'");
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

/** user3 and its reference, the server's own LOAD DATA INFILE of the same file (AUTO_INCREMENT numbers it in file order from 1). */
async function createWithReference(name: string, file: string): Promise<void> {
  await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, `CREATE TABLE \`${name}\``));
  await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, `CREATE TABLE \`${name}_ref\``));
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE \`${name}_ref\` ${loadDataOptions('tsv')} (${columns.join(',')})`, [file]);
}

const loadArgs = (file: string, table: string, ...extra: string[]): string[] => ['load', file, '--table', table, '--jobs', '2', '--progress', 'none', '--json', ...extra];

describe('MariaDB bulk insert into an empty user3 (AUTO_INCREMENT key absent from the file)', () => {
  let file: string;
  before(async () => {
    file = join(dir, 'u3.tsv');
    await generateToFile(file, gen);
  });

  test('one LOAD DATA in the bulk path, ids numbered in file order: the table equals the server\'s own load of the file', { timeout: 120_000 }, async () => {
    await createWithReference('b1', file);
    const ops = await bulkOperations();
    const r = await runCli(loadArgs(file, 'b1'), { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { rows: number; chunks: number; jobs: number; plan: { commitScope: string } };
    assert.equal(report.rows, ROWS);
    assert.equal(report.chunks, 1, 'the whole input is one statement');
    assert.equal(report.jobs, 1);
    assert.equal(report.plan.commitScope, 'load');
    assert.equal(await bulkOperations(), ops + 1, 'InnoDB counted one bulk insert');
    assert.deepEqual(await tableDigest(db.conn, '`b1`'), await tableDigest(db.conn, '`b1_ref`'));
    assert.match(r.stderr, /--jobs 2 ignored: concurrency 1: the bulk insert/);
    // AUTO_INCREMENT continues after the numbered rows, as after the server's own load.
    await db.conn.query("INSERT INTO `b1` (user_id) VALUES (1)");
    const [next] = await db.conn.query('SELECT MAX(id) AS m FROM `b1`');
    assert.equal(Number((next as Array<{ m: unknown }>)[0]!.m), ROWS + 1);
  });

  test('a bad row: the bulk insert is given up with the table left empty, and the load by chunks names it (then sets it aside with --max-errors)', { timeout: 120_000 }, async () => {
    const bad = join(dir, 'u3-bad.tsv');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1233] = lines[1233]!.replace(/\t-?\d+$/, '\tnot-a-number');
    writeFileSync(bad, lines.join('\n'));
    await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, 'CREATE TABLE `b2`'));
    const stop = await runCli(loadArgs(bad, 'b2'), { env: env() });
    assert.equal(stop.code, 4, stop.stderr);
    assert.match(stop.stderr, /MariaDB's bulk insert was given up and rolled back: the server skipped or changed 1 row\(s\) in chunk 0, the first: \[1366\]/);
    assert.match(stop.stderr, /the load ran again by chunks/);
    assert.match(stop.stderr, /line 1234 \(byte offset \d+\)/, 'the load by chunks names the row');
    const rejects = join(dir, 'b2.rejects.tsv');
    // The rerun resumes the load by chunks that stopped (its plan is stored), now with room for the row.
    const ok = await runCli(loadArgs(bad, 'b2', '--max-errors', '5', '--reject-file', rejects), { env: env() });
    assert.equal(ok.code, 3, ok.stderr);
    const report = JSON.parse(ok.stdout) as { rows: number; rejected: number; plan: { commitScope: string } };
    assert.deepEqual([report.rows, report.rejected, report.plan.commitScope], [ROWS - 1, 1, 'chunk']);
    assert.equal(await count('b2'), ROWS - 1);
    // Loaded afresh with room for the row from the start, it is given up, then set aside by the load by chunks.
    await db.conn.query('DROP TABLE `b2`');
    await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, 'CREATE TABLE `b2`'));
    const fresh = await runCli(loadArgs(bad, 'b2', '--max-errors', '5', '--reject-file', rejects, '--restart'), { env: env() });
    assert.equal(fresh.code, 3, fresh.stderr);
    const again = JSON.parse(fresh.stdout) as { rows: number; rejected: number; seconds: number; notes: string[] };
    assert.deepEqual([again.rows, again.rejected], [ROWS - 1, 1]);
    assert.ok(again.notes.some((n) => /bulk insert was given up .* \(\d+\.\d\d s in\); the table was left as it was, and the load ran again by chunks/.test(n)), again.notes.join('\n'));
    assert.equal(await count('b2'), ROWS - 1);
    assert.match(readFileSync(rejects, 'utf8'), /not-a-number/);
  });

  test('a duplicate in the UNIQUE key: building the index fails (1180), nothing stays, and the load by chunks names the line', { timeout: 120_000 }, async () => {
    const dup = join(dir, 'u3-dup.tsv');
    const lines = readFileSync(file, 'utf8').split('\n');
    const userId = lines[10]!.split('\t')[0]!;
    lines[15_000] = `${userId}${lines[15_000]!.slice(lines[15_000]!.indexOf('\t'))}`;
    writeFileSync(dup, lines.join('\n'));
    await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, 'CREATE TABLE `b3`'));
    const r = await runCli(loadArgs(dup, 'b3'), { env: env() });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /bulk insert was given up and rolled back: building its indexes failed \(loading chunk 0: Got error 1 "Operation not permitted" during COMMIT\), as it does for a duplicate key in a UNIQUE index/);
    assert.match(r.stderr, /Duplicate entry '\d+' for key 'u_user_id'/);
    assert.match(r.stderr, /line (11|15001) \(byte offset \d+\)/);
    assert.equal(await count('b3'), 0);
  });

  test('killed at random moments and rerun until done: never a part of the rows, and the table equals a clean load', { timeout: 240_000 }, async () => {
    const big = join(dir, 'u3-big.tsv');
    await generateToFile(big, { ...gen, rows: 5 * ROWS, seed: 6 });
    await createWithReference('b4', big);
    // A clean load's time on this machine, so the kills fall from start-up to the COMMIT whatever its speed.
    await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, 'CREATE TABLE `b4_time`'));
    const t0 = Date.now();
    assert.equal((await runCli(loadArgs(big, 'b4_time'), { env: env() })).code, 0);
    const clean = Date.now() - t0;
    const rnd = prng(77);
    let killed = 0;
    for (let run = 1; ; run++) {
      assert.ok(run <= 15, 'never finished');
      const s = spawnCli(loadArgs(big, 'b4'), env());
      let exited = false;
      void s.done.then(() => (exited = true));
      if (run <= 8) {
        await new Promise((res) => setTimeout(res, Math.floor(rnd() * clean)));
        if (!exited) s.child.kill('SIGKILL');
      }
      const r = await s.done;
      const n = await count('b4');
      if (r.signal === 'SIGKILL') {
        killed++;
        assert.ok(n === 0 || n === 5 * ROWS, `after a kill the table holds ${n} rows: all or none`);
        continue;
      }
      assert.equal(r.code, 0, r.stderr);
      break;
    }
    assert.ok(killed >= 3, `only ${killed} runs were killed`);
    assert.deepEqual(await tableDigest(db.conn, '`b4`'), await tableDigest(db.conn, '`b4_ref`'));
  });

  test('--bulk-insert off, or --chunk-size: per-chunk transactions as before', { timeout: 120_000 }, async () => {
    await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, 'CREATE TABLE `b5`'));
    for (const extra of [['--bulk-insert', 'off'], ['--chunk-size', '64KiB', '--mode', 'replace']]) {
      const r = await runCli([...loadArgs(file, 'b5', ...extra), '--dry-run'], { env: env() });
      assert.equal(r.code, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { plan: { commitScope: string } }).plan.commitScope, 'chunk', extra.join(' '));
    }
  });
});

test('takingBulkPath: a first statement off the bulk path (the table not empty in the transaction) gives the bulk insert up', { timeout: 60_000 }, async () => {
  await db.conn.query(ddl('user3').replace(/CREATE TABLE \S+/, 'CREATE TABLE `b6`'));
  const pool = (await import('mysql2/promise')).createPool({ uri: db.url, connectionLimit: 1 });
  const conn: PoolConnection = await pool.getConnection();
  try {
    await conn.query('SET SESSION unique_checks = 0, foreign_key_checks = 0');
    await conn.query('START TRANSACTION');
    await conn.query('INSERT INTO `b6` (user_id) VALUES (1)');
    // The transaction's second insert into a table that is no longer empty: no bulk path.
    await assert.rejects(
      takingBulkPath(conn, 0, () => conn.query('INSERT INTO `b6` (user_id) VALUES (2), (3)')),
      (e: unknown) => isFlatloadError(e) && e.code === 'BULK_ABANDONED' && /did not take its bulk path/.test(e.message),
    );
    await conn.query('ROLLBACK');
    await conn.query('START TRANSACTION');
    await takingBulkPath(conn, 0, () => conn.query('INSERT INTO `b6` (user_id) VALUES (2), (3)'));
    await conn.query('ROLLBACK');
  } finally {
    conn.release();
    await pool.end();
  }
});
