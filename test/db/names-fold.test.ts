/**
 * Table names that differ only in case, and the same file listed twice. On a
 * server with lower_case_table_names=0 `users` and `Users` are two tables:
 * the load of one must never find, refuse for or discard the other's job.
 * And a part listed twice (or a symlink to another part) is loaded twice, as
 * the server's own LOAD DATA of both would: the report counts the rows the
 * table holds.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
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
  let exited = false;
  void s.done.then(() => (exited = true));
  const deadline = Date.now() + 60_000;
  while ((await count(table)) === 0) {
    if (exited) assert.fail(`the load ended before it was killed: ${(await s.done).stderr}`);
    if (Date.now() > deadline) {
      s.child.kill('SIGKILL');
      assert.fail('no rows were committed within 60 s');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
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
