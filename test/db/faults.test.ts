import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql, { type Connection } from 'mysql2/promise';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

let dir: string;
let file: string;
const ROWS = 60_000;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flatload-faults-'));
  file = join(dir, 'us.tsv');
  await generateToFile(file, { table: 'user_summary', rows: ROWS, seed: 42 });
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function count(conn: Connection, table: string): Promise<number> {
  const [r] = await conn.query(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number((r as Array<{ n: number }>)[0]!.n);
}

async function bookkept(conn: Connection): Promise<number> {
  const [t] = await conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'flatload\\_chunks%'");
  let n = 0;
  for (const { t: name } of t as Array<{ t: string }>) n += await count(conn, `\`${name}\``);
  return n;
}

/** LOAD DATA LOCAL statements running on the server (a chunk in flight). */
async function loadsInFlight(conn: Connection): Promise<number> {
  const [p] = await conn.query("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'LOAD DATA LOCAL%'");
  return Number((p as Array<{ n: number }>)[0]!.n);
}

async function setupPair(conn: Connection, name: string, engine = 'InnoDB'): Promise<void> {
  for (const t of [name, `${name}_ref`]) {
    await conn.query(`DROP TABLE IF EXISTS ${t}`);
    await conn.query(`${ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${t}`)} ENGINE=${engine}`);
  }
  await conn.query(`LOAD DATA INFILE ? INTO TABLE ${name}_ref ${loadDataOptions('tsv')}`, [file]);
}

describe('faults on the shared test server', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase('faults');
  });
  after(async () => db.drop());

  test('Ctrl-C finishes the chunks in flight, prints the resume command; rerunning it completes exactly', async () => {
    await setupPair(db.conn, 'intr');
    const args = ['load', file, '--table', 'intr', '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    await pollUntil('5,000 rows loaded', async () => (await count(db.conn, 'intr')) > 5000, { process: s, everyMs: 25 });
    assert.ok(running(s), 'the load was still running when it was interrupted');
    s.child.kill('SIGINT');
    const r = await s.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /interrupted/);
    const resume = /resume with: (.*)/.exec(r.stderr)?.[1];
    assert.ok(resume, r.stderr);
    assert.match(resume, /^cd \S+ && flatload load .*--table intr/);
    const loaded = await count(db.conn, 'intr');
    const [b] = await db.conn.query('SELECT COALESCE(SUM(c.rows_loaded),0) AS n FROM flatload_chunks c JOIN flatload_jobs j USING (job_id) WHERE j.target = ?', [`${db.name}.intr`]);
    assert.equal(loaded, Number((b as Array<{ n: number }>)[0]!.n), 'every row in the table belongs to a committed chunk');
    const again = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /resuming job/);
    assert.deepEqual(await tableDigest(db.conn, 'intr'), await tableDigest(db.conn, 'intr_ref'));
  });

  test('a connection killed mid-chunk (KILL from another session) is retried; nothing doubles', async () => {
    await setupPair(db.conn, 'killc');
    // Each chunk sleeps on the server (about 0.2 s), so a kill lands inside a statement. A kill that lands
    // between two fast chunks only drops an idle connection, which is replaced without a retry.
    await db.conn.query('CREATE TRIGGER killc_slow BEFORE INSERT ON killc FOR EACH ROW BEGIN IF NEW.user_id % 200 = 0 THEN DO SLEEP(0.02); END IF; END');
    const s = spawnCli(['load', file, '--table', 'killc', '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'lines', '--json'], { DATABASE_URL: db.url });
    let killed = 0;
    const admin = await mysql.createConnection({ uri: db.url });
    for (let i = 0; i < 400 && killed < 3 && running(s); i++) {
      // Only this load's statements: other tests load into the same shared server at the same time.
      const [p] = await admin.query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'LOAD DATA LOCAL%' AND INFO LIKE ?", [`%\`${db.name}\`.\`killc\`%`]);
      const ids = (p as Array<{ ID: number }>).map((x) => x.ID);
      if (ids.length) {
        await admin.query(`KILL CONNECTION ${ids[0]}`).catch(() => undefined);
        killed++;
        await new Promise((r) => setTimeout(r, 150));
      } else await new Promise((r) => setTimeout(r, 10));
    }
    await admin.end();
    const r = await s.done;
    assert.ok(killed > 0, 'no LOAD DATA statement was caught to kill');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /retrying chunk/);
    const report = JSON.parse(r.stdout) as { rows: number; rejected: number; rowsInInput: number };
    assert.equal(report.rows + report.rejected, report.rowsInInput);
    assert.equal(report.rows, ROWS);
    assert.deepEqual(await tableDigest(db.conn, 'killc'), await tableDigest(db.conn, 'killc_ref'));
  });
});

describe('the server killed and restarted mid-load', () => {
  let server: ThrowawayServer;
  let conn: Connection;
  before(async () => {
    server = await startThrowawayServer({ innodbBufferPoolSize: '256M', innodbLogFileSize: '64M' });
    const c = await mysql.createConnection({ uri: server.url });
    await c.query('CREATE DATABASE f');
    await c.end();
    conn = await mysql.createConnection({ uri: `${server.url}f` });
  });
  after(async () => {
    await conn?.end().catch(() => undefined);
    await server?.stop();
  });

  for (const engine of ['InnoDB', ...(process.env['FLATLOAD_TEST_ROCKSDB'] === '1' ? ['ROCKSDB'] : [])]) {
    test(`${engine}: retried or resumed, the table equals a clean load`, { timeout: 180_000 }, async () => {
      const name = `crash_${engine.toLowerCase()}`;
      await setupPair(conn, name, engine);
      const url = `${server.url}f`;
      const args = ['load', file, '--table', name, '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'lines'];
      const s = spawnCli(args, { DATABASE_URL: url });
      // Crash once rows or chunks are committed. A MyRocks bulk load's rows and bookkeeping rows stay
      // invisible until finalised: there, once chunks are being loaded.
      const progressed = async (): Promise<boolean> =>
        engine === 'ROCKSDB' ? (await loadsInFlight(conn)) > 0 : (await count(conn, name)) > 8000 || (await bookkept(conn)) > 3;
      await pollUntil('the load under way', progressed, { process: s, everyMs: 25 });
      assert.ok(running(s), 'the load was still running when the server crashed');
      await conn.end().catch(() => undefined);
      await server.crashAndRestart();
      conn = await mysql.createConnection({ uri: url });
      let r = await s.done;
      // A crash the load never felt (it had finished, or slipped between two chunks unnoticed) would prove nothing.
      assert.ok(r.code === 4 || /retrying chunk/.test(r.stderr), `the crash interrupted the load (stopped resumably or retried a chunk); exit ${String(r.code)}:\n${r.stderr}`);
      for (let i = 0; i < 3 && r.code !== 0; i++) {
        assert.equal(r.code, 4, r.stderr); // stopped, resumable
        const again = spawnCli(args, { DATABASE_URL: url });
        r = await again.done;
      }
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(conn, name), await tableDigest(conn, `${name}_ref`));
    });
  }
});

describe('a full tablespace', () => {
  let server: ThrowawayServer;
  let conn: Connection;
  before(async () => {
    // Tables in a small system tablespace that cannot grow past 40 MB.
    server = await startThrowawayServer({
      innodbBufferPoolSize: '64M',
      innodbLogFileSize: '48M',
      extraArgs: ['--innodb-file-per-table=0', '--innodb-data-file-path=ibdata1:12M:autoextend:max:40M'],
    });
    const c = await mysql.createConnection({ uri: server.url });
    await c.query('CREATE DATABASE f');
    await c.end();
    conn = await mysql.createConnection({ uri: `${server.url}f`, multipleStatements: true });
  });
  after(async () => {
    await conn?.end().catch(() => undefined);
    await server?.stop();
  });

  test('stops with a clear, resumable error and no partial chunk; after space is freed the rerun completes', { timeout: 120_000 }, async () => {
    await setupPair(conn, 'full');
    await conn.query('CREATE TABLE filler (id int auto_increment primary key, pad char(255)) ENGINE=InnoDB');
    // Fill the tablespace until the server says it is full.
    await conn.query("INSERT INTO filler (pad) VALUES ('x'),('x'),('x'),('x'),('x'),('x'),('x'),('x')");
    for (let i = 0; i < 30; i++) {
      try {
        await conn.query('INSERT INTO filler (pad) SELECT pad FROM filler LIMIT 40000');
      } catch {
        break;
      }
    }
    const url = `${server.url}f`;
    const args = ['load', file, '--table', 'full', '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none'];
    const r = await runCli(args, { env: { DATABASE_URL: url } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /ran out of space|is full/);
    assert.match(r.stderr, /resume with: cd \S+ && flatload load/);
    const inTable = await count(conn, 'full');
    const [b] = await conn.query("SELECT COALESCE(SUM(rows_loaded),0) AS n FROM flatload_chunks");
    assert.equal(inTable, Number((b as Array<{ n: number }>)[0]!.n), 'no partial chunk is committed');
    await conn.query('DROP TABLE filler');
    // The dropped table's pages come back to the shared tablespace once purge gets to them: rerun, as a DBA would, until it fits.
    let again = await runCli(args, { env: { DATABASE_URL: url } });
    for (let i = 0; i < 5 && again.code === 4 && /is full/.test(again.stderr); i++) {
      await new Promise((r) => setTimeout(r, 2000));
      again = await runCli(args, { env: { DATABASE_URL: url } });
    }
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await tableDigest(conn, 'full'), await tableDigest(conn, 'full_ref'));
  });
});
