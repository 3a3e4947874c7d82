import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fixtureDdl, FIXTURE_TABLES, isFixtureTable } from '../../bench/fixtureTables.js';
import { firstRecordsToFile } from '../../bench/sample.js';
import type { BenchResult } from '../../bench/result.js';
import { variantDdl, variantsFor, type Variant } from '../../bench/variants.js';
import { charsetInfo } from '../../chunking/charsets.js';
import { resolveConnection, type ConnectionOptions } from '../../config/connection.js';
import { toLoadOptions, type LoadArgs, type LoadOptions, type StrategyName } from '../../config/loadOptions.js';
import type { Connection } from 'mysql2/promise';
import { openSession } from '../../db/connect.js';
import { splitQualifiedName } from '../../config/names.js';
import { quoteId, quoteQualified } from '../../db/quote.js';
import { startThrowawayServer, type ThrowawayServer } from '../../devserver/server.js';
import { EXIT, FlatloadError, type ExitCode } from '../../errors/index.js';
import { openInput } from '../../input/source.js';
import { runLoad } from '../../job/run.js';
import { scanFormatOf } from '../../introspect/target.js';
import { cumulative, renderBarChart, renderChart, type Series } from '../../report/chart.js';
import { EventHub } from '../../report/events.js';
import { fmtMB, fmtRate } from '../../report/format.js';
import { SilentReporter } from '../../report/reporters.js';
import { connectionFromArgs, type ConnectionArgs } from '../connection.js';
import type { CliIo } from '../io.js';

export interface BenchArgs extends LoadArgs, ConnectionArgs {
  fixture?: string;
  ddl?: string;
  rows?: number;
  engines?: string;
  strategies?: boolean;
}


function table(results: BenchResult[], inputBytes: number): string {
  const head = ['variant', 'strategy', 'rows', 'seconds', 'rows/s', 'MB/s', 'on-disk MB', 'input/on-disk'];
  const rows = results.map((r) => [
    r.variant,
    `${r.strategy}${r.planned ? ' *' : ''}`,
    r.ok ? r.rows.toLocaleString('en-US') : `FAILED: ${r.error ?? ''}`.slice(0, 60),
    r.ok ? r.seconds.toFixed(2) : '',
    r.ok ? Math.round(r.rowsPerSec).toLocaleString('en-US') : '',
    r.ok ? r.mbPerSec.toFixed(1) : '',
    r.onDiskBytes === null ? 'n/a' : (r.onDiskBytes / 1e6).toFixed(1),
    r.ratio === null ? 'n/a' : r.ratio.toFixed(2),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (c: string[]): string => c.map((x, i) => (i < 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ');
  return [
    line(head),
    ...rows.map(line),
    `* the planner's choice; input ${(inputBytes / 1e6).toFixed(1)} MB; on-disk = allocated bytes where the server reports them`,
  ].join('\n');
}

/**
 * `flatload bench <file>`: the same input into every engine variant the
 * server offers (the table's own definition, engine swapped), with the
 * strategy the planner picks (and, with --strategies, the others), in a
 * scratch database that is dropped afterwards. The user's table is never
 * touched.
 */
export async function benchCommand(a: BenchArgs, io: CliIo): Promise<ExitCode> {
  if (!a.file) throw new FlatloadError('USAGE', 'missing the input file');
  const file = a.file;
  checkTableSource(a);
  const { conn, server } = await benchServer(a, io);
  const scratch = `flatload_bench_${randomBytes(3).toString('hex')}`;
  const work = mkdtempSync(join(tmpdir(), 'flatload-bench-'));
  const { conn: admin } = await openSession(conn);
  try {
    const createSql = await tableDefinition(admin, a, conn);
    const variants = await chooseVariants(admin, a);
    await admin.query(`CREATE DATABASE ${quoteId(scratch)}`);
    const loadOptions = toLoadOptions({ ...a, table: `${scratch}.bench_probe` });
    const input = a.rows === undefined ? file : await sampleInput(admin, loadOptions, { file, rows: a.rows, scratch, work, createSql, first: variants[0]! }, io);
    const inputBytes = openInput(input).sizeBytes ?? 0;
    const results: BenchResult[] = [];
    for (const v of variants) results.push(...(await benchVariant(admin, a, { input, scratch, createSql, conn }, v, io)));
    if (a.chart) writeCharts(a.chart, results, file, inputBytes);
    if (a.json) io.stdout.write(`${JSON.stringify({ input: a.file, inputBytes, scratchDatabase: scratch, results: results.map(({ timeline, ...r }) => ({ ...r, timeline })) })}\n`);
    else io.stdout.write(`${table(results, inputBytes)}\n`);
    return results.every((r) => r.ok) ? EXIT.ok : EXIT.stopped;
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteId(scratch)}`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
    if (server) await server.stop();
  }
}

function checkTableSource(a: BenchArgs): void {
  const sources = [a.table, a.fixture, a.ddl].filter((x) => x !== undefined);
  if (sources.length !== 1) throw new FlatloadError('USAGE', 'give the table definition with exactly one of --table db.t (an existing table), --fixture NAME, or --ddl FILE');
  if (a.fixture !== undefined && !isFixtureTable(a.fixture)) {
    throw new FlatloadError('USAGE', `--fixture must be one of ${FIXTURE_TABLES.join(', ')}`);
  }
}

/** The server given, or else a throwaway MariaDB started for the bench. */
async function benchServer(a: BenchArgs, io: CliIo): Promise<{ conn: ConnectionOptions; server: ThrowawayServer | undefined }> {
  const explicitServer = a.url || a.host || a.socket || a.port || io.env['DATABASE_URL'];
  if (explicitServer) return { conn: (await connectionFromArgs(a, io.cwd, io.env)).options, server: undefined };
  io.stderr.write('no server given: starting a throwaway MariaDB\n');
  const server = await startThrowawayServer({ innodbBufferPoolSize: '2G', innodbLogFileSize: '512M' });
  return { conn: resolveConnection({ url: server.url }, {}, new Map()), server };
}

async function tableDefinition(admin: Connection, a: BenchArgs, conn: ConnectionOptions): Promise<string> {
  if (a.table) {
    const name = splitQualifiedName(a.table);
    const db = name?.db ?? conn.database;
    if (!name || !db) throw new FlatloadError('USAGE', '--table needs db.table (or --database)');
    const [r] = await admin.query(`SHOW CREATE TABLE ${quoteQualified(db, name.table)}`);
    return String((r as Array<Record<string, string>>)[0]!['Create Table']);
  }
  if (a.fixture !== undefined && isFixtureTable(a.fixture)) return fixtureDdl(a.fixture);
  return readFileSync(a.ddl!, 'utf8');
}

/** The engine variants this server offers, narrowed by --engines. */
async function chooseVariants(admin: Connection, a: BenchArgs): Promise<Variant[]> {
  const [eng] = await admin.query('SHOW ENGINES');
  const engines: Record<string, string> = {};
  for (const e of eng as Array<{ Engine: string; Support: string }>) engines[e.Engine.toUpperCase()] = e.Support.toUpperCase();
  const [vars] = await admin.query("SHOW GLOBAL VARIABLES LIKE 'rocksdb_supported_compression_types'");
  const rocksAlgos = (vars as Array<{ Value: string }>)[0]?.Value;
  const offered = variantsFor(engines, rocksAlgos);
  const want = a.engines?.split(',').map((s) => s.trim().toLowerCase());
  const variants = want ? offered.filter((v) => want.some((w) => v.name === w || v.name.startsWith(`${w}-`) || v.engine.toLowerCase() === w)) : offered;
  if (variants.length === 0) throw new FlatloadError('USAGE', '--engines matches no engine this server offers');
  return variants;
}

/** With --rows: the first records as a plain file, so every variant reads the same bytes. */
async function sampleInput(
  admin: Connection,
  loadOptions: LoadOptions,
  at: { file: string; rows: number; scratch: string; work: string; createSql: string; first: Variant },
  io: CliIo,
): Promise<string> {
  await admin.query(`${variantDdl(at.createSql, quoteQualified(at.scratch, 'bench_probe'), at.first)}`);
  const cs = charsetInfo(loadOptions.format.characterSet ?? 'utf8mb4')!;
  const [cols] = await admin.query('SELECT COUNT(*) AS n FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [at.scratch, 'bench_probe']);
  const fields = loadOptions.columns?.length ?? Number((cols as Array<{ n: number }>)[0]!.n);
  const input = join(at.work, 'sample');
  const n = await firstRecordsToFile(openInput(at.file), input, at.rows, loadOptions.format.ignoreLines, scanFormatOf(loadOptions), cs, {
    fields,
    textField: Array.from({ length: fields }, () => true),
  });
  io.stderr.write(`sampled the first ${n.toLocaleString('en-US')} records\n`);
  return input;
}

/** One variant: the planner's strategy, then (with --strategies) each other one, each into a fresh table. */
async function benchVariant(
  admin: Connection,
  a: BenchArgs,
  at: { input: string; scratch: string; createSql: string; conn: ConnectionOptions },
  v: Variant,
  io: CliIo,
): Promise<BenchResult[]> {
  if (v.rocksdbCf) await admin.query('SET GLOBAL rocksdb_update_cf_options = ?', [`${v.rocksdbCf.name}={${v.rocksdbCf.options}}`]);
  const strategies: Array<StrategyName | undefined> = a.strategies ? [undefined, 'load-data', 'insert'] : [undefined];
  const results: BenchResult[] = [];
  for (const strategy of strategies) {
    const planned = results[0]?.strategy;
    if (strategy !== undefined && strategy === planned) continue;
    const tableName = `t_${v.name.replace(/-/g, '_')}${strategy ? `_${strategy.replace('-', '_')}` : ''}`;
    await admin.query(`DROP TABLE IF EXISTS ${quoteQualified(at.scratch, tableName)}`);
    await admin.query(variantDdl(at.createSql, quoteQualified(at.scratch, tableName), v));
    io.stderr.write(`${v.label}${strategy ? ` (--strategy ${strategy})` : ''} … `);
    const r = await runOne(a, at.input, at.scratch, tableName, strategy, at.conn);
    results.push({ ...r, variant: v.label, engine: v.engine, planned: strategy === undefined });
    await admin.query(`DROP TABLE IF EXISTS ${quoteQualified(at.scratch, tableName)}`);
    io.stderr.write(r.ok ? `${r.seconds.toFixed(2)} s\n` : `failed: ${r.error}\n`);
  }
  return results;
}

/** The comparison (speed, size, ratio per variant) in the chart asked for; the load timelines beside it. */
function writeCharts(chart: string, results: BenchResult[], file: string, inputBytes: number): void {
  const ok = results.filter((r) => r.ok);
  const labels = ok.map((r) => `${r.variant}${r.planned ? '' : ` (--strategy ${r.strategy})`}`);
  writeFileSync(
    chart,
    renderBarChart(
      labels,
      [
        { title: 'rows/s (higher is faster)', values: ok.map((r) => r.rowsPerSec), format: (v) => `${fmtRate(v)}` },
        { title: 'on disk, MB (lower is smaller)', values: ok.map((r) => (r.onDiskBytes === null ? null : r.onDiskBytes / 1e6)), format: (v) => v.toFixed(1) },
        { title: 'input / on-disk (higher is denser)', values: ok.map((r) => r.ratio), format: (v) => v.toFixed(2) },
      ],
      { title: `flatload bench: ${basename(file)} (${fmtMB(inputBytes)})` },
    ),
  );
  const series: Series[] = ok.map((r, i) => ({ name: labels[i]!, points: cumulative(r.timeline) }));
  writeFileSync(timelinePath(chart), renderChart(series, { title: `flatload bench: ${basename(file)}, rows loaded over time`, xLabel: 'seconds', yLabel: 'rows loaded' }));
}

async function runOne(
  a: BenchArgs,
  input: string,
  db: string,
  tableName: string,
  strategy: StrategyName | undefined,
  conn: ConnectionOptions,
): Promise<Omit<BenchResult, 'variant' | 'engine' | 'planned'>> {
  const o = toLoadOptions({
    ...a,
    file: input,
    table: `${db}.${tableName}`,
    ...(strategy ? { strategy } : {}),
    progress: 'none',
    json: false,
    maxErrors: a.maxErrors ?? 0,
  });
  const events = new EventHub();
  const reporter = new SilentReporter(undefined);
  events.on((e) => reporter.onEvent(e));
  try {
    const { report, error } = await runLoad(o, { ...conn, database: db }, events);
    reporter.close();
    return {
      strategy: report.strategy,
      rows: report.rows,
      seconds: report.seconds,
      rowsPerSec: report.rowsPerSec,
      mbPerSec: report.mbPerSec,
      onDiskBytes: report.sizes?.onDiskBytes ?? null,
      onDiskSource: report.sizes?.onDiskSource ?? '',
      ratio: report.sizes?.inputToOnDiskRatio ?? null,
      ok: error === undefined,
      error: error?.message ?? null,
      timeline: reporter.state.timeline,
    };
  } catch (err) {
    return { strategy: strategy ?? '?', rows: 0, seconds: 0, rowsPerSec: 0, mbPerSec: 0, onDiskBytes: null, onDiskSource: '', ratio: null, ok: false, error: (err as Error).message, timeline: [] };
  }
}

/** The timeline goes beside the comparison chart: out.svg → out.timeline.svg. */
export function timelinePath(chart: string): string {
  return /\.svg$/i.test(chart) ? chart.replace(/\.svg$/i, '.timeline.svg') : `${chart}.timeline.svg`;
}
