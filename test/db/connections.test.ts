/**
 * Connections against the real server: a loading connection shared by the
 * tables of an export carries no table's session settings to the next
 * (COM_RESET_CONNECTION), and a load fits the account's MAX_USER_CONNECTIONS
 * instead of stopping half-way at the connection over it (1226).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { SharedConnections } from '../../src/load/sharedConnections.js';
import { runCli } from '../support/cli.js';
import { adminConnection, createTestDatabase, openTestSession, tableDigest, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let admin: Connection;
let dir: string;
const users: string[] = [];
const TABLES = ['large', 'medium', 'small', 'tiny'];

/** An account that may open `limit` connections, with every privilege on the test database; its DATABASE_URL. */
async function limitedAccount(limit: number): Promise<{ name: string; url: string }> {
  const name = `lim${randomBytes(4).toString('hex')}`;
  users.push(name);
  await admin.query(`CREATE USER ?@'%' IDENTIFIED BY 'pw' WITH MAX_USER_CONNECTIONS ${limit}`, [name]);
  await admin.query(`GRANT ALL ON \`${db.name}\`.* TO ?@'%'`, [name]);
  const u = new URL(db.url);
  u.username = name;
  u.password = 'pw';
  return { name, url: u.toString() };
}

before(async () => {
  db = await createTestDatabase('conn');
  admin = await adminConnection();
  dir = mkdtempSync(join(tmpdir(), 'flatload-conn-'));
  // Four tables of different sizes, each file named after its table.
  for (const [i, t] of TABLES.entries()) {
    const rows = 40_000 >> i;
    await db.conn.query(`CREATE TABLE ${t} (id INT NOT NULL PRIMARY KEY, v VARCHAR(40) NOT NULL, KEY by_v (v)) ENGINE=InnoDB`);
    const lines: string[] = [];
    for (let r = 0; r < rows; r++) lines.push(`${(r * 7919) % rows}\tvalue ${r} of ${t}\n`);
    writeFileSync(join(dir, `${t}.tsv`), lines.join(''));
  }
});

after(async () => {
  for (const u of users) await admin.query("DROP USER IF EXISTS ?@'%'", [u]).catch(() => undefined);
  await admin?.end();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function counts(): Promise<number[]> {
  const out: number[] = [];
  for (const t of TABLES) out.push(Number((await tableDigest(db.conn, t)).count));
  return out;
}

describe('loading connections shared by the tables of an export', () => {
  test('a connection that served one load comes to the next reset: its session variables and user variables gone, character set and database kept', async () => {
    const { session, conn } = await openTestSession(db, { localInfile: false });
    conn.destroy();
    const shared = SharedConnections.open(session, 1);
    const state = async (c: { query(sql: string): Promise<unknown> }): Promise<Record<string, unknown>> => {
      const [rows] = (await c.query('SELECT @@SESSION.lock_wait_timeout AS wait, @@GLOBAL.lock_wait_timeout AS globalWait, @x AS x, @@character_set_client AS cs, DATABASE() AS db, CONNECTION_ID() AS id')) as [Array<Record<string, unknown>>];
      return rows[0]!;
    };
    try {
      const a = await shared.borrow('a', ['SET SESSION lock_wait_timeout = 7', 'SET @x = 1']);
      const first = await state(a);
      assert.deepEqual([Number(first['wait']), Number(first['x'])], [7, 1]);
      a.release();
      const again = await shared.borrow('a', ['SET SESSION lock_wait_timeout = 7', 'SET @x = 1']);
      assert.deepEqual(await state(again), first, 'the same load finds its own settings on the same connection');
      again.release();
      const b = await shared.borrow('b', []);
      const next = await state(b);
      b.release();
      assert.equal(next['id'], first['id'], 'the same connection');
      assert.equal(Number(next['wait']), Number(next['globalWait']), 'the session variable is back to the server default');
      assert.equal(next['x'], null, 'user variables are gone');
      assert.deepEqual([next['cs'], next['db']], ['utf8mb4', db.name]);
    } finally {
      await shared.end();
    }
  });
});

describe('an account with MAX_USER_CONNECTIONS', () => {
  test('an export with --jobs 2 in 5 connections: two tables at once instead of three, every row loaded; in 2: refused before anything loads (exit 6)', { timeout: 120_000 }, async () => {
    const { name, url } = await limitedAccount(5);
    // Before the export shared its loading connections, four tables with --jobs 2 opened seven.
    const r = await runCli(['load', dir, '--jobs', '2', '--progress', 'none', '--json'], { env: { DATABASE_URL: url } });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { status: string; jobs: number; notes: string[] };
    assert.equal(report.status, 'ok');
    assert.equal(report.jobs, 2);
    assert.ok(report.notes.some((n) => /may open 4 more connection\(s\) \(max_user_connections\): 2 table\(s\) at once instead of 3/.test(n)), report.notes.join('\n'));
    assert.deepEqual(await counts(), [40_000, 20_000, 10_000, 5_000]);

    await admin.query(`ALTER USER ?@'%' WITH MAX_USER_CONNECTIONS 2`, [name]);
    for (const t of TABLES) await db.conn.query(`TRUNCATE TABLE ${t}`);
    const refused = await runCli(['load', dir, '--jobs', '2', '--restart', '--progress', 'none'], { env: { DATABASE_URL: url } });
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /max_user_connections is 2 for this account and it has 1 open, this export's included: loading needs two more/);
    assert.deepEqual(await counts(), [0, 0, 0, 0]);
  });

  test('one file with --jobs 4 in 3 connections: two streams, with a warning, every row loaded; in 1: refused (exit 6)', { timeout: 60_000 }, async () => {
    const { name, url } = await limitedAccount(3);
    await db.conn.query('TRUNCATE TABLE large');
    const file = join(dir, 'large.tsv');
    const plan = await runCli(['plan', file, '--table', 'large', '--jobs', '4'], { env: { DATABASE_URL: url } });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /2 loading connection\(s\) instead of 4: max_user_connections is 3 for this account and it has 1 open/);
    const r = await runCli(['load', file, '--table', 'large', '--jobs', '4', '--chunk-size', '64KiB', '--progress', 'none', '--json'], { env: { DATABASE_URL: url } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rows: number }).rows, 40_000);
    assert.equal((await counts())[0], 40_000);

    await admin.query(`ALTER USER ?@'%' WITH MAX_USER_CONNECTIONS 1`, [name]);
    const refused = await runCli(['load', file, '--table', 'large', '--mode', 'replace', '--progress', 'none'], { env: { DATABASE_URL: url } });
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /max_user_connections is 1 for this account and it has 1 open, this load's included: none is left to load over/);
    assert.equal((await counts())[0], 40_000, 'nothing was touched');
  });
});

