import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql, { type Connection } from 'mysql2/promise';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
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
    const missing = await runCli(['load', x, '--include', 'users', '--rename', 'users=users_nowhere', '--progress', 'none'], { env: env() });
    assert.equal(missing.code, 7, missing.stderr);
    assert.match(missing.stderr, /table \S+\.users_nowhere \(--rename \S+\.users=…\) does not exist/);
    const one = await runCli(['load', join(x, 'users.txt'), '--table', 'users', '--include', 'users'], { env: env() });
    assert.equal(one.code, 2);
    assert.match(one.stderr, /--include chooses tables of an export/);
    assert.deepEqual(await rows('SELECT COUNT(*) AS n FROM tmp_a'), [{ n: '0' }]);
  });
});

describe('checking against the exporter\'s figures', () => {
  const make = async (t: string): Promise<void> => {
    await db.conn.query(`CREATE TABLE ${t} (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL)`);
  };
  let file: string;
  /** CHECKSUM TABLE of the same rows loaded by the server itself: the value an exporting server would report. */
  let reference: string;

  before(async () => {
    file = join(dir, 'ck.txt');
    writeFileSync(file, Array.from({ length: 300 }, (_, i) => `${i + 1}\tv${i % 7}\n`).join(''));
    await make('ck_ref');
    await db.conn.query(`INSERT INTO ck_ref SELECT seq, CONCAT('v', (seq - 1) % 7) FROM seq_1_to_300`);
    reference = (await tableDigest(db.conn, 'ck_ref')).checksum;
  });

  test('--expect-rows and --expect-checksum that match: exit 0, the report shows the comparison; the plan says what it will check', async () => {
    await make('ck_ok');
    const plan = await runCli(['plan', file, '--table', 'ck_ok', '--expect-rows', '300', '--expect-checksum', reference], { env: env() });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, new RegExp(`after the load: COUNT\\(\\*\\) = 300 and CHECKSUM TABLE = ${reference} .*exit code 9`));
    const r = await runCli(['load', file, '--table', 'ck_ok', '--expect-rows', '300', '--expect-checksum', reference, '--progress', 'none', '--json'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { check: { rows: number; checksum: string; equal: boolean } };
    assert.deepEqual([report.check.rows, report.check.checksum, report.check.equal], [300, reference, true]);
    assert.match(r.stderr, /check: +COUNT\(\*\) 300 \(300 expected\)/);
  });

  test('a row count that differs exits 9 naming the table and both figures; the rerun checks again', async () => {
    await make('ck_bad');
    const args = ['load', file, '--table', 'ck_bad', '--expect-rows', '301', '--progress', 'none'];
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 9, r.stderr);
    assert.match(r.stderr, new RegExp(`${db.name}\\.ck_bad does not match the export: 300 rows, 301 expected \\(--expect-rows/--expect-checksum\\)`));
    const again = await runCli(args, { env: env() });
    assert.equal(again.code, 9, `already loaded is not already checked: ${again.stderr}`);
    const bad = await runCli(['load', file, '--table', 'ck_bad', '--expect-rows', 'many'], { env: env() });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--expect-rows: "many" is not a whole number/);
  });

  test('with --mode swap a table that does not match is never published: yesterday\'s rows stay', async () => {
    await make('ck_swap');
    await db.conn.query("INSERT INTO ck_swap VALUES (1, 'yesterday')");
    const r = await runCli(['load', file, '--table', 'ck_swap', '--mode', 'swap', '--expect-checksum', '12345', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 9, r.stderr);
    assert.match(r.stderr, new RegExp(`CHECKSUM TABLE ${reference}, 12345 expected`));
    assert.deepEqual(await rows('SELECT id, v FROM ck_swap'), [{ id: 1, v: 'yesterday' }]);
  });

  test('an export checks each table against its manifest\'s rows and checksum, and against mydumper\'s metadata', async () => {
    await make('ck_m1');
    await make('ck_m2');
    const m = join(dir, 'ckm');
    mkdirSync(m);
    writeFileSync(join(m, 'a.txt'), '1\ta\n2\tb\n');
    writeFileSync(join(m, 'b.txt'), '1\tx\n');
    writeFileSync(join(m, 'export.json'), JSON.stringify({ tables: [{ table: 'ck_m1', files: ['a.txt'], rows: 2 }, { table: 'ck_m2', files: ['b.txt'], rows: 2 }] }));
    const r = await runCli(['load', '--manifest', join(m, 'export.json'), '--progress', 'none'], { env: env() });
    assert.equal(r.code, 9, r.stderr);
    assert.match(r.stderr, new RegExp(`${db.name}\\.ck_m2 does not match the export: 1 rows, 2 expected \\(manifest \\S+export\\.json\\)`));
    assert.match(r.stdout, new RegExp(`${db.name}\\.ck_m1: check COUNT\\(\\*\\) 2 \\(2 expected\\) from manifest \\S+: equal`));
    // The other table still loaded and checked; with --mode swap neither is published while one differs.
    await db.conn.query("INSERT INTO ck_m1 VALUES (99, 'old')");
    const swap = await runCli(['load', '--manifest', join(m, 'export.json'), '--mode', 'swap', '--progress', 'none'], { env: env() });
    assert.equal(swap.code, 9, swap.stderr);
    assert.match(swap.stdout, /no table was swapped in/);
    assert.deepEqual(await rows('SELECT id FROM ck_m1 WHERE id = 99'), [{ id: 99 }]);

    // A mydumper directory: `db.table.NNNNN.dat` files and its metadata (mydumper --load-data writes .dat files).
    await make('ck_my');
    const d = join(dir, 'mydump');
    mkdirSync(d);
    writeFileSync(join(d, `${db.name}.ck_my.00000.dat`), Array.from({ length: 300 }, (_, i) => `${i + 1}\tv${i % 7}\n`).join(''));
    writeFileSync(join(d, 'metadata'), `[config]\nquote-character = BACKTICK\n\n[\`${db.name}\`.\`ck_my\`]\nreal_table_name=ck_my\nrows = 300\ndata_checksum = ${reference}\n`);
    const plan = await runCli(['plan', d], { env: env() });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, new RegExp(`ck_my: after its load, COUNT\\(\\*\\) = 300 and CHECKSUM TABLE = ${reference} \\(mydumper metadata \\S+metadata\\)`));
    assert.match(plan.stdout, /passed over \S+metadata: mydumper's metadata/);
    const ok = await runCli(['load', d, '--progress', 'none'], { env: env() });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /ck_my: check COUNT\(\*\) 300 \(300 expected\), CHECKSUM TABLE \d+ \(\d+ expected\) from mydumper metadata \S+: equal/);
    const refused = await runCli(['load', d, '--expect-rows', '3'], { env: env() });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--expect-rows and --expect-checksum are for a single-file load/);
  });
});

describe('--analyze', () => {
  test('a load into an empty table runs ANALYZE TABLE (timed in the report); an append to a table with rows does not unless asked', async () => {
    await db.conn.query('CREATE TABLE an (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL, KEY by_v (v)) STATS_AUTO_RECALC=0');
    const file = join(dir, 'an.txt');
    writeFileSync(file, Array.from({ length: 500 }, (_, i) => `${i + 1}\tv${i % 5}\n`).join(''));
    const plan = await runCli(['plan', file, '--table', 'an'], { env: env() });
    assert.match(plan.stdout, /after the load: ANALYZE TABLE \S+\.an \(--analyze auto: the load starts from an empty table/);
    const r = await runCli(['load', file, '--table', 'an', '--json', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { analyze?: { seconds: number; note: string | null } };
    assert.equal(report.analyze?.note, null);
    assert.match(r.stderr, /analyze: +ANALYZE TABLE \d+\.\d\d s/);
    // The statistics describe the loaded rows (STATS_AUTO_RECALC=0: only ANALYZE could have refreshed them).
    assert.deepEqual(await rows(`SELECT n_rows FROM mysql.innodb_table_stats WHERE database_name = '${db.name}' AND table_name = 'an'`), [{ n_rows: '500' }]);
    const more = join(dir, 'an2.txt');
    writeFileSync(more, '1001\tx\n');
    const append = await runCli(['load', more, '--table', 'an', '--json', '--progress', 'none', '--skip-size-report'], { env: env() });
    assert.equal(append.code, 0, append.stderr);
    assert.equal((JSON.parse(append.stdout) as { analyze?: unknown }).analyze, undefined);
    const bad = await runCli(['load', more, '--table', 'an', '--analyze', 'maybe'], { env: env() });
    assert.equal(bad.code, 2);
  });
});

describe('--binlog, against a server that writes a binary log', () => {
  let server: ThrowawayServer;
  let admin: Connection;
  const DB = 'nightly_binlog';
  let file: string;
  const url = (user: string): string => `mysql://${user}@127.0.0.1:${server.port}/${DB}`;
  /** Where the binary log ends now. */
  const logEnd = async (): Promise<{ file: string; pos: number }> => {
    const [st] = await admin.query('SHOW MASTER STATUS');
    const r = (st as Array<{ File: string; Position: number }>)[0]!;
    return { file: r.File, pos: Number(r.Position) };
  };
  /** Binary log events since `from` that name the table. */
  const eventsFor = async (table: string, from: { file: string; pos: number }): Promise<number> => {
    const [logs] = await admin.query('SHOW BINARY LOGS');
    let n = 0;
    for (const l of (logs as Array<{ Log_name: string }>).filter((x) => x.Log_name >= from.file)) {
      const [ev] = await admin.query(`SHOW BINLOG EVENTS IN '${l.Log_name}'${l.Log_name === from.file ? ` FROM ${from.pos}` : ''}`);
      n += (ev as Array<{ Info: string }>).filter((e) => String(e.Info).includes(table)).length;
    }
    return n;
  };

  before(async () => {
    server = await startThrowawayServer({ extraArgs: ['--log-bin=nightly-bin', '--server-id=1'], innodbBufferPoolSize: '128M', innodbLogFileSize: '64M' });
    admin = await mysql.createConnection({ socketPath: server.socketPath, user: 'root', multipleStatements: true });
    await admin.query(`CREATE DATABASE ${DB}`);
    for (const t of ['logged', 'unlogged', 'refused']) await admin.query(`CREATE TABLE ${DB}.${t} (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL)`);
    // Everything on the database, nothing global: no BINLOG ADMIN, no SUPER.
    await admin.query("CREATE USER 'etl'@'%'");
    await admin.query(`GRANT ALL ON ${DB}.* TO 'etl'@'%'`);
    file = join(dir, 'bl.txt');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => `${i + 1}\tb${i}\n`).join(''));
  });
  after(async () => {
    await admin?.end();
    await server?.stop();
  });

  test('the server\'s own setting by default: the plan says so and the rows reach the binary log', async () => {
    const plan = await runCli(['plan', file, '--table', 'logged', '--url', url('etl')]);
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /binary log: on, replicas receive the rows, the server's own setting/);
    const from = await logEnd();
    const r = await runCli(['load', file, '--table', 'logged', '--url', url('etl'), '--progress', 'none', '--skip-size-report']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok((await eventsFor('logged', from)) > 0);
  });

  test('--binlog off without BINLOG ADMIN or SUPER is refused before anything changes, naming the privilege', async () => {
    // What the check relies on, asked of the server itself: this account may not set sql_log_bin.
    const etl = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'etl', database: DB });
    await assert.rejects(etl.query('SET SESSION sql_log_bin = 0'), (e: { errno?: number }) => e.errno === 1227);
    await etl.end();
    for (const cmd of ['plan', 'load']) {
      const r = await runCli([cmd, file, '--table', 'refused', '--url', url('etl'), '--binlog', 'off', '--progress', 'none']);
      assert.equal(r.code, 7, `${cmd}: ${r.stderr}`);
      assert.match(r.stderr, /BINLOG ADMIN/);
    }
    const [[c]] = (await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.refused`)) as unknown as [[{ n: number }]];
    assert.equal(Number(c.n), 0);
    const [bk] = await admin.query(`SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${DB}' AND TABLE_NAME LIKE 'flatload%'`);
    // The bookkeeping exists from the earlier load; no job was recorded for the refused one.
    assert.ok((bk as unknown[]).length > 0);
    const [jobs] = await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.flatload_jobs WHERE target LIKE '%refused%'`);
    assert.equal(Number((jobs as Array<{ n: unknown }>)[0]!.n), 0);
  });

  test('--binlog off with BINLOG ADMIN: the plan warns about replicas, the rows load and none of the load reaches the binary log', async () => {
    await admin.query("GRANT BINLOG ADMIN ON *.* TO 'etl'@'%'");
    const plan = await runCli(['plan', file, '--table', 'unlogged', '--url', url('etl'), '--binlog', 'off']);
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /binary log: off \(--binlog off\): SET SESSION sql_log_bin = 0 on every connection/);
    assert.match(plan.stdout, /replicas will not receive them/);
    const from = await logEnd();
    const r = await runCli(['load', file, '--table', 'unlogged', '--url', url('etl'), '--binlog', 'off', '--mode', 'swap', '--progress', 'none', '--skip-size-report']);
    assert.equal(r.code, 0, r.stderr);
    const [[c]] = (await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.unlogged`)) as unknown as [[{ n: number }]];
    assert.equal(Number(c.n), 50);
    assert.equal(await eventsFor('unlogged', from), 0, 'neither the rows nor the shadow table and its RENAME');
  });
});
