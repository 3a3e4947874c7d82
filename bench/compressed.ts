/**
 * `npm run bench -- --compressed`: a gzipped input against the same file
 * plain. The --scale generator's random-order `user_summary` file (cached),
 * gzipped once beside it (`gzip -6`), loaded into a throwaway server with a
 * 128 MiB buffer pool by `flatload load FILE --table T --jobs 2` on each,
 * every run with its own --tmpdir whose peak is polled; and once, the naive
 * `zcat FILE | mariadb … LOAD DATA LOCAL INFILE '/dev/stdin'` stopped after
 * --naive-seconds (rows reached).
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import type { ThrowawayServer } from '../src/devserver/server.js';
import { FlatloadError } from '../src/errors/index.js';
import { flatloadLoad, type Target } from './competitors.js';
import { writeDocSection } from './doc.js';
import { measure, type Measured } from './measure.js';
import { formatEstimate } from './quiet.js';
import { machineDescription } from './report.js';
import { formatRuns, inRounds, medianOf, runsHeading, settledRun, type RunResult, type Series } from './rounds.js';
import { cachedInput, cachePaths, countRows, freshRun, mb, naiveFor, runLine, smallPoolServer, withPeakDisk, type RunExtra } from './scale.js';

const DB = 'flatload_gz';

export interface CompressedOptions {
  rows: number;
  repeat: number;
  /** How long the naive `zcat | mariadb` load runs before it is stopped. */
  naiveSeconds: number;
  /** Where the generated file and its .gz are kept between runs. */
  cacheDir: string;
  write: boolean;
  root: string;
  cli: string;
  jobs?: number;
}

/** Rough per-row costs on a 2-core machine: for planning a quiet window, not results. */
const RATE = { generate: 1.5e6, gzip: 0.6e6, flatload: 0.3e6, gzFlatload: 0.28e6, naive: 35e3, count: 3e6 };

/** Seconds the whole --compressed run should take, roughly (generating and gzipping only when not cached). */
export function compressedEstimate(rows: number, repeat: number, naiveSeconds: number, cached: { file: boolean; gz: boolean }): number {
  const once = (cached.file ? 0 : rows / RATE.generate) + (cached.gz ? 0 : rows / RATE.gzip) + 15 + Math.min(naiveSeconds, rows / RATE.naive) + 30;
  const round = rows / RATE.flatload + rows / RATE.gzFlatload + (2 * rows) / RATE.count + 2 * 30;
  return once + repeat * round;
}

const gzPath = (file: string): string => `${file}.gz`;

export function compressedPreamble(o: Pick<CompressedOptions, 'rows' | 'repeat' | 'naiveSeconds' | 'cacheDir'>): string {
  const file = cachePaths(o.cacheDir, o.rows).unsorted;
  const cached = { file: existsSync(`${file}.json`), gz: existsSync(file) && freshGz(file, gzPath(file)) !== undefined };
  return `estimated duration: ${formatEstimate(compressedEstimate(o.rows, o.repeat, o.naiveSeconds, cached))} (--compressed, ${o.rows.toLocaleString('en-US')} rows, ${o.repeat} round${o.repeat === 1 ? '' : 's'}, naive zcat | mariadb once for ${o.naiveSeconds} s; the input ${cached.file ? 'is cached' : 'is generated first'}, its .gz ${cached.gz ? 'is cached' : 'is made first'}; rough, from per-row rates on a 2-core machine)`;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** What the .gz was made from: a regenerated file (another size) makes it stale. */
interface GzMeta {
  sourceBytes: number;
  bytes: number;
}

function freshGz(file: string, gz: string): GzMeta | undefined {
  if (!existsSync(gz) || !existsSync(`${gz}.json`)) return undefined;
  try {
    const m = JSON.parse(readFileSync(`${gz}.json`, 'utf8')) as GzMeta;
    return m.sourceBytes === statSync(file).size && m.bytes === statSync(gz).size ? m : undefined;
  } catch {
    return undefined;
  }
}

/** FILE.gz beside FILE (`gzip -6`), made once; a partial or stale one never stands in for it. */
export async function cachedGzip(file: string): Promise<{ gz: string; bytes: number; reused: boolean }> {
  const gz = gzPath(file);
  const have = freshGz(file, gz);
  if (have) return { gz, bytes: have.bytes, reused: true };
  process.stderr.write(`gzip -6 of ${file} into ${gz}…\n`);
  const partial = `${gz}.partial`;
  const m = await measure('sh', ['-c', `gzip -6 -c ${shq(file)} > ${shq(partial)}`]);
  if (m.code !== 0) throw new FlatloadError('INTERNAL', `gzip failed: ${m.stderr.trim()}`);
  renameSync(partial, gz);
  const meta: GzMeta = { sourceBytes: statSync(file).size, bytes: statSync(gz).size };
  writeFileSync(`${gz}.json`, JSON.stringify(meta));
  return { gz, bytes: meta.bytes, reused: false };
}

/** `zcat FILE | mariadb … -e "LOAD DATA LOCAL INFILE '/dev/stdin' …"`, as a DBA would pipe it. */
function zcatClient(t: Target, gz: string): Promise<Measured> {
  const u = t.url;
  const client = ['mariadb', '--no-defaults', '-h', u.hostname, '-P', u.port || '3306', '-u', decodeURIComponent(u.username || 'root')];
  if (u.password) client.push(`-p${decodeURIComponent(u.password)}`);
  client.push('--local-infile=1', t.db, '-e', `LOAD DATA LOCAL INFILE '/dev/stdin' INTO TABLE \`${t.table}\``);
  return measure('sh', ['-c', `zcat ${shq(gz)} | ${client.map(shq).join(' ')}`], { serverPid: t.serverPid });
}


interface Contender {
  name: string;
  kind: 'plain' | 'gz' | 'naive';
}

/** Runs the rounds (and the naive pipe once) and returns the section's text (also printed, and written unless o.write is false). */
export async function runCompressedBench(o: CompressedOptions): Promise<string> {
  const t0 = Date.now();
  const jobs = o.jobs ?? 2;
  const input = await cachedInput(o.cacheDir, o.rows);
  const gz = await cachedGzip(input.file);
  const work = mkdtempSync(join(tmpdir(), 'flatload-gzbench-'));
  let server: ThrowawayServer | undefined;
  let admin: Connection | undefined;
  try {
    const started = await smallPoolServer(DB);
    ({ server, admin } = started);
    const { version, target } = started;
    const extras = new Map<RunResult, RunExtra>();
    const once = async (c: Contender): Promise<RunResult> => {
      process.stderr.write(`  ${c.name} … `);
      const tmp = join(work, `tmpdir-${c.kind}`);
      let extra: RunExtra = { peakTmpBytes: null, rowsReached: null, finished: true };
      const r = await settledRun({
        label: `compressed: ${c.name}`,
        admin: admin!,
        serverPid: server!.pid,
        prepare: () => freshRun(admin!, DB, tmp),
        run: async () => {
          if (c.kind === 'naive') {
            const n = await naiveFor(admin!, () => zcatClient(target, gz.gz), o.naiveSeconds, target);
            extra = { ...extra, rowsReached: n.rowsReached, finished: n.finished };
            return n.measured;
          }
          const file = c.kind === 'gz' ? gz.gz : input.file;
          const p = await withPeakDisk(tmp, () => flatloadLoad(o.cli, target, file, ['--jobs', String(jobs), '--tmpdir', tmp]));
          extra = { ...extra, peakTmpBytes: p.peakBytes };
          return p.result;
        },
        check: async () => {
          if (c.kind === 'naive') return '';
          const n = await countRows(admin!, target);
          return n === o.rows ? '' : `${n} rows in the table`;
        },
      });
      extras.set(r, extra);
      process.stderr.write(runLine(r, extra));
      return r;
    };
    const flags = `--table T --jobs ${jobs}`;
    const loads: Contender[] = [
      { name: `flatload load FILE ${flags} (plain)`, kind: 'plain' },
      { name: `flatload load FILE.gz ${flags}`, kind: 'gz' },
    ];
    const series = await inRounds(loads, o.repeat, once);
    // Once, not every round: it is stopped after --naive-seconds, and only how far it got is reported.
    const naive = await inRounds<Contender>([{ name: `zcat FILE.gz | mariadb … LOAD DATA LOCAL INFILE '/dev/stdin', stopped after ${o.naiveSeconds} s`, kind: 'naive' }], 1, once);
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    const text = renderCompressed({ o, jobs, series: [...series, ...naive], extras, plainBytes: input.meta.bytes, gzBytes: gz.bytes, version, minutes: (Date.now() - t0) / 60000, madeNow: !input.reused || !gz.reused });
    process.stdout.write(`\n${text}\n`);
    if (o.write) {
      const doc = join(o.root, 'docs/benchmarks.md');
      if (writeDocSection(doc, 'compressed', text)) process.stderr.write(`wrote ${doc}\n`);
    }
    return text;
  } finally {
    await admin?.end().catch(() => undefined);
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The input's sizes: a tenth of a MB shows a small run's compression too. */
const mb1 = (b: number): string => `${(b / 1e6).toFixed(1)} MB`;

interface RenderInput {
  o: CompressedOptions;
  jobs: number;
  series: Series<Contender>[];
  extras: Map<RunResult, RunExtra>;
  plainBytes: number;
  gzBytes: number;
  version: string;
  minutes: number;
  madeNow: boolean;
}

/** A pipe in a name would end its Markdown table cell. */
const cell = (s: string): string => s.replace(/\|/g, '\\|');

function renderCompressed(r: RenderInput): string {
  const { o, series, extras, plainBytes } = r;
  const loads = series.flatMap((s) => s.runs.map((x) => x.load1));
  const lines = [
    '## Compressed input: a .gz against the plain file',
    '',
    `Produced by \`npm run bench -- --compressed --rows ${o.rows} --repeat ${o.repeat} --naive-seconds ${o.naiveSeconds}\` (${new Date().toISOString().slice(0, 10)}; the whole run took ${r.minutes.toFixed(0)} min${r.madeNow ? ', making the file and its .gz included' : ', the file and its .gz from the cache'}). Machine: ${machineDescription(r.version)}. Load average at the runs' start: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}.`,
    '',
    `Input: ${o.rows.toLocaleString('en-US')} generated \`user_summary\` rows in random \`user_id\` order, ${mb1(plainBytes)} TSV, ${mb1(r.gzBytes)} gzipped (${(r.gzBytes / plainBytes).toFixed(2)}×, \`gzip -6\`). A throwaway MariaDB with a 128 MiB buffer pool and a 1 GiB redo log. flatload runs with default flags and \`--jobs ${r.jobs}\`, each run with its own \`--tmpdir\`, whose size is polled every second; its peak is shown as a fraction of the decompressed size. Peak RSS and client CPU (user + system) are GNU time's. ${o.repeat} round${o.repeat === 1 ? '' : 's'} of the two flatload loads in rotating order, each on an empty table after the server came to rest, every COUNT(*) checked; the naive pipe once.`,
    '',
    `| competitor | ${runsHeading(o.repeat)} | rows/s | peak RSS | peak --tmpdir (× decompressed) | client CPU s | load avg at start |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of series) {
    const ex = s.runs.map((x) => extras.get(x));
    const cpu = medianOf(s.runs.map((x) => x.measured.clientCpuSeconds));
    const rss = medianOf(s.runs.map((x) => x.measured.clientPeakRssBytes));
    const tmpPeak = medianOf(ex.map((e) => e?.peakTmpBytes ?? null));
    const loadAt = s.runs.map((x) => x.load1.toFixed(2)).join(', ');
    const rssCell = rss !== null ? mb(rss) : '–';
    const cpuCell = cpu !== null ? cpu.toFixed(1) : '–';
    if (s.item.kind === 'naive') {
      const e = ex[0];
      const reached = e?.rowsReached ?? 0;
      lines.push(`| ${cell(s.item.name)} | ${e?.finished ? formatRuns(s) : `stopped at ${o.naiveSeconds} s`} | ${e?.finished ? Math.round(o.rows / s.median).toLocaleString('en-US') : `${reached.toLocaleString('en-US')} rows reached`} | ${rssCell} | – | ${cpuCell} | ${loadAt} |`);
      continue;
    }
    lines.push(`| ${cell(s.item.name)} | ${formatRuns(s)} | ${s.ok ? Math.round(o.rows / s.median).toLocaleString('en-US') : ''} | ${rssCell} | ${tmpPeak !== null ? `${mb(tmpPeak)} (${(tmpPeak / plainBytes).toFixed(2)}×)` : '–'} | ${cpuCell} | ${loadAt} |`);
  }
  lines.push('');
  const plain = series.find((s) => s.item.kind === 'plain');
  const gzs = series.find((s) => s.item.kind === 'gz');
  if (plain?.ok && gzs?.ok) {
    const perRound = gzs.runs.map((g, k) => g.seconds / plain.runs[k]!.seconds);
    lines.push(`- gz/plain time: ${(gzs.median / plain.median).toFixed(2)} (medians; per round ${perRound.map((x) => x.toFixed(2)).join(', ')}).`);
  }
  const nv = series.find((s) => s.item.kind === 'naive');
  const nvEx = nv ? extras.get(nv.runs[0]!) : undefined;
  if (gzs?.ok && nvEx && nvEx.rowsReached !== null && !nvEx.finished) {
    lines.push(`- In its first ${o.naiveSeconds} s the naive pipe reached ${nvEx.rowsReached.toLocaleString('en-US')} rows of ${o.rows.toLocaleString('en-US')}; flatload on the .gz loaded them all in ${gzs.median.toFixed(1)} s (median).`);
  }
  return lines.join('\n');
}
