import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ddl, fileColumns, generateToFile, loadDataOptions, type FixtureTable } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, hasRocksdb, tableDigest, type TestDatabase } from '../support/db.js';
import { prng, spawnCli } from '../support/spawn.js';

let db: TestDatabase;
let dir: string;

before(async () => {
  db = await createTestDatabase('resume');
  dir = mkdtempSync(join(tmpdir(), 'flatload-resume-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs the load in a child process, SIGKILLs it at random moments, and
 * resumes until it finishes. Returns how many runs were killed.
 */
async function killUntilDone(args: string[], seed: number, stdinFile?: string): Promise<{ killed: number; runs: number; last: string }> {
  const rnd = prng(seed);
  let killed = 0;
  for (let run = 1; run <= 20; run++) {
    const late = run > 12; // then let it finish
    const s = spawnCli(args, { DATABASE_URL: db.url }, stdinFile ? readFileSync(stdinFile) : undefined);
    let timer: NodeJS.Timeout | undefined;
    if (!late) timer = setTimeout(() => s.child.kill('SIGKILL'), 150 + Math.floor(rnd() * 900));
    const r = await s.done;
    if (timer) clearTimeout(timer);
    if (r.signal === 'SIGKILL') {
      killed++;
      continue;
    }
    assert.equal(r.code, 0, `run ${run}: ${r.stderr}`);
    return { killed, runs: run, last: r.stdout };
  }
  throw new Error('never finished');
}

interface Case {
  name: string;
  table: FixtureTable;
  engine: string;
  skip?: string | false;
}

const cases: Case[] = [
  { name: 'InnoDB', table: 'user_summary', engine: 'InnoDB' },
  { name: 'InnoDB, surrogate key pre-assigned (user3)', table: 'user3', engine: 'InnoDB' },
  { name: 'MyRocks', table: 'user_summary', engine: 'ROCKSDB', skip: hasRocksdb() ? false : 'no MyRocks plugin' },
  { name: 'Aria (cannot roll back: resumes by row count)', table: 'user_summary', engine: 'Aria' },
  { name: 'MyISAM, surrogate key pre-assigned (user3)', table: 'user3', engine: 'MyISAM' },
];

describe('killed at random moments, resumed until done: the table equals a clean load', () => {
  for (const [i, c] of cases.entries()) {
    test(c.name, { skip: c.skip ?? false, timeout: 240_000 }, async () => {
      const file = join(dir, `${c.table}-${i}.tsv`);
      const gen = { table: c.table, rows: 60_000, seed: 21 + i };
      await generateToFile(file, gen);
      const name = `k${i}`;
      const create = ddl(c.table).replace(/CREATE TABLE \S+/, 'CREATE TABLE %s') + ` ENGINE=${c.engine}`;
      await db.conn.query(create.replace('%s', `\`${name}\``));
      await db.conn.query(create.replace('%s', `\`${name}_ref\``));
      const columns = c.table === 'user_summary' ? undefined : fileColumns(gen);
      await db.conn.query(
        `LOAD DATA INFILE ? INTO TABLE \`${name}_ref\` ${loadDataOptions('tsv')}${columns ? ` (${columns.join(',')})` : ''}`,
        [file],
      );
      const args = ['load', file, '--table', name, '--chunk-size', '24KiB', '--jobs', '2', '--progress', 'none', '--json'];
      if (columns) args.push('--columns', columns.join(','));
      const r = await killUntilDone(args, 1000 + i);
      assert.ok(r.killed >= 3, `only ${r.killed} runs were killed mid-load`);
      const report = JSON.parse(r.last) as { rows: number; resumedChunks: number };
      assert.equal(report.rows, 60_000);
      assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
      const [jobs] = await db.conn.query('SELECT COUNT(*) AS n FROM flatload_jobs WHERE target = ?', [`${db.name}.${name}`]);
      assert.equal(Number((jobs as Array<{ n: number }>)[0]!.n), 0, 'a finished job leaves no bookkeeping');
    });
  }
});

describe('resume is refused when the input or options changed', () => {
  test('changed file, then --restart', async () => {
    const file = join(dir, 'change.tsv');
    await generateToFile(file, { table: 'user_summary', rows: 30_000, seed: 77 });
    await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE ch'));
    const args = ['load', file, '--table', 'ch', '--chunk-size', '16KiB', '--jobs', '1', '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    // Let it commit some chunks, then kill it.
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const [c] = await db.conn.query('SELECT COUNT(*) AS n FROM ch');
      if (Number((c as Array<{ n: number }>)[0]!.n) > 3000) break;
    }
    s.child.kill('SIGKILL');
    await s.done;

    const status = await runCli(['status', '--table', 'ch', '--json'], { env: { DATABASE_URL: db.url } });
    assert.equal(status.code, 0, status.stderr);
    const jobs = (JSON.parse(status.stdout) as { jobs: Array<{ chunksDone: number; rowsDone: number; state: string }> }).jobs;
    assert.equal(jobs.length, 1);
    const [c] = await db.conn.query('SELECT COUNT(*) AS n FROM ch');
    assert.equal(jobs[0]!.rowsDone, Number((c as Array<{ n: number }>)[0]!.n), 'status counts what is in the table');
    assert.ok(jobs[0]!.chunksDone > 0);

    await generateToFile(file, { table: 'user_summary', rows: 30_001, seed: 77 });
    const refused = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /unfinished load .* differs/);
    assert.match(refused.stderr, /input size/);
    assert.match(refused.stderr, /--restart/);

    const restarted = await runCli([...args, '--restart'], { env: { DATABASE_URL: db.url } });
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stdout, /discarded the unfinished job/);
  });

  test('a dry run creates no bookkeeping', async () => {
    const fresh = await createTestDatabase('dry');
    try {
      const file = join(dir, 'dry.tsv');
      await generateToFile(file, { table: 'user_summary', rows: 100, seed: 3 });
      await fresh.conn.query(ddl('user_summary'));
      const r = await runCli(['plan', file, '--table', 'user_summary'], { env: { DATABASE_URL: fresh.url } });
      assert.equal(r.code, 0, r.stderr);
      const [t] = await fresh.conn.query('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?', [fresh.name]);
      assert.equal(Number((t as Array<{ n: number }>)[0]!.n), 1, 'only the user table exists');
      const [rows] = await fresh.conn.query('SELECT COUNT(*) AS n FROM user_summary');
      assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 0);
    } finally {
      await fresh.drop();
    }
  });
});
