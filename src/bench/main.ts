#!/usr/bin/env node
/**
 * `npm run bench`: flatload against the tools a DBA would otherwise use, in
 * one run on one server, on a generated user_summary file; prints a table
 * and writes docs/benchmarks.md. Absolute times on a shared machine are
 * noise; the ratios between tools in the same run are the result.
 *
 *   npm run bench -- [--rows 5000000] [--csv-rows 2000000] [--jobs 1,2,4] [--no-write]
 *   npm run bench -- --memory [--memory-gb 2]   (peak RSS on a multi-GB file)
 *   npm run bench -- --strategies [--rows 1000000] [--repeat 3]  (every strategy per scenario, median of 3, the planner's marked)
 *   npm run bench -- --engines [--rows 1000000]     (flatload bench on two fixtures: every engine variant, sizes, charts → docs/engines.md)
 */
import { mkdirSync, mkdtempSync, openSync, closeSync, writeSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import mysql, { type Connection } from 'mysql2/promise';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../devserver/server.js';
import { formatError } from '../errors/index.js';
import { measure, type Measured } from './measure.js';
import { machineDescription, renderTable, rowsPerSec, type BenchRow } from './report.js';
import { runMemoryBench } from './memory.js';
import { writeDocSection } from './doc.js';
import { runStrategiesBench } from './strategies.js';
import { runEnginesBench } from './engines.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '5000000' },
    'csv-rows': { type: 'string', default: '2000000' },
    jobs: { type: 'string', default: '1,2,4' },
    'no-write': { type: 'boolean', default: false },
    memory: { type: 'boolean', default: false },
    strategies: { type: 'boolean', default: false },
    engines: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '3' },
    'memory-gb': { type: 'string', default: '2' },
  },
});

interface Ctx {
  server: ThrowawayServer | undefined;
  url: URL;
  admin: Connection;
  db: string;
  dir: string;
}

function clientArgs(c: Ctx): string[] {
  return ['--no-defaults', '-h', c.url.hostname, '-P', c.url.port || '3306', '-u', decodeURIComponent(c.url.username || 'root')];
}

async function freshTable(c: Ctx): Promise<void> {
  await c.admin.query(`DROP TABLE IF EXISTS \`${c.db}\`.user_summary`);
  await c.admin.query(`USE \`${c.db}\``);
  await c.admin.query(`${ddl('user_summary')} ENGINE=InnoDB`);
  await new Promise((r) => setTimeout(r, 1000));
}

async function countRows(c: Ctx): Promise<number> {
  const [r] = await c.admin.query(`SELECT COUNT(*) AS n FROM \`${c.db}\`.user_summary`);
  return Number((r as Array<{ n: number }>)[0]!.n);
}

async function run(c: Ctx, caseName: string, tool: string, rows: number, bytes: number, fn: () => Promise<Measured>): Promise<BenchRow> {
  await freshTable(c);
  process.stderr.write(`  ${caseName}: ${tool} … `);
  const m = await fn();
  const loaded = await countRows(c);
  const ok = m.code === 0 && loaded === rows;
  const row: BenchRow = {
    case: caseName,
    tool,
    rows,
    bytes,
    wallSeconds: m.wallSeconds,
    clientCpuSeconds: m.clientCpuSeconds,
    clientPeakRssBytes: m.clientPeakRssBytes,
    serverCpuSeconds: m.serverCpuSeconds,
    ok,
  };
  if (!ok) row.note = `exit ${m.code}, ${loaded} rows: ${(m.stderr || m.stdout).trim().split('\n').slice(-2).join(' ')}`;
  process.stderr.write(ok ? `${m.wallSeconds.toFixed(2)} s, ${Math.round(rowsPerSec(row)).toLocaleString('en-US')} rows/s\n` : `FAILED (${row.note})\n`);
  return row;
}

/** Splits a file at line ends into n parts of about equal size, each as <dir>/partK/user_summary.tsv (mariadb-import names the table after the file). */
function splitFile(file: string, n: number, dir: string): string[] {
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  const parts: string[] = [];
  let start = 0;
  const buf = Buffer.alloc(1 << 20);
  for (let k = 0; k < n; k++) {
    let end = k === n - 1 ? size : Math.floor((size * (k + 1)) / n);
    if (k < n - 1) {
      const got = readSync(fd, buf, 0, buf.length, end);
      const nl = buf.subarray(0, got).indexOf(0x0a);
      end = nl === -1 ? size : end + nl + 1;
    }
    const partDir = join(dir, `part${k}`);
    mkdirSync(partDir, { recursive: true });
    const out = join(partDir, 'user_summary.tsv');
    const ofd = openSync(out, 'w');
    for (let pos = start; pos < end; ) {
      const got = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      writeSync(ofd, buf, 0, got);
      pos += got;
    }
    closeSync(ofd);
    parts.push(out);
    start = end;
  }
  closeSync(fd);
  return parts;
}

function flatload(c: Ctx, file: string, extra: string[]): Promise<Measured> {
  const env = { ...process.env, DATABASE_URL: c.url.toString() };
  return measure(process.execPath, [cli, 'load', file, '--table', `${c.db}.user_summary`, '--progress', 'none', '--json', ...extra], {
    serverPid: c.server?.pid,
    env,
  });
}

async function main(): Promise<void> {
  if (args.strategies) {
    await runStrategiesBench(Number(args.rows === '5000000' ? 1_000_000 : args.rows), root, !args['no-write'], cli, Number(args.repeat));
    return;
  }
  if (args.engines) {
    await runEnginesBench(Number(args.rows === '5000000' ? 1_000_000 : args.rows), root, !args['no-write'], cli);
    return;
  }
  if (args.memory) {
    await runMemoryBench(Number(args['memory-gb']), root, !args['no-write']);
    return;
  }
  const rows = Number(args.rows);
  const csvRows = Number(args['csv-rows']);
  const jobsList = args.jobs.split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'flatload-bench-'));
  let server: ThrowawayServer | undefined;
  try {
    let url = process.env['DATABASE_URL'];
    if (!url) {
      process.stderr.write('starting a throwaway MariaDB (4 GiB buffer pool)…\n');
      server = await startThrowawayServer({ innodbBufferPoolSize: '4G', innodbLogFileSize: '1G' });
      url = server.url;
    }
    const u = new URL(url);
    const admin = await mysql.createConnection({ uri: url, flags: ['-LOCAL_FILES'], multipleStatements: true });
    const db = 'flatload_bench';
    await admin.query(`CREATE DATABASE IF NOT EXISTS ${db}`);
    const [v] = await admin.query('SELECT VERSION() AS v');
    const version = String((v as Array<{ v: string }>)[0]!.v);
    const c: Ctx = { server, url: u, admin, db, dir };

    const tsv = join(dir, 'user_summary.tsv');
    const csv = join(dir, 'user_summary.csv');
    process.stderr.write(`generating ${rows.toLocaleString('en-US')} TSV rows and ${csvRows.toLocaleString('en-US')} CSV rows…\n`);
    const gt = await generateToFile(tsv, { table: 'user_summary', rows, seed: 1 });
    const gc = await generateToFile(csv, { table: 'user_summary', rows: csvRows, seed: 2, format: 'csv', awkward: true });
    const maxJobs = Math.max(...jobsList);
    const splits = new Map<number, string[]>();
    for (const n of jobsList.filter((j) => j > 1)) splits.set(n, splitFile(tsv, n, join(dir, `split${n}`)));

    const results: BenchRow[] = [];
    const tsvCase = `user_summary TSV, ${rows.toLocaleString('en-US')} rows`;
    const q = (s: string): string => s.replace(/'/g, "\\'");
    process.stderr.write(`${tsvCase} (${(gt.bytes / 1e6).toFixed(1)} MB), empty InnoDB table each time:\n`);
    results.push(
      await run(c, tsvCase, 'server LOAD DATA INFILE', rows, gt.bytes, () =>
        measure('mariadb', [...clientArgs(c), db, '-e', `LOAD DATA INFILE '${q(tsv)}' INTO TABLE user_summary`], { serverPid: server?.pid }),
      ),
    );
    const clientSingle = await run(c, tsvCase, 'mariadb client LOAD DATA LOCAL', rows, gt.bytes, () =>
      measure('mariadb', [...clientArgs(c), '--local-infile=1', db, '-e', `LOAD DATA LOCAL INFILE '${q(tsv)}' INTO TABLE user_summary`], {
        serverPid: server?.pid,
      }),
    );
    results.push(clientSingle);
    for (const [n, parts] of splits) {
      results.push(
        await run(c, tsvCase, `mariadb-import --local --use-threads=${n} (pre-split)`, rows, gt.bytes, () =>
          measure('mariadb-import', [...clientArgs(c), '--local', `--use-threads=${n}`, db, ...parts], { serverPid: server?.pid }),
        ),
      );
    }
    for (const j of jobsList) {
      results.push(await run(c, tsvCase, `flatload --jobs ${j}`, rows, gt.bytes, () => flatload(c, tsv, ['--jobs', String(j)])));
    }

    const csvCase = `user_summary CSV (quoted, embedded newlines), ${csvRows.toLocaleString('en-US')} rows`;
    process.stderr.write(`${csvCase} (${(gc.bytes / 1e6).toFixed(1)} MB):\n`);
    const csvClient = await run(c, csvCase, 'mariadb client LOAD DATA LOCAL', csvRows, gc.bytes, () =>
      measure(
        'mariadb',
        [...clientArgs(c), '--local-infile=1', db, '-e', `LOAD DATA LOCAL INFILE '${q(csv)}' INTO TABLE user_summary ${loadDataOptions('csv')}`],
        { serverPid: server?.pid },
      ),
    );
    results.push(csvClient);
    const csvFlat: BenchRow[] = [];
    for (const j of [1, Math.min(2, maxJobs)].filter((x, i, a) => a.indexOf(x) === i)) {
      const r = await run(c, csvCase, `flatload --jobs ${j} --dialect csv`, csvRows, gc.bytes, () => flatload(c, csv, ['--jobs', String(j), '--dialect', 'csv']));
      csvFlat.push(r);
      results.push(r);
    }

    let scanLine = '';
    try {
      // Loaded by URL: the scan benchmark lives with the chunking code and may be absent from older builds.
      const scan = (await import(new URL('./scan.js', import.meta.url).href)) as { measureScanSpeed?: (o?: { bytes?: number }) => Promise<{ tsvMBps: number; csvMBps: number; details: string }> };
      if (scan.measureScanSpeed) {
        const s = await scan.measureScanSpeed();
        scanLine = `Boundary finding alone (in memory, no server): TSV ${s.tsvMBps.toFixed(0)} MB/s, quoted CSV ${s.csvMBps.toFixed(0)} MB/s. ${s.details}`;
      }
    } catch (err) {
      scanLine = `Boundary-finding speed not measured: ${(err as Error).message}`;
    }

    const f2 = results.find((r) => r.tool === 'flatload --jobs 2');
    const imp2 = results.find((r) => r.tool.startsWith('mariadb-import') && r.tool.includes('=2'));
    const ratios: string[] = [];
    if (f2 && clientSingle.ok && f2.ok) ratios.push(`flatload --jobs 2 vs the mariadb client's single LOAD DATA LOCAL: ${(rowsPerSec(f2) / rowsPerSec(clientSingle)).toFixed(2)}× (target ≥ 1.8×)`);
    if (f2 && imp2 && f2.ok && imp2.ok) ratios.push(`flatload --jobs 2 vs mariadb-import --use-threads=2 on pre-split files: ${(rowsPerSec(f2) / rowsPerSec(imp2)).toFixed(2)}× (target ≥ 1.0×)`);
    if (f2?.clientCpuSeconds && f2.serverCpuSeconds) ratios.push(`flatload --jobs 2 CPU / server CPU: ${(f2.clientCpuSeconds / f2.serverCpuSeconds).toFixed(3)} (target < 0.33)`);
    const c2 = csvFlat.find((r) => r.tool.includes('--jobs 2'));
    if (c2 && csvClient.ok && c2.ok) ratios.push(`CSV: flatload --jobs 2 vs the mariadb client: ${(rowsPerSec(c2) / rowsPerSec(csvClient)).toFixed(2)}×`);

    const tsvRows = results.filter((r) => r.case === tsvCase);
    const csvRowsRes = results.filter((r) => r.case === csvCase);
    const text = [
      `Machine: ${machineDescription(version)}.`,
      '',
      renderTable(tsvRows, clientSingle),
      '',
      renderTable(csvRowsRes, csvClient),
      '',
      ...ratios.map((r) => `- ${r}`),
      '',
      scanLine,
    ].join('\n');
    process.stdout.write(`\n${text}\n`);
    if (!args['no-write']) {
      const doc = join(root, 'docs/benchmarks.md');
      writeDocSection(doc, 'comparison', renderDoc(text, rows, csvRows));
      process.stderr.write(`wrote ${doc}\n`);
    }
    await admin.query(`DROP DATABASE ${db}`);
    await admin.end();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (server) await server.stop();
  }
}

function renderDoc(text: string, rows: number, csvRows: number): string {
  return `## Against the usual tools

Produced by \`npm run bench\` (${new Date().toISOString().slice(0, 10)}): one run on one throwaway MariaDB
(4 GiB buffer pool, 1 GiB redo log, binary log off, otherwise defaults), an empty InnoDB
\`user_summary\` table recreated before every case, the same generated files for every tool
(${rows.toLocaleString('en-US')} TSV rows in random key order; ${csvRows.toLocaleString('en-US')} CSV rows with quoted fields,
doubled quotes and embedded newlines). "vs baseline" is rows/s relative to the \`mariadb\`
client's single LOAD DATA LOCAL in the same run. Client CPU and peak RSS come from GNU time,
server CPU from /proc; wall time includes each tool's start-up and its final commit.

The machine is shared and noisy: treat differences under ~10% as noise, and compare tools
within a run rather than across runs.

${text}
`;
}

try {
  await main();
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
