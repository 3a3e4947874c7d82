/**
 * `npm run bench -- --export`: a whole export — four InnoDB tables of
 * different sizes, one TSV file each, named after its table as
 * mariadb-import requires — loaded by `mariadb-import --local
 * --use-threads=N` and by `flatload load DIR --jobs N`, at equal connections,
 * each run on empty tables and a server at rest, order rotating, medians,
 * every table's count and checksum checked. Writes its section of
 * docs/benchmarks.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql, { type Connection } from 'mysql2/promise';
import { ddl, generateToFile } from '../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';
import { FlatloadError } from '../src/errors/index.js';
import { checksumOf, scalar } from './clusterSupport.js';
import { mariadbImport, newOverOld, type Baseline, type Target } from './competitors.js';
import { writeDocSection } from './doc.js';
import { measure, type Measured } from './measure.js';
import { machineDescription } from './report.js';
import { formatRuns, inRounds, loadRange, median, runsHeading, settledRun, type RunResult } from './rounds.js';

const DB = 'flatload_bench_export';
/** Each table's share of the rows: a big table, two middling, one small. */
const TABLES: Array<[name: string, share: number]> = [
  ['orders', 0.45],
  ['customers', 0.25],
  ['events', 0.2],
  ['regions', 0.1],
];

export interface ExportBenchOptions {
  rows: number;
  repeat: number;
  jobs: number;
  write: boolean;
  root: string;
  cli: string;
  /** innodb_buffer_pool_size of the throwaway server: 2G holds every table; 128M makes them outgrow it, as a multi-GB nightly export does. */
  bufferPool: string;
  /**
   * The server on the first core, every client on the others (taskset): the
   * client's CPU is then not the server's, as when the loader runs on a host
   * of its own or the server has cores to spare.
   */
  pin?: boolean;
  /** Another checkout's flatload, run beside this one with the same flags. */
  baseline?: Baseline;
}

interface Competitor {
  name: string;
  flatload: boolean;
  run(t: Target, dir: string, files: string[]): Promise<Measured>;
}

async function contents(admin: Connection): Promise<string> {
  const out: string[] = [];
  for (const [t] of TABLES) {
    const [c] = await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.${t}`);
    out.push(`${t}:${Number((c as Array<{ n: unknown }>)[0]!.n)}:${await checksumOf(admin, `${DB}.${t}`)}`);
  }
  return out.join(' ');
}

/** Server CPU, which the machine's other load moves far less than wall time, and a warning when the runs of one tool spread widely. */
function cpuAndSpread(imp: RunResult[], fl: RunResult[]): string[] {
  const cpu = (rs: RunResult[]): number | null => {
    const xs = rs.map((r) => r.measured.serverCpuSeconds).filter((c): c is number => c !== null);
    return xs.length ? median(xs) : null;
  };
  const out: string[] = [];
  const a = cpu(imp);
  const b = cpu(fl);
  if (a !== null && b !== null && b > 0) out.push(`- Server CPU (mariadbd user + system, median): mariadb-import ${a.toFixed(1)} s, flatload ${b.toFixed(1)} s: flatload costs the server ${(a / b).toFixed(2)}× less work.`);
  const spread = Math.max(...[imp, fl].map((rs) => Math.max(...rs.map((r) => r.seconds)) / Math.max(1e-9, Math.min(...rs.map((r) => r.seconds)))));
  if (spread > 1.5) {
    out.push(`- The same tool's runs differ by up to ${spread.toFixed(1)}× in wall time on this shared machine (load average ${loadRange([...imp, ...fl])} on ${availableParallelism()} cores): the wall-clock ratio of this run says little; rerun on a quiet machine.`);
  }
  return out;
}

async function statusValue(admin: Connection, name: string): Promise<number> {
  const [r] = await admin.query('SHOW GLOBAL STATUS LIKE ?', [name]);
  return Number((r as Array<{ Value: string }>)[0]?.Value);
}

/** Connections open now, after resetting the high-water mark to them; null when the account may not reset it (RELOAD). */
async function connectionsOpen(admin: Connection): Promise<number | null> {
  try {
    await admin.query('FLUSH STATUS');
  } catch {
    return null;
  }
  return statusValue(admin, 'Threads_connected');
}

/** Runs the rounds and returns the section's text (also printed, and written unless o.write is false). */
export async function runExportBench(o: ExportBenchOptions): Promise<string> {
  // The default pool holds every table; a smaller one is the nightly multi-GB case, written to a section of its own.
  const defaultPool = o.bufferPool === '2G';
  const cpus = availableParallelism();
  if (o.pin && cpus < 2) throw new FlatloadError('USAGE', '--pin needs at least two cores: one for the server, one for the clients');
  const clientCpus = o.pin ? (cpus > 2 ? `1-${cpus - 1}` : '1') : undefined;
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'flatload-bench-export-'));
  let server: ThrowawayServer | undefined;
  let admin: Connection | undefined;
  try {
    const dump = join(dir, 'export');
    const files: string[] = [];
    const counts = new Map<string, number>();
    process.stderr.write(`generating an export of ${TABLES.length} user_summary tables, ${o.rows.toLocaleString('en-US')} rows in all…\n`);
    mkdirSync(dump);
    for (const [i, [name, share]] of TABLES.entries()) {
      const rows = Math.round(o.rows * share);
      const file = join(dump, `${name}.tsv`);
      await generateToFile(file, { table: 'user_summary', rows, seed: 11 + i });
      files.push(file);
      counts.set(name, rows);
    }
    // The same rows, each file in user_id order: what mariadb-import does with an export that arrives sorted (the ceiling).
    const sortedDump = join(dir, 'sorted');
    mkdirSync(sortedDump);
    const sortedFiles: string[] = [];
    for (const [i, [name, share]] of TABLES.entries()) {
      const file = join(sortedDump, `${name}.tsv`);
      await generateToFile(file, { table: 'user_summary', rows: Math.round(o.rows * share), seed: 11 + i, sorted: true });
      sortedFiles.push(file);
    }
    const bytes = files.reduce((a, f) => a + statSync(f).size, 0);
    const external = process.env['DATABASE_URL'];
    let url: string;
    if (external) url = external;
    else {
      process.stderr.write(`starting a throwaway MariaDB (${o.bufferPool} buffer pool, 1 GiB redo log)…\n`);
      server = await startThrowawayServer({ innodbBufferPoolSize: o.bufferPool, innodbLogFileSize: '1G' });
      url = server.url;
    }
    if (clientCpus !== undefined) {
      // Every thread the server has now; the ones it starts later inherit the mask of the thread that starts them.
      const r = server ? spawnSync('taskset', ['-a', '-p', '-c', '0', String(server.pid)], { encoding: 'utf8' }) : undefined;
      if (!r || r.status !== 0) throw new FlatloadError('USAGE', `--pin needs the benchmark's own server and taskset${r ? `: ${r.stderr.trim()}` : ' (DATABASE_URL is set)'}`);
    }
    admin = await mysql.createConnection({ uri: url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    const version = String(await scalar(admin, 'SELECT VERSION()'));
    const target: Target = { url: new URL(url), db: DB, table: TABLES[0]![0], ...(server ? { serverPid: server.pid } : {}) };
    const n = o.jobs;
    const flat = (name: string, flags: string[], cli = o.cli): Competitor => ({
      name,
      flatload: true,
      run: (t, d) => {
        const u = new URL(t.url.toString());
        u.pathname = `/${DB}`;
        return measure(process.execPath, [cli, 'load', d, '--progress', 'none', '--json', ...flags], {
          ...(t.serverPid ? { serverPid: t.serverPid } : {}),
          ...(clientCpus !== undefined ? { cpus: clientCpus } : {}),
          env: { ...process.env, DATABASE_URL: u.toString() },
        });
      },
    });
    const competitors: Competitor[] = [
      { name: `mariadb-import --local --use-threads=${n}`, flatload: false, run: (t, _d, f) => mariadbImport(t, f, n, clientCpus) },
      flat(`flatload load DIR --jobs ${n}`, ['--jobs', String(n)]),
      { name: `mariadb-import --local --use-threads=${n} on copies sorted by user_id (the ceiling)`, flatload: false, run: (t) => mariadbImport(t, sortedFiles, n, clientCpus) },
      ...(o.baseline ? [flat(`${o.baseline.name} load DIR --jobs ${n}`, ['--jobs', String(n)], o.baseline.cli)] : []),
    ];
    let reference: string | undefined;
    /** Each run's most connections open at once (the bench's own left out); none when the account may not FLUSH STATUS. */
    const peaks = new Map<Competitor, number[]>(competitors.map((c) => [c, []]));
    const once = async (c: Competitor): Promise<RunResult> => {
      process.stderr.write(`  ${c.name} … `);
      const r = await settledRun({
        label: `export: ${c.name}`,
        admin: admin!,
        serverPid: server?.pid,
        prepare: async () => {
          await admin!.query(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}; USE ${DB}; ${TABLES.map(([t]) => `${ddl('user_summary').replace(/CREATE TABLE \S+/, `CREATE TABLE ${t}`)} ENGINE=InnoDB`).join('; ')}`);
        },
        run: async () => {
          const before = await connectionsOpen(admin!);
          const m = await c.run(target, dump, files);
          if (before !== null) peaks.get(c)!.push((await statusValue(admin!, 'Max_used_connections')) - before);
          return m;
        },
        check: async () => {
          const got = await contents(admin!);
          for (const [t, rows] of counts) if (!got.includes(`${t}:${rows}:`)) return `${t} does not hold ${rows} rows: ${got}`;
          reference ??= got;
          return got === reference ? '' : `content ${got}, expected ${reference}`;
        },
      });
      process.stderr.write(`${r.ok ? `${r.seconds.toFixed(2)} s` : `FAILED ${r.note}`} [load ${r.load1.toFixed(2)}]\n`);
      return r;
    };
    const series = await inRounds(competitors, o.repeat, once);
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    const imp = series[0]!;
    const fl = series[1]!;
    const ceiling = series[2]!;
    const old = series[3];
    const pinned = clientCpus !== undefined ? `; the server pinned to core 0 and every client to core${cpus > 2 ? 's' : ''} ${clientCpus} (\`taskset\`), so the client's CPU is not the server's, as when the loader runs on a host of its own` : '';
    const lines = [
      `## A whole export: flatload against mariadb-import${defaultPool ? '' : `, ${o.bufferPool} buffer pool`}${o.pin ? ', server and clients on cores of their own' : ''}`,
      '',
      `Produced by \`npm run bench -- --export --rows ${o.rows} --repeat ${o.repeat} --jobs ${n}${defaultPool ? '' : ` --buffer-pool ${o.bufferPool}`}${o.pin ? ' --pin' : ''}${o.baseline ? ' --baseline DIR' : ''}\` (${new Date().toISOString().slice(0, 10)}; the whole run took ${((Date.now() - t0) / 60000).toFixed(0)} minutes).`,
      `Machine: ${machineDescription(version)}.`,
      '',
      `Input: a directory of ${TABLES.length} TSV files, one per table (${TABLES.map(([t, s]) => `${t} ${Math.round(o.rows * s).toLocaleString('en-US')} rows`).join(', ')}; ${(bytes / 1e6).toFixed(1)} MB in all), generated \`user_summary\` rows in random \`user_id\` order, into InnoDB tables of \`user_summary\`'s definition; a throwaway MariaDB with a ${defaultPool ? '2 GiB buffer pool (every table fits)' : `${o.bufferPool} buffer pool (the tables outgrow it)`} and a 1 GiB redo log${pinned}. Both tools get ${n} connections: \`mariadb-import --use-threads=${n}\` loads ${n} files at a time, one LOAD DATA LOCAL each; flatload shares ${n} loading streams between the tables, chunk by chunk. The ceiling is mariadb-import on a copy of the export whose files are already in \`user_id\` order: what no sort at all would cost. Each run starts on empty tables after the server came to rest; ${o.repeat} round${o.repeat === 1 ? '' : 's'} in rotating order, medians with their min–max spread; every table's COUNT(*) and CHECKSUM TABLE checked against the first run's.`,
      '',
      `| competitor | ${runsHeading(o.repeat)} | rows/s | load avg | server CPU s | connections at most |`,
      '|---|---:|---:|---:|---:|---:|',
      ...series.map((s) => {
        const cpu = s.runs.map((x) => x.measured.serverCpuSeconds).filter((c): c is number => c !== null);
        const p = peaks.get(s.item)!;
        return `| ${s.item.name} | ${formatRuns(s)} | ${s.ok ? Math.round(o.rows / s.median).toLocaleString('en-US') : ''} | ${loadRange(s.runs)} | ${cpu.length ? median(cpu).toFixed(1) : '–'} | ${p.length ? Math.max(...p) : '–'} |`;
      }),
      '',
      `Connections at most: the most the tool had open at once in any run (Max_used_connections after FLUSH STATUS, less the benchmark's own). flatload's are its ${n} loading connections, one control connection per table being loaded (${n + 1} at most) and one for the export; the control connections hold no statement while the tables' chunks load. The server counts a connection until its thread has ended, so a table's control connection closing as the next table's opens can show as one more.`,
      '',
      imp.ok && fl.ok
        ? `- flatload vs mariadb-import at ${n} connections: **${(imp.median / fl.median).toFixed(2)}×** (target ≥ 1.50×: ${imp.median / fl.median >= 1.5 ? 'met' : `missed by ${((1 - imp.median / fl.median / 1.5) * 100).toFixed(0)}%`})`
        : '- a competitor failed: no ratio',
      ...(imp.ok && ceiling.ok && fl.ok
        ? [
            `- the ceiling (an export that arrives sorted) vs mariadb-import on the export as it is: ${(imp.median / ceiling.median).toFixed(2)}×; flatload, which sorts it, is ${(ceiling.median / fl.median).toFixed(2)}× the ceiling.`,
          ]
        : []),
      ...(old?.ok && fl.ok ? [`- flatload against ${old.item.name.split(' ')[0]} (another checkout, \`--baseline\`; same flags, same rounds): ${newOverOld(fl.median, old.median)}.`] : []),
      ...cpuAndSpread(imp.runs, fl.runs),
    ];
    const text = lines.join('\n');
    process.stdout.write(`\n${text}\n`);
    if (o.write) {
      const doc = join(o.root, 'docs/benchmarks.md');
      writeDocSection(doc, `${defaultPool ? 'export' : `export-${o.bufferPool}`}${o.pin ? '-pinned' : ''}`, text);
      process.stderr.write(`wrote ${doc}\n`);
    }
    return text;
  } finally {
    await admin?.end().catch(() => undefined);
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
