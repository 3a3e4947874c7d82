/**
 * Duplicates the user asked to ignore, by the tens of thousands in one
 * chunk, and rejected rows whose bytes outgrow max_allowed_packet. Each case
 * compares the table with the server's own LOAD DATA INFILE of the same
 * file and checks the report's counts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('dup');
  dir = mkdtempSync(join(tmpdir(), 'flatload-dup-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface Report {
  status: string;
  rows: number;
  rejected: number;
  skippedDuplicates: number;
  chunks: number;
}

const base = ['--progress', 'none', '--skip-size-report', '--json'];

describe('--on-duplicate ignore with more duplicates in a chunk than the server lists warnings (65,535)', () => {
  for (const engine of ['InnoDB', 'MyISAM']) {
    test(`${engine}: re-importing 70,000 rows already present, 10,000 new and 100 repeated in the file`, async () => {
      const t = `reimport_${engine.toLowerCase()}`;
      const ref = `${t}_ref`;
      for (const name of [t, ref]) {
        await db.conn.query(`CREATE TABLE ${name} (id INT NOT NULL PRIMARY KEY, v VARCHAR(12) NOT NULL) ENGINE=${engine}`);
        await db.conn.query(`INSERT INTO ${name} SELECT seq, CONCAT('old', seq) FROM seq_0_to_69999`);
      }
      let content = '';
      for (let i = 0; i < 80_000; i++) content += `${i}\tnew${i}\n`;
      // Repeated within the file: the first occurrence wins under IGNORE.
      for (let i = 75_000; i < 75_100; i++) content += `${i}\tagain${i}\n`;
      const f = join(dir, `${t}.tsv`);
      writeFileSync(f, content);
      await db.conn.query(`LOAD DATA INFILE ? IGNORE INTO TABLE ${ref}`, [f]);
      // One chunk would hold every record (about 1 MB).
      const r = await runCli(['load', f, '--table', t, '--on-duplicate', 'ignore', '--jobs', '1', '--chunk-size', '16MiB', ...base], { env: { DATABASE_URL: db.url } });
      assert.equal(r.code, 0, r.stderr);
      const rep = JSON.parse(r.stdout) as Report;
      assert.equal(rep.status, 'ok');
      assert.equal(rep.rows, 10_000);
      assert.equal(rep.skippedDuplicates, 70_100);
      assert.equal(rep.rejected, 0);
      assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, ref));
      // The same command again: already loaded, the table unchanged.
      const again = await runCli(['load', f, '--table', t, '--on-duplicate', 'ignore', '--jobs', '1', '--chunk-size', '16MiB', ...base], { env: { DATABASE_URL: db.url } });
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, ref));
    });
  }
});

/**
 * A server of its own with max_allowed_packet=1M: every statement flatload
 * builds must fit it, also the bookkeeping of a chunk whose rejected rows
 * (their bytes and messages) are several MB.
 */
describe('rejected bytes of one chunk beyond max_allowed_packet', () => {
  let server: ThrowawayServer;
  let url: string;
  let admin: mysql.Connection;
  before(async () => {
    server = await startThrowawayServer({ extraArgs: ['--max-allowed-packet=1M'], innodbBufferPoolSize: '64M', innodbLogFileSize: '48M' });
    const u = new URL(server.url);
    admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port), user: 'root', multipleStatements: true });
    await admin.query('CREATE DATABASE pk');
    u.pathname = '/pk';
    url = u.toString();
  });
  after(async () => {
    await admin?.end().catch(() => undefined);
    await server?.stop();
  });

  const bad = (i: number): string => `${i}\t${'x'.repeat(2000)}\n`;
  const good = (i: number): string => `${i}\t${i}\n`;
  const count = async (t: string): Promise<number> => Number(((await admin.query(`SELECT COUNT(*) AS n FROM pk.${t}`))[0] as Array<{ n: unknown }>)[0]!.n);

  test('an all-bad input of 4 MB in one chunk: every row rejected, none lost, the same command again finds it loaded', async () => {
    await admin.query('CREATE TABLE pk.allbad (id INT NOT NULL PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB');
    let content = '';
    for (let i = 0; i < 2000; i++) content += bad(i);
    const f = join(dir, 'allbad.tsv');
    writeFileSync(f, content);
    const rejects = join(dir, 'allbad.rejects.tsv');
    const args = ['load', f, '--url', url, '--table', 'allbad', '--max-errors', '100000', '--chunk-size', '8MiB', '--jobs', '1', '--reject-file', rejects, ...base];
    const r = await runCli(args, { env: {}, timeoutMs: 240_000 });
    assert.equal(r.code, 3, r.stderr);
    const rep = JSON.parse(r.stdout) as Report;
    assert.equal(rep.chunks, 1);
    assert.equal(rep.rows, 0);
    assert.equal(rep.rejected, 2000);
    assert.equal(readFileSync(rejects, 'latin1'), content, 'the reject file holds every record exactly');
    assert.equal(readFileSync(`${rejects}.log`, 'utf8').trim().split('\n').length, 2001);
    assert.equal(await count('allbad'), 0);
    const again = await runCli(args, { env: {}, timeoutMs: 120_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as Report).status, 'already-loaded');
  });

  test('a load stopped after a chunk of 4 MB of rejects resumes with those rejects read back from the bookkeeping', async () => {
    await admin.query('CREATE TABLE pk.resumed (id INT NOT NULL PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB');
    let head = '';
    for (let i = 0; i < 2000; i++) head += bad(i);
    let goods = '';
    for (let i = 2000; i < 40_000; i++) goods += good(i);
    const last = bad(40_000);
    const f = join(dir, 'resumed.tsv');
    writeFileSync(f, head + goods + last);
    const rejects = join(dir, 'resumed.rejects.tsv');
    const args = (maxErrors: number): string[] => ['load', f, '--url', url, '--table', 'resumed', '--max-errors', String(maxErrors), '--chunk-size', '4MiB', '--jobs', '1', '--reject-file', rejects, ...base];
    // The first chunk's 2000 rejects fit the budget; the last record makes one too many.
    const first = await runCli(args(2000), { env: {}, timeoutMs: 240_000 });
    assert.equal(first.code, 4, first.stderr);
    assert.ok(await count('resumed') > 0, 'the first chunk committed');
    const second = await runCli(args(5000), { env: {}, timeoutMs: 240_000 });
    assert.equal(second.code, 3, second.stderr);
    const rep = JSON.parse(second.stdout) as Report & { resumedChunks: number };
    assert.ok(rep.resumedChunks >= 1, 'the rerun resumed');
    assert.equal(rep.rejected, 2001);
    assert.equal(rep.rows, 38_000);
    assert.equal(await count('resumed'), 38_000);
    assert.equal(readFileSync(rejects, 'latin1'), head + last, 'every rejected record, the first chunk\'s read back');
  });

  test('the INSERT fallback: a 2.5 MB row that no INSERT under the packet can carry goes to the reject file with its line', async () => {
    await admin.query('CREATE TABLE pk.wide (id INT NOT NULL PRIMARY KEY, body LONGTEXT NOT NULL) ENGINE=InnoDB');
    await admin.query('CREATE TABLE pk.wide_ld LIKE pk.wide');
    let before = '';
    for (let i = 1; i <= 10; i++) before += `${i}\tsmall${i}\n`;
    const wide = `11\t${'w'.repeat(2_500_000)}\n`;
    let rest = '';
    for (let i = 12; i <= 21; i++) rest += `${i}\tsmall${i}\n`;
    const f = join(dir, 'wide.tsv');
    writeFileSync(f, before + wide + rest);
    const rejects = join(dir, 'wide.rejects.tsv');
    const r = await runCli(['load', f, '--url', url, '--table', 'wide', '--strategy', 'insert', '--chunk-size', '8MiB', '--max-errors', '5', '--reject-file', rejects, ...base], { env: {}, timeoutMs: 120_000 });
    assert.equal(r.code, 3, r.stderr);
    const rep = JSON.parse(r.stdout) as Report;
    assert.equal(rep.rows, 20);
    assert.equal(rep.rejected, 1);
    assert.equal(readFileSync(rejects, 'latin1'), wide);
    const log = readFileSync(`${rejects}.log`, 'utf8').trim().split('\n');
    assert.equal(log.length, 2);
    assert.match(log[1]!, /^11\t\d+\t0\t1153\t.*max_allowed_packet/);
    assert.equal(await count('wide'), 20);
    // LOAD DATA LOCAL streams the row in packets of its own: the same file loads whole.
    const ld = await runCli(['load', f, '--url', url, '--table', 'wide_ld', '--strategy', 'load-data', '--chunk-size', '8MiB', ...base], { env: {}, timeoutMs: 120_000 });
    assert.equal(ld.code, 0, ld.stderr);
    assert.equal(await count('wide_ld'), 21);
  });
});
