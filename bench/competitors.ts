/**
 * What a DBA would do instead of flatload, as commands the benchmarks run:
 * the `mariadb` client's one LOAD DATA LOCAL (optionally wrapped in session
 * statements, e.g. MyRocks' documented bulk load), N clients at once on a
 * file split by hand, and `mariadb-import --use-threads`; and flatload itself.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FlatloadError } from '../src/errors/index.js';
import { measure, serverCpuSeconds, type Measured } from './measure.js';

export interface Target {
  url: URL;
  db: string;
  table: string;
  /** The file's columns when they are not the table's (an AUTO_INCREMENT key absent from the file). */
  columns?: string[];
  serverPid?: number;
}

/** MyRocks' documented bulk load for input in any order (allow_unsorted), finalised explicitly so its errors are seen. */
export const ROCKSDB_BULK = {
  pre: ['SET SESSION rocksdb_bulk_load_allow_unsorted = 1', 'SET SESSION rocksdb_bulk_load = 1'],
  post: ['SET SESSION rocksdb_bulk_load = 0'],
};

export interface Session {
  pre?: string[];
  post?: string[];
}

function clientArgs(t: Target): string[] {
  const u = t.url;
  const args = ['--no-defaults', '-h', u.hostname, '-P', u.port || '3306', '-u', decodeURIComponent(u.username || 'root')];
  if (u.password) args.push(`-p${decodeURIComponent(u.password)}`);
  return args;
}

const sqlString = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function loadStatement(t: Target, file: string): string {
  return `LOAD DATA LOCAL INFILE ${sqlString(file)} INTO TABLE \`${t.table}\`${t.columns ? ` (${t.columns.join(', ')})` : ''}`;
}

/** The `mariadb` client: one LOAD DATA LOCAL of the whole file, with the session's statements around it. */
export function clientLoad(t: Target, file: string, s: Session = {}): Promise<Measured> {
  const sql = [...(s.pre ?? []), loadStatement(t, file), ...(s.post ?? [])].join('; ');
  return measure('mariadb', [...clientArgs(t), '--local-infile=1', t.db, '-e', sql], { serverPid: t.serverPid });
}

/** One client per part, all at once; the wall time is until the last one ends, the CPU and RSS are summed and maxed. */
export async function parallelClients(t: Target, parts: string[], s: Session = {}): Promise<Measured> {
  const cpu0 = serverCpuSeconds(t.serverPid);
  const t0 = process.hrtime.bigint();
  const ms = await Promise.all(parts.map((p) => clientLoad({ ...t, serverPid: undefined }, p, s)));
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = serverCpuSeconds(t.serverPid);
  const failed = ms.find((m) => m.code !== 0);
  const sum = (f: (m: Measured) => number | null): number | null => (ms.every((m) => f(m) !== null) ? ms.reduce((a, m) => a + f(m)!, 0) : null);
  return {
    wallSeconds,
    clientCpuSeconds: sum((m) => m.clientCpuSeconds),
    clientPeakRssBytes: sum((m) => m.clientPeakRssBytes),
    serverCpuSeconds: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null,
    stdout: ms.map((m) => m.stdout).join(''),
    stderr: ms.map((m) => m.stderr).join(''),
    code: failed?.code ?? 0,
  };
}

/** `mariadb-import --local --use-threads=N` on the parts (each named after the table, as it requires). */
export function mariadbImport(t: Target, parts: string[], threads: number, cpus?: string): Promise<Measured> {
  return measure(
    'mariadb-import',
    [...clientArgs(t), '--local', `--use-threads=${threads}`, ...(t.columns ? [`--columns=${t.columns.join(',')}`] : []), t.db, ...parts],
    { serverPid: t.serverPid, ...(cpus !== undefined ? { cpus } : {}) },
  );
}

/** flatload as a user runs it (the built CLI), with a JSON report on stdout. */
export function flatloadLoad(cli: string, t: Target, file: string, flags: string[]): Promise<Measured> {
  return measure(
    process.execPath,
    [cli, 'load', file, '--table', `${t.db}.${t.table}`, '--progress', 'none', '--json', ...(t.columns ? ['--columns', t.columns.join(',')] : []), ...flags],
    { serverPid: t.serverPid, env: { ...process.env, DATABASE_URL: t.url.toString() } },
  );
}

/**
 * `split -n l/N` as a DBA would run it: N parts of about equal size, cut at
 * line ends, each moved to <dir>/partK/<table>.tsv (mariadb-import takes the
 * table's name from the file's).
 */
export function splitByHand(file: string, n: number, dir: string, table: string): string[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('split', ['-n', `l/${n}`, '-d', '-a', '3', file, join(dir, 'x')], { encoding: 'utf8' });
  if (r.status !== 0) throw new FlatloadError('INTERNAL', `split -n l/${n} failed: ${r.stderr}`);
  return readdirSync(dir)
    .filter((f) => f.startsWith('x'))
    .sort()
    .map((f, k) => {
      const partDir = join(dir, `part${k}`);
      mkdirSync(partDir);
      const out = join(partDir, `${table}.tsv`);
      renameSync(join(dir, f), out);
      return out;
    });
}

/** Another checkout's built flatload, run as one more competitor (a refactor's before and after in one run). */
export interface Baseline {
  /** Its dist/src/cli/main.js. */
  cli: string;
  /** "flatload@<short hash>". */
  name: string;
}

/** Checks DIR is a built checkout and names it by its short git hash (marked "+dirty" when its tree has changes). */
export function resolveBaseline(dir: string): Baseline {
  const cli = join(dir, 'dist/src/cli/main.js');
  if (!existsSync(cli)) throw new FlatloadError('USAGE', `--baseline ${dir}: no ${cli}; build that checkout first (npm run build there)`);
  const hash = spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  if (hash.status !== 0) throw new FlatloadError('USAGE', `--baseline ${dir}: not a git checkout (${hash.stderr.trim()})`);
  const dirty = spawnSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).stdout.trim() !== '';
  return { cli, name: `flatload@${hash.stdout.trim()}${dirty ? '+dirty' : ''}` };
}

/** "new/old time 0.93 (the new one 1.08× faster)": below 1 the checkout under test is faster. */
export function newOverOld(newSeconds: number, oldSeconds: number): string {
  const r = newSeconds / oldSeconds;
  return `new/old time ${r.toFixed(2)} (the new one ${r <= 1 ? `${(1 / r).toFixed(2)}× faster` : `${r.toFixed(2)}× slower`})`;
}
