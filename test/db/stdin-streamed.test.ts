import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { CHUNK_DIGEST, digestOf } from '../../src/input/digest.js';
import { countRows, createTestDatabase, freshUserSummary, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { watchTmp } from '../support/tmpWatch.js';
import { spawnCli, type Spawned } from '../support/spawn.js';

/**
 * Standard input read once as it loads, like a compressed file: no copy in
 * --tmpdir; a rerun after a kill with the same bytes resumes exactly, each
 * committed chunk checked against the digest its commit stored, and other
 * bytes are refused before anything of them commits (docs/sources.md).
 */

const ROWS = 120_000;
let db: TestDatabase;
let dir: string;
let tsv: string;
let other: string;
let plainBytes: number;

before(async () => {
  db = await createTestDatabase('stdin');
  dir = mkdtempSync(join(tmpdir(), 'flatload-stdin-test-'));
  tsv = join(dir, 'us.tsv');
  other = join(dir, 'other.tsv');
  await generateToFile(tsv, { table: 'user_summary', rows: ROWS, seed: 28 });
  await generateToFile(other, { table: 'user_summary', rows: ROWS, seed: 29 });
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

/** Kills a load once it has committed more than `rows` rows (it must still be running then). */
async function killAfter(s: Spawned, table: string, rows: number): Promise<number> {
  await pollUntil(`${rows} rows committed`, async () => (await rowsIn(table)) > rows, { process: s, everyMs: 20, timeoutMs: 120_000 });
  assert.ok(running(s), 'the load was still running when it was killed');
  s.child.kill('SIGKILL');
  await s.done;
  const part = await rowsIn(table);
  assert.ok(part > 0 && part < ROWS, `${part} rows after the kill`);
  return part;
}

describe('standard input is read once as it loads, with no copy in --tmpdir', () => {
  const CHUNK = 128 * 1024;
  const JOBS = 2;
  for (const gz of [false, true]) {
    test(`file order${gz ? ', gzip on standard input' : ''}: exact, at most jobs + 1 chunks in --tmpdir`, async () => {
      const table = `s_file${gz ? '_gz' : ''}`;
      await freshTable(table);
      const tmp = mkdtempSync(join(dir, 'tmp-'));
      const bytes = gz ? gzipSync(readFileSync(tsv)) : readFileSync(tsv);
      const s = spawnCli(['load', '-', '--table', table, '--order', 'file', '--chunk-size', String(CHUNK), '--jobs', String(JOBS), '--tmpdir', tmp, '--progress', 'none', '--json'], { DATABASE_URL: db.url }, bytes);
      const { peak, seen } = await watchTmp(tmp, s);
      const r = await s.done;
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { rows: number; inputBytes: number };
      assert.equal(report.rows, ROWS);
      assert.equal(report.inputBytes, plainBytes);
      assert.match(r.stderr, /reading standard input once as it is loaded/);
      assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
      assert.deepEqual([...seen], ['flatload-chunks-*'], 'only the chunks directory in --tmpdir (no spooled copy)');
      assert.ok(peak <= (JOBS + 1) * (CHUNK + 1024), `peak --tmpdir ${peak} bytes, more than ${JOBS + 1} chunks of ${CHUNK}`);
      assert.deepEqual(readdirSync(tmp), [], 'nothing left in --tmpdir');
    });
  }

  test('key order: sorted into runs straight from the stream, exact, no spooled copy', async () => {
    const table = 's_key';
    await freshTable(table);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const s = spawnCli(['load', '-', '--table', table, '--order', 'key', '--sort-memory', '0', '--chunk-size', '256KiB', '--jobs', '2', '--tmpdir', tmp, '--progress', 'none', '--json'], { DATABASE_URL: db.url }, readFileSync(tsv));
    const { peak, seen } = await watchTmp(tmp, s);
    const r = await s.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rows: number }).rows, ROWS);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
    assert.ok(![...seen].some((n) => n.startsWith('flatload-spool')), `a spooled copy was made: ${[...seen].join(', ')}`);
    assert.ok(peak < 1.4 * plainBytes, `peak --tmpdir ${peak} bytes for ${plainBytes} bytes of input`);
  });

  test('--spool keeps the old way: a whole copy first, then loaded from it', async () => {
    const table = 's_spool';
    await freshTable(table);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const s = spawnCli(['load', '-', '--table', table, '--spool', '--order', 'file', '--chunk-size', String(CHUNK), '--tmpdir', tmp, '--progress', 'none'], { DATABASE_URL: db.url }, readFileSync(tsv));
    const { seen } = await watchTmp(tmp, s);
    const r = await s.done;
    assert.equal(r.code, 0, r.stderr);
    assert.ok([...seen].some((n) => n.startsWith('flatload-spool-')), `no spooled copy: ${[...seen].join(', ')}`);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
  });
});

describe('a rerun of a killed load from standard input', () => {
  const args = (table: string, extra: string[] = []): string[] => ['load', '-', '--table', table, '--order', 'file', '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'none', ...extra];

  test('with the same bytes resumes exactly; the same bytes once more are already loaded, a new export with the same start loads', async () => {
    const table = 'r_same';
    await freshTable(table);
    const replace = (extra: string[] = []): string[] => args(table, ['--mode', 'replace', ...extra]);
    await killAfter(spawnCli(replace(), { DATABASE_URL: db.url }, readFileSync(tsv)), table, 20_000);
    const resumed = await spawnCli(replace(), { DATABASE_URL: db.url }, readFileSync(tsv)).done;
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resuming job/);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
    // The same bytes again, as for a file loaded before: nothing is loaded twice.
    const again = await spawnCli(replace(['--json']), { DATABASE_URL: db.url }, readFileSync(tsv)).done;
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { status: string }).status, 'already-loaded');
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
    // Tonight's export starts as last night's but ends otherwise (a row deleted since): it is a new load.
    const all = readFileSync(tsv);
    const tonight = all.subarray(0, all.lastIndexOf(0x0a, all.length - 2) + 1);
    writeFileSync(join(dir, 'tonight.tsv'), tonight);
    await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE ref_tonight'));
    await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ref_tonight ${loadDataOptions('tsv')}`, [join(dir, 'tonight.tsv')]);
    const next = await spawnCli(replace(['--json']), { DATABASE_URL: db.url }, tonight).done;
    assert.equal(next.code, 0, next.stderr);
    assert.equal((JSON.parse(next.stdout) as { status: string }).status, 'ok');
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref_tonight'));
  });

  test('with other bytes is refused before any row of them commits; --restart starts over', async () => {
    const table = 'r_other';
    await freshTable(table);
    const part = await killAfter(spawnCli(args(table), { DATABASE_URL: db.url }, readFileSync(tsv)), table, 20_000);
    const refused = await spawnCli(args(table), { DATABASE_URL: db.url }, readFileSync(other)).done;
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /standard input brought other bytes \(its first MiB differs\)/);
    assert.equal(await rowsIn(table), part, 'nothing of the other bytes committed');
    await db.conn.query(`TRUNCATE TABLE ${table}`);
    const restarted = await spawnCli([...args(table), '--restart'], { DATABASE_URL: db.url }, readFileSync(tsv)).done;
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
  });

  test('with bytes that start the same but differ in a committed chunk: refused as that chunk comes again, before any new chunk loads', async () => {
    const table = 'r_late';
    await freshTable(table);
    const data = readFileSync(tsv);
    const at = data.indexOf(0x0a, 1_300_000) - 1;
    assert.ok(/[0-9]/.test(String.fromCharCode(data[at]!)), 'a record ending in a digit');
    const changed = Buffer.from(data);
    changed[at] = data[at] === 0x31 ? 0x32 : 0x31;
    const part = await killAfter(spawnCli(args(table), { DATABASE_URL: db.url }, data), table, 45_000);
    const refused = await spawnCli(args(table), { DATABASE_URL: db.url }, changed).done;
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /resuming job/);
    assert.match(refused.stderr, /chunk \d+ is not what the interrupted run committed: the input changed \(the bytes \d+-\d+ differ: digest b3:[0-9a-f]{9}… then, b3:[0-9a-f]{9}… now\)/);
    assert.match(refused.stderr, /pipe the same bytes again/);
    assert.equal(await rowsIn(table), part, 'nothing of the other bytes committed');
  });
});

describe('a broken stream late on standard input, in file order', () => {
  test('stops after the chunks before the break committed, naming line and byte; the same bytes again skip them exactly', async () => {
    const table = 'b_truncated';
    await freshTable(table);
    const gz = gzipSync(readFileSync(tsv));
    const cut = gz.subarray(0, Math.floor(gz.length * 0.9));
    const args = ['load', '-', '--table', table, '--order', 'file', '--chunk-size', '128KiB', '--jobs', '1', '--progress', 'none'];
    const r = await spawnCli(args, { DATABASE_URL: db.url }, cut).done;
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /file standard input, line \d+, byte offset \d+/);
    const part = await rowsIn(table);
    assert.ok(part > 0 && part < ROWS, `${part} rows committed before the break`);
    const again = await spawnCli(args, { DATABASE_URL: db.url }, cut).done;
    assert.equal(again.code, 5, again.stderr);
    assert.match(again.stderr, /resuming job/);
    assert.match(again.stderr, /file standard input, line \d+, byte offset \d+/);
    // A chunk cut whole but not yet committed when the break stopped the first run may load now; the key would refuse a row twice.
    const after = await rowsIn(table);
    assert.ok(after >= part && after < ROWS, `${after} rows after the rerun, ${part} before`);
    // The whole stream this time: the rerun skips the committed chunks (their bytes are the same) and loads the rest.
    const whole = await spawnCli(args, { DATABASE_URL: db.url }, gz).done;
    assert.equal(whole.code, 0, whole.stderr);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
  });
});

describe('a .gz resumed in file order is checked chunk by chunk', () => {
  test('replaced by other bytes of the same size, time and first and last MiB: the resume is refused', async () => {
    const table = 'g_replaced';
    await freshTable(table);
    const data = readFileSync(tsv);
    // Stored (level 0) gzip members: the compressed size does not depend on the bytes, and a second member over
    // 1 MiB keeps the first member's CRC out of the last MiB. A digit changed at 1.5 MiB changes nothing else.
    const split = 2_500_000;
    const gz = (d: Buffer): Buffer => Buffer.concat([gzipSync(d.subarray(0, split), { level: constants.Z_NO_COMPRESSION }), gzipSync(d.subarray(split), { level: constants.Z_NO_COMPRESSION })]);
    assert.ok(data.length - split > 1.2 * 1024 * 1024, `${data.length} bytes of input`);
    const at = data.indexOf(0x0a, 1_600_000) - 1;
    assert.ok(/[0-9]/.test(String.fromCharCode(data[at]!)), 'a record ending in a digit');
    const changed = Buffer.from(data);
    changed[at] = data[at] === 0x31 ? 0x32 : 0x31;
    const file = join(dir, 'g-replaced.tsv.gz');
    const write = (d: Buffer): void => {
      writeFileSync(file, gz(d));
      utimesSync(file, 1_700_000_000, 1_700_000_000);
    };
    write(data);
    const before = readFileSync(file);
    const args = ['load', file, '--table', table, '--order', 'file', '--chunk-size', '32KiB', '--jobs', '1', '--progress', 'none'];
    await killAfter(spawnCli(args, { DATABASE_URL: db.url }), table, 60_000);
    write(changed);
    const after = readFileSync(file);
    assert.equal(after.length, before.length);
    assert.ok(after.subarray(0, 1 << 20).equals(before.subarray(0, 1 << 20)) && after.subarray(-(1 << 20)).equals(before.subarray(-(1 << 20))), 'first and last MiB unchanged');
    const part = await rowsIn(table);
    const refused = await spawnCli(args, { DATABASE_URL: db.url }).done;
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /is not what the interrupted run committed: the input changed \(the bytes \d+-\d+ differ: digest b3:/);
    assert.equal(await rowsIn(table), part, 'nothing loaded over the changed input');
  });
});

describe('a streamed load an older flatload started, its chunks kept by SHA-1', () => {
  interface Committed {
    index: number;
    start: number;
    end: number;
    digest: string;
  }
  const committed = async (table: string): Promise<Committed[]> => {
    const [r] = await db.conn.query(
      'SELECT c.chunk_index AS i, c.start_byte AS s, c.end_byte AS e, c.sha1 AS d FROM flatload_chunks c JOIN flatload_jobs j USING (job_id) WHERE j.target = ? ORDER BY c.chunk_index',
      [`${db.name}.${table}`],
    );
    return (r as Array<{ i: unknown; s: unknown; e: unknown; d: string }>).map((x) => ({ index: Number(x.i), start: Number(x.s), end: Number(x.e), digest: x.d }));
  };
  const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('hex');
  /** Makes the killed job's chunk rows what an older flatload stored: the SHA-1 hex of `bytesOf` each chunk (its own bytes unless told). */
  async function asOlderFlatload(table: string, data: Buffer, bytesOf = (c: Committed): Buffer => data.subarray(c.start, c.end)): Promise<Committed[]> {
    const chunks = await committed(table);
    assert.ok(chunks.length > 1, `${chunks.length} chunk(s) committed`);
    for (const c of chunks) {
      assert.equal(c.digest, digestOf([data.subarray(c.start, c.end)], 'blake3', CHUNK_DIGEST), `chunk ${c.index} was stored with BLAKE3`);
      await db.conn.query('UPDATE flatload_chunks c JOIN flatload_jobs j USING (job_id) SET c.sha1 = ? WHERE j.target = ? AND c.chunk_index = ?', [sha1(bytesOf(c)), `${db.name}.${table}`, c.index]);
    }
    return chunks;
  }

  test('a .gz: the rerun compares the same bytes by SHA-1, keeps the job in SHA-1 when killed again, and finishes exactly', async () => {
    const table = 'o_same';
    await freshTable(table);
    const data = readFileSync(tsv);
    const file = join(dir, 'o-same.tsv.gz');
    writeFileSync(file, gzipSync(data));
    const args = ['load', file, '--table', table, '--order', 'file', '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'none'];
    await killAfter(spawnCli(args, { DATABASE_URL: db.url }), table, 20_000);
    const older = await asOlderFlatload(table, data);
    // Resumed, then killed again: the chunks this rerun committed are kept by SHA-1 too, so the next rerun compares them alike.
    const again = spawnCli(args, { DATABASE_URL: db.url });
    await killAfter(again, table, 60_000);
    assert.match((await again.done).stderr, /resuming job/);
    const chunks = await committed(table);
    assert.ok(chunks.length > older.length, `${chunks.length} chunks committed after the rerun, ${older.length} before`);
    for (const c of chunks) assert.equal(c.digest, sha1(data.subarray(c.start, c.end)), `chunk ${c.index}: SHA-1 of its bytes`);
    const resumed = await spawnCli(args, { DATABASE_URL: db.url }).done;
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resuming job/);
    assert.deepEqual(await tableDigest(db.conn, table), await tableDigest(db.conn, 'ref'));
  });

  test('standard input: a committed chunk whose SHA-1 names other bytes is refused before any new chunk loads', async () => {
    const table = 'o_other';
    await freshTable(table);
    const data = readFileSync(tsv);
    const args = ['load', '-', '--table', table, '--order', 'file', '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'none'];
    const part = await killAfter(spawnCli(args, { DATABASE_URL: db.url }, data), table, 20_000);
    const chunks = await committed(table);
    const last = chunks[chunks.length - 1]!;
    // Every chunk's SHA-1 is right but the last one's: it names its bytes with one digit changed.
    await asOlderFlatload(table, data, (c) => {
      const bytes = Buffer.from(data.subarray(c.start, c.end));
      if (c.index !== last.index) return bytes;
      const at = bytes.indexOf(0x0a) - 1;
      bytes[at] = bytes[at] === 0x31 ? 0x32 : 0x31;
      return bytes;
    });
    const refused = await spawnCli(args, { DATABASE_URL: db.url }, data).done;
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /resuming job/);
    assert.match(refused.stderr, new RegExp(`chunk ${last.index} is not what the interrupted run committed: the input changed \\(the bytes ${last.start}-${last.end} differ: digest [0-9a-f]{12}… then, [0-9a-f]{12}… now\\)`));
    assert.equal(await rowsIn(table), part, 'nothing loaded over the refused chunk');
  });
});
