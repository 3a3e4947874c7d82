import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, serverUrl, tableDigest, type TestDatabase } from '../support/db.js';

/**
 * A dump directory's `.sql` files with --create-tables: the real
 * mariadb-dump --tab output creates its tables; a file that does anything
 * else — another table, rows, a DROP in an executable comment or with a
 * comment inside it — is refused before anything on the server changes,
 * unless --run-sql-files asks for the files to run whole.
 */
let hasDump = true;
try {
  execFileSync('mariadb-dump', ['--version'], { stdio: 'ignore' });
} catch {
  hasDump = false;
}

let source: TestDatabase;
let victim: TestDatabase;
let root: string;
/** mariadb-dump --tab of `source`: orders.sql + orders.txt. */
let dump: string;

function dumpTab(db: string, dir: string): void {
  const u = new URL(serverUrl());
  const args = [`--host=${u.hostname}`, `--port=${u.port || '3306'}`, `--user=${decodeURIComponent(u.username || 'root')}`, `--tab=${dir}`, db];
  if (u.password) args.unshift(`--password=${decodeURIComponent(u.password)}`);
  execFileSync('mariadb-dump', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

before(async () => {
  if (!hasDump) return;
  source = await createTestDatabase('scsrc');
  await source.conn.query("CREATE TABLE orders (id INT PRIMARY KEY, note VARCHAR(20) DEFAULT 'a;b' COMMENT 'it''s; ok', at DATETIME NULL) ENGINE=InnoDB");
  await source.conn.query("INSERT INTO orders SELECT seq, CONCAT('n', seq), '2026-01-01' + INTERVAL seq HOUR FROM seq_1_to_100");
  victim = await createTestDatabase('scvic');
  await victim.conn.query('CREATE TABLE keep (a INT PRIMARY KEY)');
  await victim.conn.query('INSERT INTO keep VALUES (1), (2), (3)');
  root = mkdtempSync(join(tmpdir(), 'flatload-sidecars-'));
  dump = join(root, 'dump');
  mkdirSync(dump);
  dumpTab(source.name, dump);
});
after(async () => {
  if (!hasDump) return;
  await source?.drop();
  await victim?.drop();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function tablesOf(db: TestDatabase): Promise<string[]> {
  const [rows] = await db.conn.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME', [db.name]);
  return (rows as Array<{ t: string }>).map((r) => r.t);
}

/** A copy of the dump whose orders.sql has `extra` inserted after its CREATE TABLE. */
function hostileDump(name: string, extra: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  const sql = readFileSync(join(dump, 'orders.sql'), 'utf8');
  const at = sql.indexOf(';\n', sql.indexOf('CREATE TABLE')) + 2;
  writeFileSync(join(dir, 'orders.sql'), `${sql.slice(0, at)}${extra}\n${sql.slice(at)}`);
  writeFileSync(join(dir, 'orders.txt'), readFileSync(join(dump, 'orders.txt')));
  return dir;
}

const skip = hasDump ? false : 'no mariadb-dump on this machine';

describe('what a dump directory\'s .sql file may run', { skip }, () => {
  test("mariadb-dump --tab's own .sql creates the table (quotes and ; inside it kept)", { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('scok');
    try {
      const r = await runCli(['load', dump, '--create-tables', '--progress', 'none', '--json'], { env: { DATABASE_URL: db.url } });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(db.conn, 'orders'), await tableDigest(source.conn, `\`${source.name}\`.orders`));
      const [cols] = await db.conn.query("SELECT COLUMN_DEFAULT AS d, COLUMN_COMMENT AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' AND COLUMN_NAME = 'note'");
      assert.deepEqual(cols, [{ d: "'a;b'", c: "it's; ok" }]);
    } finally {
      await db.drop();
    }
  });

  test("the session variables a .sql file sets are set back: a file that leaves sql_mode at NO_BACKSLASH_ESCAPES does not break the statements that follow", { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('scses');
    try {
      const dir = join(root, 'session');
      mkdirSync(dir);
      // mysqldump sets sql_mode back at the end; this file does not. The client escapes a quote in a value as \', which that mode reads differently.
      writeFileSync(join(dir, "it's.sql"), "CREATE TABLE `it's` (id INT PRIMARY KEY, v VARCHAR(10));\n/*!40101 SET SQL_MODE='NO_BACKSLASH_ESCAPES' */;\n");
      writeFileSync(join(dir, "it's.txt"), '1\ta\n2\tb\n');
      const r = await runCli(['load', dir, '--create-tables', '--progress', 'none', '--json'], { env: { DATABASE_URL: db.url } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await tableDigest(db.conn, "`it's`")).count, '2');
    } finally {
      await db.drop();
    }
  });

  const hostile = (): Array<[name: string, extra: string, statement: RegExp]> => [
    ['another table', 'CREATE TABLE victim_made (a INT);', /CREATE TABLE victim_made/],
    ['an INSERT', 'INSERT INTO orders VALUES (1000, "x", NULL);', /INSERT INTO orders/],
    ['DROP DATABASE', `DROP DATABASE \`${victim.name}\`;`, /DROP DATABASE/],
    ['a DROP in an executable comment', `/*!50001 DROP TABLE \`${victim.name}\`.keep */;`, /\/\*!50001 DROP TABLE/],
    ['a DROP with a comment inside', `drop /*c*/ table \`${victim.name}\`.keep;`, /drop \/\*c\*\/ table/],
    ['SET GLOBAL', 'SET GLOBAL max_connections = 7;', /SET GLOBAL/],
  ];

  test('a .sql file that does more than create its table is refused, naming the statement, and nothing on the server changes', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase('scbad');
    const keep = await tableDigest(victim.conn, 'keep');
    try {
      for (const [i, [name, extra, statement]] of hostile().entries()) {
        const dir = hostileDump(`bad${i}`, extra);
        const line = readFileSync(join(dir, 'orders.sql'), 'utf8').split('\n').indexOf(extra) + 1;
        const r = await runCli(['load', dir, '--create-tables', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
        assert.equal(r.code, 7, `${name}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`orders\\.sql line ${line}: "`), name);
        assert.match(r.stderr, statement, name);
        assert.match(r.stderr, /--run-sql-files/, name);
        assert.deepEqual(await tablesOf(db), [], `${name}: nothing created, not even the bookkeeping`);
        assert.deepEqual(await tablesOf(victim), ['keep'], name);
        assert.deepEqual(await tableDigest(victim.conn, 'keep'), keep, name);
      }
      const [g] = await db.conn.query('SELECT @@GLOBAL.max_connections AS m');
      assert.notEqual(Number((g as Array<{ m: unknown }>)[0]!.m), 7);
      // plan (a dry run) refuses the same file.
      const p = await runCli(['plan', join(root, 'bad1'), '--create-tables'], { env: { DATABASE_URL: db.url } });
      assert.equal(p.code, 7, p.stderr);
    } finally {
      await db.drop();
    }
  });

  test('--run-sql-files runs the file whole, as asked', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('scall');
    try {
      const dir = hostileDump('whole', 'CREATE TABLE side (a INT);\nINSERT INTO side VALUES (42);');
      const r = await runCli(['load', dir, '--create-tables', '--run-sql-files', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
      assert.equal(r.code, 0, r.stderr);
      const [rows] = await db.conn.query('SELECT a FROM side');
      assert.deepEqual(rows, [{ a: 42 }]);
      assert.equal((await tableDigest(db.conn, 'orders')).count, '100');
    } finally {
      await db.drop();
    }
  });
});
