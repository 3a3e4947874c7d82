import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { countRows, createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli, type Spawned } from '../support/spawn.js';

/**
 * A key-ordered load sorts its whole input before its first chunk, for tens
 * of seconds on a large file: `flatload status` shows it from its start, with
 * how far the sort is, and a run killed, interrupted or failed while it sorts
 * is shown so and resumes exactly once. FLATLOAD_TEST_HOLD_SORT holds the
 * sort after its first run while the file it names exists, so each test acts
 * on a load that is certainly sorting.
 */
let db: TestDatabase;
let dir: string;
let file: string;

/** 100,000 records (3.7 MB) in random key order; 1 MiB runs (--chunk-size 512KiB) make 4 of them. */
const ROWS = 100_000;
const PK = ddl('user_summary').replace('UNIQUE KEY u_user_id (user_id)', 'PRIMARY KEY (user_id)');

before(async () => {
  db = await createTestDatabase('stsort');
  dir = mkdtempSync(join(tmpdir(), 'flatload-status-sort-'));
  file = join(dir, 'users.tsv');
  await generateToFile(file, { table: 'user_summary', rows: ROWS, seed: 31 });
  await db.conn.query(PK.replace(/CREATE TABLE \S+/, 'CREATE TABLE ref'));
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ref ${loadDataOptions('tsv')}`, [file]);
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface StatusJob {
  jobId: string;
  state: string;
  phase: string;
  heldBy: number | null;
  message: string | null;
  chunksDone: number;
  chunksTotal: number | null;
  activity: { kind: string; bytes: number | null; totalBytes: number | null; runs: number | null } | null;
}

async function jobsOf(table: string): Promise<StatusJob[]> {
  const r = await runCli(['status', '--table', table, '--json'], { env: { DATABASE_URL: db.url } });
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { jobs: StatusJob[] }).jobs;
}

async function statusText(table: string): Promise<string> {
  const r = await runCli(['status', '--table', table], { env: { DATABASE_URL: db.url } });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

async function freshTable(t: string): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS ${t}`);
  await db.conn.query(PK.replace(/CREATE TABLE \S+/, `CREATE TABLE ${t}`));
}

/** The load, sorted by key in runs under its own --tmpdir. */
function loadArgs(t: string, tmp: string, input = file): string[] {
  return ['load', input, '--table', t, '--order', 'key', '--sort-memory', '0', '--chunk-size', '512KiB', '--jobs', '1', '--tmpdir', tmp, '--progress', 'none'];
}

/** Whether the job is run by a process and sorting, its first run written. */
function sorting(job: { heldBy?: number | null; activity: StatusJob['activity'] } | undefined): boolean {
  return job?.heldBy !== null && job?.activity?.kind === 'sorting' && (job.activity.runs ?? 0) >= 1;
}

/** Starts the load with its sort held after its first run, and waits (bounded) until `shown()` says status shows it sorting. */
async function startHeld(args: string[], name: string, shown: () => Promise<boolean>): Promise<{ s: Spawned; hold: string }> {
  const hold = join(dir, `hold-${name}`);
  writeFileSync(hold, '');
  const s = spawnCli(args, { DATABASE_URL: db.url, FLATLOAD_TEST_HOLD_SORT: hold });
  await pollUntil(`status shows the load of ${name} sorting`, shown, { process: s, everyMs: 200, timeoutMs: 45_000 });
  return { s, hold };
}

/** startHeld for a single load: the job as status shows it then. */
async function startHeldLoad(args: string[], table: string): Promise<{ s: Spawned; hold: string; job: StatusJob }> {
  let job: StatusJob | undefined;
  const held = await startHeld(args, table, async () => sorting((job = (await jobsOf(table))[0])));
  return { ...held, job: job! };
}

describe('status while a key-ordered load sorts its input', () => {
  test('the job shows from its start, sorting with how far it is; a second run is refused; released, it loads', { timeout: 180_000 }, async () => {
    const t = 'st_running';
    await freshTable(t);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const args = loadArgs(t, tmp);
    const { s, hold, job } = await startHeldLoad(args, t);
    assert.equal(job.state, 'running');
    assert.equal(job.phase, 'created', 'nothing has changed in the table yet');
    const { bytes, totalBytes } = job.activity!;
    assert.equal(totalBytes, readFileSync(file).length);
    assert.ok(bytes !== null && bytes > 0 && bytes < totalBytes, `${bytes} bytes sorted`);
    assert.match(await statusText(t), /running \(sorting: \d+ runs?, [\d.]+ MiB of 3\.\d MiB\) by \S+ pid \d+/);
    const second = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(second.code, 8, second.stderr);
    assert.match(second.stderr, new RegExp(`this load is already running: job ${job.jobId} is held by \\S+ pid \\d+`));
    rmSync(hold);
    const r = await s.done;
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'));
    const [done] = await jobsOf(t);
    assert.deepEqual([done!.jobId, done!.state, done!.activity, done!.chunksDone, done!.chunksDone === done!.chunksTotal], [job.jobId, 'done', null, done!.chunksTotal, true]);
  });

  test('killed while it sorts: shown stopped (sorting); the rerun resumes it, reuses the runs it left, and loads every row once', { timeout: 180_000 }, async () => {
    const t = 'st_killed';
    await freshTable(t);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const args = loadArgs(t, tmp);
    const { s, job } = await startHeldLoad(args, t);
    s.child.kill('SIGKILL');
    assert.equal((await s.done).signal, 'SIGKILL');
    const [stopped] = await jobsOf(t);
    assert.deepEqual([stopped!.state, stopped!.heldBy, stopped!.activity?.kind], ['running', null, 'sorting']);
    assert.match(await statusText(t), /stopped \(sorting\): no process holds it; rerun the load to resume/);
    assert.ok(readdirSync(join(tmp, `flatload-order-${job.jobId}`)).includes('run-000000.bin'), 'the killed run left its first run');
    assert.equal(await countRows(db.conn, t), 0);

    const r = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    const said = r.stdout + r.stderr;
    assert.match(said, new RegExp(`resuming job ${job.jobId} \\(its run stopped while sorting its input\\): 0 chunks done`));
    assert.match(said, /into \d+ runs \([1-9]\d* of them the interrupted run's, found intact\)/);
    assert.doesNotMatch(said, /removed \d+ spooled input\(s\) or spill director/);
    assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'));
    const jobs = await jobsOf(t);
    assert.deepEqual(jobs.map((j) => [j.jobId, j.state]), [[job.jobId, 'done']]);
    assert.deepEqual(readdirSync(tmp), [], 'the runs are removed once the load is done');
  });

  test('interrupted (SIGINT) while it sorts: it stops then, before the table is emptied, recorded interrupted (sorting); the rerun loads it', { timeout: 180_000 }, async () => {
    const t = 'st_interrupted';
    await freshTable(t);
    await db.conn.query(`INSERT INTO ${t} SELECT * FROM ref LIMIT 10`);
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const args = [...loadArgs(t, tmp), '--mode', 'replace'];
    const { s } = await startHeldLoad(args, t);
    s.child.kill('SIGINT');
    const r = await s.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /interrupted while the input was being sorted: nothing was loaded/);
    assert.match(r.stderr, /resume with: .*flatload load /);
    assert.equal(await countRows(db.conn, t), 10, 'replace mode had not emptied the table yet');
    const [j] = await jobsOf(t);
    assert.deepEqual([j!.state, j!.activity?.kind], ['interrupted', 'sorting']);
    assert.match(await statusText(t), /interrupted \(sorting\)[\s\S]*: interrupted while the input was being sorted/);
    const again = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'));
  });

  test('a compressed input that breaks while it is sorted: recorded failed (sorting), with the error', { timeout: 120_000 }, async () => {
    const t = 'st_failed';
    await freshTable(t);
    const gz = gzipSync(readFileSync(file));
    const broken = join(dir, 'broken.tsv.gz');
    writeFileSync(broken, gz.subarray(0, Math.floor(gz.length * 0.9)));
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const r = await runCli(loadArgs(t, tmp, broken), { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /cannot decompress/);
    const [j] = await jobsOf(t);
    assert.deepEqual([j!.state, j!.heldBy, j!.activity?.kind], ['failed', null, 'sorting']);
    assert.match(j!.message ?? '', /cannot decompress/);
    assert.match(await statusText(t), /failed \(sorting\)/);
    assert.equal(await countRows(db.conn, t), 0);
  });
});

describe('status while a table of an export sorts its input', () => {
  test('the export runs, and its table shows sorting with how far it is', { timeout: 180_000 }, async () => {
    const t = 'st_export';
    await freshTable(t);
    const exp = join(dir, 'export');
    mkdirSync(exp);
    writeFileSync(join(exp, `${t}.tsv`), readFileSync(file));
    const tmp = mkdtempSync(join(dir, 'tmp-'));
    const args = ['load', exp, '-D', db.name, '--order', 'key', '--sort-memory', '0', '--chunk-size', '512KiB', '--jobs', '2', '--tmpdir', tmp, '--progress', 'none'];
    type ExportStatus = { state: string; tables: Array<{ table: string; state: string; activity: StatusJob['activity']; shown: string }> };
    const exportsNow = async (): Promise<ExportStatus[]> => {
      const r = await runCli(['status', '--json'], { env: { DATABASE_URL: db.url } });
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { exports: ExportStatus[] }).exports;
    };
    const { s, hold } = await startHeld(args, t, async () => sorting({ activity: (await exportsNow())[0]?.tables[0]?.activity ?? null }));
    const exports = await exportsNow();
    assert.equal(exports.length, 1);
    assert.match(exports[0]!.state, /^running \(prepared\) by /);
    const table = exports[0]!.tables[0]!;
    assert.deepEqual([table.table, table.state, table.activity?.kind], [`${db.name}.${t}`, 'running', 'sorting']);
    const text = await runCli(['status'], { env: { DATABASE_URL: db.url } });
    assert.match(text.stdout, new RegExp(`\\n {2}${db.name}\\.${t} +running \\(sorting: \\d+ runs?, [\\d.]+ MiB of 3\\.\\d MiB\\) +0/1 +0 +0\\n`));
    rmSync(hold);
    const done = await s.done;
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'));
    assert.ok(!existsSync(hold));
  });
});

describe('status -D', () => {
  test('shows the loads of the database it names, not of every database', async () => {
    const other = await createTestDatabase('stsort2');
    try {
      const small = join(dir, 'small.tsv');
      writeFileSync(small, '1\ta\n2\tb\n');
      for (const d of [db, other]) {
        await d.conn.query('CREATE TABLE dtab (id INT PRIMARY KEY, s VARCHAR(5))');
        const r = await runCli(['load', small, '--table', 'dtab', '--progress', 'none', '--skip-size-report'], { env: { DATABASE_URL: d.url } });
        assert.equal(r.code, 0, r.stderr);
      }
      const shown = async (args: string[]): Promise<string[]> => {
        const r = await runCli(['status', ...args, '--json'], { env: { DATABASE_URL: db.url } });
        assert.equal(r.code, 0, r.stderr);
        return (JSON.parse(r.stdout) as { jobs: Array<{ target: string }> }).jobs.map((j) => j.target).filter((t) => t.endsWith('dtab'));
      };
      assert.deepEqual(await shown(['-D', other.name]), [`${other.name}.dtab`]);
      assert.deepEqual((await shown([])).sort(), [`${db.name}.dtab`, `${other.name}.dtab`].sort());
    } finally {
      await other.drop();
    }
  });
});
