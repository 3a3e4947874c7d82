/**
 * flatload against a real 3-node Galera cluster (started by this file, with
 * wsrep_max_ws_size = 1 MiB so a plain LOAD DATA of the file fails): chunks
 * sized under the limit, a node killed mid-load, refusals. The reference is
 * the same file loaded by the single test server's own LOAD DATA.
 */
import assert from 'node:assert/strict';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { galeraUnavailable, startGaleraCluster, type GaleraCluster } from '../../dev/galera.js';
import { runCli } from '../support/cli.js';
import { adminConnection, tableDigest } from '../support/db.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli, type Spawned } from '../support/spawn.js';

const noGalera = galeraUnavailable();
if (noGalera) process.stderr.write(`galera.test.ts: skipped: ${noGalera}\n`);

const ROWS = 100_000;
const WS_LIMIT = 1 << 20;
const DB = 'gl';

describe('flatload on a 3-node Galera cluster', { skip: noGalera ? `galera-4 or rsync missing: ${noGalera}` : false }, () => {
  let cluster: GaleraCluster;
  let dir: string;
  let file: string;
  let reference: { count: string; checksum: string };
  const conns = new Map<number, Connection>();

  /** A connection to node i that reads everything the cluster committed before the read. */
  const node = async (i: number): Promise<Connection> => {
    let c = conns.get(i);
    if (!c) {
      c = await cluster.connect(i, { multipleStatements: true, database: DB });
      c.on('error', () => undefined);
      await c.query('SET SESSION wsrep_sync_wait = 1');
      conns.set(i, c);
    }
    return c;
  };
  const forget = async (i: number): Promise<void> => {
    const c = conns.get(i);
    conns.delete(i);
    c?.destroy();
  };
  const url = (nodes = cluster.nodes): string => `mysql://root@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/${DB}`;
  const createTable = async (name: string, engine = 'InnoDB', definition = ddl('user_summary')): Promise<void> => {
    const c = await node(0);
    await c.query(`DROP TABLE IF EXISTS ${name}`);
    await c.query(`${definition.replace(/CREATE TABLE \w+/, `CREATE TABLE ${name}`)} ENGINE=${engine}`);
  };
  const digestsOnRunningNodes = async (table: string): Promise<Array<{ count: string; checksum: string }>> => {
    const out = [];
    for (const n of cluster.nodes.filter((x) => x.running)) out.push(await tableDigest(await node(n.index), table));
    return out;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flatload-galera-'));
    file = join(dir, 'us.tsv');
    await generateToFile(file, { table: 'user_summary', rows: ROWS, seed: 14 });
    // The reference: the single test server's own LOAD DATA of the same file.
    const admin = await adminConnection();
    try {
      await admin.query(`CREATE DATABASE IF NOT EXISTS galera_ref`);
      await admin.query('DROP TABLE IF EXISTS galera_ref.us');
      await admin.query(`${ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE galera_ref.us')} ENGINE=InnoDB`);
      await admin.query(`LOAD DATA INFILE ? INTO TABLE galera_ref.us ${loadDataOptions('tsv')}`, [file]);
      reference = await tableDigest(admin, 'galera_ref.us');
      await admin.query('DROP DATABASE galera_ref');
    } finally {
      await admin.end();
    }
    assert.equal(reference.count, String(ROWS));
    const t = Date.now();
    cluster = await startGaleraCluster({ nodes: 3, wsrepMaxWsSize: WS_LIMIT });
    process.stderr.write(`galera.test.ts: cluster up in ${Date.now() - t} ms\n`);
    const c0 = await cluster.connect(0);
    await c0.query(`CREATE DATABASE ${DB}`);
    await c0.end();
  });
  after(async () => {
    for (const i of [...conns.keys()]) await forget(i);
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a plain LOAD DATA of the file is over wsrep_max_ws_size (1105) and commits nothing', async () => {
    await createTable('plain');
    const c = await cluster.connect(0, { database: DB, infileStreamFactory: () => createReadStream(file) });
    c.on('error', () => undefined);
    await assert.rejects(c.query(`LOAD DATA LOCAL INFILE 'x' INTO TABLE plain ${loadDataOptions('tsv')}`), (e: { errno?: number }) => e.errno === 1105);
    await c.end();
    assert.equal((await tableDigest(await node(2), 'plain')).count, '0');
  });

  test('flatload sizes chunks under the limit: every node holds exactly the reference', async () => {
    await createTable('us');
    const plan = await runCli(['plan', file, '--url', url(), '--table', 'us']);
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /Galera node node1 of cluster flatload: 3 nodes, Primary, Synced/);
    assert.match(plan.stdout, /wsrep_max_ws_size=1048576 bytes .*chunks are cut at 436906 bytes/);
    const r = await runCli(['load', file, '--url', url(), '--table', 'us', '--progress', 'none', '--json', '--verify'], { timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      chunkSizeBytes: number;
      chunks: number;
      rows: number;
      cluster: { nodes: string[]; nodesUsed: string[]; nodesLost: string[]; clusterSize: number; flowControlPausedMs: number | null; verify: Array<{ node: string; count: string; checksum: string }> };
    };
    assert.ok(report.chunkSizeBytes * 1.2 < WS_LIMIT, `chunk ${report.chunkSizeBytes} bytes fits the 1 MiB write-set`);
    assert.ok(report.chunks >= 8, `${report.chunks} chunks`);
    assert.equal(report.rows, ROWS);
    const first = `127.0.0.1:${cluster.nodes[0]!.port}`;
    assert.deepEqual(report.cluster.nodesUsed, [first], 'one node: the planner does not spread');
    assert.deepEqual(report.cluster.nodesLost, []);
    assert.equal(report.cluster.clusterSize, 3);
    assert.equal(typeof report.cluster.flowControlPausedMs, 'number');
    assert.deepEqual(
      report.cluster.verify.map((d) => [d.node, d.count, d.checksum]),
      cluster.nodes.map((n) => [`127.0.0.1:${n.port}`, reference.count, reference.checksum]),
    );
    for (const d of await digestsOnRunningNodes('us')) assert.deepEqual(d, reference);
  });

  test('pre-assigned surrogate keys: dense 1..N on every node, and the nodes number later rows past them', async () => {
    const u3 = join(dir, 'u3.tsv');
    const n = 20_000;
    await generateToFile(u3, { table: 'user3', rows: n, seed: 3 });
    await createTable('u3', 'InnoDB', ddl('user3'));
    const r = await runCli(['load', u3, '--url', url(), '--table', 'u3', '--progress', 'none', '--json'], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { plan: { surrogateKey: { kind: string } } }).plan.surrogateKey.kind, 'pre-assign');
    for (const x of cluster.nodes) {
      const [rows] = await (await node(x.index)).query('SELECT COUNT(*) AS c, MIN(id) AS lo, MAX(id) AS hi, COUNT(DISTINCT id) AS d FROM u3');
      assert.deepEqual({ ...(rows as Array<Record<string, unknown>>)[0] }, { c: n, lo: 1, hi: n, d: n }, `node${x.index + 1}`);
    }
    // A row a node numbers itself afterwards lands past the loaded keys, in that node's offset.
    const c2 = await node(1);
    await c2.query("INSERT INTO u3 (user_id, weight, level, beat_rate, level_num) VALUES (1, '1', 'x', 'x', 1)");
    const [last] = await c2.query('SELECT LAST_INSERT_ID() AS id');
    assert.ok(Number((last as Array<{ id: number }>)[0]!.id) > n);
  });

  test('wsrep_max_ws_rows set: chunks stay under half of it, and the load is exact', async () => {
    const small = join(dir, 'us20k.tsv');
    await generateToFile(small, { table: 'user_summary', rows: 20_000, seed: 5 });
    await createTable('rowcap');
    const setRows = async (n: number): Promise<void> => {
      for (const x of cluster.nodes.filter((y) => y.running)) await (await node(x.index)).query(`SET GLOBAL wsrep_max_ws_rows = ${n}`);
    };
    await setRows(1000);
    try {
      const r = await runCli(['load', small, '--url', url(), '--table', 'rowcap', '--progress', 'none', '--json'], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { rows: number; chunks: number; perChunk?: unknown; plan: { chunkMaxRecords: number | null; reasons: string[] } };
      assert.equal(report.rows, 20_000);
      assert.equal(report.plan.chunkMaxRecords, 499);
      assert.ok(report.chunks >= 20_000 / 1000, `${report.chunks} chunks of under 1000 rows`);
      assert.ok(report.plan.reasons.some((x) => /at most 499 records \(half of wsrep_max_ws_rows=1000/.test(x)));
    } finally {
      await setRows(0);
    }
    const counts = await digestsOnRunningNodes('rowcap');
    assert.ok(counts.every((d) => d.count === '20000' && d.checksum === counts[0]!.checksum), JSON.stringify(counts));
  });

  test('MyISAM and a table without a key are refused, naming the reason', async () => {
    await createTable('my', 'MyISAM');
    const m = await runCli(['load', file, '--url', url(), '--table', 'my', '--progress', 'none']);
    assert.equal(m.code, 7, m.stderr);
    assert.match(m.stderr, /ENGINE=MYISAM on a Galera node .*only InnoDB is replicated/);
    await createTable('nokey', 'InnoDB', 'CREATE TABLE nokey (user_id BIGINT, weight INT, level INT, beat_rate INT, level_num INT)');
    const k = await runCli(['load', file, '--url', url(), '--table', 'nokey', '--progress', 'none']);
    assert.equal(k.code, 7, k.stderr);
    assert.match(k.stderr, /no PRIMARY KEY and no UNIQUE NOT NULL key/);
    assert.equal((await tableDigest(await node(1), 'my')).count, '0');
  });

  /** Waits until node i holds at least `rows` rows of the table (read with wsrep_sync_wait=1), while the load runs. */
  const waitRows = async (i: number, table: string, rows: number, load: Spawned): Promise<void> => {
    const watcher = await node(i);
    await pollUntil(`${table} reached ${rows} rows`, async () => Number((await tableDigest(watcher, table)).count) >= rows, { process: load, everyMs: 50 });
  };

  test('a second run of the same load through another node stops (exit 8): the job is held cluster-wide, not by a node-local GET_LOCK', async () => {
    await createTable('twice');
    const args = (u: string): string[] => ['load', file, '--url', u, '--table', 'twice', '--chunk-size', '64KiB', '--jobs', '1', '--progress', 'none'];
    // The first is paced to about 5 s: unpaced, its 100,000 rows could all land before the second process had
    // started (seen once in CI), and both exited 0.
    const first = spawnCli([...args(url()), '--max-rate', '20000rows/s'], {});
    await waitRows(1, 'twice', 1, first);
    const second = await runCli(args(url([cluster.nodes[1]!, cluster.nodes[2]!])));
    assert.equal(second.code, 8, second.stderr);
    assert.match(second.stderr, /already running: job \w+ is held by .* pid \d+ \(its lease on the cluster/);
    const r = await first.done;
    assert.equal(r.code, 0, r.stderr);
    for (const d of await digestsOnRunningNodes('twice')) assert.deepEqual(d, reference);
  });

  test('a swap of the same table from another input through another node stops (exit 8): the table is held cluster-wide', async () => {
    await createTable('swapped');
    // Another input: the first 1,000 lines of the file.
    const other = join(dir, 'us-head.tsv');
    writeFileSync(other, readFileSync(file, 'utf8').split('\n').slice(0, 1000).join('\n') + '\n');
    const args = (f: string, u: string): string[] => ['load', f, '--url', u, '--table', 'swapped', '--mode', 'swap', '--chunk-size', '64KiB', '--jobs', '1', '--progress', 'none'];
    // Paced, so the second starts while the first loads its shadow.
    const first = spawnCli([...args(file, url()), '--max-rate', '20000rows/s'], {});
    const watcher = await node(1);
    const shadowRows = async (): Promise<number> => {
      const [t] = await watcher.query("SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'swapped__flatload_new'", [DB]);
      return Number((t as Array<{ n: unknown }>)[0]!.n) === 0 ? 0 : Number((await tableDigest(watcher, 'swapped__flatload_new')).count);
    };
    await pollUntil('the first swap\'s rows arriving in its shadow', async () => (await shadowRows()) > 0, { process: first, everyMs: 50 });
    const second = await runCli(args(other, url([cluster.nodes[1]!, cluster.nodes[2]!])));
    assert.equal(second.code, 8, second.stderr);
    assert.match(second.stderr, /another load is replacing gl\.swapped .*table gl\.swapped is held by .* pid \d+ \(its lease on the cluster/);
    const r = await first.done;
    assert.equal(r.code, 0, r.stderr);
    for (const d of await digestsOnRunningNodes('swapped')) assert.deepEqual(d, reference);
  });

  test('writes on another node to the keys being loaded conflict (1213) and are retried: no row lost or doubled', async () => {
    await createTable('conflict');
    // The load sorts the input by user_id (32 KiB chunks leave room under the 1 MiB write-set limit for key order),
    // so the chunks in flight hold the keys just above the largest loaded.
    const keys = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => BigInt(l.slice(0, l.indexOf('\t'))))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const aborts = async (): Promise<number> => {
      const [rows] = await (await node(0)).query("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')");
      return (rows as Array<{ Value: string }>).reduce((a, r) => a + Number(r.Value), 0);
    };
    const before = await aborts();
    const s = spawnCli(['load', file, '--url', url(), '--table', 'conflict', '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'lines'], {});
    // On node 2: insert a key of the file and delete it again in one transaction. It leaves nothing behind,
    // but its write-set carries the key, so a chunk loading that key on node 1 at the same time conflicts.
    const other = await cluster.connect(1, { database: DB, supportBigNumbers: true, bigNumberStrings: true });
    other.on('error', () => undefined);
    let running = true;
    void s.done.then(() => (running = false));
    let i = 0;
    let frontier = 0;
    // A handful of conflicts proves the point; many more could make one chunk run out of its 5 attempts.
    while (running && (i % 20 !== 0 || (await aborts()) - before < 6)) {
      if (i % 20 === 0) {
        const [m] = await other.query('SELECT MAX(user_id) AS m FROM conflict');
        const max = (m as Array<{ m: string | null }>)[0]!.m;
        if (max !== null) {
          const top = BigInt(max);
          while (frontier < keys.length && keys[frontier]! <= top) frontier++;
        }
      }
      const k = keys[Math.min(keys.length - 1, frontier + ((i++ * 97) % 3500))]!.toString();
      await other.query('BEGIN');
      await other
        .query("INSERT INTO conflict VALUES (?, 1, 'x', 'x', 1)", [k])
        .then(() => other.query('DELETE FROM conflict WHERE user_id = ?', [k]))
        .then(() => other.query('COMMIT'))
        .catch(() => other.query('ROLLBACK').catch(() => undefined));
    }
    await other.end();
    const r = await s.done;
    assert.equal(r.code, 0, r.stderr);
    const conflicts = (await aborts()) - before;
    process.stderr.write(`galera.test.ts: ${i} conflicting transactions on node 2; ${conflicts} certification failures or brute-force aborts on node 1; ${(r.stderr.match(/retry/gi) ?? []).length} retries reported\n`);
    assert.ok(conflicts > 0, 'some chunk conflicted with a write from node 2');
    for (const d of await digestsOnRunningNodes('conflict')) assert.deepEqual(d, reference);
  });

  test('every node of the list gone mid-load: stops resumable (exit 4); the rerun through the others finishes exactly', async () => {
    await createTable('gone');
    // flatload is given node 3 alone, so killing it leaves it no node.
    const only3 = url([cluster.nodes[2]!]);
    const args = (u: string): string[] => ['load', file, '--url', u, '--table', 'gone', '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none'];
    const s = spawnCli(args(only3), {});
    await waitRows(0, 'gone', ROWS / 4, s);
    await forget(2);
    await cluster.killNode(2);
    const killedAt = Date.now();
    const r = await s.done;
    const stoppedMs = Date.now() - killedAt;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /resume with: /);
    const partial = Number((await tableDigest(await node(0), 'gone')).count);
    assert.ok(partial > 0 && partial < ROWS, `${partial} rows before the rerun`);
    // The rerun goes through nodes 1 and 2; the dead run's lease is taken over (its process is gone).
    const rerunAt = Date.now();
    const again = await runCli(args(url([cluster.nodes[0]!, cluster.nodes[1]!])), { timeoutMs: 150_000 });
    process.stderr.write(`galera.test.ts: every node gone: flatload stopped ${stoppedMs} ms after the kill; the rerun took ${Date.now() - rerunAt} ms\n`);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /resuming job/);
    for (const d of await digestsOnRunningNodes('gone')) assert.deepEqual(d, reference);
    await cluster.restartNode(2);
    assert.deepEqual(await tableDigest(await node(2), 'gone'), reference);
  });

  test('kill -9 of the node flatload loads through, mid-load: the load moves on and lands exactly once', async () => {
    await createTable('killed');
    const s = spawnCli(['load', file, '--url', url(), '--table', 'killed', '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none', '--json'], {});
    await waitRows(1, 'killed', ROWS / 4, s);
    await forget(0);
    await cluster.killNode(0);
    const killedAt = Date.now();
    const r = await s.done;
    process.stderr.write(`galera.test.ts: node killed mid-load: flatload finished ${Date.now() - killedAt} ms after the kill\n`);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { rows: number; cluster?: { nodesUsed: string[]; nodesLost: string[] } };
    assert.equal(report.rows, ROWS);
    assert.deepEqual(report.cluster?.nodesLost, [`127.0.0.1:${cluster.nodes[0]!.port}`]);
    assert.match(r.stderr, new RegExp(`Galera node 127\\.0\\.0\\.1:${cluster.nodes[0]!.port} refused a connection or is not ready: new connections go to 127\\.0\\.0\\.1:${cluster.nodes[1]!.port}`));
    for (const d of await digestsOnRunningNodes('killed')) assert.deepEqual(d, reference);
    // The killed node rejoins (IST) with the same rows.
    await cluster.restartNode(0);
    assert.deepEqual(await tableDigest(await node(0), 'killed'), reference);
  });
});

