/**
 * The throwaway clusters and the read-only cluster introspection, on real
 * servers: a 3-node Galera cluster and a Spider front with 2 backends, each
 * started by this file (test/run.ts's single server is not used). Skipped,
 * saying why, where galera-4/rsync or mariadb-plugin-spider are missing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { galeraUnavailable, startGaleraCluster, type GaleraCluster } from '../../dev/galera.js';
import { roundRobinPartitions, spiderUnavailable, startSpiderCluster, type SpiderCluster } from '../../dev/spider.js';
import { readGaleraFacts, readShardMap } from '../../src/introspect/cluster.js';
import { distinctBackends } from '../../src/shard/map.js';
import { partitionIndex } from '../../src/shard/partition.js';

const noGalera = galeraUnavailable();
const noSpider = spiderUnavailable();
if (noGalera) process.stderr.write(`clusters.test.ts: Galera tests skipped: ${noGalera}\n`);
if (noSpider) process.stderr.write(`clusters.test.ts: Spider tests skipped: ${noSpider}\n`);

async function scalar(conn: Connection, sql: string, values?: unknown[]): Promise<string> {
  const [rows] = await conn.query(sql, values);
  return String(Object.values((rows as Array<Record<string, unknown>>)[0]!)[0]);
}

describe('Galera: a 3-node throwaway cluster', { skip: noGalera ? `galera-4 or rsync missing: ${noGalera}` : false }, () => {
  let cluster: GaleraCluster;
  const conns: Connection[] = [];
  const open = async (i: number): Promise<Connection> => {
    const c = await cluster.connect(i, { multipleStatements: true });
    c.on('error', () => undefined);
    conns.push(c);
    return c;
  };

  before(async () => {
    const t = Date.now();
    cluster = await startGaleraCluster({ nodes: 3 });
    process.stderr.write(`clusters.test.ts: 3-node Galera cluster up in ${Date.now() - t} ms ${JSON.stringify(cluster.timings)}\n`);
  });
  after(async () => {
    for (const c of conns) await c.end().catch(() => undefined);
    await cluster?.stop();
  });

  test('every node is Synced in a primary component of 3, with its own auto-increment offset', async () => {
    const offsets: number[] = [];
    for (const n of cluster.nodes) {
      const f = await readGaleraFacts(await open(n.index));
      assert.equal(f.wsrepOn, true);
      assert.equal(f.clusterSize, 3);
      assert.equal(f.clusterStatus, 'Primary');
      assert.equal(f.localState, 'Synced');
      assert.equal(f.ready, true);
      assert.equal(f.providerName, 'Galera');
      assert.equal(f.nodeName, `node${n.index + 1}`);
      assert.deepEqual([...f.incomingAddresses].sort(), cluster.nodes.map((x) => `127.0.0.1:${x.port}`).sort());
      assert.equal(f.autoIncrementControl, true);
      assert.equal(f.autoIncrementIncrement, 3);
      offsets.push(f.autoIncrementOffset);
      assert.equal(f.maxWsSize, 2147483647);
      assert.equal(f.maxWsRows, 0);
    }
    assert.deepEqual(offsets.sort(), [1, 2, 3]);
  });

  test('a row written on node1 is read on node3 with wsrep_sync_wait=1', async () => {
    const n1 = await open(0);
    const n3 = await open(2);
    await n1.query('CREATE DATABASE g; CREATE TABLE g.t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB');
    await n1.query("INSERT INTO g.t VALUES (1, 'one')");
    await n3.query('SET SESSION wsrep_sync_wait = 1');
    assert.equal(await scalar(n3, 'SELECT v FROM g.t WHERE id = 1'), 'one');
    assert.equal((await readGaleraFacts(n3)).syncWait, 1);
  });

  test('a killed node rejoins by IST and has what was written while it was down', async () => {
    const n1 = await open(0);
    await cluster.killNode(2);
    assert.equal(cluster.nodes[2]!.running, false);
    // Commits on the two left (it may block until the survivors evict node3, a few seconds).
    await n1.query("INSERT INTO g.t VALUES (2, 'two')");
    const deadline = Date.now() + 30_000;
    while ((await readGaleraFacts(n1)).clusterSize !== 2) {
      assert.ok(Date.now() < deadline, 'node3 evicted within 30 s');
      await new Promise((r) => setTimeout(r, 200));
    }
    await cluster.restartNode(2);
    const n3 = await open(2);
    await n3.query('SET SESSION wsrep_sync_wait = 1');
    assert.equal(await scalar(n3, 'SELECT GROUP_CONCAT(v ORDER BY id) FROM g.t'), 'one,two');
    assert.equal((await readGaleraFacts(n3)).clusterSize, 3);
  });
});

describe('Spider: a front and 2 backends', { skip: noSpider ? `mariadb-plugin-spider missing: ${noSpider}` : false }, () => {
  let spider: SpiderCluster;
  let front: Connection;

  before(async () => {
    const t = Date.now();
    spider = await startSpiderCluster({ backends: 2 });
    process.stderr.write(`clusters.test.ts: Spider front + 2 backends up in ${Date.now() - t} ms\n`);
    front = await spider.connectFront({ multipleStatements: true });
    front.on('error', () => undefined);
  });
  after(async () => {
    await front?.end().catch(() => undefined);
    await spider?.stop();
  });

  test('a HASH table puts each row on the backend its partition rule names', async () => {
    await spider.createSpiderTable({
      db: 's',
      table: 'h',
      definition: 'id BIGINT UNSIGNED NOT NULL PRIMARY KEY, v VARCHAR(10)',
      method: 'HASH',
      expression: 'id',
      partitions: roundRobinPartitions(3, 2),
    });
    const ids = [0, 1, 2, 3, 4, 5, 17, 1000, 4294967296, 9223372036854775807n, 18446744073709551615n].map(String);
    await front.query(`INSERT INTO s.h VALUES ${ids.map((id) => `(${id}, 'x')`).join(', ')}`);
    const map = await readShardMap(front, 's', 'h');
    assert.equal(map.unevaluable, undefined);
    assert.deepEqual(
      map.partitions.map((p) => [p.name, p.backend.server, p.backend.port, p.backend.database, p.backend.table]),
      [
        ['p0', 'b1', spider.backends[0]!.server.port, 's', 'h'],
        ['p1', 'b2', spider.backends[1]!.server.port, 's', 'h'],
        ['p2', 'b1', spider.backends[0]!.server.port, 's', 'h'],
      ],
    );
    assert.equal(distinctBackends(map).length, 2);
    for (const b of spider.backends) {
      const c = await spider.connectBackend(b.index);
      const [rows] = await c.query('SELECT CAST(id AS CHAR) AS id FROM s.h ORDER BY id');
      await c.end();
      const onBackend = (rows as Array<{ id: string }>).map((r) => r.id).sort();
      const expected = ids.filter((id) => map.partitions[partitionIndex(map.rule, [Buffer.from(id)])!]!.backend.server === b.name).sort();
      assert.deepEqual(onBackend, expected, `backend ${b.name}`);
      assert.ok(onBackend.length > 0, `backend ${b.name} holds rows`);
    }
  });

  test('with a backend down the shard map still reads (from SHOW CREATE TABLE); statements needing it fail with 1429', async () => {
    await spider.createSpiderTable({
      db: 's',
      table: 'r',
      definition: 'id INT NOT NULL PRIMARY KEY',
      method: 'RANGE',
      expression: 'id',
      style: 'options',
      partitions: [
        { name: 'lo', backend: 0, values: '100' },
        { name: 'hi', backend: 1, values: 'MAXVALUE' },
      ],
    });
    const upMap = await readShardMap(front, 's', 'r');
    await spider.killBackend(1);
    try {
      const downMap = await readShardMap(front, 's', 'r');
      assert.deepEqual(downMap.partitions, upMap.partitions);
      assert.deepEqual(downMap.rule, upMap.rule);
      // The front's first statement on a pooled connection to the dead backend gets Spider's "Remote MariaDB
      // server has gone away" (12701); later ones cannot connect (1429).
      const errno = async (): Promise<number | undefined> => front.query('SELECT COUNT(*) FROM s.r').then(() => undefined, (e: { errno?: number }) => e.errno);
      assert.ok([1429, 12701].includes((await errno()) ?? 0));
      assert.equal(await errno(), 1429);
      await front.query('INSERT INTO s.r VALUES (5)'); // only the live backend is needed
    } finally {
      await spider.restartBackend(1);
    }
    assert.equal(await scalar(front, 'SELECT COUNT(*) FROM s.r'), '1');
  });
});
