import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';

/**
 * What a nightly job needs beyond the load itself, against the real server:
 * columns by header name, choosing tables of an export, and checking the
 * loaded tables against the exporter's counts.
 */
let db: TestDatabase;
let dir: string;

before(async () => {
  db = await createTestDatabase('night');
  dir = mkdtempSync(join(tmpdir(), 'flatload-nightly-'));
});
after(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function rows(sql: string): Promise<Array<Record<string, unknown>>> {
  const [r] = await db.conn.query(sql);
  return r as Array<Record<string, unknown>>;
}

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });

describe('--columns header', () => {
  const ddl = 'CREATE TABLE people (id INT NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, city VARCHAR(40) NULL, score INT NOT NULL DEFAULT 7)';

  test('fields go to the columns the header names, in the header\'s order and case; the header is not loaded', async () => {
    await db.conn.query(ddl);
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'City,ID,"Name"\r\nOslo,1,Ann\r\n"Rome, IT",2,Bob\r\n');
    const r = await runCli(['load', file, '--table', 'people', '--dialect', 'csv', '--columns', 'header', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await rows('SELECT id, name, city, score FROM people ORDER BY id'), [
      { id: 1, name: 'Ann', city: 'Oslo', score: 7 },
      { id: 2, name: 'Bob', city: 'Rome, IT', score: 7 },
    ]);
    const plan = await runCli(['plan', file, '--table', 'people', '--dialect', 'csv', '--columns', 'header'], { env: env() });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /columns: +city, id, name/);
  });

  test('a header field the table lacks stops before anything loads, naming it; --skip-fields discards it', async () => {
    await db.conn.query('TRUNCATE people');
    const file = join(dir, 'people2.csv');
    writeFileSync(file, 'id,name,nickname\r\n3,Cy,cc\r\n');
    const r = await runCli(['load', file, '--table', 'people', '--dialect', 'csv', '--columns', 'header', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /the header names "nickname", not a column of \S+\.people \(file \S+people2\.csv, line 1, byte offset 0\)/);
    assert.match(r.stderr, /--skip-fields 'nickname'/);
    assert.deepEqual(await rows('SELECT COUNT(*) AS n FROM people'), [{ n: '0' }]);
    const ok = await runCli(['load', file, '--table', 'people', '--dialect', 'csv', '--columns', 'header', '--skip-fields', 'NICKNAME', '--progress', 'none'], { env: env() });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(await rows('SELECT id, name, city, score FROM people'), [{ id: 3, name: 'Cy', city: null, score: 7 }]);
  });

  test('a NOT NULL column without a default that the header lacks is named', async () => {
    const file = join(dir, 'people3.csv');
    writeFileSync(file, 'id,city\r\n4,Oslo\r\n');
    const r = await runCli(['load', file, '--table', 'people', '--dialect', 'csv', '--columns', 'header', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /has `name` \(NOT NULL, no default\), which the header does not name/);
  });

  test('in an export, each file is mapped by its own header', async () => {
    await db.conn.query('TRUNCATE people');
    const x = join(dir, 'xhead');
    mkdirSync(x);
    writeFileSync(join(x, 'people.000.csv'), 'id,name\r\n10,A\r\n');
    writeFileSync(join(x, 'people.001.csv'), 'name,city,id\r\nB,Bergen,11\r\n');
    const r = await runCli(['load', x, '--dialect', 'csv', '--columns', 'header', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await rows('SELECT id, name, city FROM people ORDER BY id'), [
      { id: 10, name: 'A', city: null },
      { id: 11, name: 'B', city: 'Bergen' },
    ]);
    const digest = await tableDigest(db.conn, 'people');
    assert.equal(digest.count, '2');
  });
});

describe('choosing the tables of an export', () => {
  let x: string;
  before(async () => {
    for (const t of ['orders', 'users', 'tmp_a', 'orders_staging']) await db.conn.query(`CREATE TABLE ${t} (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL)`);
    x = join(dir, 'xsel');
    mkdirSync(x);
    writeFileSync(join(x, 'orders.txt'), '1\ta\n2\tb\n');
    writeFileSync(join(x, 'users.txt'), '1\tu\n');
    writeFileSync(join(x, 'tmp_a.txt'), '1\tt\n');
    writeFileSync(join(x, 'v.sql'), 'CREATE VIEW v AS SELECT 1;\n');
    writeFileSync(join(x, 'README'), 'not data\n');
  });

  test('plan DIR shows what was picked, why each other table and file was left out, and changes nothing', async () => {
    const r = await runCli(['plan', x, '--exclude', 'tmp_*', '--rename', 'orders=orders_staging'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`loading 2 of the export's 3 table\\(s\\): ${db.name}\\.orders_staging \\(from ${db.name}\\.orders, --rename\\), ${db.name}\\.users`));
    assert.match(r.stdout, new RegExp(`left out ${db.name}\\.tmp_a \\(tmp_a\\.txt\\): --exclude tmp_\\*`));
    assert.match(r.stdout, /passed over \S+\/README: not a data file/);
    assert.match(r.stdout, /passed over \S+\/v\.sql: a \.sql file with no data file beside it/);
    assert.match(r.stdout, new RegExp(`== ${db.name}\\.orders_staging`));
    assert.doesNotMatch(r.stdout, /== \S+\.tmp_a/);
    assert.deepEqual(await rows('SELECT (SELECT COUNT(*) FROM orders_staging) + (SELECT COUNT(*) FROM users) AS n'), [{ n: '0' }]);
  });

  test('the load loads only the picked tables, a renamed one into its new name', async () => {
    const r = await runCli(['load', x, '--include', 'orders,users', '--rename', 'orders=orders_staging', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await rows('SELECT (SELECT COUNT(*) FROM orders_staging) AS s, (SELECT COUNT(*) FROM orders) AS o, (SELECT COUNT(*) FROM users) AS u, (SELECT COUNT(*) FROM tmp_a) AS t'), [{ s: '2', o: '0', u: '1', t: '0' }]);
  });

  test('a bad selection stops before anything changes', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--include', 'order'], /--include order matches no table of the export/],
      [['--rename', 'orders'], /--rename takes FROM=TO/],
      [['--exclude', '*'], /leave no table of the export to load/],
    ];
    for (const [args, re] of cases) {
      const r = await runCli(['load', x, ...args, '--progress', 'none'], { env: env() });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
    }
    const one = await runCli(['load', join(x, 'users.txt'), '--table', 'users', '--include', 'users'], { env: env() });
    assert.equal(one.code, 2);
    assert.match(one.stderr, /--include chooses tables of an export/);
    assert.deepEqual(await rows('SELECT COUNT(*) AS n FROM tmp_a'), [{ n: '0' }]);
  });
});
