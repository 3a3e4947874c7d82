/**
 * A nightly swap or replace on a production primary meets a long report: a
 * session whose open transaction read the table holds its metadata lock.
 * Waiting for it with the server's lock_wait_timeout (a day by default) would
 * queue every new reader of the table behind flatload's RENAME or TRUNCATE.
 * flatload asks for the lock a second at a time: readers go on meanwhile, the
 * note names the session it waits for, the load finishes once the report
 * ends, and past --max-pause it stops resumable (exit 4).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { runCli } from '../support/cli.js';
import { adminConnection, createTestDatabase, type TestDatabase } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('lockwait');
  dir = mkdtempSync(join(tmpdir(), 'flatload-lockwait-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });
const base = ['--progress', 'lines', '--skip-size-report'];

async function table(name: string): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS \`${name}\``);
  await db.conn.query(`CREATE TABLE \`${name}\` (id INT NOT NULL PRIMARY KEY, s VARCHAR(20) NOT NULL) ENGINE=InnoDB`);
  await db.conn.query(`INSERT INTO \`${name}\` VALUES (-1, 'old')`);
}

function input(name: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += `${i}\tnew\n`;
  const p = join(dir, name);
  writeFileSync(p, s);
  return p;
}

async function tags(name: string): Promise<Record<string, number>> {
  const [r] = await db.conn.query(`SELECT s, COUNT(*) AS n FROM \`${name}\` GROUP BY s ORDER BY s`);
  return Object.fromEntries((r as Array<{ s: string; n: unknown }>).map((x) => [x.s, Number(x.n)]));
}

/** A report: an open transaction that read the table, holding its metadata lock until it ends. */
async function report(name: string): Promise<{ id: number; end: () => Promise<void> }> {
  const conn: Connection = await adminConnection(db.name);
  const [r] = await conn.query('SELECT CONNECTION_ID() AS id');
  await conn.query('BEGIN');
  await conn.query(`SELECT COUNT(*) FROM \`${name}\``);
  return {
    id: Number((r as Array<{ id: unknown }>)[0]!.id),
    end: async () => {
      await conn.query('COMMIT').catch(() => undefined);
      await conn.end().catch(() => undefined);
    },
  };
}

/** A reader arriving while flatload waits: it must be answered, not queued behind flatload's exclusive lock (5 s at most). */
async function readerAnswered(name: string): Promise<void> {
  const conn = await adminConnection(db.name);
  try {
    for (let i = 0; i < 3; i++) {
      await conn.query(`SET STATEMENT lock_wait_timeout = 5 FOR SELECT COUNT(*) FROM \`${name}\``);
      await sleep(500);
    }
  } finally {
    await conn.end();
  }
}

describe('quick exclusive statements wait for a table\'s readers without holding them up', () => {
  test('--mode swap behind a long report: readers go on, the report is named, the swap publishes once it ends', async () => {
    await table('sw');
    const r = await report('sw');
    const p = spawnCli(['load', input('sw.tsv', 5000), '--table', 'sw', '--mode', 'swap', ...base], env());
    let said = '';
    p.child.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    try {
      const waiting = new RegExp(`RENAME TABLE waits for other sessions to let go of .*\\.\`sw\`.*connection ${r.id} \\(`);
      await pollUntil('the swap noting the report it waits for', async () => waiting.test(said), { process: p, everyMs: 100, timeoutMs: 60_000 });
      await readerAnswered('sw');
      assert.ok(running(p), 'the swap finished while the report still held the table');
      assert.deepEqual(await tags('sw'), { old: 1 });
      await r.end();
      const res = await Promise.race([p.done, sleep(60_000).then(() => undefined)]);
      assert.ok(res, 'the swap did not finish within 60 s of the report ending');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /got the lock on .*`sw`.* after \d+ s/);
      assert.deepEqual(await tags('sw'), { new: 5000 });
    } finally {
      await r.end();
      if (running(p)) p.child.kill('SIGKILL');
    }
  });

  test('--mode replace past --max-pause: stops before emptying the table (exit 4, the report named); the same command finishes once it ends', async () => {
    await table('rp');
    const r = await report('rp');
    const args = ['load', input('rp.tsv', 3000), '--table', 'rp', '--mode', 'replace', '--max-pause', '3s', ...base];
    try {
      const res = await runCli(args, { env: env(), timeoutMs: 60_000 });
      assert.equal(res.code, 4, res.stderr);
      assert.match(res.stderr, new RegExp(`longer than --max-pause 3 s: connection ${r.id} \\(`));
      assert.match(res.stderr, /resume with:/);
      assert.deepEqual(await tags('rp'), { old: 1 });
    } finally {
      await r.end();
    }
    const again = await runCli(args, { env: env(), timeoutMs: 60_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await tags('rp'), { new: 3000 });
  });
});
