/**
 * What an adversarial user does to the bookkeeping around a load: the same
 * command on new standard input, a table emptied after a load, an unwritable
 * reject file, duplicates, two runs at once, a broken record late in the
 * file, a multi-byte separator, a file truncated mid-load. Each case checks
 * the table's exact contents against the server's own LOAD DATA INFILE of
 * the same bytes, and the exit code a cron job would see. And around an
 * export: an append export killed after one table was done, its files then
 * copied again (the same bytes or others); a mydumper directory whose
 * metadata lists a table with no data file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { prng, spawnCli } from '../support/spawn.js';
import { pollUntil, running } from '../support/poll.js';

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('adv');
  dir = mkdtempSync(join(tmpdir(), 'flatload-adv-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const COLS = '(id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT NULL)';

/** Tab-separated rows id, name, qty for ids in [from, to). */
function rows(from: number, to: number, tag = 'r'): string {
  let s = '';
  for (let i = from; i < to; i++) s += `${i}\t${tag}${i}\t${i % 97}\n`;
  return s;
}

function file(name: string, content: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

async function table(name: string, ddl = COLS, engine = 'InnoDB'): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS ${name}`);
  await db.conn.query(`CREATE TABLE ${name} ${ddl} ENGINE=${engine}`);
}

/** The reference: the server's own LOAD DATA INFILE of the given bytes into a fresh table like `like`. */
async function reference(like: string, content: string | Buffer, options = '', keyword = ''): Promise<{ count: string; checksum: string }> {
  const ref = `${like}_ref`;
  await db.conn.query(`DROP TABLE IF EXISTS ${ref}`);
  await db.conn.query(`CREATE TABLE ${ref} LIKE ${like}`);
  const p = file(`${ref}.data`, content);
  await db.conn.query(`LOAD DATA INFILE ? ${keyword} INTO TABLE ${ref} ${options}`, [p]);
  return tableDigest(db.conn, ref);
}

async function count(name: string): Promise<number> {
  const [r] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${name}`);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

/** The --json report (the fields these tests read). */
function report(stdout: string): { status: string; rows: number; rejected: number; skippedDuplicates: number } {
  return JSON.parse(stdout) as { status: string; rows: number; rejected: number; skippedDuplicates: number };
}

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });
const base = ['--progress', 'none', '--skip-size-report'];

describe('standard input is identified by its content', () => {
  for (const mode of ['append', 'replace', 'swap'] as const) {
    test(`--mode ${mode}: a different stream on the next night is loaded, the same stream again is not`, async () => {
      const t = `stdin_${mode}`;
      await table(t);
      const night1 = rows(0, 3000, 'a');
      const night2 = rows(3000, 7000, 'b');
      const args = ['load', '-', '--table', t, '--mode', mode, '--json', ...base];
      const r1 = await runCli(args, { env: env(), stdin: night1 });
      assert.equal(r1.code, 0, r1.stderr);
      const r2 = await runCli(args, { env: env(), stdin: night2 });
      assert.equal(r2.code, 0, r2.stderr);
      assert.equal(report(r2.stdout).status, 'ok', 'a new stream is a new load');
      const expected = mode === 'append' ? night1 + night2 : night2;
      assert.deepEqual(await tableDigest(db.conn, t), await reference(t, expected));
      // The very same stream again (a rerun after a crash past the last commit): nothing is loaded twice.
      const r3 = await runCli(args, { env: env(), stdin: night2 });
      assert.equal(r3.code, 0, r3.stderr);
      assert.equal(report(r3.stdout).status, 'already-loaded');
      assert.deepEqual(await tableDigest(db.conn, t), await reference(t, expected));
    });
  }
});

describe('a finished load is trusted only while its rows are in the table', () => {
  for (const [what, sql] of [
    ['TRUNCATE', (t: string) => [`TRUNCATE TABLE ${t}`]],
    ['DROP and CREATE', (t: string) => [`DROP TABLE ${t}`, `CREATE TABLE ${t} ${COLS}`]],
    ['DELETE of every row', (t: string) => [`DELETE FROM ${t}`]],
  ] as const) {
    test(`after ${what}, the same command loads the file again`, async () => {
      const t = `emptied_${what.split(' ')[0]!.toLowerCase()}`;
      await table(t);
      const content = rows(0, 5000);
      const f = file(`${t}.tsv`, content);
      const args = ['load', f, '--table', t, '--json', ...base];
      assert.equal((await runCli(args, { env: env() })).code, 0);
      for (const s of sql(t)) await db.conn.query(s);
      const r = await runCli(args, { env: env() });
      assert.equal(r.code, 0, r.stderr);
      const rep = report(r.stdout);
      assert.equal(rep.status, 'ok', r.stderr);
      assert.equal(rep.rows, 5000);
      assert.deepEqual(await tableDigest(db.conn, t), await reference(t, content));
    });
  }

  test('after some rows were deleted in append mode, it stops and says so instead of reporting them', async () => {
    const t = 'partly_deleted';
    await table(t);
    const f = file(`${t}.tsv`, rows(0, 4000));
    const args = ['load', f, '--table', t, '--json', ...base];
    assert.equal((await runCli(args, { env: env() })).code, 0);
    await db.conn.query(`DELETE FROM ${t} WHERE id < 1000`);
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /fewer than the 4000 this load added/);
    assert.equal(await count(t), 3000, 'nothing loaded');
  });
});

describe('the reject file', () => {
  const bad = `${rows(0, 100)}x\tbad\t1\n${rows(100, 200)}\\N\tnull-id\t2\n${rows(200, 300)}`;
  for (const [what, path] of [
    ['in a missing directory', () => join(dir, 'no-such-dir', 'x.rejects')],
    ['on a read-only special file', () => '/proc/version'],
  ] as const) {
    test(`${what}: refused before anything is loaded (exit 5), and status does not show a running job`, async () => {
      const t = `rej_${what.split(' ')[1]}`;
      await table(t);
      const f = file(`${t}.tsv`, bad);
      const r = await runCli(['load', f, '--table', t, '--max-errors', '5', '--reject-file', path(), ...base], { env: env() });
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /cannot write the reject file/);
      assert.equal(await count(t), 0);
      const s = await runCli(['status', '--table', t, '--json'], { env: env() });
      for (const j of (JSON.parse(s.stdout) as { jobs: Array<{ state: string }> }).jobs) assert.notEqual(j.state, 'running');
    });
  }

  test('rejected rows are in the reject file when the job is recorded as done', async () => {
    const t = 'rej_ok';
    await table(t);
    const f = file(`${t}.tsv`, bad);
    const rf = join(dir, `${t}.rejects.tsv`);
    const args = ['load', f, '--table', t, '--max-errors', '5', '--reject-file', rf, '--json', ...base];
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(readFileSync(rf, 'utf8'), 'x\tbad\t1\n\\N\tnull-id\t2\n');
    rmSync(rf);
    const again = await runCli(args, { env: env() });
    assert.equal(report(again.stdout).status, 'already-loaded');
  });
});

describe('--on-duplicate ignore', () => {
  test('a file whose tail repeats its head: loaded + skipped + rejected = input, and the table equals LOAD DATA … IGNORE', async () => {
    const t = 'dups';
    await table(t);
    // 120,000 lines, the last 20,000 the first 20,000 again (different names, so IGNORE keeps the first).
    const content = rows(0, 100_000) + rows(0, 20_000, 'again');
    const f = file(`${t}.tsv`, content);
    const r = await runCli(['load', f, '--table', t, '--on-duplicate', 'ignore', '--json', '--chunk-size', '256KiB', '--jobs', '2', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const rep = report(r.stdout);
    assert.equal(rep.rows, 100_000);
    assert.equal(rep.skippedDuplicates, 20_000);
    assert.equal(rep.rows + rep.skippedDuplicates + rep.rejected, 120_000);
    assert.deepEqual(await tableDigest(db.conn, t), await reference(t, content, '', 'IGNORE'));
  });
});

describe('one process per load', () => {
  for (const engine of ['MyISAM', 'InnoDB']) {
    test(`${engine}: two identical runs started together load the file once; the second says who holds it (exit 8)`, async () => {
      const t = `twice_${engine.toLowerCase()}`;
      await table(t, '(id INT NOT NULL, name VARCHAR(20) NOT NULL, qty INT NULL)', engine);
      const content = rows(0, 150_000);
      const f = file(`${t}.tsv`, content);
      // Paced to about 2 s, so the second starts while the first holds the job: a MyISAM load of these rows
      // otherwise ended before the second process had started, and both exited 0.
      const args = ['load', f, '--table', t, '--chunk-size', '64KiB', '--max-rate', '75000rows/s', ...base];
      const a = spawnCli(args, env());
      const b = spawnCli(args, env());
      const [ra, rb] = await Promise.all([a.done, b.done]);
      const codes = [ra.code, rb.code].sort();
      assert.deepEqual(codes, [0, 8], `${ra.stderr}\n${rb.stderr}`);
      const loser = ra.code === 8 ? ra : rb;
      assert.match(loser.stderr, /already running: job \w+ is held by .*pid \d+/);
      assert.deepEqual(await tableDigest(db.conn, t), await reference(t, content));
    });
  }

  test('--wait waits for the running load, then finds it done', async () => {
    const t = 'twice_wait';
    await table(t);
    const content = rows(0, 100_000);
    const f = file(`${t}.tsv`, content);
    const args = ['load', f, '--table', t, '--chunk-size', '64KiB', '--json', ...base];
    const a = spawnCli(args, env());
    // The second starts once the first holds the load (its rows are arriving).
    await pollUntil('the first load\'s rows arriving', async () => (await count(t)) > 0, { process: a });
    assert.ok(running(a), 'the first load was still running when the second started');
    const b = spawnCli([...args, '--wait'], env());
    const [ra, rb] = await Promise.all([a.done, b.done]);
    assert.equal(ra.code, 0, ra.stderr);
    assert.equal(rb.code, 0, rb.stderr);
    const statuses = [report(ra.stdout).status, report(rb.stdout).status].sort();
    assert.deepEqual(statuses, ['already-loaded', 'ok']);
    assert.deepEqual(await tableDigest(db.conn, t), await reference(t, content));
  });

  test('status shows a killed load as stopped, not running', async () => {
    const t = 'killed_status';
    await table(t);
    const f = file(`${t}.tsv`, rows(0, 300_000));
    const s = spawnCli(['load', f, '--table', t, '--chunk-size', '64KiB', '--jobs', '1', ...base], env());
    await pollUntil('the load\'s rows arriving', async () => (await count(t)) > 0, { process: s, everyMs: 20 });
    assert.ok(running(s), 'the load was still running when it was killed');
    s.child.kill('SIGKILL');
    await s.done;
    const st = await runCli(['status', '--table', t], { env: env() });
    assert.match(st.stdout, /stopped \(prepared\): no process holds it/);
  });
});

describe('a broken record late in the file', () => {
  test('stops the load before anything is committed; the fixed file then loads exactly', async () => {
    const t = 'late_quote';
    await table(t);
    const good = Array.from({ length: 100_000 }, (_, i) => `${i},"n${i}",${i % 97}\n`).join('');
    const broken = `${good}100000,"unterminated,1\n100001,n,2\n`;
    const f = join(dir, `${t}.csv`);
    writeFileSync(f, broken);
    const args = ['load', f, '--table', t, '--dialect', 'csv-unix', '--chunk-size', '64KiB', '--json', ...base];
    const r = await runCli(args, { env: env() });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /unterminated quoted field/);
    assert.match(r.stderr, /line 100001/);
    assert.equal(await count(t), 0, 'nothing committed');
    const fixed = `${good}100000,"terminated",1\n100001,"n",2\n`;
    writeFileSync(f, fixed);
    const again = await runCli(args, { env: env() });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await tableDigest(db.conn, t), await reference(t, fixed, "FIELDS TERMINATED BY ',' ENCLOSED BY '\"' LINES TERMINATED BY '\\n'"));
  });
});

describe('a multi-byte field separator', () => {
  test('--fields-terminated-by € loads as the server\'s own LOAD DATA does', async () => {
    const t = 'euro';
    await table(t, '(id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT NULL) DEFAULT CHARSET=utf8mb4');
    const content = Array.from({ length: 3000 }, (_, i) => `${i}€näme${i}€${i % 7}\n`).join('');
    const f = file(`${t}.txt`, content);
    const r = await runCli(['load', f, '--table', t, '--fields-terminated-by', '€', '--character-set', 'utf8mb4', '--chunk-size', '16KiB', '--json', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(report(r.stdout).rejected, 0);
    assert.deepEqual(await tableDigest(db.conn, t), await reference(t, content, "CHARACTER SET utf8mb4 FIELDS TERMINATED BY '€'"));
  });
});

describe('an input truncated during the load', () => {
  test('is reported as changed under the load, not as a format problem', async () => {
    const t = 'shrinking';
    await table(t);
    const f = file(`${t}.tsv`, rows(0, 400_000));
    const s = spawnCli(['load', f, '--table', t, '--chunk-size', '64KiB', '--jobs', '1', ...base], env());
    await pollUntil('the load\'s rows arriving', async () => (await count(t)) > 0, { process: s });
    assert.ok(running(s), 'the load was still running when its input was truncated');
    truncateSync(f, 1_000_000);
    const r = await s.done;
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /the input changed while it was being loaded/);
  });
});

describe('messages', () => {
  test('already loaded is said once; the resume command works from any directory', async () => {
    const t = 'msgs';
    await table(t);
    const f = file(`${t}.tsv`, rows(0, 1000));
    const args = ['load', `${t}.tsv`, '--table', t, ...base];
    const first = await runCli(args, { env: env(), cwd: dir });
    assert.equal(first.code, 0, first.stderr);
    const r = await runCli(args, { env: env(), cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((`${r.stdout}${r.stderr}`.match(/already loaded/g) ?? []).length, 1, `${r.stdout}${r.stderr}`);
    void f;
  });

  test('the count of problems beyond those listed is the real count', async () => {
    const t = 'many_bad';
    await table(t);
    // 2,000 rows with text in the numeric column: every one is a problem.
    const content = Array.from({ length: 2000 }, (_, i) => `${i}\tn\tnot-a-number\n`).join('');
    const f = file(`${t}.tsv`, content);
    const r = await runCli(['load', f, '--table', t, ...base], { env: env() });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /… and 1990 more/);
    assert.match(r.stderr, /resume with: cd \S+ && flatload load/);
  });
});

describe('a last record the server would shorten silently', () => {
  test('an extra field on the last line without a line terminator stops the load before anything is loaded; with the terminator the row is rejected', async () => {
    const t = 'last_extra';
    await table(t);
    // The server's own LOAD DATA drops the extra field of such a last record without a warning.
    const f = file(`${t}.tsv`, `${rows(0, 1000)}1000\tx\t1\textra`);
    const r = await runCli(['load', f, '--table', t, ...base], { env: env() });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /last record has more fields than the table's columns take/);
    assert.match(r.stderr, /line 1001/);
    assert.equal(await count(t), 0);
    const g = file(`${t}2.tsv`, `${rows(0, 1000)}1000\tx\t1\textra\n`);
    const rf = join(dir, `${t}.rejects.tsv`);
    const ok = await runCli(['load', g, '--table', t, '--max-errors', '1', '--reject-file', rf, '--json', ...base], { env: env() });
    assert.equal(ok.code, 3, ok.stderr);
    assert.equal(report(ok.stdout).rejected, 1);
    assert.equal(readFileSync(rf, 'utf8'), '1000\tx\t1\textra\n');
    assert.equal(await count(t), 1000);
  });
});

/** Exports run again after their files were copied again, and a dump missing a table's file. */
const exportBase = ['--progress', 'none', '--skip-size-report', '--json'];

async function jobState(target: string): Promise<string | undefined> {
  const [r] = await db.conn.query("SELECT state FROM flatload_jobs WHERE target = ? ORDER BY started_at DESC LIMIT 1", [target]);
  return (r as Array<{ state: string }>)[0]?.state;
}

/** A small table with an AUTO_INCREMENT key the file lacks (loading it twice doubles it), and a big one still loading. */
function writeExport(exp: string, tag: string): { td: string; ta: string } {
  mkdirSync(exp, { recursive: true });
  let td = '';
  for (let i = 1; i <= 3000; i++) td += `${tag}${i}\t${i}\n`;
  const ids = Array.from({ length: 300_000 }, (_, i) => i + 1);
  const rnd = prng(7);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const ta = ids.map((i) => `${i}\tA${i}\n`).join('');
  writeFileSync(join(exp, 'td.txt'), td);
  writeFileSync(join(exp, 'ta.txt'), ta);
  return { td, ta };
}

async function freshTables(): Promise<void> {
  await db.conn.query('DROP TABLE IF EXISTS td, ta, flatload_exports, flatload_jobs');
  await db.conn.query('CREATE TABLE td (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40), val INT, KEY (name))');
  await db.conn.query('CREATE TABLE ta (id INT PRIMARY KEY, s VARCHAR(30))');
}

const run = (exp: string): string[] => ['load', exp, '--jobs', '1', '--chunk-size', '256k', ...exportBase];
const rerun = (exp: string): ReturnType<typeof runCli> => runCli(run(exp), { env: env(), timeoutMs: 120_000 });
const counts = async (): Promise<[number, number]> => [await count('td'), await count('ta')];

/** Chunks committed for ta's load. */
async function taChunks(): Promise<number> {
  const [r] = await db.conn.query("SELECT COUNT(*) AS n FROM flatload_chunks c JOIN flatload_jobs j USING (job_id) WHERE j.target = ?", [`${db.name}.ta`]);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

/** Starts the export and kills it once td is done and ta is not (with `inPart`, once ta committed a chunk). */
async function killAfterTd(exp: string, inPart = false): Promise<void> {
  const p = spawnCli(run(exp), env());
  const ready = async (): Promise<boolean> => (await jobState(`${db.name}.td`)) === 'done' && (!inPart || (await taChunks()) > 0);
  await pollUntil('td loaded', () => ready().catch(() => false), { process: p, timeoutMs: 60_000, everyMs: 20 });
  p.child.kill('SIGKILL');
  await p.done;
  assert.notEqual(await jobState(`${db.name}.ta`), 'done', 'precondition: the kill came before ta was done');
}

describe('an append export run again after its files were copied again', () => {
  test('a done table whose file changed stops the rerun before anything changes (exit 2); its same bytes with a new time are already loaded', async () => {
    await freshTables();
    const exp = join(dir, 'exp');
    const { td } = writeExport(exp, 'n');
    await killAfterTd(exp);
    const [tdRows, taRows] = await counts();
    assert.equal(tdRows, 3000);

    // Other bytes at the same path: refused, and no table changes.
    writeFileSync(join(exp, 'td.txt'), td.replace(/^n1\t/, 'm1\t'));
    const changed = await rerun(exp);
    assert.equal(changed.code, 2, changed.stderr);
    assert.match(changed.stderr, /the files changed since the interrupted run/);
    assert.match(changed.stderr, /td\.txt/);
    assert.deepEqual(await counts(), [tdRows, taRows]);

    // The same bytes again, with a new modification time (a re-copy): td already loaded, ta finished.
    writeFileSync(join(exp, 'td.txt'), td);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(exp, 'td.txt'), later, later);
    const same = await rerun(exp);
    assert.equal(same.code, 0, same.stderr);
    assert.equal(await count('td'), 3000);
    assert.equal(await count('ta'), 300_000);
    const report = JSON.parse(same.stdout) as { notes: string[]; tables: Array<{ table: string; status: string }> };
    assert.ok(report.notes.some((n) => /same bytes as the interrupted run loaded/.test(n)), report.notes.join('\n'));
    assert.equal(report.tables.find((t) => t.table.endsWith('.td'))!.status, 'already-loaded');

    // Run again: the export is done.
    const again = await rerun(exp);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await counts(), [3000, 300_000]);
  });
});

describe('an append export run again after the file of the table it was loading was copied again', () => {
  test('other bytes stop the rerun before anything changes (exit 2); the same bytes with a new time resume it', async () => {
    await freshTables();
    const exp = join(dir, 'exp2');
    const { ta } = writeExport(exp, 'n');
    await killAfterTd(exp, true);
    const [tdRows, taRows] = await counts();
    assert.ok(taRows > 0 && taRows < 300_000, `precondition: ta in part (${taRows})`);

    // One byte of ta changed, its size kept.
    writeFileSync(join(exp, 'ta.txt'), ta.replace(/\tA/, '\tB'));
    const changed = await rerun(exp);
    assert.equal(changed.code, 2, changed.stderr);
    assert.match(changed.stderr, /ta\.txt .*in part; its contents changed since/);
    assert.deepEqual(await counts(), [tdRows, taRows]);

    writeFileSync(join(exp, 'ta.txt'), ta);
    const same = await rerun(exp);
    assert.equal(same.code, 0, same.stderr);
    assert.deepEqual(await counts(), [3000, 300_000]);
  });
});

describe("mydumper's metadata lists a table whose data file is missing", () => {
  test('exit 9 naming it before anything loads; --exclude leaves it out', async () => {
    await db.conn.query('DROP TABLE IF EXISTS md_ta, md_tc');
    await db.conn.query('CREATE TABLE md_ta (id INT PRIMARY KEY)');
    await db.conn.query('CREATE TABLE md_tc (id INT PRIMARY KEY)');
    const dump = join(dir, 'dump');
    mkdirSync(dump);
    writeFileSync(join(dump, `${db.name}.md_ta.00000.dat`), Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join(''));
    writeFileSync(join(dump, 'metadata'), `[\`${db.name}\`.\`md_ta\`]\nreal_table_name=md_ta\nrows = 1000\n\n[\`${db.name}\`.\`md_tc\`]\nreal_table_name=md_tc\nrows = 5000\n\n[\`${db.name}\`.\`md_empty\`]\nreal_table_name=md_empty\nrows = 0\n`);
    const lost = await runCli(['load', dump, ...exportBase], { env: env(), timeoutMs: 60_000 });
    assert.equal(lost.code, 9, lost.stderr);
    assert.match(lost.stderr, new RegExp(`${db.name}\\.md_tc \\(5000 rows\\)`));
    assert.doesNotMatch(lost.stderr, /md_empty/);
    assert.equal(await count('md_ta'), 0);
    const excluded = await runCli(['load', dump, '--exclude', 'md_tc', ...exportBase], { env: env(), timeoutMs: 60_000 });
    assert.equal(excluded.code, 0, excluded.stderr);
    assert.equal(await count('md_ta'), 1000);
  });
});
