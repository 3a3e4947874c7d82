/**
 * Loads that replace a whole table (--mode swap, --mode replace, an export in those modes) hold
 * the table, whatever their input: last night's swap still running when tonight's starts must
 * not share its shadow table. The first load is held deterministically: the test keeps a
 * metadata lock on the shadow's name (an open transaction that read it), so the first load's
 * DROP TABLE IF EXISTS of its shadow waits, the table already held, until the test lets it go.
 * Long table names that share a prefix get shadows and old copies of their own.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { runCli } from '../support/cli.js';
import { adminConnection, createTestDatabase, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { spawnCli, type Spawned } from '../support/spawn.js';

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('tlock');
  dir = mkdtempSync(join(tmpdir(), 'flatload-tlock-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });
const base = ['--progress', 'none', '--skip-size-report'];
/** How long the second run may take to stop: it must not wait for the first. */
const REFUSED_WITHIN_MS = 30_000;

/** Tab-separated rows `id<TAB>tag` for ids in [from, to). */
function rows(from: number, to: number, tag: string): string {
  let s = '';
  for (let i = from; i < to; i++) s += `${i}\t${tag}\n`;
  return s;
}

function file(path: string, content: string): string {
  const p = join(dir, path);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
  return p;
}

async function table(name: string): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS \`${name}\``);
  await db.conn.query(`CREATE TABLE \`${name}\` (id INT NOT NULL PRIMARY KEY, s VARCHAR(20) NOT NULL) ENGINE=InnoDB`);
  await db.conn.query(`INSERT INTO \`${name}\` VALUES (-1, 'old')`);
}

/** What the table holds: rows per tag. */
async function tags(name: string): Promise<Record<string, number>> {
  const [r] = await db.conn.query(`SELECT s, COUNT(*) AS n FROM \`${name}\` GROUP BY s ORDER BY s`);
  return Object.fromEntries((r as Array<{ s: string; n: unknown }>).map((x) => [x.s, Number(x.n)]));
}

/** A metadata lock on `name` (made if missing): DDL on it waits until release(). */
async function holdTableName(name: string, like: string): Promise<{ release: () => Promise<void> }> {
  await db.conn.query(`CREATE TABLE IF NOT EXISTS \`${name}\` LIKE \`${like}\``);
  const conn: Connection = await adminConnection(db.name);
  await conn.query('BEGIN');
  await conn.query(`SELECT COUNT(*) FROM \`${name}\``);
  return {
    release: async () => {
      await conn.query('COMMIT').catch(() => undefined);
      await conn.end().catch(() => undefined);
    },
  };
}

/** A DROP TABLE of this database waiting for a metadata lock (the first load is held before its shadow is made). */
async function dropWaits(): Promise<boolean> {
  const [r] = await db.conn.query(
    "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND STATE LIKE 'Waiting for table metadata lock' AND INFO LIKE '%DROP TABLE%'",
    [db.name],
  );
  return Number((r as Array<{ n: unknown }>)[0]!.n) > 0;
}

/** The process's end, or undefined when it is still running after `ms`. */
async function endWithin(p: Spawned, ms: number): Promise<Awaited<Spawned['done']> | undefined> {
  return Promise.race([p.done, sleep(ms).then(() => undefined)]);
}

/**
 * Runs `first` held before its shadow is made, then `second`: the second must stop at once
 * (exit 8) naming the first; once let go, the first finishes alone.
 */
async function overlap(shadow: string, target: string, first: string[], second: string[]): Promise<{ stderr: string }> {
  const hold = await holdTableName(shadow, target);
  const a = spawnCli(first, env());
  let b: Spawned | undefined;
  try {
    await pollUntil("the first load's DROP of its shadow waiting", dropWaits, { process: a, everyMs: 250, timeoutMs: 60_000 });
    assert.ok(running(a));
    b = spawnCli(second, env());
    const rb = await endWithin(b, REFUSED_WITHIN_MS);
    assert.ok(rb, `the second load was still running after ${REFUSED_WITHIN_MS / 1000} s: it did not stop for the first`);
    assert.equal(rb.code, 8, rb.stderr);
    await hold.release();
    const ra = await a.done;
    assert.equal(ra.code, 0, ra.stderr);
    return { stderr: rb.stderr };
  } finally {
    await hold.release();
    // Bounded: once let go, each load finishes its small input.
    for (const p of [a, b]) if (p && running(p) && !(await endWithin(p, 60_000))) p.child.kill('SIGKILL');
  }
}

describe('one load replaces a table at a time', () => {
  test('--mode swap: a second swap of the same table from another input stops (exit 8) naming the first, which publishes its own rows only', async () => {
    await table('nightly');
    const n1 = file('swap/night1.tsv', rows(1_000_000, 1_020_000, 'N1'));
    const n2 = file('swap/night2.tsv', rows(0, 20_000, 'N2'));
    const { stderr } = await overlap(
      'nightly__flatload_new',
      'nightly',
      ['load', n1, '--table', 'nightly', '--mode', 'swap', ...base],
      ['load', n2, '--table', 'nightly', '--mode', 'swap', ...base],
    );
    assert.match(stderr, /another load is replacing \S+\.nightly .*: \S+\.nightly is held by job [0-9a-f]+ loading \S*night1\.tsv for .*pid \d+/);
    assert.deepEqual(await tags('nightly'), { N1: 20_000 });
  });

  test('an export in swap mode: a second export of the same table from another directory stops (exit 8) naming the first export', async () => {
    await table('t');
    const d1 = join(dir, 'exp1');
    const d2 = join(dir, 'exp2');
    file('exp1/t.txt', rows(1_000_000, 1_020_000, 'N1'));
    file('exp2/t.txt', rows(0, 20_000, 'N2'));
    const { stderr } = await overlap('t__flatload_new', 't', ['load', d1, '--mode', 'swap', ...base], ['load', d2, '--mode', 'swap', ...base]);
    assert.match(stderr, /another load is replacing \S+\.t .*is held by export \w+ of \S*exp1/);
    assert.deepEqual(await tags('t'), { N1: 20_000 });
  });

  test('--mode replace of a table an export is swapping stops (exit 8)', async () => {
    await table('mixed');
    const d1 = join(dir, 'exp3');
    file('exp3/mixed.txt', rows(1_000_000, 1_020_000, 'N1'));
    const f = file('mixed2.tsv', rows(0, 20_000, 'N2'));
    await overlap('mixed__flatload_new', 'mixed', ['load', d1, '--mode', 'swap', ...base], ['load', f, '--table', 'mixed', '--mode', 'replace', ...base]);
    assert.deepEqual(await tags('mixed'), { N1: 20_000 });
  });

  test('--wait: the second swap waits for the first, then publishes its own rows', async () => {
    await table('waited');
    const hold = await holdTableName('waited__flatload_new', 'waited');
    const a = spawnCli(['load', file('wait1.tsv', rows(1_000_000, 1_010_000, 'N1')), '--table', 'waited', '--mode', 'swap', ...base], env());
    let b: Spawned | undefined;
    try {
      await pollUntil("the first load's DROP of its shadow waiting", dropWaits, { process: a, everyMs: 250, timeoutMs: 60_000 });
      b = spawnCli(['load', file('wait2.tsv', rows(0, 10_000, 'N2')), '--table', 'waited', '--mode', 'swap', '--wait', ...base], env());
      let said = '';
      b.child.stderr!.on('data', (d: Buffer) => (said += d.toString()));
      await pollUntil('the second load waiting for the first', async () => /waiting for the other load replacing \S+\.waited to finish/.test(said), { process: b, everyMs: 100, timeoutMs: 60_000 });
      assert.ok(running(a));
      await hold.release();
      const [ra, rb] = await Promise.all([a.done, b.done]);
      assert.equal(ra.code, 0, ra.stderr);
      assert.equal(rb.code, 0, rb.stderr);
      assert.deepEqual(await tags('waited'), { N2: 10_000 });
    } finally {
      await hold.release();
      for (const p of [a, b]) if (p && running(p) && !(await endWithin(p, 60_000))) p.child.kill('SIGKILL');
    }
  });

  test('appends from two inputs into one table still run at once', async () => {
    await table('appended');
    // The first append waits on a row lock the test holds on one of its keys; the second goes on meanwhile.
    const conn = await adminConnection(db.name);
    await conn.query('BEGIN');
    await conn.query("INSERT INTO appended VALUES (5, 'held')");
    const a = spawnCli(['load', file('app1.tsv', rows(0, 10_000, 'A1')), '--table', 'appended', ...base], env());
    try {
      const b = await runCli(['load', file('app2.tsv', rows(100_000, 110_000, 'A2')), '--table', 'appended', ...base], { env: env() });
      assert.equal(b.code, 0, b.stderr);
      assert.ok(running(a), 'the first append was held while the second ran');
    } finally {
      await conn.query('ROLLBACK').catch(() => undefined);
      await conn.end().catch(() => undefined);
    }
    const ra = await a.done;
    assert.equal(ra.code, 0, ra.stderr);
    assert.deepEqual(await tags('appended'), { A1: 10_000, A2: 10_000, old: 1 });
  });
});

describe('long table names', () => {
  const P = 'x'.repeat(50);
  test('two tables sharing their first 50 characters keep shadows and old copies of their own', async () => {
    const a = `${P}_alpha`;
    const b = `${P}_bravo`;
    await table(a);
    await table(b);
    const fb = file('bravo.tsv', rows(1_000_000, 1_010_000, 'B'));
    const fa = file('alpha.tsv', rows(0, 10_000, 'A'));
    // --keep-old leaves each old copy: one name for both made the second RENAME fail.
    const rb = await runCli(['load', fb, '--table', b, '--mode', 'swap', '--keep-old', ...base], { env: env() });
    assert.equal(rb.code, 0, rb.stderr);
    const ra = await runCli(['load', fa, '--table', a, '--mode', 'swap', '--keep-old', ...base], { env: env() });
    assert.equal(ra.code, 0, ra.stderr);
    assert.deepEqual(await tags(a), { A: 10_000 });
    assert.deepEqual(await tags(b), { B: 10_000 });
    const [r] = await db.conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE '%\\_\\_flatload\\_old'", [db.name]);
    const olds = (r as Array<{ t: string }>).map((x) => x.t);
    assert.equal(olds.length, 2, olds.join(', '));
    for (const t of olds) {
      assert.ok(t.length <= 64);
      assert.deepEqual(await tags(t), { old: 1 });
    }
  });
});
