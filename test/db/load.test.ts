import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ddl, fileColumns, generateToFile, loadDataOptions, type FixtureTable, type GenerateOptions } from '../../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let dir: string;

before(async () => {
  db = await createTestDatabase('load');
  dir = mkdtempSync(join(tmpdir(), 'flatload-load-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });

async function twinLoad(table: string, file: string, options: string, columns?: string[]): Promise<void> {
  const cols = columns ? ` (${columns.map((c) => `\`${c}\``).join(',')})` : '';
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE \`${table}\` ${options}${cols}`, [file]);
}

/**
 * The file the reference table loads: flatload numbers a pre-assigned id in
 * the order of the file's UNIQUE key (user3: user_id), so the reference loads
 * the generator's sorted file, the same rows sorted by user_id.
 */
async function referenceFile(file: string, gen: GenerateOptions): Promise<string> {
  if (gen.table !== 'user3') return file;
  const sorted = `${file}.sorted`;
  await generateToFile(sorted, { ...gen, sorted: true });
  return sorted;
}

async function createPair(name: string, createSql: string): Promise<void> {
  await db.conn.query(createSql.replace(/CREATE TABLE \S+/, `CREATE TABLE \`${name}\``));
  await db.conn.query(createSql.replace(/CREATE TABLE \S+/, `CREATE TABLE \`${name}_ref\``));
}

describe('each fixture loads exactly as the server\'s own LOAD DATA INFILE', () => {
  const tables: FixtureTable[] = ['user_summary', 'user3', 'sbtest', 'purchases_index'];
  for (const table of tables) {
    for (const format of ['tsv', 'csv'] as const) {
      test(`${table} (${format}${format === 'csv' ? ', awkward values' : ''})`, async () => {
        const file = join(dir, `${table}.${format}`);
        const gen = { table, rows: 3000, format, awkward: format === 'csv', seed: 11 };
        await generateToFile(file, gen);
        const name = `${table}_${format}`;
        await createPair(name, ddl(table));
        const columns = fileColumns(gen);
        const idAbsent = table !== 'user_summary';
        await twinLoad(`${name}_ref`, await referenceFile(file, gen), loadDataOptions(format), idAbsent ? columns : undefined);
        const args = ['load', file, '--table', name, '--chunk-size', '16KiB', '--jobs', '2', '--progress', 'none', '--json'];
        if (format === 'csv') args.push('--dialect', 'csv');
        if (idAbsent) args.push('--columns', columns.join(','));
        const r = await runCli(args, { env: env() });
        assert.equal(r.code, 0, r.stderr);
        const report = JSON.parse(r.stdout) as { rows: number; rowsInInput: number; chunks: number; rejected: number; warnings: number };
        assert.equal(report.rows, 3000);
        assert.equal(report.rowsInInput, 3000);
        assert.equal(report.rejected, 0);
        assert.ok(report.chunks > 4, `expected many chunks, got ${report.chunks}`);
        assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
      });
    }
  }
});

const create = 'CREATE TABLE x (id int NOT NULL, a varchar(40) NULL, b varchar(40) NULL, PRIMARY KEY (id))';

describe('--strategy insert (LOAD DATA LOCAL off) gives the same table', () => {
  for (const table of ['user3', 'purchases_index'] as const) {
    for (const format of ['tsv', 'csv'] as const) {
      test(`${table} (${format})`, async () => {
        const file = join(dir, `ins-${table}.${format}`);
        const gen = { table, rows: 2000, format, awkward: true, seed: 12 };
        await generateToFile(file, gen);
        const name = `ins_${table}_${format}`;
        await createPair(name, ddl(table));
        const columns = fileColumns(gen);
        await twinLoad(`${name}_ref`, await referenceFile(file, gen), loadDataOptions(format), columns);
        const args = ['load', file, '--table', name, '--strategy', 'insert', '--chunk-size', '16KiB', '--jobs', '2', '--progress', 'none', '--columns', columns.join(',')];
        if (format === 'csv') args.push('--dialect', 'csv');
        const r = await runCli(args, { env: env() });
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
      });
    }
  }
});

describe('dialects, NULL and UTF-8', () => {
  const cases: Array<{ dialect: string; options: string; body: string }> = [
    {
      dialect: 'default',
      options: "FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'",
      body: '1\t\\N\t\n2\t\tx\n3\tline\\nbreak\ttab\\there\n4\tZoë 東京 🚀\t\\\\back\n5\tNULL\t"q"\n',
    },
    {
      dialect: 'csv',
      options: "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\' LINES TERMINATED BY '\\r\\n'",
      body: '1,\\N,""\r\n2,NULL,"NULL"\r\n3,"multi\r\nline, with comma","say ""hi"""\r\n4,Zoë 東京,🚀\r\n5,,plain\r\n',
    },
    {
      dialect: 'tsv',
      options: "FIELDS TERMINATED BY '\\t' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\' LINES TERMINATED BY '\\r\\n'",
      body: '1\t"a\tb"\t\\N\r\n2\t""\t"x\r\ny"\r\n3\tNULL\tplain\r\n',
    },
    {
      dialect: 'csv-unix',
      options: "FIELDS TERMINATED BY ',' ENCLOSED BY '\"' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'",
      body: '"1","a\nb","c"\n"2",\\N,""\n"3","x""y","東京"\n',
    },
  ];
  for (const c of cases) {
    test(`--dialect ${c.dialect}`, async () => {
      const file = join(dir, `dialect-${c.dialect}.txt`);
      writeFileSync(file, c.body);
      const name = `d_${c.dialect.replace('-', '_')}`;
      await createPair(name, create);
      await twinLoad(`${name}_ref`, file, `CHARACTER SET utf8mb4 ${c.options}`);
      const r = await runCli(['load', file, '--table', name, '--dialect', c.dialect, '--chunk-size', '1', '--progress', 'none'], { env: env() });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
    });
  }

  test('NULL and the empty string stay apart; UTF-8 arrives intact', async () => {
    const [rows] = await db.conn.query('SELECT id, a, b FROM d_default ORDER BY id');
    const r = rows as Array<{ id: number; a: string | null; b: string | null }>;
    assert.equal(r[0]!.a, null);
    assert.equal(r[0]!.b, '');
    assert.equal(r[1]!.a, '');
    assert.equal(r[2]!.a, 'line\nbreak');
    assert.equal(r[2]!.b, 'tab\there');
    assert.equal(r[3]!.a, 'Zoë 東京 🚀');
    assert.equal(r[3]!.b, '\\back');
    assert.equal(r[4]!.a, 'NULL'); // no enclosure: the word is text
    const [csv] = await db.conn.query('SELECT id, a, b FROM d_csv ORDER BY id');
    const c = csv as Array<{ id: number; a: string | null; b: string | null }>;
    assert.deepEqual([c[0]!.a, c[0]!.b], [null, '']);
    assert.deepEqual([c[1]!.a, c[1]!.b], [null, 'NULL']); // unquoted NULL is NULL, quoted is text
    assert.equal(c[2]!.a, 'multi\r\nline, with comma');
    assert.equal(c[2]!.b, 'say "hi"');
    assert.equal(c[3]!.b, '🚀');
  });

  test('a header line is skipped and a BOM is not data', async () => {
    const file = join(dir, 'header.csv');
    writeFileSync(file, '\ufeffid,a,b\n1,"x\ny",z\n2,p,q\n');
    await db.conn.query(create.replace('CREATE TABLE x', 'CREATE TABLE hdr'));
    const r = await runCli(['load', file, '--table', 'hdr', '--dialect', 'csv-unix', '--ignore-lines', '1', '--progress', 'none', '--json'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { rows: number; notes: string[] };
    assert.equal(report.rows, 2);
    const [rows] = await db.conn.query('SELECT id, a FROM hdr ORDER BY id');
    assert.deepEqual(rows, [
      { id: 1, a: 'x\ny' },
      { id: 2, a: 'p' },
    ]);
  });
});

describe('errors are one clear line with a documented exit code', () => {
  test('missing input file', async () => {
    const r = await runCli(['load', join(dir, 'nope.tsv'), '--table', 't'], { env: env() });
    assert.equal(r.code, 5);
    assert.match(r.stderr, /no such file .*nope\.tsv/);
    assert.doesNotMatch(r.stderr, /\n\s+at /); // no stack trace
  });

  test('input is a directory', async () => {
    mkdirSync(join(dir, 'adir'), { recursive: true });
    const r = await runCli(['load', join(dir, 'adir'), '--table', 't'], { env: env() });
    assert.equal(r.code, 5);
    assert.match(r.stderr, /is a directory/);
  });

  test('unknown database and unknown table', async () => {
    const file = join(dir, 'one.tsv');
    writeFileSync(file, '1\ta\tb\n');
    let r = await runCli(['load', file, '--table', 'no_such_db_zz.t'], { env: env() });
    assert.equal(r.code, 7);
    assert.match(r.stderr, /unknown database `no_such_db_zz`/);
    r = await runCli(['load', file, '--table', 'no_such_table'], { env: env() });
    assert.equal(r.code, 7);
    assert.match(r.stderr, /unknown table `.*`\.`no_such_table`/);
  });

  test('refused connection', async () => {
    const file = join(dir, 'one.tsv');
    const r = await runCli(['load', file, '--table', 'x.t', '--url', 'mysql://root@127.0.0.1:1/x'], { env: {} });
    assert.equal(r.code, 6);
    assert.match(r.stderr, /connection refused/);
  });

  test('bad credentials, and the password never shows', async () => {
    await db.conn.query("CREATE USER IF NOT EXISTS 'fl_pw'@'%' IDENTIFIED BY 'right-secret'");
    await db.conn.query(`GRANT ALL ON \`${db.name}\`.* TO 'fl_pw'@'%'`);
    const u = new URL(db.url);
    u.username = 'fl_pw';
    u.password = 'wrong-secret';
    const file = join(dir, 'one.tsv');
    const r = await runCli(['load', file, '--table', 'x', '--url', u.toString()], { env: {} });
    assert.equal(r.code, 6);
    assert.match(r.stderr, /Access denied/);
    assert.doesNotMatch(r.stdout + r.stderr, /wrong-secret|right-secret/);
  });

  test('a row the server would change stops the load, naming its line', async () => {
    const file = join(dir, 'bad.tsv');
    writeFileSync(file, '1\tok\tok\n2\tthis value is far too long for a forty character column\tx\n3\tok\tok\n');
    await db.conn.query(create.replace('CREATE TABLE x', 'CREATE TABLE badrow'));
    const r = await runCli(['load', file, '--table', 'badrow', '--progress', 'none'], { env: env() });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /line 2 \(byte offset 8\)/);
    assert.match(r.stderr, /file .*bad\.tsv, line 2, byte offset 8, chunk 0/);
    assert.match(r.stderr, /\[1265\]|\[1406\]/);
    const [rows] = await db.conn.query('SELECT COUNT(*) AS n FROM badrow');
    assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 0, 'the chunk was rolled back');
  });
});

describe('a server with local_infile off', () => {
  let server: ThrowawayServer;
  before(async () => {
    server = await startThrowawayServer({ extraArgs: ['--local-infile=0'], innodbBufferPoolSize: '64M', innodbLogFileSize: '48M' });
  });
  after(async () => {
    await server?.stop();
  });
  test('falls back to INSERTs, saying how to enable the fast path; a forced --strategy load-data is refused with exit 7', async () => {
    const file = join(dir, 'one.tsv');
    writeFileSync(file, '1\ta\tb\n');
    const u = new URL(server.url);
    u.pathname = '/fl';
    const { default: mysql } = await import('mysql2/promise');
    const c = await mysql.createConnection({ host: u.hostname, port: Number(u.port), user: 'root' });
    await c.query('CREATE DATABASE fl');
    await c.query(`${create.replace('CREATE TABLE x', 'CREATE TABLE fl.t')}`);
    await c.end();
    const fallback = await runCli(['load', file, '--table', 't', '--url', u.toString(), '--progress', 'none', '--json'], { env: {} });
    assert.equal(fallback.code, 0, fallback.stderr);
    assert.match(fallback.stderr, /local_infile=OFF.*INSERT.*SET GLOBAL local_infile=1/);
    assert.equal((JSON.parse(fallback.stdout) as { strategy: string; rows: number }).strategy, 'insert');
    const r = await runCli(['load', file, '--table', 't', '--url', u.toString(), '--strategy', 'load-data', '--restart'], { env: {} });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /local_infile/);
    assert.match(r.stderr, /SET GLOBAL local_infile=1/);
  });
});
