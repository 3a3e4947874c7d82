/**
 * `npm run bench -- --scale`: the seed's experiment at its own size. A
 * 200M-row `user_summary` file in random key order (generated once and
 * cached), loaded into a throwaway server whose 128 MiB buffer pool the table
 * outgrows many times, by `flatload load FILE --table T --jobs 2` with default
 * flags; beside it the `mariadb` client on a copy sorted beforehand with GNU
 * sort (the sort's time shown apart) and the naive client on the random-order
 * file for its first minutes (rows reached). Writes its section of
 * docs/benchmarks.md with the published TokuDB figures for the reader to
 * compare.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import mysql, { type Connection } from 'mysql2/promise';
import { ddl, generateToFile } from '../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';
import { FlatloadError } from '../src/errors/index.js';
import { scalar } from './clusterSupport.js';
import { clientLoad, flatloadLoad, type Target } from './competitors.js';
import { writeDocSection } from './doc.js';
import { measure, type Measured } from './measure.js';
import { formatEstimate, QUIET_LOAD, session } from './quiet.js';
import { machineDescription } from './report.js';
import { formatRuns, inRounds, median, medianOf, runsHeading, settledRun, type RunResult, type Series } from './rounds.js';

const DB = 'flatload_scale';
const TABLE = 'user_summary';
const SEED = 1;

/** The published experiment this project answers: one LOAD DATA into TokuDB. */
export const TOKUDB = { rows: 200_000_000, fileGB: 8.5, seconds: 348, rowsPerSecond: 574_000, onDiskGB: 3.5, machine: '8 cores, 8 GB RAM' };

export interface ScaleOptions {
  rows: number;
  repeat: number;
  /** How long the naive client (LOAD DATA LOCAL of the random-order file) runs before it is stopped. */
  naiveSeconds: number;
  /** Where the generated file and its sorted copy are kept between runs. */
  cacheDir: string;
  write: boolean;
  root: string;
  cli: string;
  jobs?: number;
}

/** Rough per-row costs on a 2-core machine (from the issue's 50M-row runs): for planning a quiet window, not results. */
const RATE = { generate: 1.5e6, sort: 0.7e6, flatload: 0.3e6, sortedClient: 0.4e6, naive: 35e3, count: 3e6 };

/** Seconds the whole --scale run should take, roughly (generation and sort only when not cached). */
export function scaleEstimate(rows: number, repeat: number, naiveSeconds: number, cached: { file: boolean; sorted: boolean }): number {
  const once = (cached.file ? 0 : rows / RATE.generate) + (cached.sorted ? 0 : rows / RATE.sort) + 15;
  // Per round: the three loads, a COUNT(*) after each checked load, the drop and the settle.
  const round = rows / RATE.flatload + rows / RATE.sortedClient + Math.min(naiveSeconds, rows / RATE.naive) + (2 * rows) / RATE.count + 30;
  return once + repeat * round;
}

/** About what one generated user_summary row takes in the TSV. */
const BYTES_PER_ROW = 38;

/**
 * Disk the run needs, roughly: in the cache the file, its sorted copy and
 * GNU sort's temporary files (as much again while it sorts); under the OS
 * tmp dir flatload's --tmpdir (~1.2× the input today) and the server's data
 * (~1.6×). Printed with what is free, so a 200M-row run does not die an hour in.
 */
function diskNote(cacheDir: string, rows: number, cached: { file: boolean; sorted: boolean }): string {
  const input = rows * BYTES_PER_ROW;
  const cacheNeed = (cached.file ? 0 : input) + (cached.sorted ? 0 : 2 * input);
  const tmpNeed = 2.8 * input;
  const free = (dir: string): number | null => {
    try {
      const st = statfsSync(dir);
      return st.bavail * st.bsize;
    } catch {
      return null;
    }
  };
  const fc = free(existsSync(cacheDir) ? cacheDir : tmpdir());
  const ft = free(tmpdir());
  const short = (fc !== null && fc < cacheNeed) || (ft !== null && ft < tmpNeed);
  return `disk: ~${gb(cacheNeed)} more in ${cacheDir} (${fc === null ? '?' : gb(fc)} free), ~${gb(tmpNeed)} at most in ${tmpdir()} (${ft === null ? '?' : gb(ft)} free)${short ? ' — NOT ENOUGH: free some or pass --cache DIR elsewhere' : ''}`;
}

interface Meta {
  bytes: number;
  /** The sorted copy: how long GNU sort took when it was made, and its CPU. */
  sortSeconds?: number;
  sortCpuSeconds?: number | null;
  /** The 1-minute load average as the sort started. */
  sortLoad1?: number;
  made: string;
}

function readMeta(file: string): Meta | undefined {
  const meta = `${file}.json`;
  if (!existsSync(file) || !existsSync(meta)) return undefined;
  try {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as Meta;
    return statSync(file).size === m.bytes ? m : undefined;
  } catch {
    return undefined;
  }
}

export function cachePaths(cacheDir: string, rows: number, seed = SEED): { unsorted: string; sorted: string } {
  const base = join(cacheDir, `user_summary-${rows}-seed${seed}`);
  return { unsorted: `${base}.tsv`, sorted: `${base}-sorted.tsv` };
}

/** The random-order file, generated (streaming, in ~1 MiB buffers) unless the cache holds it at the right size. */
export async function cachedInput(cacheDir: string, rows: number): Promise<{ file: string; meta: Meta; reused: boolean }> {
  mkdirSync(cacheDir, { recursive: true });
  const { unsorted: file } = cachePaths(cacheDir, rows);
  const have = readMeta(file);
  if (have) return { file, meta: have, reused: true };
  process.stderr.write(`generating ${rows.toLocaleString('en-US')} user_summary rows in random user_id order into ${file}…\n`);
  const partial = `${file}.partial`;
  const g = await generateToFile(partial, { table: 'user_summary', rows, seed: SEED });
  renameSync(partial, file);
  const meta: Meta = { bytes: g.bytes, made: new Date().toISOString() };
  writeFileSync(`${file}.json`, JSON.stringify(meta));
  return { file, meta, reused: false };
}

/** The copy sorted by user_id with GNU sort (as a DBA would), timed once and cached with its time. */
export async function cachedSorted(cacheDir: string, rows: number, unsorted: string): Promise<{ file: string; meta: Meta; reused: boolean }> {
  const { sorted: file } = cachePaths(cacheDir, rows);
  const have = readMeta(file);
  if (have) return { file, meta: have, reused: true };
  process.stderr.write(`sorting a copy by user_id with GNU sort into ${file}…\n`);
  const partial = `${file}.partial`;
  const sortLoad1 = await session.quietStart('scale: GNU sort of the copy');
  const m = await measure('sort', ['-t', '\t', '-k1,1n', '-S', '25%', `--parallel=${Math.min(2, availableParallelism())}`, '-T', cacheDir, '-o', partial, unsorted], {
    env: { ...process.env, LC_ALL: 'C' },
  });
  if (m.code !== 0) throw new FlatloadError('INTERNAL', `sort failed: ${m.stderr.trim()}`);
  renameSync(partial, file);
  const meta: Meta = { bytes: statSync(file).size, sortSeconds: m.wallSeconds, sortCpuSeconds: m.clientCpuSeconds, sortLoad1, made: new Date().toISOString() };
  writeFileSync(`${file}.json`, JSON.stringify(meta));
  return { file, meta, reused: false };
}

/** Bytes a directory takes on disk (as du counts them); files vanishing while it walks are skipped. */
export function diskBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const n of names) {
    try {
      const st = lstatSync(join(dir, n));
      total += st.isDirectory() ? diskBytes(join(dir, n)) + st.blocks * 512 : st.blocks * 512;
    } catch {
      // Removed between readdir and lstat: a run file the merge finished with.
    }
  }
  return total;
}

/** Polls a directory's size every second while `work` runs; returns the work's result and the peak. */
export async function withPeakDisk<T>(dir: string, work: () => Promise<T>, everyMs = 1000): Promise<{ result: T; peakBytes: number }> {
  let peak = diskBytes(dir);
  const timer = setInterval(() => (peak = Math.max(peak, diskBytes(dir))), everyMs);
  try {
    const result = await work();
    peak = Math.max(peak, diskBytes(dir));
    return { result, peakBytes: peak };
  } finally {
    clearInterval(timer);
  }
}

/** Rows in the benchmark's table. */
export async function countRows(admin: Connection, t: Target): Promise<number> {
  const [c] = await admin.query(`SELECT COUNT(*) AS n FROM ${t.db}.${t.table}`);
  return Number((c as Array<{ n: unknown }>)[0]!.n);
}

/** A throwaway server with a 128 MiB buffer pool (the table far outgrows it), its admin connection and the target in `db`. */
export async function smallPoolServer(db: string, pool = '128M'): Promise<{ server: ThrowawayServer; admin: Connection; version: string; target: Target }> {
  process.stderr.write(`starting a throwaway MariaDB (${pool} buffer pool, 1 GiB redo log)…\n`);
  const server = await startThrowawayServer({ innodbBufferPoolSize: pool, innodbLogFileSize: '1G' });
  try {
    const admin = await mysql.createConnection({ uri: server.url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    const version = String(await scalar(admin, 'SELECT VERSION()'));
    return { server, admin, version, target: { url: new URL(server.url), db, table: TABLE, serverPid: server.pid } };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** Runs `work` against a smallPoolServer, then stops it and removes `tmp`, whatever happened. */
export async function onSmallPoolServer<T>(db: string, pool: string, tmp: string, work: (started: Awaited<ReturnType<typeof smallPoolServer>>) => Promise<T>): Promise<T> {
  const started = await smallPoolServer(db, pool);
  try {
    return await work(started);
  } finally {
    await started.admin.end();
    await started.server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The table's .ibd file on disk, and what information_schema says the data and index take. */
export async function onDisk(admin: Connection, db = DB, table = TABLE): Promise<{ fileBytes: number | null; schemaBytes: number }> {
  const [d] = await admin.query('SELECT @@datadir AS d');
  const ibd = join(String((d as Array<{ d: string }>)[0]!.d), db, `${table}.ibd`);
  const [s] = await admin.query('SELECT DATA_LENGTH + INDEX_LENGTH AS b FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [db, table]);
  return { fileBytes: existsSync(ibd) ? statSync(ibd).blocks * 512 : null, schemaBytes: Number((s as Array<{ b: unknown }>)[0]?.b ?? 0) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A naive LOAD DATA LOCAL (`start`) for `seconds`, then KILL QUERY: how
 * many rows its transaction had inserted by then (INNODB_TRX, polled every
 * second). A load that ends sooner reports its whole count.
 */
export async function naiveFor(admin: Connection, start: () => Promise<Measured>, seconds: number, t: Target): Promise<{ measured: Measured; rowsReached: number; finished: boolean }> {
  const t0 = Date.now();
  let done = false;
  const run = start().finally(() => (done = true));
  let rowsReached = 0;
  let thread: number | undefined;
  const poll = async (): Promise<void> => {
    const [r] = await admin.query("SELECT trx_mysql_thread_id AS id, trx_rows_modified AS n FROM information_schema.INNODB_TRX WHERE trx_query LIKE 'LOAD DATA%'");
    const row = (r as Array<{ id: number; n: number }>)[0];
    if (row) {
      thread = Number(row.id);
      rowsReached = Math.max(rowsReached, Number(row.n));
    }
  };
  while (!done && Date.now() - t0 < seconds * 1000) {
    await sleep(Math.min(1000, Math.max(10, seconds * 1000 - (Date.now() - t0))));
    await poll();
  }
  const wall = (Date.now() - t0) / 1000;
  // A statement not yet seen (a very short limit): find it to stop it, for at most half a minute.
  while (!done && thread === undefined && Date.now() - t0 < seconds * 1000 + 30_000) {
    await sleep(100);
    await poll();
  }
  if (!done && thread !== undefined) await admin.query(`KILL QUERY ${thread}`);
  const m = await run;
  const finished = m.code === 0;
  if (finished) rowsReached = await countRows(admin, t);
  // Stopped on purpose: the rows reached are the result, not the exit status.
  return { measured: { ...m, code: 0, wallSeconds: finished ? m.wallSeconds : wall }, rowsReached, finished };
}

interface Contender {
  name: string;
  kind: 'flatload' | 'sorted' | 'naive';
}

interface Extra extends RunExtra {
  onDisk: { fileBytes: number | null; schemaBytes: number } | null;
}

/** What --scale prints before it waits for a quiet machine: its estimated duration and the disk it needs. */
export function scalePreamble(o: Pick<ScaleOptions, 'rows' | 'repeat' | 'naiveSeconds' | 'cacheDir'>): string {
  const cached = { file: readMeta(cachePaths(o.cacheDir, o.rows).unsorted) !== undefined, sorted: readMeta(cachePaths(o.cacheDir, o.rows).sorted) !== undefined };
  return [
    `estimated duration: ${formatEstimate(scaleEstimate(o.rows, o.repeat, o.naiveSeconds, cached))} (--scale, ${o.rows.toLocaleString('en-US')} rows, ${o.repeat} round${o.repeat === 1 ? '' : 's'}, naive client for ${o.naiveSeconds} s; the input ${cached.file ? 'is cached' : 'is generated first'}, the sorted copy ${cached.sorted ? 'is cached' : 'is made first'}; rough, from per-row rates on a 2-core machine)`,
    diskNote(o.cacheDir, o.rows, cached),
  ].join('\n');
}

/** An empty `user_summary` table in `db` and an empty `tmp`: every run starts from the same state. */
export async function freshRun(admin: Connection, db: string, tmp: string): Promise<void> {
  await admin.query(`DROP DATABASE IF EXISTS ${db}; CREATE DATABASE ${db}; USE ${db}; ${ddl('user_summary')} ENGINE=InnoDB`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
}

/** What a run measured beyond its time: the naive load's rows reached, flatload's peak --tmpdir. */
export interface RunExtra {
  peakTmpBytes: number | null;
  rowsReached: number | null;
  finished: boolean;
}

/** The progress line printed after a run's name. */
export function runLine(r: RunResult, extra: RunExtra): string {
  const m = r.measured;
  return `${r.ok ? `${r.seconds.toFixed(2)} s` : `FAILED ${r.note}`}${extra.rowsReached !== null ? `, ${extra.rowsReached.toLocaleString('en-US')} rows reached${extra.finished ? ' (finished)' : ''}` : ''}${m.clientPeakRssBytes !== null ? `, peak RSS ${mb(m.clientPeakRssBytes)}` : ''}${extra.peakTmpBytes !== null ? `, peak --tmpdir ${mb(extra.peakTmpBytes)}` : ''} [load ${r.load1.toFixed(2)} at start]\n`;
}

/** Runs the rounds and returns the section's text (also printed, and written unless o.write is false). */
export async function runScaleBench(o: ScaleOptions): Promise<string> {
  const t0 = Date.now();
  const jobs = o.jobs ?? 2;
  const input = await cachedInput(o.cacheDir, o.rows);
  const sorted = await cachedSorted(o.cacheDir, o.rows, input.file);
  const work = mkdtempSync(join(tmpdir(), 'flatload-scale-'));
  const tmp = join(work, 'tmpdir');
  let server: ThrowawayServer | undefined;
  let admin: Connection | undefined;
  try {
    const started = await smallPoolServer(DB);
    ({ server, admin } = started);
    const { version, target } = started;
    const contenders: Contender[] = [
      { name: `flatload load FILE --table T --jobs ${jobs}`, kind: 'flatload' },
      { name: 'mariadb client on a copy sorted by user_id beforehand (sorting not counted)', kind: 'sorted' },
      { name: `mariadb client, one LOAD DATA LOCAL of the random-order file, stopped after ${o.naiveSeconds} s`, kind: 'naive' },
    ];
    const extras = new Map<RunResult, Extra>();
    const once = async (c: Contender): Promise<RunResult> => {
      process.stderr.write(`  ${c.name} … `);
      let extra: Extra = { peakTmpBytes: null, onDisk: null, rowsReached: null, finished: true };
      const r = await settledRun({
        label: `scale: ${c.name}`,
        admin: admin!,
        serverPid: server!.pid,
        prepare: () => freshRun(admin!, DB, tmp),
        run: async () => {
          if (c.kind === 'naive') {
            const n = await naiveFor(admin!, () => clientLoad(target, input.file), o.naiveSeconds, target);
            extra = { ...extra, rowsReached: n.rowsReached, finished: n.finished };
            return n.measured;
          }
          if (c.kind === 'sorted') return clientLoad(target, sorted.file);
          const p = await withPeakDisk(tmp, () => flatloadLoad(o.cli, target, input.file, ['--jobs', String(jobs), '--tmpdir', tmp]));
          extra = { ...extra, peakTmpBytes: p.peakBytes };
          return p.result;
        },
        check: async () => {
          if (c.kind === 'naive') return '';
          const n = await countRows(admin!, target);
          if (n !== o.rows) return `${n} rows in the table`;
          extra = { ...extra, onDisk: await onDisk(admin!) };
          return '';
        },
      });
      extras.set(r, extra);
      process.stderr.write(runLine(r, extra));
      return r;
    };
    const series = await inRounds(contenders, o.repeat, once);
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    const text = renderScale({ o, jobs, series, extras, inputBytes: input.meta.bytes, sorted: sorted.meta, version, minutes: (Date.now() - t0) / 60000, madeNow: !input.reused || !sorted.reused });
    process.stdout.write(`\n${text}\n`);
    if (o.write) {
      const doc = join(o.root, 'docs/benchmarks.md');
      if (writeDocSection(doc, o.rows === TOKUDB.rows ? 'scale' : `scale-${o.rows}`, text)) process.stderr.write(`wrote ${doc}\n`);
    }
    return text;
  } finally {
    await admin?.end().catch(() => undefined);
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export const mb = (b: number): string => `${(b / 1e6).toFixed(0)} MB`;
const gb = (b: number): string => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : mb(b));

interface RenderInput {
  o: ScaleOptions;
  jobs: number;
  series: Series<Contender>[];
  extras: Map<RunResult, Extra>;
  inputBytes: number;
  sorted: Meta;
  version: string;
  minutes: number;
  /** The input or its sorted copy was made by this run (not from the cache). */
  madeNow: boolean;
}

function renderScale(r: RenderInput): string {
  const { o, series, extras, inputBytes } = r;
  const perGB = inputBytes / 1e9;
  const loads = series.flatMap((s) => s.runs.map((x) => x.load1));
  const flDisk = medianOf((series.find((s) => s.item.kind === 'flatload')?.runs ?? []).map((x) => extras.get(x)?.onDisk?.fileBytes ?? null));
  const pool = 128 * 2 ** 20;
  const poolNote =
    flDisk === null ? 'as on a production server loading a multi-GB export' : flDisk > pool ? `the table ends ${(flDisk / pool).toFixed(1)}× its size, as on a production server loading a multi-GB export` : 'at this size the table still fits it';
  const lines = [
    `## Seed scale: ${o.rows.toLocaleString('en-US')} rows into a 128 MiB buffer pool`,
    '',
    `Produced by \`npm run bench -- --scale --rows ${o.rows} --repeat ${o.repeat} --naive-seconds ${o.naiveSeconds}\` (${new Date().toISOString().slice(0, 10)}; the whole run took ${r.minutes.toFixed(0)} min${r.madeNow ? ', making the file and its sorted copy included' : ', the file and its sorted copy from the cache'}). Machine: ${machineDescription(r.version)}. Load average at the runs' start: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}.`,
    '',
    `Input: ${o.rows.toLocaleString('en-US')} generated \`user_summary\` rows in random \`user_id\` order, ${gb(inputBytes)} TSV. A throwaway MariaDB with a 128 MiB buffer pool (${poolNote}) and a 1 GiB redo log. flatload runs as a new user would: \`flatload load FILE --table T --jobs ${r.jobs}\` with default flags and a dedicated \`--tmpdir\`, whose size is polled every second. Peak RSS and client CPU (user + system) are GNU time's; server CPU is mariadbd's from /proc before and after; on disk is the table's .ibd file (blocks allocated). ${o.repeat} round${o.repeat === 1 ? '' : 's'} in rotating order, each run on an empty table after the server came to rest; every finished load's COUNT(*) checked.`,
    '',
    `| competitor | ${runsHeading(o.repeat)} | rows/s | peak RSS | peak --tmpdir | client CPU s (per GB) | server CPU s | on disk | input/on-disk | load avg at start |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of series) {
    const ex = s.runs.map((x) => extras.get(x));
    const cpu = medianOf(s.runs.map((x) => x.measured.clientCpuSeconds));
    const rss = medianOf(s.runs.map((x) => x.measured.clientPeakRssBytes));
    const srv = medianOf(s.runs.map((x) => x.measured.serverCpuSeconds));
    const tmpPeak = medianOf(ex.map((e) => e?.peakTmpBytes ?? null));
    const disk = medianOf(ex.map((e) => e?.onDisk?.fileBytes ?? null));
    const loadAt = s.runs.map((x) => x.load1.toFixed(2)).join(', ');
    if (s.item.kind === 'naive') {
      const reached = ex.map((e) => e?.rowsReached ?? 0);
      const finished = ex.every((e) => e?.finished);
      lines.push(
        `| ${s.item.name} | ${finished ? formatRuns(s) : `stopped at ${o.naiveSeconds} s`} | ${finished ? Math.round(o.rows / s.median).toLocaleString('en-US') : `${Math.round(median(reached)).toLocaleString('en-US')} rows reached (median; ${reached.map((n) => n.toLocaleString('en-US')).join(', ')})`} | ${rss !== null ? mb(rss) : '–'} | – | ${cpu !== null ? cpu.toFixed(1) : '–'} | ${srv !== null ? srv.toFixed(1) : '–'} | – | – | ${loadAt} |`,
      );
      continue;
    }
    lines.push(
      `| ${s.item.name} | ${formatRuns(s)} | ${s.ok ? Math.round(o.rows / s.median).toLocaleString('en-US') : ''} | ${rss !== null ? mb(rss) : '–'} | ${tmpPeak !== null ? `${mb(tmpPeak)} (${(tmpPeak / inputBytes).toFixed(2)}× input)` : '–'} | ${cpu !== null ? `${cpu.toFixed(1)} (${(cpu / perGB).toFixed(1)})` : '–'} | ${srv !== null ? srv.toFixed(1) : '–'} | ${disk !== null ? mb(disk) : '–'} | ${disk !== null ? (inputBytes / disk).toFixed(2) : '–'} | ${loadAt} |`,
    );
  }
  lines.push(
    `| the published experiment this project answers: one LOAD DATA into TokuDB, ${TOKUDB.machine} | ${TOKUDB.seconds} (5 min 48 s) | ${TOKUDB.rowsPerSecond.toLocaleString('en-US')} | | | | | ${TOKUDB.onDiskGB * 1000} MB | ${(TOKUDB.fileGB / TOKUDB.onDiskGB).toFixed(2)} | |`,
    '',
  );
  const fl = series.find((s) => s.item.kind === 'flatload');
  const so = series.find((s) => s.item.kind === 'sorted');
  if (fl?.ok && so?.ok) lines.push(`- flatload against the client on the sorted copy: ${(fl.median / so.median).toFixed(2)}× its time (sorting not counted).`);
  if (r.sorted.sortSeconds !== undefined) {
    lines.push(`- Sorting the copy beforehand (GNU \`sort -t TAB -k1,1n -S 25% --parallel=2\`, LC_ALL=C, made ${r.sorted.made.slice(0, 10)}${r.sorted.sortLoad1 !== undefined ? ` with the load average at ${r.sorted.sortLoad1.toFixed(2)}${r.sorted.sortLoad1 >= QUIET_LOAD ? ': not a quiet-machine figure' : ''}` : ''}): ${r.sorted.sortSeconds.toFixed(1)} s${r.sorted.sortCpuSeconds ? `, ${r.sorted.sortCpuSeconds.toFixed(1)} s of CPU` : ''}${so?.ok ? `; sort and load together ${(r.sorted.sortSeconds + so.median).toFixed(1)} s` : ''}.`);
  }
  lines.push(
    `- The published TokuDB run: ${TOKUDB.rows.toLocaleString('en-US')} rows, an ${TOKUDB.fileGB} GB file, one LOAD DATA, ${TOKUDB.seconds} s (${TOKUDB.rowsPerSecond.toLocaleString('en-US')} rows/s) on ${TOKUDB.machine}, ${TOKUDB.onDiskGB} GB on disk. This machine: ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM${o.rows === TOKUDB.rows ? '' : `; this run's ${o.rows.toLocaleString('en-US')} rows are not the published size, so compare rates, not times`}.`,
  );
  return lines.join('\n');
}
