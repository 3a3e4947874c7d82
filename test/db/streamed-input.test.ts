import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { countRows, createTestDatabase, freshUserSummary, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { watchTmp } from '../support/tmpWatch.js';
import { spawnCli } from '../support/spawn.js';

/**
 * Compressed input read in one pass: a key-ordered load decompresses a .gz
 * or .zst straight into the sort's runs, with no decompressed copy of the
 * whole input in --tmpdir (docs/ordering.md#9-compressed-input-in-one-pass).
 */

const ROWS = 120_000;
let db: TestDatabase;
let dir: string;
let tsv: string;
let plainBytes: number;

before(async () => {
  db = await createTestDatabase('streamed');
  dir = mkdtempSync(join(tmpdir(), 'flatload-streamed-test-'));
  tsv = join(dir, 'us.tsv');
  await generateToFile(tsv, { table: 'user_summary', rows: ROWS, seed: 28 });
  plainBytes = statSync(tsv).size;
  await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE ref'));
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ref ${loadDataOptions('tsv')}`, [tsv]);
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const freshTable = (name: string): Promise<void> => freshUserSummary(db.conn, name);

const rowsIn = (name: string): Promise<number> => countRows(db.conn, name);

const hasZstd = spawnSync('zstd', ['--version']).status === 0;

function compressed(kind: 'gz' | 'zst', name: string, from = tsv): string {
  const file = join(dir, `${name}.tsv.${kind}`);
  if (kind === 'gz') writeFileSync(file, gzipSync(readFileSync(from)));
  else execFileSync('zstd', ['-q', '-f', '-o', file, from]);
  return file;
}

describe('a key-ordered load of a compressed file reads it once, into the runs', () => {
  for (const kind of ['gz', 'zst'] as const) {
    test(`.${kind}: equal to LOAD DATA of the plain file, no spooled copy, tmpdir within the runs' size`, { skip: kind === 'zst' && !hasZstd ? 'no zstd program' : false }, async () => {
      const table = `k_${kind}`;
      await freshTable(table);
      const file = compressed(kind, table);
      const tmp = mkdtempSync(join(dir, 'tmp-'));
      const s = spawnCli(['load', file, '--table', table, '--order', 'key', '--chunk-size', '256KiB', '--jobs', '2', '--tmpdir', tmp, '--progress', 'none', '--json'], { DATABASE_URL: db.url });
      const { peak, seen } = await watchTmp(tmp, s);
      const r = await s.done;
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { rows: number; inputBytes: number; inputBytesCompressed: number | null };
      assert.equal(report.rows, ROWS);
      assert.equal(report.inputBytes, plainBytes, 'input bytes are the decompressed bytes');
      assert.equal(report.inputBytesCompressed, statSync(file).size);
      assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
      assert.ok(![...seen].some((n) => n.startsWith('flatload-spool')), `a spooled copy was made: ${[...seen].join(', ')}`);
      assert.ok(seen.size > 0, 'the runs were seen in --tmpdir');
      // The runs hold the records once (plus their offsets and index); a spooled copy beside them is 2x and more.
      assert.ok(peak < 1.4 * plainBytes, `peak --tmpdir ${peak} bytes for ${plainBytes} bytes of input`);
      assert.deepEqual(readdirSync(tmp), [], 'nothing left in --tmpdir');
    });
  }

  test('a truncated .gz stops the load before any row commits, naming the file, line and byte offset', async () => {
    const table = 'k_truncated';
    await freshTable(table);
    const gz = gzipSync(readFileSync(tsv));
    const file = join(dir, 'truncated.tsv.gz');
    writeFileSync(file, gz.subarray(0, Math.floor(gz.length * 0.9)));
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const r = await runCli(['load', file, '--table', table, '--order', 'key', '--chunk-size', '256KiB', '--tmpdir', tmp, '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /cannot decompress .*truncated\.tsv\.gz/);
    const m = /line (\d+), byte offset (\d+)/.exec(r.stderr);
    assert.ok(m, `no line and byte offset in: ${r.stderr}`);
    const byte = Number(m[2]);
    assert.ok(byte > 0.5 * plainBytes && byte < plainBytes, `byte offset ${byte} of ${plainBytes}`);
    assert.equal(await rowsIn(table), 0, 'no row committed');
  });

  test('a broken record late in a .gz stops the load before any row commits, at its exact line and byte', async () => {
    const table = 'k_broken';
    await freshTable(table);
    const lines = readFileSync(tsv).toString('latin1').split('\n');
    const at = Math.floor(lines.length * 0.9);
    const before = Buffer.byteLength(lines.slice(0, at).join('\n') + '\n', 'latin1');
    // A 3 MiB line: longer than any record flatload buffers (a missing line terminator, say).
    lines.splice(at, 0, 'x'.repeat(3 << 20));
    const file = join(dir, 'broken.tsv.gz');
    writeFileSync(file, gzipSync(Buffer.from(lines.join('\n'), 'latin1')));
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const r = await runCli(['load', file, '--table', table, '--order', 'key', '--chunk-size', '256KiB', '--tmpdir', tmp, '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, new RegExp(`longer than .*broken\\.tsv\\.gz, line ${at + 1}, byte offset ${before}\\)`));
    assert.equal(await rowsIn(table), 0, 'no row committed');
  });

  test('killed mid-load, the rerun resumes exactly; a changed input refuses the resume', async () => {
    const table = 'k_resume';
    await freshTable(table);
    const file = compressed('gz', table);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const args = ['load', file, '--table', table, '--order', 'key', '--chunk-size', '64KiB', '--jobs', '1', '--tmpdir', tmp, '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    await pollUntil('rows committed', async () => (await rowsIn(table)) > 5_000, { process: s, everyMs: 20 });
    assert.ok(running(s), 'the load was still running when it was killed');
    s.child.kill('SIGKILL');
    await s.done;
    const part = await rowsIn(table);
    assert.ok(part > 0 && part < ROWS, `${part} rows after the kill`);

    // Another input under the same name: refused, not mixed in.
    const other = join(dir, 'other.tsv');
    await generateToFile(other, { table: 'user_summary', rows: ROWS, seed: 29 });
    const saved = readFileSync(file);
    const was = statSync(file);
    writeFileSync(file, gzipSync(readFileSync(other)));
    const refused = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /unfinished load .* differs/);
    assert.equal(await rowsIn(table), part, 'nothing loaded by the refused run');

    writeFileSync(file, saved);
    // The same bytes back, with the time the job recorded (whole milliseconds).
    utimesSync(file, was.atime, new Date(Math.round(was.mtimeMs)));
    const resumed = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
  });
});

describe('a compressed file loaded in file order is cut as it is decompressed', () => {
  const CHUNK = 128 * 1024;
  const JOBS = 2;
  for (const kind of ['gz', 'zst'] as const) {
    test(`.${kind}: equal to LOAD DATA of the plain file, at most jobs + 1 chunks in --tmpdir`, { skip: kind === 'zst' && !hasZstd ? 'no zstd program' : false }, async () => {
      const table = `f_${kind}`;
      await freshTable(table);
      const file = compressed(kind, table);
      const tmp = mkdtempSync(join(dir, 'tmp-'));
      const s = spawnCli(['load', file, '--table', table, '--order', 'file', '--chunk-size', String(CHUNK), '--jobs', String(JOBS), '--tmpdir', tmp, '--progress', 'none', '--json'], { DATABASE_URL: db.url });
      const { peak, seen } = await watchTmp(tmp, s);
      const r = await s.done;
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { rows: number; chunks: number; inputBytes: number };
      assert.equal(report.rows, ROWS);
      assert.equal(report.inputBytes, plainBytes);
      assert.ok(report.chunks > 10, `${report.chunks} chunks`);
      assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
      assert.deepEqual([...seen], ['flatload-chunks-*'], 'only the chunks directory in --tmpdir');
      // A chunk ends at the first record end after its size: a record more at most.
      assert.ok(peak <= (JOBS + 1) * (CHUNK + 1024), `peak --tmpdir ${peak} bytes, more than ${JOBS + 1} chunks of ${CHUNK}`);
      assert.deepEqual(readdirSync(tmp), [], 'nothing left in --tmpdir');
    });
  }

  test('a truncated .gz stops after the chunks before the break committed, naming line and byte; the rerun skips them exactly', async () => {
    const table = 'f_truncated';
    await freshTable(table);
    const gz = gzipSync(readFileSync(tsv));
    const file = join(dir, 'f-truncated.tsv.gz');
    writeFileSync(file, gz.subarray(0, Math.floor(gz.length * 0.9)));
    const args = ['load', file, '--table', table, '--order', 'file', '--chunk-size', String(CHUNK), '--jobs', '1', '--progress', 'none'];
    const r = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /cannot decompress .*f-truncated\.tsv\.gz.*line \d+, byte offset \d+/);
    const part = await rowsIn(table);
    assert.ok(part > 0 && part < ROWS, `${part} rows committed before the break`);
    const again = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(again.code, 5, again.stderr);
    assert.match(again.stderr, /resuming job/);
    assert.equal(await rowsIn(table), part, 'the rerun loaded nothing twice');
  });

  test('killed mid-load, the rerun resumes exactly', async () => {
    const table = 'f_resume';
    await freshTable(table);
    const file = compressed('gz', table);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const args = ['load', file, '--table', table, '--order', 'file', '--chunk-size', '32KiB', '--jobs', '1', '--tmpdir', tmp, '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    await pollUntil('rows committed', async () => (await rowsIn(table)) > 5_000, { process: s, everyMs: 20 });
    assert.ok(running(s), 'the load was still running when it was killed');
    s.child.kill('SIGKILL');
    await s.done;
    const part = await rowsIn(table);
    assert.ok(part > 0 && part < ROWS, `${part} rows after the kill`);
    const resumed = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resuming job/);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
  });
});
