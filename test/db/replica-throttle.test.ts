/**
 * Throttling against a real replica: a primary with its binary log on and a
 * second MariaDB replicating from it, both started here. Stopping the
 * replica's SQL thread makes its lag unknown: the load must pause between
 * chunks (and say so), go on once the thread is started again, and end
 * exact on both servers; a pause that outlasts --max-pause stops resumable.
 * Also: `flatload plan` states the throttles and checks the replica URL;
 * --max-threads-running pauses for other sessions' running statements;
 * --max-rate holds chunks back. With --lag-heartbeat the lag is the age of
 * a pt-heartbeat row the test writes on the primary, read on the replica.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { freePort, type ThrowawayServer } from '../../src/devserver/server.js';
import { runCli } from '../support/cli.js';
import { tableDigest } from '../support/db.js';
import { pollUntil, running } from '../support/poll.js';
import { connectRoot, startReplicaPair, type ReplicaPair } from '../support/replica.js';
import { spawnCli, type Spawned } from '../support/spawn.js';

const ROWS = 20_000;
const DB = 'thr';

interface ThrottleJson {
  pausedSeconds: number;
  pauses: number;
  causes: Array<{ cause: string; seconds: number }>;
  rateWaitSeconds: number;
  rules: string[];
}

let primary: ThrowawayServer;
let replica: ThrowawayServer;
let p: Connection;
let r: Connection;
let dir: string;
let file: string;

const connect = connectRoot;
let pair: ReplicaPair;

/** Resolves with stderr as soon as it matches (or fails at the deadline, or when the load exited first). */
async function stderrShows(s: Spawned, re: RegExp, what: string): Promise<void> {
  let text = '';
  s.child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  await pollUntil(what, () => Promise.resolve(re.test(text)), { process: s, everyMs: 50, timeoutMs: 90_000 });
}

const sqlThread = (state: 'Yes' | 'No'): Promise<void> => pair.sqlThread(state);
/** The replica has applied everything the primary logged so far. */
const caughtUp = (): Promise<void> => pair.caughtUp();

async function freshTable(name: string): Promise<void> {
  await p.query(`DROP TABLE IF EXISTS ${DB}.${name}`);
  await p.query(`CREATE TABLE ${DB}.${name} (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB`);
  await caughtUp();
}

/** The table is exact on both servers: every row of the input, and the same checksum on the replica. */
async function exactOnBoth(name: string): Promise<void> {
  await caughtUp();
  const onPrimary = await tableDigest(p, `${DB}.${name}`);
  assert.equal(onPrimary.count, String(ROWS));
  assert.deepEqual(await tableDigest(r, `${DB}.${name}`), onPrimary);
  const [ref] = await p.query(`SELECT SUM(id) AS s FROM ${DB}.${name}`);
  assert.equal(String((ref as Array<{ s: unknown }>)[0]!.s), String((ROWS * (ROWS + 1)) / 2));
}

const primaryUrl = (): string => `mysql://root@127.0.0.1:${primary.port}/${DB}`;
const replicaUrl = (): string => `mysql://root@127.0.0.1:${replica.port}`;

before(async () => {
  pair = await startReplicaPair();
  ({ primary, replica, p, r } = pair);
  await p.query(`CREATE DATABASE ${DB}`);
  await caughtUp();
  dir = mkdtempSync(join(tmpdir(), 'flatload-replica-'));
  file = join(dir, 'rows.tsv');
  writeFileSync(file, Array.from({ length: ROWS }, (_, i) => `${i + 1}\tvalue ${i + 1}\n`).join(''));
});

after(async () => {
  await pair?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a replica whose SQL thread is stopped', () => {
  test('pauses the load between chunks, which goes on when the thread starts, exact on both servers', { timeout: 180_000 }, async () => {
    await freshTable('lagged');
    await sqlThread('No');
    const s = spawnCli(['load', file, '--table', 'lagged', '--chunk-size', '64KiB', '--jobs', '2', '--replica', replicaUrl(), '--max-lag', '5', '--progress', 'lines', '--json'], { DATABASE_URL: primaryUrl() });
    await stderrShows(s, /paused: replica r1 lag unknown \(SQL thread stopped\)/, 'the load paused for the replica');
    // Paused before its first chunk: nothing is on the primary, and the load waits rather than ending.
    const [c] = await p.query(`SELECT COUNT(*) AS n FROM ${DB}.lagged`);
    assert.equal(String((c as Array<{ n: unknown }>)[0]!.n), '0');
    assert.ok(running(s), 'the load was still waiting when the SQL thread was started');
    await sqlThread('Yes');
    const res = await s.done;
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /resumed after/);
    const report = JSON.parse(res.stdout) as { rows: number; throttle: ThrottleJson };
    assert.equal(report.rows, ROWS);
    assert.ok(report.throttle.pauses >= 1 && report.throttle.pausedSeconds > 0, JSON.stringify(report.throttle));
    assert.deepEqual(report.throttle.causes.map((x) => x.cause), ['replica r1 lag']);
    assert.match(res.stderr, /throttle: paused \d+\.\d s in \d+ pauses? \(replica r1 lag \d+\.\d s\)/);
    await exactOnBoth('lagged');
  });

  test('stopped mid-load, it holds the streams between chunks: no chunk commits until the thread runs again', { timeout: 180_000 }, async () => {
    await freshTable('midway');
    // Paced to about 6 s, so the thread can be stopped while the load is under way.
    const s = spawnCli(['load', file, '--table', 'midway', '--chunk-size', '16KiB', '--jobs', '2', '--max-rate', '60KB/s', '--replica', replicaUrl(), '--max-lag', '5', '--progress', 'lines', '--json'], { DATABASE_URL: primaryUrl() });
    const paused = stderrShows(s, /paused: replica r1 lag unknown \(SQL thread stopped\)/, 'the load paused for the replica');
    const count = async (): Promise<number> => Number((((await p.query(`SELECT COUNT(*) AS n FROM ${DB}.midway`))[0]) as Array<{ n: unknown }>)[0]!.n);
    await pollUntil('rows committed', async () => (await count()) > 0, { process: s, everyMs: 25 });
    await sqlThread('No');
    await paused;
    assert.ok(running(s), 'the load was still running when it paused');
    // A chunk already on its way when the pause began may still commit; after that, nothing does.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const held = await count();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal(await count(), held, 'no chunk committed while paused');
    assert.ok(held < ROWS, `the load was paused part way (${held} rows)`);
    await sqlThread('Yes');
    const res = await s.done;
    assert.equal(res.code, 0, res.stderr);
    assert.equal((JSON.parse(res.stdout) as { rows: number }).rows, ROWS);
    await exactOnBoth('midway');
  });

  test('past --max-pause the load stops resumable (exit 4), naming the replica; rerun once it replicates, it completes', { timeout: 180_000 }, async () => {
    await freshTable('stuck');
    await sqlThread('No');
    const args = ['load', file, '--table', 'stuck', '--chunk-size', '64KiB', '--replica', `east=${replicaUrl()}`, '--max-pause', '2s', '--progress', 'none'];
    const first = await runCli(args, { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(first.code, 4, first.stderr);
    assert.match(first.stderr, /paused \d+(\.\d)? s, longer than --max-pause 2 s: replica east lag unknown \(SQL thread stopped\)/);
    assert.match(first.stderr, /resume with: .*load .*--replica east=mysql:\/\/root@127\.0\.0\.1:\d+/);
    await sqlThread('Yes');
    const again = await runCli(args, { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(again.code, 0, again.stderr);
    await exactOnBoth('stuck');
  });
});

describe('an export', () => {
  test('one throttle holds every table, and the export completes exact on both servers', { timeout: 180_000 }, async () => {
    await freshTable('exp_a');
    await freshTable('exp_b');
    const exp = mkdtempSync(join(dir, 'export-'));
    writeFileSync(join(exp, `${DB}.exp_a.tsv`), readFileSync(file));
    writeFileSync(join(exp, `${DB}.exp_b.tsv`), readFileSync(file));
    await sqlThread('No');
    const s = spawnCli(['load', exp, '--chunk-size', '64KiB', '--replica', replicaUrl(), '--progress', 'lines', '--json'], { DATABASE_URL: primaryUrl() });
    await stderrShows(s, /paused: replica r1 lag unknown \(SQL thread stopped\)/, 'the export paused for the replica');
    assert.ok(running(s), 'the export was still waiting when the SQL thread was started');
    await sqlThread('Yes');
    const res = await s.done;
    assert.equal(res.code, 0, res.stderr);
    const report = JSON.parse(res.stdout) as { totals: { rows: number }; throttle: ThrottleJson };
    assert.equal(report.totals.rows, 2 * ROWS);
    assert.ok(report.throttle.pauses >= 1 && report.throttle.pausedSeconds > 0, JSON.stringify(report.throttle));
    await exactOnBoth('exp_a');
    await exactOnBoth('exp_b');
  });
});

describe('flatload plan', () => {
  test('states each throttle and what the replica said', { timeout: 60_000 }, async () => {
    await freshTable('planned');
    const res = await runCli(['plan', file, '--table', 'planned', '--replica', replicaUrl(), '--max-lag', '5', '--max-rate', '20MB/s', '--max-threads-running', '40'], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^throttle:$/m);
    assert.match(res.stdout, /--max-rate 20MB\/s: chunks paced to 20\.0 MB\/s across all streams/);
    assert.match(res.stdout, new RegExp(`--replica r1 \\(127\\.0\\.0\\.1:${replica.port}\\): replicating, 0 s behind now \\(lag from Seconds_Behind_Master\\); streams pause between chunks while its lag is over --max-lag 5 s or unknown`));
    assert.match(res.stdout, /--max-threads-running 40: streams pause/);
    assert.match(res.stdout, /--max-pause 30 min: a pause longer than that stops the load, resumable \(exit 4\)/);
  });

  test('a server that is not a replica is refused (exit 2), one that cannot be reached is a connection error (exit 6)', { timeout: 60_000 }, async () => {
    const notReplica = await runCli(['plan', file, '--table', 'planned', '--replica', `mysql://root@127.0.0.1:${primary.port}`], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(notReplica.code, 2, notReplica.stderr);
    assert.match(notReplica.stderr, /--replica r1 \(127\.0\.0\.1:\d+\) is not a replica/);
    const closed = await freePort();
    const unreachable = await runCli(['load', file, '--table', 'planned', '--replica', `mysql://root@127.0.0.1:${closed}`], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(unreachable.code, 6, unreachable.stderr);
    assert.match(unreachable.stderr, new RegExp(`127\\.0\\.0\\.1:${closed}`));
    // Refused before anything changed: no rows, no bookkeeping job.
    const [c] = await p.query(`SELECT COUNT(*) AS n FROM ${DB}.planned`);
    assert.equal(String((c as Array<{ n: unknown }>)[0]!.n), '0');
    const bad = await runCli(['load', file, '--table', 'planned', '--max-rate', '20M/s'], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--max-rate: "20M\/s" has an unknown unit "M"/);
  });
});

describe('--max-threads-running and --max-rate', () => {
  test('other sessions running statements pause the load until they end', { timeout: 120_000 }, async () => {
    await freshTable('busy');
    const sleepers = await Promise.all([connect(primary), connect(primary)]);
    const sleeping = sleepers.map((c) => c.query('SELECT SLEEP(120)').catch(() => undefined));
    try {
      const s = spawnCli(['load', file, '--table', 'busy', '--chunk-size', '64KiB', '--max-threads-running', '1', '--progress', 'lines', '--json'], { DATABASE_URL: primaryUrl() });
      await stderrShows(s, /paused: Threads_running [2-9]\d* \(flatload's own excluded\) over 1/, 'the load paused for the running statements');
      assert.ok(running(s), 'the load was still waiting when the statements were killed');
      for (const c of sleepers) await p.query(`KILL QUERY ${c.threadId}`);
      const res = await s.done;
      assert.equal(res.code, 0, res.stderr);
      const report = JSON.parse(res.stdout) as { rows: number; throttle: ThrottleJson };
      assert.equal(report.rows, ROWS);
      assert.deepEqual(report.throttle.causes.map((x) => x.cause), ['Threads_running']);
    } finally {
      // Ended however the test went: a sleeper left running would hold its connection for two minutes.
      for (const c of sleepers) await p.query(`KILL QUERY ${c.threadId}`).catch(() => undefined);
      await Promise.all(sleeping);
      for (const c of sleepers) await c.end().catch(() => undefined);
    }
    await exactOnBoth('busy');
  });

  test('--max-rate holds chunks back and the report says for how long', { timeout: 120_000 }, async () => {
    await freshTable('paced');
    // About 20 chunks of 16 KiB at 100 KB/s: the streams wait for the rate most of the time.
    const res = await runCli(['load', file, '--table', 'paced', '--chunk-size', '16KiB', '--jobs', '2', '--max-rate', '100KB/s', '--progress', 'none', '--json'], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(res.code, 0, res.stderr);
    const report = JSON.parse(res.stdout) as { rows: number; inputBytes: number; throttle: ThrottleJson };
    assert.equal(report.rows, ROWS);
    // Every chunk but the first waits for those before it to be paid for at the rate: far more than a second in all.
    assert.ok(report.throttle.rateWaitSeconds > 1, JSON.stringify(report.throttle));
    assert.equal(report.throttle.pauses, 0);
    await exactOnBoth('paced');
  });
});

/**
 * What pt-heartbeat --update --utc does every second, every 200 ms: the
 * primary's row gets the UTC time, ISO 8601 with microseconds. Bounded: it
 * stops by itself after three minutes, whatever the test did.
 */
async function heartbeatWriter(table: string, serverId: string): Promise<{ hold(on: boolean): void; stop(): Promise<void> }> {
  const conn = await connect(primary);
  let stopped = false;
  let held = false;
  const end = Date.now() + 180_000;
  const loop = (async (): Promise<void> => {
    while (!stopped && Date.now() < end) {
      if (!held) await conn.query(`UPDATE ${table} SET ts = DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%f') WHERE server_id = ?`, [serverId]);
      await sleep(200);
    }
  })();
  return {
    hold: (on) => void (held = on),
    stop: async () => {
      stopped = true;
      await loop;
      await conn.end();
    },
  };
}

describe('--lag-heartbeat: the lag is the age of the primary\'s pt-heartbeat row on the replica', () => {
  const HB = `${DB}.heartbeat`;
  let writer: Awaited<ReturnType<typeof heartbeatWriter>>;
  let serverId: string;
  /** The heartbeat row's ts on a server. */
  const tsOn = async (c: Connection): Promise<string> => String(((await c.query(`SELECT ts FROM ${HB} WHERE server_id = ?`, [serverId]))[0] as Array<{ ts: unknown }>)[0]!.ts);

  before(async () => {
    // pt-heartbeat --create-table's definition.
    await p.query(`CREATE TABLE ${HB} (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY, file varchar(255) DEFAULT NULL, position bigint unsigned DEFAULT NULL, relay_master_log_file varchar(255) DEFAULT NULL, exec_master_log_pos bigint unsigned DEFAULT NULL)`);
    serverId = String(((await p.query('SELECT @@server_id AS id'))[0] as Array<{ id: unknown }>)[0]!.id);
    await p.query(`INSERT INTO ${HB} (ts, server_id) VALUES (DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%f'), ?)`, [serverId]);
    // Another master's row, further back: only the primary's own counts.
    await p.query(`INSERT INTO ${HB} (ts, server_id) VALUES ('2020-01-01T00:00:00.000000', 4242)`);
    await caughtUp();
    writer = await heartbeatWriter(HB, serverId);
  });

  after(async () => {
    await writer?.stop();
  });

  test('flatload plan names the lag source and reads it: a fraction of a second behind', { timeout: 60_000 }, async () => {
    await freshTable('hb_planned');
    const res = await runCli(['plan', file, '--table', 'hb_planned', '--replica', replicaUrl(), '--max-lag', '5', '--lag-heartbeat', HB], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(res.code, 0, res.stderr);
    const m = new RegExp(`--replica r1 \\(127\\.0\\.0\\.1:${replica.port}\\): replicating, (\\d+(?:\\.\\d)?) s behind now \\(lag from heartbeat ${DB}\\.heartbeat \\(now, UTC, minus its ts for server_id ${serverId}\\)\\); streams pause`).exec(res.stdout);
    assert.ok(m, res.stdout);
    // Written every 200 ms and replicated at once: well under two seconds (the other master's row is years old).
    assert.ok(Number(m[1]) < 2, m[0]);
  });

  test('the SQL thread stopped: the load pauses while the heartbeat falls behind, goes on when it starts, exact on both servers', { timeout: 180_000 }, async () => {
    await freshTable('hb_lagged');
    await sqlThread('No');
    const s = spawnCli(['load', file, '--table', 'hb_lagged', '--chunk-size', '64KiB', '--jobs', '2', '--replica', replicaUrl(), '--max-lag', '1', '--lag-heartbeat', HB, '--progress', 'lines', '--json'], { DATABASE_URL: primaryUrl() });
    await stderrShows(s, /paused: replica r1 lag unknown \(SQL thread stopped\)/, 'the load paused for the replica');
    // The replica's heartbeat stays where it was while the primary's moves on.
    const stale = await tsOn(r);
    await pollUntil('the primary\'s heartbeat moved on past the replica\'s', async () => (await tsOn(p)) > stale, { process: s, everyMs: 100, timeoutMs: 10_000 });
    assert.equal(await tsOn(r), stale);
    const [c] = await p.query(`SELECT COUNT(*) AS n FROM ${DB}.hb_lagged`);
    assert.equal(String((c as Array<{ n: unknown }>)[0]!.n), '0');
    assert.ok(running(s), 'the load was still waiting when the SQL thread was started');
    await sqlThread('Yes');
    const res = await s.done;
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /resumed after/);
    const report = JSON.parse(res.stdout) as { rows: number; throttle: ThrottleJson };
    assert.equal(report.rows, ROWS);
    assert.ok(report.throttle.pauses >= 1 && report.throttle.pausedSeconds > 0, JSON.stringify(report.throttle));
    await exactOnBoth('hb_lagged');
  });

  test('a heartbeat that stops arriving pauses the load by its age, though Seconds_Behind_Master is 0; it goes on when the heartbeat does', { timeout: 180_000 }, async () => {
    await freshTable('hb_stale');
    writer.hold(true);
    try {
      // Over --max-lag 1 before the first chunk; the replica itself applies everything (its SQL thread runs).
      await sleep(1600);
      const s = spawnCli(['load', file, '--table', 'hb_stale', '--chunk-size', '64KiB', '--jobs', '2', '--replica', replicaUrl(), '--max-lag', '1', '--lag-heartbeat', HB, '--progress', 'lines', '--json'], { DATABASE_URL: primaryUrl() });
      await stderrShows(s, /paused: replica r1 lag \d+(\.\d)? s/, 'the load paused for the heartbeat\'s age');
      const [st] = await r.query('SHOW SLAVE STATUS');
      assert.equal(String((st as Array<{ Seconds_Behind_Master: unknown }>)[0]!.Seconds_Behind_Master), '0');
      assert.ok(running(s), 'the load was still waiting when the heartbeat was written again');
      writer.hold(false);
      const res = await s.done;
      assert.equal(res.code, 0, res.stderr);
      const report = JSON.parse(res.stdout) as { rows: number; throttle: ThrottleJson };
      assert.equal(report.rows, ROWS);
      assert.ok(report.throttle.pauses >= 1, JSON.stringify(report.throttle));
      assert.deepEqual(report.throttle.causes.map((x) => x.cause), ['replica r1 lag']);
    } finally {
      writer.hold(false);
    }
    await exactOnBoth('hb_stale');
  });

  test('a heartbeat table the replica lacks, or one without the primary\'s row, is refused before anything changes (exit 7); a ts an hour ahead too (exit 2)', { timeout: 60_000 }, async () => {
    await freshTable('hb_refused');
    const missing = await runCli(['load', file, '--table', 'hb_refused', '--replica', replicaUrl(), '--lag-heartbeat', `${DB}.no_heartbeat`], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(missing.code, 7, missing.stderr);
    assert.match(missing.stderr, new RegExp(`--lag-heartbeat ${DB}\\.no_heartbeat on --replica r1 \\(127\\.0\\.0\\.1:${replica.port}\\): no such table`));
    await p.query(`CREATE TABLE ${DB}.other_heartbeat LIKE ${HB}`);
    await p.query(`INSERT INTO ${DB}.other_heartbeat (ts, server_id) VALUES ('2026-12-04T18:00:00.000000', 4242)`);
    await caughtUp();
    const noRow = await runCli(['plan', file, '--table', 'hb_refused', '--replica', replicaUrl(), '--lag-heartbeat', `${DB}.other_heartbeat`], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(noRow.code, 7, noRow.stderr);
    assert.match(noRow.stderr, new RegExp(`--lag-heartbeat ${DB}\\.other_heartbeat on --replica r1 .*: no row for the primary's server_id ${serverId}`));
    // A ts an hour ahead is pt-heartbeat writing local time east of UTC: it would never pause the load, so it is refused (exit 2).
    await p.query(`INSERT INTO ${DB}.other_heartbeat (ts, server_id) VALUES (DATE_FORMAT(UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, '%Y-%m-%dT%H:%i:%s.%f'), ?)`, [serverId]);
    await caughtUp();
    const ahead = await runCli(['load', file, '--table', 'hb_refused', '--replica', replicaUrl(), '--lag-heartbeat', `${DB}.other_heartbeat`], { env: { DATABASE_URL: primaryUrl() } });
    assert.equal(ahead.code, 2, ahead.stderr);
    assert.match(ahead.stderr, /other_heartbeat is 3[56]\d\d s ahead of UTC \(pt-heartbeat without --utc\?\)/);
    const [c] = await p.query(`SELECT COUNT(*) AS n FROM ${DB}.hb_refused`);
    assert.equal(String((c as Array<{ n: unknown }>)[0]!.n), '0');
  });
});
