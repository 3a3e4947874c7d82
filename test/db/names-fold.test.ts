/**
 * Table names that differ only in case, and the same file listed twice. On a
 * server with lower_case_table_names=0 `users` and `Users` are two tables:
 * the load of one must never find, refuse for or discard the other's job.
 * And a part listed twice (or a symlink to another part) is loaded twice, as
 * the server's own LOAD DATA of both would: the report counts the rows the
 * table holds.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

let db: TestDatabase;
let dir: string;
let lowerCaseTableNames = 0;
before(async () => {
  db = await createTestDatabase('fold');
  dir = mkdtempSync(join(tmpdir(), 'flatload-fold-'));
  const [r] = await db.conn.query('SELECT @@lower_case_table_names AS v');
  lowerCaseTableNames = Number((r as Array<{ v: unknown }>)[0]!.v);
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });
const base = ['--progress', 'none', '--skip-size-report'];
const NO_KEY = '(id INT NOT NULL, name VARCHAR(20) NOT NULL)';

function rows(from: number, to: number, tag: string): string {
  let s = '';
  for (let i = from; i < to; i++) s += `${i}\t${tag}${i}\n`;
  return s;
}

async function count(table: string): Promise<number> {
  const [r] = await db.conn.query(`SELECT COUNT(*) AS n FROM \`${table}\``);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

async function table(name: string, ddl = NO_KEY): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS \`${name}\``);
  await db.conn.query(`CREATE TABLE \`${name}\` ${ddl} ENGINE=InnoDB`);
}

/** Starts a load and SIGKILLs it once some of its rows are committed (within a deadline, while it still runs). */
async function killMidLoad(args: string[], table: string): Promise<void> {
  const s = spawnCli(args, env());
  await pollUntil(`rows committed into ${table}`, async () => (await count(table)) > 0, { process: s, everyMs: 20 }).catch((err: unknown) => {
    s.child.kill('SIGKILL');
    throw err;
  });
  s.child.kill('SIGKILL');
  const r = await s.done;
  assert.equal(r.signal, 'SIGKILL', `the load finished before it was killed: ${r.stderr}`);
}

describe('names that differ only in case (lower_case_table_names=0)', () => {
  test('a killed load of users and a load of Users are two jobs: each finishes, neither table doubles', async (t) => {
    if (lowerCaseTableNames !== 0) return t.skip(`the server folds table names (lower_case_table_names=${lowerCaseTableNames})`);
    await table('users');
    await table('Users');
    const sub = join(dir, 'single');
    mkdirSync(sub);
    const lower = join(sub, 'users.tsv');
    const upper = join(sub, 'Users.tsv');
    writeFileSync(lower, rows(0, 300_000, 'u'));
    writeFileSync(upper, rows(0, 5_000, 'U'));
    const first = ['load', lower, '--table', 'users', '--chunk-size', '64KiB', '--jobs', '1', ...base];
    await killMidLoad(first, 'users');

    const other = await runCli(['load', upper, '--table', 'Users', '--json', ...base], { env: env() });
    assert.equal(other.code, 0, other.stderr);
    assert.equal((JSON.parse(other.stdout) as { rows: number }).rows, 5_000);
    assert.equal(await count('Users'), 5_000);

    // status --table names one table: Users' job is not listed as users'.
    const st = await runCli(['status', '--table', 'users', '--json'], { env: env() });
    assert.equal(st.code, 0, st.stderr);
    assert.deepEqual(
      (JSON.parse(st.stdout) as { jobs: Array<{ target: string }> }).jobs.map((j) => j.target),
      [`${db.name}.users`],
    );

    // The first load's job is untouched: its rerun resumes it and the table holds each row once.
    const rerun = await runCli([...first, '--json'], { env: env() });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.match(rerun.stderr, /resuming job/);
    assert.equal(await count('users'), 300_000);
    const [d] = await db.conn.query('SELECT COUNT(DISTINCT id) AS n FROM users');
    assert.equal(Number((d as Array<{ n: unknown }>)[0]!.n), 300_000);
  });

  test('an export of Users.tsv and users.tsv in one directory loads both tables in one run', async (t) => {
    if (lowerCaseTableNames !== 0) return t.skip(`the server folds table names (lower_case_table_names=${lowerCaseTableNames})`);
    await table('Ex');
    await table('ex');
    const sub = join(dir, 'export');
    mkdirSync(sub);
    // Big enough that both tables are in flight at once (the smaller starts, the larger is sorted meanwhile).
    writeFileSync(join(sub, 'Ex.tsv'), rows(0, 200_000, 'E'));
    writeFileSync(join(sub, 'ex.tsv'), rows(0, 150_000, 'e'));
    const args = ['load', sub, '--chunk-size', '64KiB', '--jobs', '2', '--json', ...base];
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await count('Ex'), 200_000);
    assert.equal(await count('ex'), 150_000);
    const again = await runCli(args, { env: env() });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await count('Ex'), 200_000);
    assert.equal(await count('ex'), 150_000);
  });
});

/** The --json report of an export (the fields these tests read). */
function exportReport(stdout: string): { status: string; tables: Array<{ table: string; rows: number }>; totals: { rows: number } } {
  return JSON.parse(stdout) as { status: string; tables: Array<{ table: string; rows: number }>; totals: { rows: number } };
}

describe('the same file twice in one table of an export: two parts, loaded twice, as the server would', () => {
  test('a manifest listing one file twice for a table without a key', async () => {
    await table('twice_m');
    const sub = join(dir, 'manifest');
    mkdirSync(sub);
    writeFileSync(join(sub, 'part.tsv'), rows(0, 1_000, 'm'));
    const manifest = join(sub, 'export.json');
    writeFileSync(manifest, JSON.stringify({ tables: [{ table: `${db.name}.twice_m`, files: ['part.tsv', 'part.tsv'] }] }));
    const args = ['load', '--manifest', manifest, '--json', ...base];
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const rep = exportReport(r.stdout);
    assert.equal(await count('twice_m'), 2_000);
    assert.equal(rep.tables[0]!.rows, 2_000);
    assert.equal(rep.totals.rows, 2_000);
    // Run again: already loaded, nothing doubled, and the report still says what the table holds.
    const again = await runCli(args, { env: env() });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(exportReport(again.stdout).status, 'already-loaded');
    assert.equal(await count('twice_m'), 2_000);
  });

  test('a split table whose second part is a symlink to its first', async () => {
    await table('np');
    const sub = join(dir, 'symlinked');
    mkdirSync(sub);
    writeFileSync(join(sub, 'np.000.tsv'), rows(0, 1_000, 'n'));
    symlinkSync(join(sub, 'np.000.tsv'), join(sub, 'np.001.tsv'));
    const args = ['load', sub, '--json', ...base];
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await count('np'), 2_000);
    assert.equal(exportReport(r.stdout).totals.rows, 2_000);
    // With --restart (new export, new jobs for both parts), the table gets both parts again: 4,000.
    const restart = await runCli([...args, '--restart'], { env: env() });
    assert.equal(restart.code, 0, restart.stderr);
    assert.equal(await count('np'), 4_000);
    assert.equal(exportReport(restart.stdout).totals.rows, 2_000);
  });

  test('each listing keeps its own rejected rows: the second beside the first, numbered', async () => {
    await table('twice_bad');
    const sub = join(dir, 'rejects');
    mkdirSync(sub);
    writeFileSync(join(sub, 'bad.tsv'), `${rows(0, 500, 'b')}notanumber\tx\n${rows(500, 1_000, 'b')}`);
    const manifest = join(sub, 'export.json');
    writeFileSync(manifest, JSON.stringify({ tables: [{ table: `${db.name}.twice_bad`, files: ['bad.tsv', 'bad.tsv'] }] }));
    const r = await runCli(['load', '--manifest', manifest, '--max-errors', '5', '--json', ...base], { env: env() });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(await count('twice_bad'), 2_000);
    assert.equal(readFileSync(join(sub, 'bad.rejects.tsv'), 'utf8'), 'notanumber\tx\n');
    assert.equal(readFileSync(join(sub, 'bad.rejects.1.tsv'), 'utf8'), 'notanumber\tx\n');
  });
});
