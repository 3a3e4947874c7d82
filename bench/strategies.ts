import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import mysql from 'mysql2/promise';
import { ddl, fileColumns, generateToFile, type FixtureTable } from '../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';
import { scalar } from './clusterSupport.js';
import { clientLoad, flatloadLoad, parallelClients, ROCKSDB_BULK, splitByHand, type Target } from './competitors.js';
import { writeDocSection } from './doc.js';
import type { Measured } from './measure.js';
import { inRounds, loadRange, settledRun, type RunResult, type Series } from './rounds.js';
import { machineDescription } from './report.js';

interface Scenario {
  name: string;
  table: FixtureTable;
  engine: string;
  /** Rows already in the table before the measured load (a non-empty table). */
  preload?: boolean;
  sorted?: boolean;
  /** Flag sets to compare; the first is the planner's own choice (no forcing flags). */
  variants: string[][];
  /**
   * Flag sets that need the user's consent to change the table (--allow-ddl);
   * the first is the planner's choice given that consent. Judged among themselves:
   * the planner cannot choose them without the flag.
   */
  consent?: string[][];
}

const SCENARIOS: Scenario[] = [
  { name: 'user_summary, empty InnoDB', table: 'user_summary', engine: 'InnoDB', variants: [[], ['--order', 'file'], ['--jobs', '1'], ['--jobs', '4'], ['--strategy', 'insert']] },
  {
    name: 'user3, id absent, empty InnoDB',
    table: 'user3',
    engine: 'InnoDB',
    variants: [[], ['--strategy', 'load-data'], ['--jobs', '1'], ['--strategy', 'insert']],
    consent: [['--allow-ddl'], ['--allow-ddl', '--strategy', 'load-data']],
  },
  {
    name: 'sbtest, id absent, secondary index',
    table: 'sbtest',
    engine: 'InnoDB',
    variants: [[], ['--strategy', 'load-data'], ['--jobs', '1'], ['--strategy', 'insert']],
    consent: [['--allow-ddl'], ['--allow-ddl', '--strategy', 'load-data']],
  },
  {
    name: 'purchases_index, 3 secondary indexes',
    table: 'purchases_index',
    engine: 'InnoDB',
    variants: [[], ['--strategy', 'load-data'], ['--jobs', '1'], ['--strategy', 'insert']],
    consent: [['--allow-ddl'], ['--allow-ddl', '--jobs', '1']],
  },
  { name: 'user_summary, non-empty InnoDB (append)', table: 'user_summary', engine: 'InnoDB', preload: true, variants: [[], ['--order', 'file'], ['--jobs', '1'], ['--strategy', 'insert']] },
  // --on-duplicate ignore rules the bulk load out: the transactional per-chunk plan, measured here.
  { name: 'user_summary, empty MyRocks', table: 'user_summary', engine: 'ROCKSDB', variants: [[], ['--on-duplicate', 'ignore'], ['--strategy', 'insert']] },
  { name: 'user_summary sorted, empty MyRocks', table: 'user_summary', engine: 'ROCKSDB', sorted: true, variants: [[], ['--on-duplicate', 'ignore'], ['--strategy', 'insert']] },
  { name: 'user3, id absent, empty MyRocks', table: 'user3', engine: 'ROCKSDB', variants: [[], ['--on-duplicate', 'ignore'], ['--strategy', 'load-data']] },
  { name: 'user_summary, empty Aria', table: 'user_summary', engine: 'Aria', variants: [[], ['--jobs', '2'], ['--strategy', 'insert']] },
  { name: 'purchases_index, id absent, empty Aria', table: 'purchases_index', engine: 'Aria', variants: [[], ['--jobs', '2'], ['--strategy', 'load-data']] },
  { name: 'purchases_index, id absent, empty MyISAM', table: 'purchases_index', engine: 'MyISAM', variants: [[], ['--jobs', '2'], ['--strategy', 'load-data']] },
];

export interface Measurement {
  /** Flag set (flatload) or the naive tool's description. */
  label: string;
  naive: boolean;
  seconds: number;
  ok: boolean;
  strategy: string;
  /** The plan's resume guarantee (plan.guarantee.kind); 'none' for a naive load. */
  guarantee: string;
  note: string;
  /** Every run's seconds, in the order they ran. */
  runs: number[];
  /** The 1-minute load average at each run's start ("0.41–0.93"). */
  load: string;
}

/**
 * A plan that gives up resuming exactly once (an interrupted run must empty the
 * table and start again) is not a like-for-like alternative to one that keeps it:
 * it is shown, but the verdict compares the planner only with plans at least as
 * safe — except the naive loads, which guarantee nothing and are always
 * compared: a plan slower than doing nothing special is a defeat whatever it
 * guarantees.
 */
function weaker(g: string, than: string): boolean {
  const rank = (k: string): number => (k === 'none' ? -1 : k === 'restart-required' ? 0 : k === 'all-or-nothing' ? 1 : 2);
  return rank(g) < rank(than);
}

/** Table rows and the verdict for one group whose first is the planner's choice; naive loads join every group. */
export function judge(results: Measurement[], naive: Measurement[], rows: number, label: string): string[] {
  const planned = results[0]!;
  const comparable = [...results.filter((r) => !weaker(r.guarantee, planned.guarantee)), ...naive].filter((r) => r.ok);
  const best = comparable.length ? Math.min(...comparable.map((r) => r.seconds)) : Number.NaN;
  const out: string[] = [];
  for (const r of [...results, ...naive]) {
    const mark = r === planned ? ` **(planner${label})**` : r.naive ? ' (naive)' : '';
    const notCompared = r.ok && !r.naive && weaker(r.guarantee, planned.guarantee) ? ' (weaker: not compared)' : '';
    out.push(
      `| ${r.label}${mark} | ${r.strategy} | ${r.guarantee}${notCompared} | ${r.ok ? `${r.seconds.toFixed(2)}${r.runs.length > 1 ? ` [${Math.min(...r.runs).toFixed(1)}–${Math.max(...r.runs).toFixed(1)}] (${r.runs.map((x) => x.toFixed(1)).join(', ')})` : ''}` : 'failed'} | ${r.ok ? Math.round(rows / r.seconds).toLocaleString('en-US') : ''} | ${r.load} | ${r.ok ? `${(r.seconds / best).toFixed(2)}×` : r.note} |`,
    );
  }
  const within = planned.ok && planned.seconds <= best * 1.1;
  const bestNaive = naive.filter((r) => r.ok).sort((a, b) => a.seconds - b.seconds)[0];
  const verdict = [within ? `planner${label}: fastest or within 10%` : `planner${label}: NOT within 10% of the fastest`];
  if (bestNaive && planned.ok) {
    const v = bestNaive.seconds / planned.seconds;
    verdict.push(v >= 1 ? `${v.toFixed(2)}× the fastest naive load` : `**DEFEAT**: ${(1 / v).toFixed(2)}× slower than the naive ${bestNaive.label}`);
  }
  return [...out, `|  | ${verdict.join('; ')} |  |  |  |  |  |`];
}

/**
 * Two disjoint files of `first` and the remaining records, from one generated
 * file: the rows already in the table and the append interleave in key order
 * (as a nightly append of new keys does) and never collide.
 */
async function splitFixture(gen: Parameters<typeof generateToFile>[1], both: string, first: number, a: string, b: string): Promise<void> {
  await generateToFile(both, gen);
  const lines = readFileSync(both, 'latin1').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  writeFileSync(a, lines.slice(0, first).join('\n') + '\n', 'latin1');
  writeFileSync(b, lines.slice(first).join('\n') + '\n', 'latin1');
  rmSync(both);
}

/** What a DBA would do without flatload: the client's one LOAD DATA (MyRocks: its documented bulk load), and for engines that load in parallel, two clients on the split file. */
function naiveLoads(sc: Scenario, file: string, dir: string): Array<{ label: string; run: (t: Target) => Promise<Measured> }> {
  const session = sc.engine === 'ROCKSDB' ? ROCKSDB_BULK : {};
  const one = sc.engine === 'ROCKSDB' ? 'mariadb client, hand-tuned bulk load' : 'mariadb client, one LOAD DATA LOCAL';
  const out = [{ label: one, run: (t: Target) => clientLoad(t, file, session) }];
  if (sc.engine === 'InnoDB' || sc.engine === 'ROCKSDB') {
    const parts = splitByHand(file, 2, join(dir, `split-${basename(file)}`), 't');
    out.push({ label: `2 mariadb clients on \`split -n l/2\` parts${sc.engine === 'ROCKSDB' ? ', bulk load each' : ''}`, run: (t: Target) => parallelClients(t, parts, session) });
  }
  return out;
}

type Contender = { flags: string[] } | { label: string; run: (t: Target) => Promise<Measured> };

const labelOf = (c: Contender): string => ('flags' in c ? (c.flags.length ? `\`${c.flags.join(' ')}\`` : '(none)') : c.label);

interface LoadReport {
  strategy: string;
  rows: number;
  jobs: number;
  plan?: { guarantee: { kind: string } };
}

function reportOf(m: Measured): LoadReport | undefined {
  try {
    return JSON.parse(m.stdout) as LoadReport;
  } catch {
    return undefined;
  }
}

function toMeasurements(series: Series<Contender>[]): Measurement[] {
  return series.map((s) => {
    const rep = 'flags' in s.item ? reportOf(s.runs[0]!.measured) : undefined;
    return {
      label: labelOf(s.item),
      naive: !('flags' in s.item),
      seconds: s.median,
      ok: s.ok,
      strategy: 'flags' in s.item ? (rep ? `${rep.strategy}, ${rep.jobs} conn` : '?') : 'naive',
      guarantee: 'flags' in s.item ? (rep?.plan?.guarantee.kind ?? '?') : 'none',
      note: s.runs.find((r) => !r.ok)?.note.slice(0, 80) ?? '',
      runs: s.runs.map((r) => r.seconds),
      load: loadRange(s.runs),
    };
  });
}

/**
 * `npm run bench -- --strategies`: per scenario, flatload's own plan and the
 * strategies it did not choose, each on a fresh table, side by side. The
 * planner's choice should be the fastest or within 10% of it.
 */
export async function runStrategiesBench(rows: number, root: string, write: boolean, cli: string, repeat = 3): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flatload-strat-'));
  let server: ThrowawayServer | undefined;
  try {
    let url = process.env['DATABASE_URL'];
    if (!url) {
      server = await startThrowawayServer({ innodbBufferPoolSize: '2G', innodbLogFileSize: '1G' });
      url = server.url;
    }
    const admin = await mysql.createConnection({ uri: url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    const version = String(await scalar(admin, 'SELECT VERSION()'));
    await admin.query('CREATE DATABASE IF NOT EXISTS flatload_strat');
    const lines: string[] = [];
    for (const sc of SCENARIOS) {
      const [eng] = await admin.query('SHOW ENGINES');
      if (!(eng as Array<{ Engine: string; Support: string }>).some((e) => e.Engine.toUpperCase() === sc.engine.toUpperCase() && e.Support !== 'NO')) continue;
      const gen = { table: sc.table, rows, seed: 4, sorted: sc.sorted ?? false };
      const file = join(dir, `${sc.table}${sc.sorted ? '-sorted' : ''}${sc.preload ? '-append' : ''}.tsv`);
      const preFile = sc.preload ? join(dir, `${sc.table}-pre.tsv`) : undefined;
      if (preFile) await splitFixture({ ...gen, rows: rows * 2 }, join(dir, `${sc.table}-both.tsv`), rows, file, preFile);
      else await generateToFile(file, gen);
      const target: Target = { url: new URL(url), db: 'flatload_strat', table: 't', serverPid: server?.pid, ...(sc.table === 'user_summary' ? {} : { columns: fileColumns(gen) }) };
      process.stderr.write(`${sc.name} (${rows.toLocaleString('en-US')} rows):\n`);
      const once = async (c: Contender): Promise<RunResult> => {
        const r = await settledRun({
          label: `${sc.name}: ${labelOf(c)}`,
          admin,
          serverPid: server?.pid,
          prepare: async () => {
            await admin.query(`DROP DATABASE IF EXISTS flatload_strat; CREATE DATABASE flatload_strat; USE flatload_strat; ${ddl(sc.table).replace(/CREATE TABLE \S+/, 'CREATE TABLE t')} ENGINE=${sc.engine}`);
            if (preFile) await admin.query(`LOAD DATA INFILE ? INTO TABLE flatload_strat.t${target.columns ? ` (${target.columns.join(',')})` : ''}`, [preFile]);
          },
          run: () => ('flags' in c ? flatloadLoad(cli, target, file, c.flags) : c.run(target)),
          check: async (m) => {
            if ('flags' in c) {
              const rep = reportOf(m);
              if (rep && rep.rows !== rows) return `${rep.rows} rows loaded`;
            }
            const [cnt] = await admin.query('SELECT COUNT(*) AS n FROM flatload_strat.t');
            const inTable = Number((cnt as Array<{ n: number }>)[0]!.n);
            return inTable === rows * (preFile ? 2 : 1) ? '' : `${inTable} rows in the table`;
          },
        });
        const rep = 'flags' in c ? reportOf(r.measured) : undefined;
        process.stderr.write(`  ${labelOf(c)}: ${r.ok ? `${r.seconds.toFixed(2)} s${rep ? ` (${rep.strategy}, ${rep.jobs} conn)` : ''}` : `FAILED ${r.note}`} [load ${r.load1.toFixed(2)}]\n`);
        return r;
      };
      const naive: Contender[] = naiveLoads(sc, file, dir);
      const flagSets: Contender[] = sc.variants.map((flags) => ({ flags }));
      // The naive loads rotate with the planner's own alternatives, so they share its rounds' conditions.
      const main = toMeasurements(await inRounds([...flagSets, ...naive], repeat, once));
      const consented = toMeasurements(await inRounds((sc.consent ?? []).map((flags) => ({ flags })), repeat, once));
      lines.push(`### ${sc.name}`, '', `| flags | plan | resume guarantee | median seconds [min–max] (${repeat} rounds) | rows/s | load avg at start | vs fastest |`, '|---|---|---|---:|---:|---:|---:|');
      const naiveResults = main.filter((m) => m.naive);
      lines.push(...judge(main.filter((m) => !m.naive), naiveResults, rows, ''));
      if (consented.length) lines.push(...judge(consented, naiveResults, rows, ' with --allow-ddl'));
      lines.push('');
    }
    await admin.query('DROP DATABASE flatload_strat');
    await admin.end();
    const text = `## Strategies side by side (flatload itself)

Produced by \`npm run bench -- --strategies --rows ${rows}\` (${new Date().toISOString().slice(0, 10)}): for each scenario a fresh
table, flatload with no forcing flags (the planner's choice) and then with flags that force the
alternatives, and the naive loads a DBA would run instead (the \`mariadb\` client's one LOAD DATA LOCAL
— for MyRocks its documented hand-tuned bulk load — and, where the engine loads in parallel, two
clients on the file split with \`split -n l/2\`), on one throwaway MariaDB 10.11; each runs ${repeat} times
in rotating order on a server at rest (dirty pages written back, redo checkpoint caught up, MyRocks
memtables flushed, server idle) and keeps its median. Times include flatload's start-up, the final
commit (and, for plans that defer work to the end, the index builds) and its on-disk size report.
Rows with \`--allow-ddl\` need the user's consent to change the table, so they are judged among
themselves: the first is what the planner chooses given that consent. "vs fastest" is relative to the
fastest of the group among plans whose resume guarantee is at least the planner's — a plan an
interruption would force to start over (restart-required) is shown but not compared with one that
resumes exactly once — and the naive loads, which guarantee nothing but are always compared: a
planner slower than the fastest of them is marked **DEFEAT**. Machine: ${machineDescription(version)}.

${lines.join('\n')}`;
    process.stdout.write(`\n${text}\n`);
    if (write) writeDocSection(join(root, 'docs/strategies.md'), 'strategies', text);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (server) await server.stop();
  }
}
