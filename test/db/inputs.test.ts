import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, freshUserSummary, tableDigest, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let dir: string;
let tsv: string;
let csv: string;

before(async () => {
  db = await createTestDatabase('inputs');
  dir = mkdtempSync(join(tmpdir(), 'flatload-inputs-'));
  tsv = join(dir, 'us.tsv');
  csv = join(dir, 'us.csv');
  await generateToFile(tsv, { table: 'user_summary', rows: 20_000, seed: 5 });
  await generateToFile(csv, { table: 'user_summary', rows: 20_000, seed: 6, format: 'csv', awkward: true });
  for (const [name, file, format] of [
    ['ref_tsv', tsv, 'tsv'],
    ['ref_csv', csv, 'csv'],
  ] as const) {
    await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${name}`));
    await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${name} ${loadDataOptions(format)}`, [file]);
  }
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const freshTable = (name: string): Promise<void> => freshUserSummary(db.conn, name);

const hasZstd = spawnSync('zstd', ['--version']).status === 0;

describe('compressed and streamed inputs are cut on the fly', () => {
  for (const kind of ['gz', 'zst', 'stdin', 'stdin-gz'] as const) {
    for (const format of ['tsv', 'csv'] as const) {
      const skip = (kind === 'zst' && !hasZstd) ? 'the zstd program is not installed' : false;
      test(`${kind} (${format})`, { skip }, async () => {
        const src = format === 'tsv' ? tsv : csv;
        const name = `t_${kind.replace('-', '_')}_${format}`;
        await freshTable(name);
        let file: string;
        let stdin: Buffer | undefined;
        if (kind === 'gz') {
          file = `${src}.gz`;
          writeFileSync(file, gzipSync(readFileSync(src)));
        } else if (kind === 'zst') {
          file = `${src}.zst`;
          execFileSync('zstd', ['-q', '-f', '-o', file, src]);
        } else if (kind === 'stdin') {
          file = '-';
          stdin = readFileSync(src);
        } else {
          file = '-';
          stdin = gzipSync(readFileSync(src));
        }
        const args = ['load', file, '--table', name, '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none', '--json'];
        if (format === 'csv') args.push('--dialect', 'csv');
        const r = await runCli(args, { env: { DATABASE_URL: db.url }, ...(stdin ? { stdin } : {}) });
        assert.equal(r.code, 0, r.stderr);
        const report = JSON.parse(r.stdout) as { rows: number; chunks: number; inputBytes: number; inputBytesCompressed: number | null };
        assert.equal(report.rows, 20_000);
        assert.ok(report.chunks > 5, `chunks: ${report.chunks}`);
        assert.equal(report.inputBytes, readFileSync(src).length, 'input bytes are the decompressed bytes');
        if (kind === 'gz' || kind === 'zst') assert.ok(report.inputBytesCompressed !== null && report.inputBytesCompressed < report.inputBytes);
        assert.deepEqual(await tableDigest(db.conn, name), await tableDigest(db.conn, `ref_${format}`));
      });
    }
  }

  test('a corrupt .gz is a clear input error', async () => {
    const file = join(dir, 'bad.tsv.gz');
    const gz = gzipSync(readFileSync(tsv));
    writeFileSync(file, gz.subarray(0, Math.floor(gz.length / 2)));
    await freshTable('t_badgz');
    const r = await runCli(['load', file, '--table', 't_badgz', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /cannot decompress .*bad\.tsv\.gz|unexpected end/i);
  });
});
