/**
 * Resuming on a Galera cluster that lost two of its three nodes: the load is
 * killed mid-way, two nodes die, the survivor is bootstrapped as a new
 * Primary Component, and the same command (the dead nodes first in its list)
 * resumes through the survivor. The table's node-local facts (creation
 * time, InnoDB table id) differ between the node that started the load and
 * the one that finishes it, as they do between any two nodes that did not
 * live the same history; the resume and the "already loaded" check must not
 * take that for a re-created table.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { galeraUnavailable, startGaleraCluster, type GaleraCluster } from '../../dev/galera.js';
import { runCli } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

const noGalera = galeraUnavailable();
const ROWS = 200_000;
const DB = 'gr';

async function value(c: Connection, sql: string, params: unknown[] = []): Promise<string | null> {
  const [rows] = await c.query(sql, params);
  const v = Object.values((rows as Array<Record<string, string | number | null>>)[0] ?? {})[0];
  return v === null || v === undefined ? null : String(v);
}

/** The facts a node keeps of its own copy of a table (they differ from node to node). */
async function nodeLocalFacts(c: Connection, table: string): Promise<string> {
  const created = await value(c, 'SELECT CREATE_TIME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [DB, table]);
  const id = await value(c, 'SELECT TABLE_ID FROM information_schema.INNODB_SYS_TABLES WHERE NAME = ?', [`${DB}/${table}`]);
  return `${created} ${id}`;
}

describe('Galera: a load resumes after losing two of three nodes and re-bootstrapping', { skip: noGalera ? `galera-4 or rsync missing: ${noGalera}` : false }, () => {
  let cluster: GaleraCluster;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flatload-galera-resume-'));
    cluster = await startGaleraCluster({ nodes: 3 });
    const c = await cluster.connect(0);
    await c.query(`CREATE DATABASE ${DB}`);
    await c.end();
  });
  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('killed mid-load, two nodes killed, the survivor bootstrapped: the same command finishes it, and a rerun through another node finds it done', { timeout: 400_000 }, async () => {
    const n1 = await cluster.connect(0, { database: DB, multipleStatements: true });
    n1.on('error', () => undefined);
    // node1 lives a history of its own (a node-local table, as maintenance with wsrep_on=OFF leaves): its InnoDB table ids
    // run ahead of the other nodes', as they do on any cluster whose nodes did not all see the same DDL.
    await n1.query('SET SESSION wsrep_on = OFF; CREATE TABLE node_local (i INT) ENGINE=InnoDB; DROP TABLE node_local; SET SESSION wsrep_on = ON');
    await n1.query('CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name VARCHAR(30) NOT NULL) ENGINE=InnoDB');
    let content = '';
    for (let i = 0; i < ROWS; i++) content += `${i}\tname ${i}\n`;
    const file = join(dir, 't.tsv');
    writeFileSync(file, content);

    // Connections go to the first node of the list: node3, which dies below.
    const [a, b, c] = cluster.nodes.map((n) => `127.0.0.1:${n.port}`);
    const url = `mysql://root@${c},${b},${a}/${DB}`;
    const args = ['load', file, '--url', url, '--table', 't', '--chunk-size', '64KiB', '--jobs', '1', '--progress', 'none', '--skip-size-report'];
    const n3 = await cluster.connect(2, { database: DB });
    n3.on('error', () => undefined);
    assert.notEqual(await nodeLocalFacts(n1, 't'), await nodeLocalFacts(n3, 't'), 'the nodes keep different facts of the same table');
    const s = spawnCli(args, {});
    await pollUntil('a chunk committed', async () => Number(await value(n3, 'SELECT COUNT(*) FROM t')) > 0, { process: s, timeoutMs: 120_000, everyMs: 20 }).catch((err: unknown) => {
      s.child.kill('SIGKILL');
      throw err;
    });
    s.child.kill('SIGKILL');
    assert.equal((await s.done).signal, 'SIGKILL');
    n3.destroy();

    await cluster.killNode(2);
    await cluster.killNode(1);
    // The survivor is a non-Primary component until it is bootstrapped (what a DBA does after losing a majority).
    await pollUntil('node1 sees it lost its peers', async () => (await value(n1, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS'")) !== 'Primary', { everyMs: 100 });
    await n1.query("SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'");
    await pollUntil('node1 Primary again', async () => (await value(n1, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS'")) === 'Primary', { everyMs: 100 });

    const resumed = await runCli(args, { timeoutMs: 240_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resuming job/);
    assert.equal(await value(n1, 'SELECT COUNT(*) FROM t'), String(ROWS));

    // A node that rejoins (IST) holds the same rows; the same command through it alone finds the load done.
    await cluster.restartNode(1);
    const n2 = await cluster.connect(1, { database: DB });
    n2.on('error', () => undefined);
    assert.notEqual(await nodeLocalFacts(n1, 't'), await nodeLocalFacts(n2, 't'), 'the nodes keep different facts of the same table');
    const again = await runCli([...args.slice(0, 3), `mysql://root@${b}/${DB}`, ...args.slice(4), '--json'], { timeoutMs: 120_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { status: string }).status, 'already-loaded');
    assert.equal(await value(n2, 'SELECT COUNT(*) FROM t'), String(ROWS));
    n2.destroy();
    n1.destroy();
  });

  test('a table emptied between the kill and the rerun is still caught: the resume is refused, --restart loads it whole', { timeout: 300_000 }, async () => {
    const n1 = await cluster.connect(0, { database: DB });
    n1.on('error', () => undefined);
    await n1.query('CREATE TABLE t2 (id INT NOT NULL PRIMARY KEY, name VARCHAR(30) NOT NULL) ENGINE=InnoDB');
    let content = '';
    for (let i = 0; i < ROWS; i++) content += `${i}\tname ${i}\n`;
    const file = join(dir, 't2.tsv');
    writeFileSync(file, content);
    const live = cluster.nodes.filter((n) => n.running).map((n) => `127.0.0.1:${n.port}`);
    const args = ['load', file, '--url', `mysql://root@${live.join(',')}/${DB}`, '--table', 't2', '--chunk-size', '64KiB', '--jobs', '1', '--progress', 'none', '--skip-size-report'];
    const s = spawnCli(args, {});
    await pollUntil('a chunk committed', async () => Number(await value(n1, 'SELECT COUNT(*) FROM t2')) > 0, { process: s, timeoutMs: 120_000, everyMs: 20 }).catch((err: unknown) => {
      s.child.kill('SIGKILL');
      throw err;
    });
    s.child.kill('SIGKILL');
    assert.equal((await s.done).signal, 'SIGKILL');
    await n1.query('TRUNCATE TABLE t2');

    const refused = await runCli(args, { timeoutMs: 120_000 });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /cannot resume: .*t2.* was emptied or re-created .*it holds 0 rows, fewer than the \d+ its chunks committed/);
    const restarted = await runCli([...args, '--restart'], { timeoutMs: 240_000 });
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.equal(await value(n1, 'SELECT COUNT(*) FROM t2'), String(ROWS));
    n1.destroy();
  });
});
