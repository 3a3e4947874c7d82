import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ddl, fileColumns, generateToFile, loadDataOptions, type FixtureTable } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, hasRocksdb, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
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

/** Chunks committed so far by any job in the test database (every bookkeeping table there). */
async function committedChunks(): Promise<number> {
  const [t] = await db.conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'flatload\\_chunks%'", [db.name]);
  let n = 0;
  for (const { t: name } of t as Array<{ t: string }>) {
    const [c] = await db.conn.query(`SELECT COUNT(*) AS n FROM \`${name}\``);
    n += Number((c as Array<{ n: unknown }>)[0]!.n);
  }
  return n;
}

/**
 * Runs the load in a child process, SIGKILLs it at random moments, and
 * resumes until it finishes. Returns how many runs were killed.
 *
 * The moments follow the load's own progress, not the clock (a fast machine
 * would finish before a fixed delay): most runs die a random few chunks after
 * the bookkeeping shows progress, some during start-up (before or while the
 * table is prepared), all at a random sub-chunk offset.
 */
async function killUntilDone(args: string[], seed: number, stdinFile?: string): Promise<{ killed: number; runs: number; last: string }> {
  const rnd = prng(seed);
  let killed = 0;
  for (let run = 1; run <= 20; run++) {
    const late = run > 12; // then let it finish
    const s = spawnCli(args, { DATABASE_URL: db.url }, stdinFile ? readFileSync(stdinFile) : undefined);
    let exited = false;
    void s.done.then(() => (exited = true));
    if (!late) {
      if (rnd() < 0.2) {
        await new Promise((r) => setTimeout(r, Math.floor(rnd() * 600)));
      } else {
        const target = (await committedChunks()) + 1 + Math.floor(rnd() * 6);
        while (!exited && (await committedChunks()) < target) await new Promise((r) => setTimeout(r, 2));
        await new Promise((r) => setTimeout(r, Math.floor(rnd() * 15)));
      }
      if (!exited) s.child.kill('SIGKILL');
    }
    const r = await s.done;
    if (r.signal === 'SIGKILL') {
      killed++;
      continue;
    }
    assert.equal(r.code, 0, `run ${run}: ${r.stderr}`);
    return { killed, runs: run, last: r.stdout };
  }
  throw new Error('never finished');
}

async function indexesOf(table: string): Promise<string[]> {
  const [rows] = await db.conn.query(`SHOW INDEX FROM \`${table}\``);
  return (rows as Array<{ Key_name: string; Seq_in_index: number; Column_name: string }>).map((r) => `${r.Key_name}:${r.Seq_in_index}:${r.Column_name}`).sort();
}

interface Case {
  name: string;
  table: FixtureTable;
  engine: string;
  /** Flags that change the plan (DDL strategies, modes). */
  extra?: string[];
  /** Compare only these columns (the deferred surrogate renumbers the ids in natural-key order). */
  project?: string;
  /** flatload numbers the ids in the order of the file's UNIQUE key: the reference loads a copy sorted by it. */
  numberedByKey?: boolean;
  skip?: string | false;
}

const cases: Case[] = [
  { name: 'InnoDB', table: 'user_summary', engine: 'InnoDB' },
  { name: 'InnoDB, surrogate key pre-assigned in user_id order (user3)', table: 'user3', engine: 'InnoDB', numberedByKey: true },
  { name: 'MyRocks', table: 'user_summary', engine: 'ROCKSDB', skip: hasRocksdb() ? false : 'no MyRocks plugin' },
  { name: 'Aria (cannot roll back: resumes by row count)', table: 'user_summary', engine: 'Aria' },
  { name: 'MyISAM, id numbered by the server in file order (user3)', table: 'user3', engine: 'MyISAM' },
  { name: 'InnoDB --allow-ddl, secondary indexes dropped and re-added (purchases_index)', table: 'purchases_index', engine: 'InnoDB', extra: ['--allow-ddl'] },
  {
    name: 'InnoDB --allow-ddl, surrogate key taken out and re-created (user3)',
    table: 'user3',
    engine: 'InnoDB',
    extra: ['--allow-ddl'],
    project: 'user_id, weight, level, beat_rate, level_num',
  },
  { name: 'InnoDB --mode swap (shadow table survives until the RENAME)', table: 'user_summary', engine: 'InnoDB', extra: ['--mode', 'swap'] },
  {
    name: 'MyRocks, surrogate key pre-assigned in user_id order: per-chunk bulk load, key-range resume (user3)',
    table: 'user3',
    engine: 'ROCKSDB',
    numberedByKey: true,
    skip: hasRocksdb() ? false : 'no MyRocks plugin',
  },
  { name: 'InnoDB --order chunk (file-order chunks, each sorted by the key as it is sent)', table: 'user_summary', engine: 'InnoDB', extra: ['--order', 'chunk'] },
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
      // The generator's sorted file is the unsorted one sorted by user_id.
      const refFile = c.numberedByKey ? `${file}.sorted` : file;
      if (c.numberedByKey) await generateToFile(refFile, { ...gen, sorted: true });
      await db.conn.query(
        `LOAD DATA INFILE ? INTO TABLE \`${name}_ref\` ${loadDataOptions('tsv')}${columns ? ` (${columns.join(',')})` : ''}`,
        [refFile],
      );
      const args = ['load', file, '--table', name, '--chunk-size', '24KiB', '--jobs', '2', '--progress', 'none', '--json'];
      if (columns) args.push('--columns', columns.join(','));
      args.push(...(c.extra ?? []));
      const r = await killUntilDone(args, 1000 + i);
      assert.ok(r.killed >= 3, `only ${r.killed} runs were killed mid-load`);
      const report = JSON.parse(r.last) as { rows: number; resumedChunks: number };
      assert.equal(report.rows, 60_000);
      if (c.project) {
        for (const t of [name, `${name}_ref`]) await db.conn.query(`CREATE TABLE \`${t}_p\` ENGINE=InnoDB SELECT ${c.project} FROM \`${t}\``);
        assert.deepEqual(await tableDigest(db.conn, `\`${name}_p\``), await tableDigest(db.conn, `\`${name}_ref_p\``));
        const [ids] = await db.conn.query(`SELECT COUNT(DISTINCT id) AS d, MIN(id) AS lo, MAX(id) AS hi FROM \`${name}\``);
        assert.deepEqual(Object.values((ids as Array<Record<string, unknown>>)[0]!).map(Number), [60_000, 1, 60_000], 'dense ids 1..N');
      } else {
        assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
      }
      assert.deepEqual(await indexesOf(name), await indexesOf(`${name}_ref`), 'every index is back');
      const [left] = await db.conn.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ?', [db.name, `${name}\\_\\_flatload%`]);
      assert.deepEqual(left, [], 'no shadow or old table is left');
      const [jobs] = await db.conn.query('SELECT state, rows_loaded AS n FROM flatload_jobs WHERE target = ?', [`${db.name}.${name}`]);
      assert.deepEqual((jobs as Array<{ state: string; n: unknown }>).map((j) => [j.state, Number(j.n)]), [['done', 60_000]], 'a finished job leaves its tombstone only');
      assert.equal(await committedChunks(), 0, 'and no chunk rows');
      // The same command again (as after a crash past the last commit): nothing is loaded twice.
      const again = await runCli(args, { env: { DATABASE_URL: db.url } });
      assert.equal(again.code, 0, again.stderr);
      assert.equal((JSON.parse(again.stdout) as { status: string }).status, 'already-loaded');
      const [n] = await db.conn.query(`SELECT COUNT(*) AS n FROM \`${name}\``);
      assert.equal(Number((n as Array<{ n: unknown }>)[0]!.n), 60_000);
    });
  }
});

describe('MyRocks with rows (no bulk load): key-ordered chunks under a low rocksdb_max_row_locks', () => {
  test('every chunk stays under a quarter of the limit, the load is exact, and killed it resumes exactly: sorted in memory and in runs', { skip: hasRocksdb() ? false : 'no MyRocks plugin', timeout: 400_000 }, async () => {
    const [v] = await db.conn.query("SELECT @@GLOBAL.rocksdb_max_row_locks AS n");
    const before = Number((v as Array<{ n: unknown }>)[0]!.n);
    try {
      const file = join(dir, 'rocks-locks.tsv');
      await generateToFile(file, { table: 'user_summary', rows: 60_000, seed: 77 });
      const pk = ddl('user_summary').replace('UNIQUE KEY u_user_id (user_id)', 'PRIMARY KEY (user_id)');
      for (const t of ['rl', 'rl_runs', 'rl_ref']) {
        await db.conn.query(`${pk.replace(/CREATE TABLE \S+/, `CREATE TABLE ${t}`)} ENGINE=ROCKSDB`);
        // A row already there: no bulk load, so every row a chunk writes holds a lock until it commits.
        await db.conn.query(`INSERT INTO ${t} VALUES (1, 'w', 'l', 'b', 0)`);
      }
      await db.conn.query(`LOAD DATA INFILE ? INTO TABLE rl_ref ${loadDataOptions('tsv')}`, [file]);
      // Chunks of 500 records over 60,000 rows: far finer than the runs' sparse indexes place bounds.
      await db.conn.query('SET GLOBAL rocksdb_max_row_locks = 2000');
      // The 2.2 MB input is sorted in memory by default; --sort-memory 0 sorts it in runs (whose cuts once overshot).
      for (const [i, [t, sortMemory, where]] of ([['rl', undefined, /"inMemory":true/], ['rl_runs', '0', /"inMemory":false/]] as const).entries()) {
        const extra = sortMemory === undefined ? [] : ['--sort-memory', sortMemory];
        const plan = await runCli(['plan', file, '--table', t, '--json', ...extra], { env: { DATABASE_URL: db.url } });
        assert.equal(plan.code, 0, plan.stderr);
        assert.match(plan.stdout, /capped at 500 records \(a quarter of rocksdb_max_row_locks=2000/);
        assert.match(plan.stdout, /sorted by PRIMARY/);
        assert.match(plan.stdout, where);
        const r = await killUntilDone(['load', file, '--table', t, '--jobs', '2', '--progress', 'none', '--json', '--keep-history', ...extra], 4242 + i);
        assert.ok(r.killed >= 1, `${t}: only ${r.killed} runs were killed mid-load`);
        assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'rl_ref'), t);
        const [chunks] = await db.conn.query('SELECT MAX(records) AS most, COUNT(*) AS n FROM flatload_chunks_rocksdb');
        const { most, n } = (chunks as Array<{ most: unknown; n: unknown }>)[0]!;
        assert.ok(Number(n) >= 120 * (i + 1), `${t}: ${Number(n)} chunks in all`);
        assert.ok(Number(most) <= 500, `${t}: a chunk of ${Number(most)} records`);
      }
    } finally {
      await db.conn.query(`SET GLOBAL rocksdb_max_row_locks = ${before}`);
    }
  });
});

describe('resume is refused when the input or options changed', () => {
  test('changed file, then --restart', async () => {
    const file = join(dir, 'change.tsv');
    await generateToFile(file, { table: 'user_summary', rows: 30_000, seed: 77 });
    await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE ch'));
    const args = ['load', file, '--table', 'ch', '--chunk-size', '16KiB', '--jobs', '1', '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    // Let it commit some chunks, then kill it.
    const committed = async (): Promise<boolean> => {
      const [c] = await db.conn.query('SELECT COUNT(*) AS n FROM ch');
      return Number((c as Array<{ n: number }>)[0]!.n) > 3000;
    };
    await pollUntil('3,000 rows committed', committed, { process: s, everyMs: 50 });
    assert.ok(running(s), 'the load was still running when it was killed');
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

describe('a table that cannot roll back, stopped inside a chunk: the rerun sends only the rest of that chunk', () => {
  // A trigger stops the LOAD DATA at one row, after the rows before it in its chunk have landed (Aria keeps them).
  for (const input of ['plain', 'gzip'] as const) {
    test(`${input} file`, { timeout: 120_000 }, async () => {
      const plain = join(dir, `partial-${input}.tsv`);
      await generateToFile(plain, { table: 'user_summary', rows: 20_000, seed: 55 });
      const file = input === 'gzip' ? `${plain}.gz` : plain;
      if (input === 'gzip') writeFileSync(file, gzipSync(readFileSync(plain)));
      const t = `part_${input}`;
      const create = ddl('user_summary').replace(/CREATE TABLE \S+/, 'CREATE TABLE %s') + ' ENGINE=Aria';
      await db.conn.query(create.replace('%s', t));
      await db.conn.query(create.replace('%s', `${t}_ref`));
      await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${t}_ref ${loadDataOptions('tsv')}`, [plain]);
      // Line 5,000 is inside the third 64 KiB chunk (about 1,750 records each), not at its start.
      const stopAt = readFileSync(plain, 'latin1').split('\n')[4_999]!.split('\t')[0]!;
      await db.conn.query(`CREATE TRIGGER ${t}_stop BEFORE INSERT ON ${t} FOR EACH ROW BEGIN IF NEW.user_id = ${stopAt} THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'stopped'; END IF; END`);
      const args = ['load', file, '--table', t, '--chunk-size', '64KiB', '--jobs', '1', '--progress', 'none', '--json'];
      const first = await runCli(args, { env: { DATABASE_URL: db.url } });
      assert.notEqual(first.code, 0, 'the trigger stops the load');
      const [n] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${t}`);
      const landed = Number((n as Array<{ n: unknown }>)[0]!.n);
      assert.equal(landed, 4_999, 'every row before the stop landed, those of its own chunk too');
      await db.conn.query(`DROP TRIGGER ${t}_stop`);
      const again = await runCli(args, { env: { DATABASE_URL: db.url } });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr + again.stdout, /left the first \d+ record/);
      assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, `${t}_ref`));
    });
  }
});

describe('MyRocks per-chunk bulk load, stopped inside a chunk: the rerun deletes the keys the server stored, not the keys as written', () => {
  // The server stores 2.4 in an INT key as 2 and 0.024 in a DECIMAL(6,2) as 0.02: a chunk's range built from the written
  // first key (k >= 2.4) missed its own first row. A latin1 file's text key must be read in latin1, not as UTF-8 bytes.
  const rows = 3_000;
  const cases = [
    { name: 'INT key written with fractions', column: 'k INT', key: (i: number) => `${2 * i}.4` },
    { name: 'DECIMAL(6,2) key written with three fraction digits', column: 'k DECIMAL(6,2)', key: (i: number) => `${((2 * i) / 100).toFixed(2)}4` },
    { name: 'VARCHAR utf8mb4_bin key in a latin1 file', column: 'k VARCHAR(20) COLLATE utf8mb4_bin', key: (i: number) => `\u00e9${String(i).padStart(6, '0')}`, charset: 'latin1' },
    // Bytes that are not UTF-8, in a byte-string key of a utf8mb4 file: compared as bytes, never converted.
    { name: 'VARBINARY key of bytes that are not UTF-8', column: 'k VARBINARY(20)', key: (i: number) => `\u00e9${String(i).padStart(6, '0')}`, bytes: 'latin1' as const },
  ];
  for (const [i, c] of cases.entries()) {
    for (const order of ['file', 'key'] as const) {
      test(`${c.name}, --order ${order}`, { skip: hasRocksdb() ? false : 'no MyRocks plugin', timeout: 120_000 }, async () => {
        const file = join(dir, `rounded-${i}.tsv`);
        const lines = Array.from({ length: rows }, (_, r) => `${c.key(r + 1)}\tname${String(r + 1).padStart(6, '0')}\n`);
        writeFileSync(file, Buffer.from(lines.join(''), c.charset === 'latin1' || c.bytes === 'latin1' ? 'latin1' : 'utf8'));
        const t = `rounded_${i}_${order}`;
        await db.conn.query(`CREATE TABLE ${t} (${c.column} PRIMARY KEY, v VARCHAR(20)) ENGINE=ROCKSDB`);
        await db.conn.query(`CREATE TABLE ${t}_ref LIKE ${t}`);
        await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${t}_ref ${loadDataOptions('tsv').replace('utf8mb4', c.charset ?? 'utf8mb4')}`, [file]);
        // Record 1,000 is inside the fifth 4 KiB chunk (about 240 records each), not at its start.
        await db.conn.query(`CREATE TRIGGER ${t}_stop BEFORE INSERT ON ${t} FOR EACH ROW BEGIN IF NEW.v = 'name001000' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'stopped'; END IF; END`);
        const args = ['load', file, '--table', t, '--order', order, '--chunk-size', '4KiB', '--progress', 'none', '--json', ...(c.charset ? ['--character-set', c.charset] : [])];
        const plan = await runCli(['plan', ...args.slice(1)], { env: { DATABASE_URL: db.url } });
        assert.match(plan.stdout, /exactly-once-by-key-range/, plan.stderr);
        const first = await runCli(args, { env: { DATABASE_URL: db.url } });
        assert.notEqual(first.code, 0, 'the trigger stops the load');
        const [n] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${t}`);
        assert.equal(Number((n as Array<{ n: unknown }>)[0]!.n), 999, 'every row before the stop landed, those of its own chunk too');
        await db.conn.query(`DROP TRIGGER ${t}_stop`);
        const again = await runCli(args, { env: { DATABASE_URL: db.url } });
        assert.equal(again.code, 0, again.stderr);
        assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, `${t}_ref`));
      });
    }
  }
});

describe('MyRocks per-chunk bulk load: a key the input repeats across a chunk cut', () => {
  // The resumed chunk's range deleted the row the chunk before it committed with the same key, and the rerun then
  // loaded the later row in its place: "3,000 loaded" into a table of 2,999 rows, where a load without the
  // interruption stops at the duplicate. Neither the interrupted chunk nor a later one may delete another's row.
  test('stopped inside an earlier chunk, every rerun stops at the duplicate and keeps the first row', { skip: hasRocksdb() ? false : 'no MyRocks plugin', timeout: 120_000 }, async () => {
    const rows = 3_000;
    const line = (i: number, key = 2 * i): string => `${key}\tname${String(i).padStart(6, '0')}\n`;
    const file = join(dir, 'repeated-key.tsv');
    writeFileSync(file, Array.from({ length: rows }, (_, i) => line(i + 1)).join(''));
    const args = (t: string): string[] => ['load', file, '--table', t, '--order', 'file', '--chunk-size', '4KiB', '--progress', 'none', '--json'];
    const create = (t: string): string => `CREATE TABLE ${t} (k INT PRIMARY KEY, v VARCHAR(20)) ENGINE=ROCKSDB`;
    // Where the chunks are cut: a load of the same bytes, its bookkeeping kept.
    await db.conn.query(create('repeated_probe'));
    const probe = await runCli([...args('repeated_probe'), '--keep-history'], { env: { DATABASE_URL: db.url } });
    assert.equal(probe.code, 0, probe.stderr);
    const [[job]] = (await db.conn.query('SELECT job_id AS id FROM flatload_jobs WHERE target = ?', [`${db.name}.repeated_probe`])) as unknown as [Array<{ id: string }>];
    const [chunkTables] = await db.conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN ('flatload_chunks', 'flatload_chunks_rocksdb')", [db.name]);
    const sizes: number[] = [];
    for (const { t } of chunkTables as Array<{ t: string }>) {
      const [c] = await db.conn.query(`SELECT records AS n FROM \`${t}\` WHERE job_id = ? ORDER BY chunk_index`, [job!.id]);
      sizes.push(...(c as Array<{ n: unknown }>).map((r) => Number(r.n)));
    }
    assert.ok(sizes.length > 6, `${sizes.length} chunks`);
    // Record `cut` is the first of chunk 6 and repeats the key of the record before it, the last of chunk 5.
    const cut = sizes.slice(0, 6).reduce((a, n) => a + n, 0) + 1;
    const repeated = 2 * (cut - 1);
    writeFileSync(file, Array.from({ length: rows }, (_, i) => line(i + 1, i + 1 === cut ? repeated : 2 * (i + 1))).join(''));
    await db.conn.query(create('repeated'));
    await db.conn.query(`CREATE TRIGGER repeated_stop BEFORE INSERT ON repeated FOR EACH ROW BEGIN IF NEW.v = 'name000500' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'stopped'; END IF; END`);
    const first = await runCli(args('repeated'), { env: { DATABASE_URL: db.url } });
    assert.notEqual(first.code, 0, 'the trigger stops the load inside an early chunk');
    await db.conn.query('DROP TRIGGER repeated_stop');
    const kept = `name${String(cut - 1).padStart(6, '0')}`;
    for (const run of [2, 3, 4]) {
      const again = await runCli(args('repeated'), { env: { DATABASE_URL: db.url } });
      assert.notEqual(again.code, 0, `run ${run} stops at the repeated key`);
      assert.match(again.stderr, /chunk 6/, `run ${run}`);
      const [r] = await db.conn.query('SELECT (SELECT v FROM repeated WHERE k = ?) AS v, (SELECT COUNT(*) FROM repeated WHERE k <= ?) AS n', [repeated, repeated]);
      const { v, n } = (r as Array<{ v: string | null; n: unknown }>)[0]!;
      assert.deepEqual([v, Number(n)], [kept, cut - 1], `run ${run}: the first row with key ${repeated} stays, and every row before it`);
    }
  });
});

