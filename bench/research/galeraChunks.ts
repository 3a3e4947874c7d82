/**
 * Measures chunked LOAD DATA LOCAL into a 3-node Galera cluster on loopback:
 * one transaction per chunk (1, 2, 4, 8 MiB of TSV), with the connections on
 * one node or spread over several, rows/s and flow control per run. Median of
 * 3 in rotating order; the table is emptied (TRUNCATE, replicated as TOI) and
 * the cluster left idle before each run.
 *
 * Run: `node --import tsx bench/research/galeraChunks.ts [--rows 2750000] [--reps 3]`
 * (2.75M user_summary rows is ~101 MB of TSV).
 */
import { FlatloadError } from '../../src/errors/index.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { ddl, generateToFile } from '../../fixtures/generate.js';
import { startGaleraCluster, type GaleraCluster } from '../../dev/galera.js';
import { globalStatus, loadLocal, median, scalar, splitLines } from '../clusterSupport.js';

interface Placement {
  name: string;
  /** Node index of each connection. */
  nodes: number[];
}

const PLACEMENTS: Placement[] = [
  { name: '2 conns on node1', nodes: [0, 0] },
  { name: '2 conns on node1+node2', nodes: [0, 1] },
  { name: '3 conns on node1+2+3', nodes: [0, 1, 2] },
];

const CHUNK_MIB = [1, 2, 4, 8];

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

interface RunResult {
  ms: number;
  rowsPerS: number;
  /** wsrep_flow_control_paused per node: fraction of the run each node's replication was paused. */
  paused: number[];
  /** Pause requests each node sent (it was the one falling behind). */
  sent: number[];
}

async function run(c: GaleraCluster, admin: Connection[], chunks: Buffer[], rows: number, p: Placement): Promise<RunResult> {
  await admin[0]!.query('TRUNCATE TABLE f.user_summary');
  // Idle: every node has applied everything (sync wait), then a moment for InnoDB to catch its breath.
  for (const a of admin) await scalar(a, 'SELECT COUNT(*) FROM f.user_summary');
  await new Promise((r) => setTimeout(r, 2000));
  for (const a of admin) await a.query('FLUSH STATUS');
  const before = await Promise.all(admin.map((a) => globalStatus(a, ['wsrep_flow_control_sent'])));
  const conns = await Promise.all(p.nodes.map((n) => c.connect(n, { database: 'f' })));
  let next = 0;
  const t = process.hrtime.bigint();
  await Promise.all(
    conns.map(async (conn) => {
      for (;;) {
        const i = next++;
        if (i >= chunks.length) return;
        const r = await loadLocal(conn, chunks[i]!, 'user_summary');
        if (r.warnings > 0) throw new FlatloadError('INTERNAL', `chunk ${i}: ${r.warnings} warnings`);
      }
    }),
  );
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  await Promise.all(conns.map((x) => x.end()));
  const after = await Promise.all(admin.map((a) => globalStatus(a, ['wsrep_flow_control_paused', 'wsrep_flow_control_sent'])));
  const counts = await Promise.all(admin.map((a) => scalar(a, 'SELECT COUNT(*) FROM f.user_summary')));
  if (counts.some((n) => Number(n) !== rows)) throw new FlatloadError('INTERNAL', `row counts ${counts.join(', ')}, expected ${rows}`);
  return {
    ms,
    rowsPerS: Math.round(rows / (ms / 1000)),
    paused: after.map((s) => Number(Number(s['wsrep_flow_control_paused']).toFixed(3))),
    sent: after.map((s, i) => Number(s['wsrep_flow_control_sent']) - Number(before[i]!['wsrep_flow_control_sent'])),
  };
}

async function main(): Promise<void> {
  const rows = arg('--rows', 2_750_000);
  const reps = arg('--reps', 3);
  const dir = mkdtempSync(join(tmpdir(), 'flatload-galera-chunks-'));
  const c = await startGaleraCluster({ nodes: 3, innodbBufferPoolSize: '1G' });
  try {
    const file = join(dir, 'user_summary.tsv');
    const gen = await generateToFile(file, { table: 'user_summary', rows });
    const data = readFileSync(file);
    process.stdout.write(`file: ${rows} rows, ${gen.bytes} bytes; cluster started in ${JSON.stringify(c.timings)}\n`);
    const admin = await Promise.all(c.nodes.map((n) => c.connect(n.index, { multipleStatements: true })));
    for (const a of admin) await a.query('SET SESSION wsrep_sync_wait = 1');
    await admin[0]!.query('CREATE DATABASE f');
    await admin[0]!.query(`CREATE TABLE f.${ddl('user_summary').replace(/^CREATE TABLE /, '')} ENGINE=InnoDB`);
    const configs = CHUNK_MIB.flatMap((mib) => PLACEMENTS.map((p) => ({ mib, p })));
    const results = new Map<string, RunResult[]>();
    for (let rep = 0; rep < reps; rep++) {
      // Rotate the order each repetition, so no configuration always runs first or last.
      const order = configs.map((_, i) => configs[(i + rep * Math.ceil(configs.length / reps)) % configs.length]!);
      for (const { mib, p } of order) {
        const chunks = splitLines(data, mib << 20);
        const r = await run(c, admin, chunks, rows, p);
        const key = `${mib} MiB | ${p.name}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        process.stdout.write(`rep ${rep + 1} ${key}: ${Math.round(r.ms)} ms, ${r.rowsPerS} rows/s, paused ${r.paused.join('/')}, fc sent ${r.sent.join('/')}\n`);
      }
    }
    process.stdout.write('\n| chunk | connections | median rows/s | runs (s) | flow control paused (median, node1/2/3) |\n|---|---|---|---|---|\n');
    for (const { mib, p } of configs) {
      const rs = results.get(`${mib} MiB | ${p.name}`)!;
      const paused = [0, 1, 2].map((n) => median(rs.map((r) => r.paused[n] ?? 0)).toFixed(3)).join(' / ');
      process.stdout.write(`| ${mib} MiB | ${p.name} | ${Math.round(median(rs.map((r) => r.rowsPerS)))} | ${rs.map((r) => (r.ms / 1000).toFixed(1)).join(', ')} | ${paused} |\n`);
    }
    await Promise.all(admin.map((a) => a.end()));
  } finally {
    await c.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
