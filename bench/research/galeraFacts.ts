/**
 * Checks, on a real 3-node Galera cluster on loopback, the facts the loader's
 * Galera support relies on, and prints what it observed (docs/scale-out.md
 * quotes the output). Run: `node --import tsx bench/research/galeraFacts.ts`.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { ddl, generateToFile } from '../../fixtures/generate.js';
import { startGaleraCluster, type GaleraCluster } from '../../dev/galera.js';
import { globalStatus, loadLocal, outcome, scalar } from '../clusterSupport.js';

const facts: Record<string, unknown> = {};
function note(key: string, value: unknown): void {
  facts[key] = value;
  process.stdout.write(`${key}: ${JSON.stringify(value)}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function connect(c: GaleraCluster, i: number): Promise<Connection> {
  const conn = await c.connect(i, { database: 'f', multipleStatements: true });
  // A killed node's connections report errors as events too; the queries' own rejections are what is recorded.
  conn.on('error', () => undefined);
  return conn;
}

async function counts(c: GaleraCluster, table: string, syncWait: number): Promise<string[]> {
  const out: string[] = [];
  for (const n of c.nodes) {
    if (!n.running) {
      out.push('down');
      continue;
    }
    const conn = await connect(c, n.index);
    await conn.query(`SET SESSION wsrep_sync_wait = ${syncWait}`);
    out.push(String(await scalar(conn, `SELECT COUNT(*) FROM ${table}`)));
    await conn.end();
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flatload-galera-facts-'));
  const t0 = Date.now();
  const c = await startGaleraCluster({ nodes: 3, wsrepMaxWsSize: 1 << 20 });
  note('start_ms', { total: Date.now() - t0, ...c.timings });
  try {
    const file4 = join(dir, 'us4.tsv');
    await generateToFile(file4, { table: 'user_summary', rows: 100_000 });
    const size4 = statSync(file4).size;
    const a = await c.connect(0, { multipleStatements: true });
    await a.query('CREATE DATABASE f');
    await a.end();
    const n1 = await connect(c, 0);
    await n1.query(`${ddl('user_summary')} ENGINE=InnoDB`);
    if (process.argv.includes('commit-race')) {
      const n2 = await connect(c, 1);
      note('commit_in_flight_when_node_killed', await commitRace(c, n1, n2));
      await n2.end();
      await n1.end();
      return;
    }

    // --- write-set limit
    note('wsrep_max_ws_size', await scalar(n1, 'SELECT @@GLOBAL.wsrep_max_ws_size'));
    note('wsrep_max_ws_rows', await scalar(n1, 'SELECT @@GLOBAL.wsrep_max_ws_rows'));
    note('load_4MB_under_1MiB_limit', { bytes: size4, result: await outcome(loadLocal(n1, file4, 'user_summary')) });
    note('counts_after_failed_load (sync_wait=1)', await counts(c, 'user_summary', 1));
    // Largest TSV prefix that loads under 1 MiB (bisection on bytes): the usable fraction of the limit.
    const buf = readFileSync(file4);
    let lo = 0;
    let hi = 2 << 20;
    while (hi - lo > 4096) {
      const mid = (lo + hi) >> 1;
      const piece = buf.subarray(0, buf.indexOf(0x0a, mid) + 1);
      const ok = (await outcome(loadLocal(n1, piece, 'user_summary'))) === 'ok';
      await n1.query('DELETE FROM user_summary');
      if (ok) lo = mid;
      else hi = mid;
    }
    note('largest_tsv_prefix_loading_under_1MiB', { bytesAbout: lo, fractionOfLimit: Number((lo / (1 << 20)).toFixed(3)) });

    // --- wsrep_max_ws_rows
    await n1.query('SET GLOBAL wsrep_max_ws_rows = 1000');
    note('load_2000_rows_with_max_ws_rows_1000', await outcome(loadLocal(n1, splitRows(buf, 2000), 'user_summary')));
    await n1.query('SET GLOBAL wsrep_max_ws_rows = 0');
    await n1.query('DELETE FROM user_summary');

    // --- write-set size vs TSV bytes (limit raised; the variable is dynamic)
    for (const n of c.nodes) {
      const conn = await connect(c, n.index);
      await conn.query('SET GLOBAL wsrep_max_ws_size = 2147483647');
      await conn.end();
    }
    const ratios: Array<Record<string, number>> = [];
    for (const rows of [1000, 10_000, 100_000]) {
      const piece = splitRows(buf, rows);
      const before = await globalStatus(n1, ['wsrep_replicated_bytes', 'wsrep_replicated']);
      await loadLocal(n1, piece, 'user_summary');
      const after = await globalStatus(n1, ['wsrep_replicated_bytes', 'wsrep_replicated']);
      const ws = Number(after['wsrep_replicated_bytes']) - Number(before['wsrep_replicated_bytes']);
      ratios.push({ rows, tsvBytes: piece.length, writeSetBytes: ws, ratio: Number((ws / piece.length).toFixed(3)), writeSets: Number(after['wsrep_replicated']) - Number(before['wsrep_replicated']) });
      await n1.query('DELETE FROM user_summary');
    }
    note('write_set_bytes_vs_tsv', ratios);

    // --- reads on other nodes right after a commit on node1
    const n2 = await connect(c, 1);
    const n3 = await connect(c, 2);
    const lag: Array<Record<string, string | number>> = [];
    for (let trial = 0; trial < 5; trial++) {
      await n1.query('DELETE FROM user_summary');
      await n2.query('SET SESSION wsrep_sync_wait = 0');
      await n3.query('SET SESSION wsrep_sync_wait = 1');
      await loadLocal(n1, file4, 'user_summary');
      const [x, y] = await Promise.all([scalar(n2, 'SELECT COUNT(*) FROM user_summary'), scalar(n3, 'SELECT COUNT(*) FROM user_summary')]);
      await n2.query('SET SESSION wsrep_sync_wait = 1');
      lag.push({ trial, node2_sync_wait_0: String(x), node3_sync_wait_1: String(y), node2_then_sync_wait_1: String(await scalar(n2, 'SELECT COUNT(*) FROM user_summary')) });
    }
    note('reads_right_after_a_100k_row_commit_on_node1', lag);
    await n1.query('DELETE FROM user_summary');

    // --- settings per node
    const perNode: Array<Record<string, string | null>> = [];
    for (const n of c.nodes) {
      const conn = await connect(c, n.index);
      perNode.push({
        node: `node${n.index + 1}`,
        auto_increment_increment: await scalar(conn, 'SELECT @@auto_increment_increment'),
        auto_increment_offset: await scalar(conn, 'SELECT @@auto_increment_offset'),
        wsrep_auto_increment_control: await scalar(conn, 'SELECT @@wsrep_auto_increment_control'),
        wsrep_sync_wait: await scalar(conn, 'SELECT @@GLOBAL.wsrep_sync_wait'),
        wsrep_incoming_addresses: await scalar(conn, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_INCOMING_ADDRESSES'"),
      });
      await conn.end();
    }
    note('per_node_settings', perNode);
    await n1.query('CREATE TABLE ai (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)');
    await n1.query('INSERT INTO ai (v) VALUES (1), (2), (3)');
    // TOI DDL returns on node1 before node2 has applied it; wsrep_sync_wait=1 covers reads only.
    note('insert_on_node2_right_after_create_on_node1 (sync_wait=1)', await outcome(n2.query('INSERT INTO ai (v) VALUES (4), (5), (6)')));
    await n2.query('SET SESSION wsrep_sync_wait = 15');
    note('insert_on_node2_with_sync_wait_15', await outcome(n2.query('INSERT INTO ai (v) VALUES (4), (5), (6)')));
    await n2.query('SET SESSION wsrep_sync_wait = 1');
    const [aiRows] = await n1.query('SELECT GROUP_CONCAT(id ORDER BY id) AS ids FROM ai');
    note('auto_increment_ids_node1_then_node2', (aiRows as Array<{ ids: string }>)[0]!.ids);

    // --- wsrep_load_data_splitting
    note('set_wsrep_load_data_splitting', await outcome(n1.query('SET GLOBAL wsrep_load_data_splitting = ON')));
    const [w] = await n1.query('SHOW WARNINGS');
    note('set_wsrep_load_data_splitting_warnings', w);
    await n1.query('SET GLOBAL wsrep_load_data_splitting = OFF');

    // --- engines other than InnoDB; tables without a primary key
    await n1.query('CREATE TABLE my (id INT PRIMARY KEY) ENGINE=MyISAM');
    await n1.query('CREATE TABLE ar (id INT PRIMARY KEY) ENGINE=Aria');
    await n1.query('CREATE TABLE nopk (a INT) ENGINE=InnoDB');
    await n1.query('INSERT INTO my VALUES (1), (2); INSERT INTO ar VALUES (1), (2); INSERT INTO nopk VALUES (1), (2)');
    await n3.query('SET SESSION wsrep_sync_wait = 1');
    note('myisam_rows_node1_node3', [await scalar(n1, 'SELECT COUNT(*) FROM my'), await scalar(n3, 'SELECT COUNT(*) FROM my')]);
    note('aria_rows_node1_node3', [await scalar(n1, 'SELECT COUNT(*) FROM ar'), await scalar(n3, 'SELECT COUNT(*) FROM ar')]);
    note('innodb_no_pk_rows_node1_node3', [await scalar(n1, 'SELECT COUNT(*) FROM nopk'), await scalar(n3, 'SELECT COUNT(*) FROM nopk')]);
    note('wsrep_mode', await scalar(n1, 'SELECT @@GLOBAL.wsrep_mode'));

    // --- certification conflict
    await n1.query('CREATE TABLE cf (id INT PRIMARY KEY, v INT)');
    await n1.query('INSERT INTO cf VALUES (1, 0)');
    await n2.query('SET SESSION wsrep_sync_wait = 1');
    await n1.query('BEGIN');
    await n1.query('UPDATE cf SET v = 1 WHERE id = 1');
    note('conflicting_update_on_node2_autocommit', await outcome(n2.query('UPDATE cf SET v = 2 WHERE id = 1')));
    note('commit_on_node1_after_node2_won', await outcome(n1.query('COMMIT')));
    await n1.query('ROLLBACK').catch(() => undefined);
    // The same with an insert of the same key, as two loaders would collide.
    await n1.query('BEGIN');
    await n1.query('INSERT INTO cf VALUES (7, 1)');
    note('duplicate_insert_on_node2', await outcome(n2.query('INSERT INTO cf VALUES (7, 2)')));
    note('commit_of_node1_insert', await outcome(n1.query('COMMIT')));
    await n1.query('ROLLBACK').catch(() => undefined);
    // A statement still running on node1 when node2's write-set arrives (brute-force abort).
    await n1.query('BEGIN');
    await n1.query('UPDATE cf SET v = 3 WHERE id = 1');
    const pending = outcome(n1.query('SELECT SLEEP(3)'));
    await sleep(300);
    note('node2_update_while_node1_statement_runs', await outcome(n2.query('UPDATE cf SET v = 4 WHERE id = 1')));
    note('node1_running_statement_after_conflict', await pending);
    note('node1_next_statement', await outcome(n1.query('COMMIT')));
    await n1.query('ROLLBACK').catch(() => undefined);

    // --- GET_LOCK
    const n1b = await connect(c, 0);
    await n1.query('SELECT COUNT(*) FROM cf'); // a statement that uses a table clears the diagnostics area
    note('get_lock_node1_session_a', await scalar(n1, "SELECT GET_LOCK('flatload_chunk_0', 0)"));
    const [wl] = await n1.query('SHOW WARNINGS');
    note('get_lock_warnings', wl);
    note('get_lock_node1_session_b', await scalar(n1b, "SELECT GET_LOCK('flatload_chunk_0', 0)"));
    note('get_lock_node2_same_name', await scalar(n2, "SELECT GET_LOCK('flatload_chunk_0', 0)"));
    note('is_used_lock_node3', await scalar(n3, "SELECT IS_USED_LOCK('flatload_chunk_0')"));
    note('is_used_lock_node1', await scalar(n1b, "SELECT IS_USED_LOCK('flatload_chunk_0') = CONNECTION_ID() OR IS_USED_LOCK('flatload_chunk_0') IS NOT NULL"));
    await n1.query("BEGIN; INSERT INTO cf VALUES (20, 0); DO GET_LOCK('flatload_chunk_1', 0); INSERT INTO cf VALUES (21, 0); COMMIT");
    note('get_lock_inside_a_transaction_then_commit', await scalar(n3, 'SELECT COUNT(*) FROM cf WHERE id IN (20, 21)'));
    note('release_lock_node1', await scalar(n1, "SELECT RELEASE_LOCK('flatload_chunk_0')"));
    await n1b.end();

    // --- LOAD DATA LOCAL on a Galera node (every load above was LOCAL)
    note('load_data_local_on_galera_node', 'ok (all loads above use LOAD DATA LOCAL)');

    // --- kill -9 of node3: what the others and node3's clients see
    await n1.query('CREATE TABLE k (id INT AUTO_INCREMENT PRIMARY KEY, node INT, at BIGINT)');
    const k3idle = await connect(c, 2);
    const k3trx = await connect(c, 2);
    const k3busy = await connect(c, 2);
    await k3trx.query('BEGIN; INSERT INTO k (node, at) VALUES (3, 0), (3, 0), (3, 0)');
    const busy = outcome(k3busy.query('SELECT SLEEP(20)'));
    const latencies: Array<{ at: number; ms: number }> = [];
    let writing = true;
    const writer = (async () => {
      const start = Date.now();
      while (writing) {
        const t = Date.now();
        await n1.query('INSERT INTO k (node, at) VALUES (1, ?)', [t - start]);
        latencies.push({ at: t - start, ms: Date.now() - t });
      }
    })();
    await sleep(1000);
    const killedAt = latencies.length ? latencies[latencies.length - 1]!.at : 0;
    await c.killNode(2);
    await sleep(12_000);
    writing = false;
    await writer;
    const slow = latencies.filter((l) => l.ms > 200);
    note('writes_on_node1_after_kill', {
      killedAtMs: killedAt,
      writes: latencies.length,
      slowWrites: slow,
      maxMs: Math.max(...latencies.map((l) => l.ms)),
    });
    note('cluster_size_after_eviction', await scalar(n1, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'"));
    note('killed_node_in_flight_query', await busy);
    note('killed_node_idle_connection_next_query', await outcome(k3idle.query('SELECT 1')));
    note('killed_node_open_transaction_commit', await outcome(k3trx.query('COMMIT')));
    note('uncommitted_rows_of_killed_node_on_node1', await scalar(n1, 'SELECT COUNT(*) FROM k WHERE node = 3'));
    let t = Date.now();
    await c.restartNode(2);
    const restartMs = Date.now() - t;
    const log3 = readFileSync(join(c.nodes[2]!.baseDir, 'mysqld.err'), 'utf8');
    const tailLog = log3.slice(log3.lastIndexOf('Starting MariaDB'));
    note('restart_after_kill', {
      ms: restartMs,
      ist: /IST received/.test(tailLog),
      sst: /rsync SST completed|SST received: .*:-1|wsrep_sst_rsync --role 'joiner'/.test(tailLog) && !/IST received/.test(tailLog),
      istLine: /Receiving IST: .*/.exec(tailLog)?.[0] ?? null,
    });
    note('counts_after_rejoin (sync_wait=1)', await counts(c, 'k', 1));

    // --- a COMMIT in flight when its node dies: applied everywhere or nowhere, whatever the client heard
    note('commit_in_flight_when_node_killed', await commitRace(c, n1, n2));

    // --- a node that is not ready: node1 alone after node2 and node3 die
    await c.killNode(2);
    await c.killNode(1);
    const during = outcome(n1.query('INSERT INTO k (node, at) VALUES (1, -1)'));
    t = Date.now();
    note('insert_on_node1_while_peers_being_evicted', { result: await during, ms: Date.now() - t });
    await sleep(8000);
    note('node1_status_alone', await globalStatus(n1, ['wsrep_cluster_status', 'wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_size']));
    note('node1_select_when_non_primary', await outcome(n1.query('SELECT COUNT(*) FROM k')));
    note('node1_insert_when_non_primary', await outcome(n1.query('INSERT INTO k (node, at) VALUES (1, -2)')));
    note('node1_select_1_when_non_primary', await outcome(n1.query('SELECT 1')));
    note('node1_show_status_when_non_primary', await outcome(n1.query("SHOW STATUS LIKE 'wsrep_ready'")));
    await n1.query("SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'");
    await sleep(1000);
    note('node1_after_pc_bootstrap', await globalStatus(n1, ['wsrep_cluster_status', 'wsrep_ready', 'wsrep_cluster_size']));
    await n2.end().catch(() => undefined);
    await n3.end().catch(() => undefined);
    await n1.end();
  } finally {
    await c.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Sends COMMIT of a 2000-row transaction on node3 and kills node3 a few ms
 * later, then reads the trial's rows on the survivors and on node3 after it
 * rejoined: all or nothing, and the client never heard either way.
 */
async function commitRace(c: GaleraCluster, n1: Connection, n2: Connection): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  await n1.query('CREATE TABLE IF NOT EXISTS race (trial INT, id INT, PRIMARY KEY (trial, id))');
  await n2.query('SET SESSION wsrep_sync_wait = 1');
  for (const [trial, delay] of [0, 1, 2, 3, 4, 6, 8, 12, 20, 40].entries()) {
    const victim = await connect(c, 2);
    await victim.query('BEGIN');
    await victim.query(`INSERT INTO race SELECT ${trial}, seq FROM seq_1_to_2000`);
    const sent = process.hrtime.bigint();
    const commit = outcome(victim.query('COMMIT'));
    while (Number(process.hrtime.bigint() - sent) / 1e6 < delay) await new Promise((r) => setImmediate(r));
    await c.killNode(2);
    const clientSaw = await commit;
    await sleep(7000);
    const rowsNode1 = await scalar(n1, 'SELECT COUNT(*) FROM race WHERE trial = ?', [trial]);
    const rowsNode2 = await scalar(n2, 'SELECT COUNT(*) FROM race WHERE trial = ?', [trial]);
    await c.restartNode(2);
    const n3 = await connect(c, 2);
    await n3.query('SET SESSION wsrep_sync_wait = 1');
    const rowsNode3 = await scalar(n3, 'SELECT COUNT(*) FROM race WHERE trial = ?', [trial]);
    await n3.end();
    out.push({ killAfterCommitSentMs: delay, clientSaw: clientSaw.slice(0, 40), rowsNode1, rowsNode2, rowsNode3AfterRejoin: rowsNode3 });
  }
  return out;
}

/** The first `rows` lines of a TSV buffer. */
function splitRows(buf: Buffer, rows: number): Buffer {
  let pos = 0;
  for (let i = 0; i < rows && pos < buf.length; i++) {
    const nl = buf.indexOf(0x0a, pos);
    pos = nl === -1 ? buf.length : nl + 1;
  }
  return buf.subarray(0, pos);
}

await main();
