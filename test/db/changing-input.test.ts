/**
 * Inputs that change while flatload reads them (a writer still appending, a
 * byte changed in the middle with the modification time put back) and a
 * --tmpdir that cannot take what the load needs. Each load that has to be
 * caught mid-way is held by a row lock another session keeps on one of the
 * file's keys: LOAD DATA waits on it, the test changes the file (or kills
 * flatload) while it waits, then lets it go.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { runCli } from '../support/cli.js';
import { adminConnection, createTestDatabase, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'flatload-changing-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * How the polls here wait. Not faster: information_schema queries every 25 ms kept the load's LOAD DATA LOCAL from
 * reading its first row (MariaDB 10.11: 'Reading file' with no transaction for minutes; every 250 ms it reaches the
 * held key at once).
 */
const HELD = { everyMs: 250, timeoutMs: 120_000 };


async function rows(conn: Connection, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const [r] = await conn.query(sql, params);
  return r as Array<Record<string, unknown>>;
}

/** A LOAD DATA of this database waiting for a row lock (the load is held mid-chunk). */
async function loadWaitsOnLock(conn: Connection, db: string): Promise<boolean> {
  const r = await rows(
    conn,
    "SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX x JOIN information_schema.PROCESSLIST p ON p.ID = x.trx_mysql_thread_id WHERE x.trx_state = 'LOCK WAIT' AND p.DB = ? AND p.INFO LIKE 'LOAD DATA%'",
    [db],
  );
  return Number(r[0]!['n']) > 0;
}

/** Holds key `id` of `table` in an open transaction: a load reaching that key waits until release(). */
async function holdKey(db: TestDatabase, table: string, id: number): Promise<{ release: () => Promise<void> }> {
  const conn = await adminConnection(db.name);
  await conn.query('SET SESSION innodb_lock_wait_timeout = 120');
  await conn.query('BEGIN');
  await conn.query(`INSERT INTO ${table} (id, v) VALUES (?, 'held')`, [id]);
  return {
    release: async () => {
      await conn.query('ROLLBACK').catch(() => undefined);
      await conn.end().catch(() => undefined);
    },
  };
}

/** Every job of this database whose lock a session still holds (a killed flatload's session lingers until the server notices). */
async function jobLocksHeld(conn: Connection): Promise<number> {
  const r = await rows(conn, "SELECT COUNT(*) AS n FROM flatload_jobs WHERE IS_USED_LOCK(CONCAT('flatload-job:', job_id)) IS NOT NULL");
  return Number(r[0]!['n']);
}

async function table(conn: Connection, name: string): Promise<Array<[number, string]>> {
  return (await rows(conn, `SELECT id, v FROM ${name} ORDER BY id`)).map((r) => [Number(r['id']), String(r['v'])]);
}

function tsv(ids: number[], value: (id: number) => string): string {
  return ids.map((i) => `${i}\t${value(i)}\n`).join('');
}

/** Writes `bytes` at `position` without changing the file's size, then puts its modification time back. */
function overwriteKeepingTime(path: string, position: number, bytes: string): void {
  const st = statSync(path);
  // touch copies the time to the nanosecond, as `touch -d` sets it; utimes() would round it.
  const ref = `${path}.time`;
  assert.equal(spawnSync('touch', ['-r', path, ref]).status, 0);
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.from(bytes), 0, bytes.length, position);
  } finally {
    closeSync(fd);
  }
  assert.equal(spawnSync('touch', ['-r', ref, path]).status, 0);
  rmSync(ref);
  assert.equal(statSync(path).mtimeMs, st.mtimeMs, 'the modification time was put back');
  assert.equal(statSync(path).size, st.size);
}

describe('an input still being written', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase('chg');
  });
  after(async () => db.drop());

  const setup = async (name: string): Promise<void> => {
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
  };

  for (const order of ['file', 'key'] as const) {
    test(`a writer that paused mid-field and goes on while the load runs (--order ${order}): the input changed, exit 5, nothing loaded`, async () => {
      const name = `paused_${order}`;
      await setup(name);
      const file = join(dir, `${name}.tsv`);
      // The row lock is on key 1: the first row in file order, and in key order the cut row itself (the keys descend).
      writeFileSync(file, order === 'key' ? `${tsv([3, 2], () => 'complete')}1\tpaylo` : `${tsv([1, 2], () => 'complete')}3\tpaylo`);
      const held = await holdKey(db, name, 1);
      const load = spawnCli(['load', file, '--table', name, '--jobs', '1', '--order', order, '--sort-memory', '0', '--tmpdir', dir], { DATABASE_URL: db.url });
      try {
        await pollUntil('the load to wait on the held key', () => loadWaitsOnLock(db.conn, db.name), { process: load, ...HELD });
        appendFileSync(file, 'ad\n4\tafter\n');
      } finally {
        await held.release();
      }
      const r = await load.done;
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /the input changed while it was (read|being loaded)/);
      assert.match(r.stderr, new RegExp(`${name}\\.tsv`));
      assert.deepEqual(await table(db.conn, name), [], 'no row of the cut file was committed');
    });
  }

  test('a writer appending all the time: the input changed, exit 5 (not a row short of columns), nothing loaded', async () => {
    const name = 'growing';
    await setup(name);
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, tsv([1, 2, 3], () => 'start'));
    // Rows written in two pieces, so the file often ends inside one.
    const writer: ChildProcess = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); let i = 4; const w = () => { fs.appendFileSync(process.argv[1], i + '\\tpay'); setTimeout(() => { fs.appendFileSync(process.argv[1], 'load' + i + '\\n'); i++; setTimeout(w, 2); }, 2); }; w();`,
        file,
      ],
      { stdio: 'ignore' },
    );
    const writerAlive = (): boolean => writer.exitCode === null && writer.signalCode === null;
    try {
      const size0 = statSync(file).size;
      await pollUntil('the writer to start', async () => statSync(file).size > size0, { alive: writerAlive, ...HELD });
      const held = await holdKey(db, name, 1);
      const load = spawnCli(['load', file, '--table', name, '--jobs', '1', '--order', 'file'], { DATABASE_URL: db.url });
      try {
        // Either the load sees the file grow while it reads it and stops before loading, or it waits on the held key: then
        // the file grows meanwhile, before the chunk can commit.
        await pollUntil('the load to wait on the held key, or to stop', async () => !running(load) || (await loadWaitsOnLock(db.conn, db.name)), HELD);
        if (running(load)) {
          const size = statSync(file).size;
          await pollUntil('the file to grow while the load waits', async () => statSync(file).size > size, { alive: writerAlive, ...HELD });
        }
      } finally {
        await held.release();
      }
      const r = await load.done;
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /the input changed while it was (read|being loaded)/);
      assert.doesNotMatch(r.stderr, /1261/);
      assert.deepEqual(await table(db.conn, name), []);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  test('a last record without a line terminator in a file that does not change is data, as for the server', async () => {
    const name = 'unterminated';
    await setup(name);
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, `${tsv([1, 2], () => 'x')}3\tlast`);
    const r = await runCli(['load', file, '--table', name], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await table(db.conn, name), [
      [1, 'x'],
      [2, 'x'],
      [3, 'last'],
    ]);
  });
});

describe('a byte changed in the middle, modification time put back', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase('chg6');
  });
  after(async () => db.drop());

  // Over 2 MiB, so that a byte in the middle is outside the first and last MiB, which the job's id hashes.
  const N = 34_000;
  const value = (i: number): string => `row${String(i).padStart(6, '0')}-${'a'.repeat(80)}`;
  const CHUNK = '1536k';

  /** The id and the value's last byte of the row that starts at or after byte `offset`. */
  function rowAt(text: string, offset: number): { id: number; at: number } {
    const start = text.indexOf('\n', offset) + 1;
    const id = Number(text.slice(start, text.indexOf('\t', start)));
    return { id, at: start + String(id).length + 1 + value(id).length - 1 };
  }

  /**
   * Starts a load held at key `heldId`, waits until it is held there (after
   * `committed` chunks), kills it with SIGKILL and waits until its session is
   * gone: the bookkeeping then says it was interrupted.
   */
  async function killedLoad(name: string, args: string[], heldId: number, committed: number): Promise<void> {
    const held = await holdKey(db, name, heldId);
    const load = spawnCli(args, { DATABASE_URL: db.url });
    try {
      const chunksDone = async (): Promise<number> => {
        const t = await rows(db.conn, "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'flatload_chunks'");
        return Number(t[0]!['n']) === 0 ? 0 : Number((await rows(db.conn, 'SELECT COUNT(*) AS n FROM flatload_chunks'))[0]!['n']);
      };
      await pollUntil('the load to wait on the held key', async () => (await loadWaitsOnLock(db.conn, db.name)) && (await chunksDone()) >= committed, { process: load, ...HELD });
      load.child.kill('SIGKILL');
      await load.done;
    } finally {
      await held.release();
    }
    await pollUntil("the killed load's session to end", async () => (await jobLocksHeld(db.conn)) === 0, HELD);
  }

  test('file order: the rerun refuses to resume over a byte changed in a committed chunk, naming the contents', async () => {
    const name = 'mid_file';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, tsv(Array.from({ length: N }, (_, i) => i + 1), value));
    const text = readFileSync(file, 'utf8');
    const args = ['load', file, '--table', name, '--jobs', '1', '--order', 'file', '--chunk-size', CHUNK, '--progress', 'none'];
    // Chunk 0 (the first 1.5 MiB) commits; the load is held in chunk 1 and killed there.
    await killedLoad(name, args, rowAt(text, 2_000_000).id, 1);
    // One byte of a row in chunk 0, past its first MiB, changes; size and modification time stay.
    overwriteKeepingTime(file, rowAt(text, 1_250_000).at, 'b');
    const r = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 2, `a resume over changed contents must be refused:\n${r.stderr}`);
    assert.match(r.stderr, /the input changed: .*its contents differ from what the interrupted run read/);
  });

  test('a job whose row keeps the SHA-256 an older flatload took resumes over the same bytes, and refuses others', async () => {
    const name = 'old_digest';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, tsv(Array.from({ length: N }, (_, i) => i + 1), value));
    const text = readFileSync(file);
    const args = ['load', file, '--table', name, '--jobs', '1', '--order', 'file', '--chunk-size', CHUNK, '--progress', 'none'];
    await killedLoad(name, args, rowAt(text.toString('utf8'), 2_000_000).id, 1);
    const olderRow = async (bytes: Buffer): Promise<void> => {
      await db.conn.query('UPDATE flatload_jobs SET input_sha256 = ?', [createHash('sha256').update(bytes).digest('hex')]);
    };
    const other = Buffer.from(text);
    other[1_250_000] = other[1_250_000] === 0x61 ? 0x62 : 0x61;
    await olderRow(other);
    const refused = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(refused.code, 2, `other bytes than the SHA-256 names must be refused:\n${refused.stderr}`);
    assert.match(refused.stderr, /its contents differ from what the interrupted run read/);
    await olderRow(text);
    const resumed = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr + resumed.stdout, /resuming job/);
    assert.equal((await table(db.conn, name)).length, N);
  });

  const sortedArgs = (name: string, file: string, spill: string): string[] =>
    ['load', file, '--table', name, '--jobs', '1', '--order', 'key', '--sort-memory', '0', '--tmpdir', spill, '--chunk-size', CHUNK, '--progress', 'none'];

  test('key order, sorted in runs: the rerun refuses to resume over a byte changed in the middle; --restart loads the new bytes', async () => {
    const name = 'mid_runs';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, tsv(Array.from({ length: N }, (_, i) => N - i), value));
    const text = readFileSync(file, 'utf8');
    const spill = join(dir, 'spill-runs');
    mkdirSync(spill);
    const args = sortedArgs(name, file, spill);
    // The smallest key is in the first loaded chunk: the load is held there, after every run is written.
    await killedLoad(name, args, 1, 0);
    assert.ok(readdirSync(spill).some((d) => d.startsWith('flatload-order-')), 'the killed load left its runs');
    const changed = rowAt(text, 1_600_000);
    overwriteKeepingTime(file, changed.at, 'b');
    const resumed = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(resumed.code, 2, `a resume over changed contents must be refused:\n${resumed.stderr}`);
    assert.match(resumed.stderr, /the input changed: .*its contents differ from what the interrupted run read/);
    const restarted = await runCli([...args, '--restart'], { env: { DATABASE_URL: db.url } });
    assert.equal(restarted.code, 0, restarted.stderr);
    const got = await table(db.conn, name);
    assert.equal(got.length, N);
    assert.deepEqual(got.find(([id]) => id === changed.id), [changed.id, `${value(changed.id).slice(0, -1)}b`], 'the table holds the file as it is now, not the runs of the old one');
  });

  test('key order, sorted in runs: --restart after a kill sorts the changed input again instead of reusing the runs', async () => {
    const name = 'mid_restart';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, tsv(Array.from({ length: N }, (_, i) => N - i), value));
    const text = readFileSync(file, 'utf8');
    const spill = join(dir, 'spill-restart');
    mkdirSync(spill);
    const args = sortedArgs(name, file, spill);
    await killedLoad(name, args, 1, 0);
    const changed = rowAt(text, 1_700_000);
    overwriteKeepingTime(file, changed.at, 'c');
    const restarted = await runCli([...args, '--restart'], { env: { DATABASE_URL: db.url } });
    assert.equal(restarted.code, 0, restarted.stderr);
    const got = await table(db.conn, name);
    assert.equal(got.length, N);
    assert.deepEqual(got.find(([id]) => id === changed.id), [changed.id, `${value(changed.id).slice(0, -1)}c`]);
  });
});

/** A tmpfs mounted at a new directory (read-only, or of `size`); undefined where this process cannot mount (not root). */
function mountTmpfs(options: string): string | undefined {
  const at = mkdtempSync(join(tmpdir(), 'flatload-tmpfs-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', at], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(at, { recursive: true, force: true });
    return undefined;
  }
  return at;
}

function unmount(at: string | undefined): void {
  if (!at) return;
  spawnSync('umount', [at]);
  if (existsSync(at)) rmSync(at, { recursive: true, force: true });
}

describe('a --tmpdir that cannot take the load', () => {
  let db: TestDatabase;
  // Mounted while the tests are declared, so that a machine where this cannot be done skips them, saying why.
  const readOnly = mountTmpfs('ro,size=4m');
  const small = mountTmpfs('size=64k');
  before(async () => {
    db = await createTestDatabase('chg12');
  });
  after(async () => {
    unmount(readOnly);
    unmount(small);
    await db.drop();
  });
  const skip = (): string | false => (readOnly && small ? false : 'mounting a tmpfs needs root (CAP_SYS_ADMIN): a read-only or full directory cannot be made otherwise, since root writes through any mode');

  const reversed = (name: string, n: number): string => {
    const file = join(dir, `${name}.tsv`);
    writeFileSync(file, tsv(Array.from({ length: n }, (_, i) => n - i), (i) => `value-${i}-${'z'.repeat(30)}`));
    return file;
  };

  test('--order key into a read-only --tmpdir: it says so, naming the directory, exit 5, before anything changes', { skip: skip() }, async () => {
    const name = 'ro_key';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = reversed(name, 5000);
    const r = await runCli(['load', file, '--table', name, '--order', 'key', '--sort-memory', '0', '--tmpdir', readOnly!], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /read-only/);
    assert.ok(r.stderr.includes(readOnly!), r.stderr);
    assert.doesNotMatch(r.stderr, /ENOENT/);
    assert.deepEqual(await table(db.conn, name), []);
  });

  test('standard input spooled into a read-only --tmpdir: it says so, naming the directory, exit 5', { skip: skip() }, async () => {
    const name = 'ro_stdin';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const r = await runCli(['load', '-', '--table', name, '--tmpdir', readOnly!], { env: { DATABASE_URL: db.url }, stdin: tsv([1, 2], () => 'x') });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /read-only/);
    assert.ok(r.stderr.includes(readOnly!), r.stderr);
  });

  test('the automatic order with a read-only --tmpdir: each chunk sorted instead, saying why', { skip: skip() }, async () => {
    const name = 'ro_auto';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = reversed(name, 5000);
    const r = await runCli(['load', file, '--table', name, '--sort-memory', '0', '--tmpdir', readOnly!], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /read-only[^\n]*: each chunk is sorted by PRIMARY in memory instead, the chunks in file order/);
    assert.equal((await table(db.conn, name)).length, 5000);
  });

  test('--order key with a --tmpdir too small for the runs: an error before anything changes (exit 4), not file order', { skip: skip() }, async () => {
    const name = 'small_key';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = reversed(name, 5000);
    const r = await runCli(['load', file, '--table', name, '--order', 'key', '--sort-memory', '0', '--tmpdir', small!], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /--order key/);
    assert.ok(r.stderr.includes(small!), r.stderr);
    assert.deepEqual(await table(db.conn, name), []);
    const bookkeeping = await rows(db.conn, "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'flatload_jobs'");
    const jobs = Number(bookkeeping[0]!['n']) === 0 ? 0 : Number((await rows(db.conn, 'SELECT COUNT(*) AS n FROM flatload_jobs WHERE target = ?', [`${db.name}.${name}`]))[0]!['n']);
    assert.equal(jobs, 0, 'no job was recorded either');
  });

  test('the automatic order with a --tmpdir too small: each chunk sorted instead, saying so; with --max-errors over two streams, file order', { skip: skip() }, async () => {
    const name = 'small_auto';
    await db.conn.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const file = reversed(name, 5000);
    const r = await runCli(['load', file, '--table', name, '--sort-memory', '0', '--tmpdir', small!], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /are free: each chunk is sorted by PRIMARY in memory instead/);
    assert.equal((await table(db.conn, name)).length, 5000);
    // Equal keys in two chunks would decide which duplicate is kept: no sort at all then.
    await db.conn.query(`CREATE TABLE ${name}_dup (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB`);
    const f = await runCli(['load', file, '--table', `${name}_dup`, '--sort-memory', '0', '--max-errors', '10', '--jobs', '2', '--tmpdir', small!], { env: { DATABASE_URL: db.url } });
    assert.equal(f.code, 0, f.stderr);
    assert.match(f.stderr, /are free: it goes in file order/);
    assert.equal((await table(db.conn, `${name}_dup`)).length, 5000);
  });
});
