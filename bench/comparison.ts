/**
 * `npm run bench`: flatload against what a DBA would otherwise do, per
 * scenario, in one run: InnoDB with a buffer pool larger than the table and
 * (on a second throwaway server) a 128 MiB one the table outgrows, MyRocks
 * against its documented hand-tuned bulk load, and user3 (an AUTO_INCREMENT
 * key absent from the file) against the naive load that lets the server
 * number rows. Every run starts on an empty table and a server at rest
 * (settle.ts), the order rotates between rounds, each competitor keeps its
 * median, and every run's row count and checksum are verified.
 */
import { linkSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import mysql, { type Connection } from 'mysql2/promise';
import { ddl, generateToFile } from '../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';
import { checksumOf, scalar } from './clusterSupport.js';
import { clientLoad, flatloadLoad, mariadbImport, newOverOld, parallelClients, ROCKSDB_BULK, splitByHand, type Baseline, type Target } from './competitors.js';
import { writeDocSection } from './doc.js';
import type { Measured } from './measure.js';
import { machineDescription } from './report.js';
import { formatRuns, inRounds, loadRange, median, runsHeading, settledRun, type RunResult, type Series } from './rounds.js';

export const SCENARIOS = ['innodb', 'innodb-small', 'myrocks', 'user3'] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

export interface ComparisonOptions {
  rows: number;
  repeat: number;
  jobs: number;
  only: ScenarioId[];
  write: boolean;
  root: string;
  cli: string;
  /** Another checkout's flatload, run beside this one with the same flags. */
  baseline?: Baseline;
}

/** 'old': the --baseline checkout's flatload. */
type Role = 'baseline' | 'naive' | 'ceiling' | 'flatload' | 'old';

export interface Competitor {
  name: string;
  role: Role;
  /** For an 'old' competitor: the name of this checkout's flatload it is the before of. */
  newName?: string;
  run(t: Target): Promise<Measured>;
}

export interface Goal {
  /** flatload competitor's name, the competitor it is compared with, and the least speed-up flatload aims for. */
  flatload: string;
  vs: string;
  atLeast: number;
  label: string;
}

export interface Scenario {
  id: ScenarioId;
  title: string;
  server: 'big' | 'small';
  table: 'user_summary' | 'user3';
  engine: 'InnoDB' | 'ROCKSDB';
  competitors: Competitor[];
  goals: Goal[];
}

export interface Files {
  unsorted: string;
  sorted: string;
  /** `split -n l/N` parts of the unsorted file, per table name. */
  parts: Map<string, string[]>;
}

const DB = 'flatload_bench';
/** user3's columns the file has (its AUTO_INCREMENT id is not among them). */
export const USER3_COLUMNS = ['user_id', 'weight', 'level', 'beat_rate', 'level_num'];

export function scenarios(f: Files, n: number, cli: string, baseline?: Baseline): Scenario[] {
  const flat = (name: string, flags: string[]): Competitor => ({ name, role: 'flatload', run: (t) => flatloadLoad(cli, t, f.unsorted, flags) });
  const old = (c: Competitor, flags: string[]): Competitor[] =>
    baseline ? [{ name: c.name.replace(/^flatload/, baseline.name), role: 'old', newName: c.name, run: (t) => flatloadLoad(baseline.cli, t, f.unsorted, flags) }] : [];
  const own = [flat('flatload (defaults)', []), flat(`flatload --jobs ${n}`, ['--jobs', String(n)])];
  const flatloads = [...own, ...old(own[0]!, []), ...old(own[1]!, ['--jobs', String(n)])];
  const innodb = (table: string): Competitor[] => [
    { name: 'mariadb client, one LOAD DATA LOCAL', role: 'baseline', run: (t) => clientLoad(t, f.unsorted) },
    { name: `${n} mariadb clients, one per \`split -n l/${n}\` part`, role: 'naive', run: (t) => parallelClients(t, f.parts.get(table)!) },
    { name: `mariadb-import --local --use-threads=${n} on the parts`, role: 'naive', run: (t) => mariadbImport(t, f.parts.get(table)!, n) },
    { name: 'mariadb client on a copy sorted by user_id (sorting not counted)', role: 'ceiling', run: (t) => clientLoad(t, f.sorted) },
    ...flatloads,
  ];
  const innodbGoals = (small: boolean): Goal[] =>
    small
      ? [
          { flatload: `flatload --jobs ${n}`, vs: 'mariadb client, one LOAD DATA LOCAL', atLeast: 8, label: 'the single client' },
          // Within 1.5x of the ceiling's time = at least 1/1.5 of its speed.
          { flatload: `flatload --jobs ${n}`, vs: 'mariadb client on a copy sorted by user_id (sorting not counted)', atLeast: 1 / 1.5, label: 'the client on the pre-sorted copy (within 1.5× of its time)' },
        ]
      : [
          { flatload: `flatload --jobs ${n}`, vs: 'mariadb client, one LOAD DATA LOCAL', atLeast: 2, label: 'the single client' },
          { flatload: `flatload --jobs ${n}`, vs: `${n} mariadb clients, one per \`split -n l/${n}\` part`, atLeast: 1.3, label: `${n} plain clients on the split file` },
        ];
  const bulk = 'mariadb client, hand-tuned bulk load (allow_unsorted, one LOAD DATA)';
  return [
    { id: 'innodb', title: 'InnoDB user_summary, 2 GiB buffer pool (the table fits)', server: 'big', table: 'user_summary', engine: 'InnoDB', competitors: innodb('user_summary'), goals: innodbGoals(false) },
    { id: 'innodb-small', title: 'InnoDB user_summary, 128 MiB buffer pool (the table is 2–3× larger)', server: 'small', table: 'user_summary', engine: 'InnoDB', competitors: innodb('user_summary'), goals: innodbGoals(true) },
    {
      id: 'myrocks',
      title: 'MyRocks user_summary',
      server: 'big',
      table: 'user_summary',
      engine: 'ROCKSDB',
      competitors: [
        { name: bulk, role: 'baseline', run: (t) => clientLoad(t, f.unsorted, ROCKSDB_BULK) },
        { name: `${n} mariadb clients, hand-tuned bulk load each, on the parts`, role: 'naive', run: (t) => parallelClients(t, f.parts.get('user_summary')!, ROCKSDB_BULK) },
        {
          name: 'mariadb client, bulk load of a copy sorted by user_id (sorting not counted)',
          role: 'ceiling',
          run: (t) => clientLoad(t, f.sorted, { pre: ['SET SESSION rocksdb_bulk_load = 1'], post: ROCKSDB_BULK.post }),
        },
        ...flatloads,
      ],
      goals: [{ flatload: 'flatload (defaults)', vs: bulk, atLeast: 2.5, label: 'the hand-tuned bulk load' }],
    },
    {
      id: 'user3',
      title: 'InnoDB user3 (AUTO_INCREMENT id absent from the file), 2 GiB buffer pool',
      server: 'big',
      table: 'user3',
      engine: 'InnoDB',
      competitors: innodb('user3').map((c) => (c.role === 'baseline' ? { ...c, name: 'mariadb client, one LOAD DATA LOCAL (the server numbers rows)' } : c)),
      goals: [{ flatload: 'flatload (defaults)', vs: 'mariadb client, one LOAD DATA LOCAL (the server numbers rows)', atLeast: 1.3, label: 'the naive single LOAD DATA' }],
    },
  ];
}

/** Row count and a checksum of the user columns; CHECKSUM TABLE where the table has no key the load may number differently. */
async function content(admin: Connection, table: string): Promise<{ rows: number; checksum: string }> {
  const [c] = await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.${table}`);
  const rows = Number((c as Array<{ n: number }>)[0]!.n);
  if (table === 'user_summary') {
    return { rows, checksum: String(await checksumOf(admin, `${DB}.${table}`)) };
  }
  // user3's ids depend on who numbered the rows; the rows themselves must not.
  const cols = USER3_COLUMNS.map((col) => `IFNULL(${col}, 'NULL')`).join(', ');
  const [s] = await admin.query(`SELECT SUM(CRC32(CONCAT_WS(0x09, ${cols}))) AS s FROM ${DB}.${table}`);
  return { rows, checksum: String((s as Array<{ s: string }>)[0]!.s) };
}

/** flatload's plan as its JSON report states it. */
function planOf(m: Measured): string {
  try {
    const r = JSON.parse(m.stdout) as { strategy?: string; jobs?: number };
    return r.strategy ? `${r.strategy}, ${r.jobs} conn` : '';
  } catch {
    return '';
  }
}

interface ScenarioResult {
  scenario: Scenario;
  series: Series<Competitor>[];
  /** One competitor run twice in a row after the rounds. */
  backToBack: { name: string; runs: RunResult[] };
}

async function runScenario(sc: Scenario, server: { url: URL; pid: number | undefined; admin: Connection }, o: ComparisonOptions): Promise<ScenarioResult> {
  const target: Target = { url: server.url, db: DB, table: sc.table, serverPid: server.pid, ...(sc.table === 'user3' ? { columns: USER3_COLUMNS } : {}) };
  let reference: string | undefined;
  const once = async (c: Competitor): Promise<RunResult> => {
    process.stderr.write(`  ${c.name} … `);
    const r = await settledRun({
      label: `${sc.id}: ${c.name}`,
      admin: server.admin,
      serverPid: server.pid,
      prepare: async () => {
        // The whole database: flatload's bookkeeping of the previous run would make it resume (load nothing).
        await server.admin.query(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}; USE ${DB}; ${ddl(sc.table)} ENGINE=${sc.engine}`);
      },
      run: () => c.run(target),
      check: async () => {
        const got = await content(server.admin, sc.table);
        if (got.rows !== o.rows) return `${got.rows} rows in the table`;
        reference ??= got.checksum;
        return got.checksum === reference ? '' : `checksum ${got.checksum}, expected ${reference}`;
      },
    });
    const plan = c.role === 'flatload' || c.role === 'old' ? planOf(r.measured) : '';
    process.stderr.write(`${r.ok ? `${r.seconds.toFixed(2)} s${plan ? ` (${plan})` : ''}` : `FAILED ${r.note}`} [load ${r.load1.toFixed(2)}, settled in ${r.settled.seconds.toFixed(1)} s]\n`);
    return r;
  };
  process.stderr.write(`${sc.title}:\n`);
  const series = await inRounds(sc.competitors, o.repeat, once);
  // The same competitor twice in a row: with the server at rest before each, the second run must not differ from the first.
  const subject = sc.competitors.find((c) => c.role === 'flatload' && c.name !== 'flatload (defaults)') ?? sc.competitors[0]!;
  process.stderr.write(`  back to back:\n`);
  const runs = [await once(subject), await once(subject)];
  return { scenario: sc, series, backToBack: { name: subject.name, runs } };
}

const x = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

function renderScenario(r: ScenarioResult, rows: number): string {
  const sc = r.scenario;
  const flats = r.series.filter((s) => s.item.role === 'flatload');
  const head = ['competitor', runsHeading(r.series[0]?.runs.length ?? 0), 'rows/s', 'load avg', 'server CPU s', 'client CPU s', ...flats.map((f) => `${f.item.name} is … faster`)];
  const lines = [`### ${sc.title}`, '', `| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const s of r.series) {
    const plan = s.item.role === 'flatload' || s.item.role === 'old' ? planOf(s.runs[0]!.measured) : '';
    const cpu = s.runs.map((x) => x.measured.clientCpuSeconds).filter((c): c is number => c !== null);
    const server = s.runs.map((x) => x.measured.serverCpuSeconds).filter((c): c is number => c !== null);
    lines.push(
      `| ${s.item.name}${plan ? ` (plan: ${plan})` : ''}${s.item.role === 'ceiling' ? ' — ceiling' : ''} | ${formatRuns(s)} | ${s.ok ? Math.round(rows / s.median).toLocaleString('en-US') : ''} | ${loadRange(s.runs)} | ${server.length ? median(server).toFixed(1) : '–'} | ${cpu.length ? median(cpu).toFixed(2) : '–'} | ${flats.map((f) => (f === s || !f.ok || !s.ok ? '' : x(s.median, f.median))).join(' | ')} |`,
    );
  }
  lines.push('');
  for (const o of r.series.filter((s) => s.item.role === 'old')) {
    const n = r.series.find((s) => s.item.name === o.item.newName);
    if (n?.ok && o.ok) lines.push(`- ${n.item.name} against ${o.item.name} (same flags, same rounds): ${newOverOld(n.median, o.median)}.`);
  }
  for (const g of sc.goals) {
    const f = r.series.find((s) => s.item.name === g.flatload);
    const v = r.series.find((s) => s.item.name === g.vs);
    if (!f || !v || !f.ok || !v.ok) continue;
    const ratio = v.median / f.median;
    lines.push(`- ${g.flatload} vs ${g.label}: **${ratio.toFixed(2)}×** (target ≥ ${g.atLeast.toFixed(2)}×: ${ratio >= g.atLeast ? 'met' : `missed by ${((1 - ratio / g.atLeast) * 100).toFixed(0)}%`})`);
  }
  const [a, b] = r.backToBack.runs;
  if (a?.ok && b?.ok) {
    const own = r.series.find((s) => s.item.name === r.backToBack.name);
    const apart = (p: number, q: number): string => `${((Math.abs(q - p) / Math.min(p, q)) * 100).toFixed(0)}% apart`;
    const cpuA = a.measured.serverCpuSeconds;
    const cpuB = b.measured.serverCpuSeconds;
    lines.push(
      `- Stability: ${r.backToBack.name} twice in a row after the rounds: ${a.seconds.toFixed(2)} s then ${b.seconds.toFixed(2)} s (${apart(a.seconds, b.seconds)}, load average ${a.load1.toFixed(1)} then ${b.load1.toFixed(1)}${own?.ok ? `; its median in the rotation ${own.median.toFixed(2)} s` : ''})${cpuA !== null && cpuB !== null ? `; server CPU ${cpuA.toFixed(1)} s then ${cpuB.toFixed(1)} s (${apart(cpuA, cpuB)}): the second run did not pay for the first` : ''}.`,
    );
  }
  const settles = r.series.flatMap((s) => s.runs.map((x) => x.settled));
  lines.push(
    `- Before each run: up to ${Math.max(...settles.map((s) => s.dirtyPagesBefore)).toLocaleString('en-US')} dirty pages and ${(Math.max(...settles.map((s) => s.checkpointAgeBefore)) / 2 ** 20).toFixed(0)} MiB of unflushed redo written back; settling took ${median(settles.map((s) => s.seconds)).toFixed(1)} s (median)${settles.some((s) => !s.quiet) ? `; ${settles.filter((s) => !s.quiet).length} runs started before the server was quiet` : ''}.`,
  );
  return lines.join('\n');
}

async function startServer(pool: string): Promise<ThrowawayServer> {
  process.stderr.write(`starting a throwaway MariaDB (${pool} buffer pool, 1 GiB redo log)…\n`);
  return startThrowawayServer({ innodbBufferPoolSize: pool, innodbLogFileSize: '1G' });
}

/** Runs every scenario and returns the section's text (also printed, and written unless o.write is false). */
export async function runComparison(o: ComparisonOptions): Promise<string> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'flatload-bench-'));
  const servers: ThrowawayServer[] = [];
  const admins: Connection[] = [];
  try {
    const files: Files = { unsorted: join(dir, 'user_summary.tsv'), sorted: join(dir, 'user_summary-sorted.tsv'), parts: new Map() };
    process.stderr.write(`generating ${o.rows.toLocaleString('en-US')} user_summary rows (random user_id order, and a sorted copy)…\n`);
    await generateToFile(files.unsorted, { table: 'user_summary', rows: o.rows, seed: 1 });
    await generateToFile(files.sorted, { table: 'user_summary', rows: o.rows, seed: 1, sorted: true });
    const parts = splitByHand(files.unsorted, o.jobs, join(dir, 'split'), 'user_summary');
    files.parts.set('user_summary', parts);
    // The same parts under user3's name (user3's file columns are user_summary's).
    files.parts.set('user3', parts.map((p) => {
      const q = join(dirname(p), 'user3.tsv');
      linkSync(p, q);
      return q;
    }));
    const bytes = statSync(files.unsorted).size;

    const all = scenarios(files, o.jobs, o.cli, o.baseline).filter((s) => o.only.includes(s.id));
    const external = process.env['DATABASE_URL'];
    const connect = async (kind: 'big' | 'small'): Promise<{ url: URL; pid: number | undefined; admin: Connection }> => {
      let url: string;
      let pid: number | undefined;
      if (external && kind === 'big') url = external;
      else {
        const s = await startServer(kind === 'big' ? '2G' : '128M');
        servers.push(s);
        url = s.url;
        pid = s.pid;
      }
      const admin = await mysql.createConnection({ uri: url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
      admins.push(admin);
      return { url: new URL(url), pid, admin };
    };
    const conns = new Map<string, Awaited<ReturnType<typeof connect>>>();
    const results: ScenarioResult[] = [];
    let version = '';
    for (const sc of all) {
      if (sc.server === 'small' && external) {
        process.stderr.write(`${sc.title}: skipped (DATABASE_URL is set; the scenario needs a server of its own with a 128 MiB buffer pool)\n`);
        continue;
      }
      if (!conns.has(sc.server)) conns.set(sc.server, await connect(sc.server));
      const srv = conns.get(sc.server)!;
      if (!version) {
        version = String(await scalar(srv.admin, 'SELECT VERSION()'));
      }
      if (sc.engine === 'ROCKSDB') {
        const [e] = await srv.admin.query("SELECT SUPPORT AS s FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'");
        if (!(e as Array<{ s: string }>).some((r) => r.s === 'YES' || r.s === 'DEFAULT')) {
          process.stderr.write(`${sc.title}: skipped (no MyRocks on this server)\n`);
          continue;
        }
      }
      results.push(await runScenario(sc, srv, o));
      await srv.admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    }
    const minutes = (Date.now() - t0) / 60000;
    const text = render(results, o, bytes, version, minutes);
    process.stdout.write(`\n${text}\n`);
    if (o.write) {
      const doc = join(o.root, 'docs/benchmarks.md');
      writeDocSection(doc, comparisonSection(o.only), text);
      process.stderr.write(`wrote ${doc}\n`);
    }
    return text;
  } finally {
    for (const a of admins) await a.end().catch(() => undefined);
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The docs section a run writes: the whole comparison, or for --only a section of that subset's own, so a
 * partial run does not replace the other cases' tables.
 */
export function comparisonSection(only: readonly ScenarioId[]): string {
  return everyCase(only) ? 'comparison' : `comparison-only-${[...only].sort().join('-')}`;
}

/** Whether a run covers every case (no --only, or one naming them all). */
function everyCase(only: readonly ScenarioId[]): boolean {
  return only.length === SCENARIOS.length;
}

function render(results: ScenarioResult[], o: ComparisonOptions, bytes: number, version: string, minutes: number): string {
  const only = everyCase(o.only) ? '' : ` --only ${o.only.join(',')}`;
  return `## Against what a DBA would otherwise do${only ? ` (${o.only.join(', ')} only)` : ''}

Produced by \`npm run bench -- --rows ${o.rows} --repeat ${o.repeat} --jobs ${o.jobs}${only}${o.baseline ? ' --baseline DIR' : ''}\` (${new Date().toISOString().slice(0, 10)}; the whole run took ${minutes.toFixed(0)} minutes).
Machine: ${machineDescription(version)}.

Input: ${o.rows.toLocaleString('en-US')} generated \`user_summary\` rows (${(bytes / 1e6).toFixed(1)} MB TSV) in random \`user_id\` order;
\`user_id\` is the table's only unique key, so it is the clustered key. user3 loads the same file into a table
whose \`id BIGINT AUTO_INCREMENT PRIMARY KEY\` is absent from it. Servers: two throwaway MariaDB instances
(binary log off, 1 GiB redo log, otherwise defaults), one with a 2 GiB buffer pool, one with 128 MiB.

Method: every run starts on an empty table in a new database, after the server has come to rest — dirty
pages written back with \`innodb_max_dirty_pages_pct = 0\`, the redo checkpoint caught up, purge done,
MyRocks memtables flushed, \`sync\`, and mariadbd idle for a second. Each competitor runs ${o.repeat} times in
rounds whose order rotates, and keeps its median, shown with the min–max spread of its runs; every run's row count is checked, and its content against
the first run's (CHECKSUM TABLE; for user3 a checksum of the columns other than \`id\`, which depends on who
numbers the rows). Times are wall clock from the command's start to its exit, so they include each tool's
start-up, its commit and (flatload) its on-disk size report. "… faster" is the competitor's median over
flatload's: above 1 flatload wins. The load average is the machine's (it is shared with other jobs): compare
within a table, not across runs. Server CPU (mariadbd's user + system time during the run, median) moves
far less with the machine's load than wall time does, and shows how much work each way of loading costs the
server.${o.baseline ? ` ${o.baseline.name} is another checkout's flatload (\`--baseline\`), run with the same flags in the same rounds; "new/old time" below 1 means this checkout is faster.` : ''}

${results.map((r) => renderScenario(r, o.rows)).join('\n\n')}
`;
}
