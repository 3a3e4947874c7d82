import { FlatloadError } from '../errors/index.js';
import { splitQualifiedName } from './names.js';
import type { ConnectionFlags } from './connection.js';
import { resolveFormat, type FileFormat, type FormatFlags } from './format.js';
import { parseByteSize } from './size.js';
import { parseConnectionUrl, type UrlParts } from './url.js';
import { toThrottleOptions, type ThrottleArgs, type ThrottleOptions } from './throttle.js';

export type DuplicateHandling = 'error' | 'ignore' | 'replace';

/** A column list entry: a column name, or a user variable that discards/holds the field. */
export interface ColumnTarget {
  name: string;
  isVariable: boolean;
}

/**
 * What the exporting side recorded about a table, checked against the
 * table after the load: its COUNT(*) and the value of `CHECKSUM TABLE`.
 */
export interface Expectation {
  rows: number | undefined;
  checksum: string | undefined;
  /** Where the figures come from, for messages: `--expect-rows`, a manifest, mydumper's metadata. */
  source: string;
}

/**
 * An input whose in-memory sort holds at most this much (the input and the
 * sort's arrays, src/plan/rules/order.ts) is sorted in memory when the plan
 * sorts by key, in exchange for no runs written and read back. At this
 * default the load's peak RSS stayed under 300 MB for the fullest input
 * measured (docs/ordering.md#the-default-budget).
 */
export const DEFAULT_SORT_MEMORY = 176 * 1024 * 1024;
/**
 * An export's tables by default: each holds its sorted copy beside its input
 * while several load at once (docs/exports.md), so they keep the budget that
 * bounded an export before the single load's rose.
 */
export const EXPORT_SORT_MEMORY = 128 * 1024 * 1024;
/** What one in-memory sort can index (record ends are 32-bit). */
const MAX_SORT_MEMORY = 2 * 1024 * 1024 * 1024;

export const STRATEGIES = ['load-data', 'insert', 'surrogate-key'] as const;
export type StrategyName = (typeof STRATEGIES)[number];
export const MODES = ['append', 'replace', 'swap'] as const;
export type LoadMode = (typeof MODES)[number];
export const PROGRESS_MODES = ['auto', 'bar', 'lines', 'none'] as const;
export type ProgressOption = (typeof PROGRESS_MODES)[number];

/** Everything `load`/`plan` need, validated and defaulted once. */
export interface LoadOptions {
  file: string;
  db: string | undefined;
  table: string;
  format: FileFormat;
  columns: ColumnTarget[] | undefined;
  /** `--columns header`: the columns come from the file's first record, by name (resolved once the file is read). */
  columnsFromHeader: boolean;
  /** With --columns header: header fields to discard, by name. */
  skipFields: string[];
  /** undefined: chosen from the server (see plan). */
  jobs: number | undefined;
  /** undefined: sized from the input (see plan). */
  chunkSizeBytes: number | undefined;
  strategy: StrategyName | undefined;
  mode: LoadMode;
  dryRun: boolean;
  progress: ProgressOption;
  json: boolean;
  chartPath: string | undefined;
  maxErrors: number;
  rejectFile: string | undefined;
  onDuplicate: DuplicateHandling;
  allowTruncation: boolean;
  restart: boolean;
  keepHistory: boolean;
  allowDdl: boolean;
  keepOld: boolean;
  /** The order rows are sent in: sorted by the clustered key, each chunk sorted by it, as the file has them, or the planner's choice. */
  order: 'auto' | 'key' | 'chunk' | 'file';
  stripBom: boolean;
  /** Schema for resume bookkeeping. */
  bookkeepingSchema: string | undefined;
  /** Measure the table's on-disk size after the load (flushes the table first). */
  sizeReport: boolean;
  /** Where spooled input and sort runs go (undefined: the system's temporary directory). */
  tmpdir: string | undefined;
  /** Copy standard input (or a compressed file) whole into tmpdir and scan it to its end before anything loads. */
  spool: boolean;
  /** An s3:// input: the endpoint of an S3-compatible server and the region (undefined: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, the SDK's region chain). */
  s3: { endpoint: string | undefined; region: string | undefined };
  /** An input sorted by key that is at most this large is sorted in memory, without runs in tmpdir. */
  sortMemoryBytes: number;
  /** --sort-memory was given (an export's tables otherwise keep EXPORT_SORT_MEMORY). */
  sortMemoryGiven: boolean;
  /** When another process is running this load: wait for it instead of stopping. */
  wait: boolean;
  /** For a Spider table: through the front, or straight to the backends (undefined: the planner's choice). */
  route: 'front' | 'direct' | undefined;
  /** After the load, check the copies agree: every Galera node's COUNT(*) and CHECKSUM TABLE; for a Spider table, COUNT(*) through the front against the backends. */
  verify: boolean;
  /** --backend NAME=URL: a Spider backend's address and credentials, by its mysql.servers name, instead of the front's entry and flatload's own. */
  backends: Record<string, UrlParts>;
  /** --binlog: write the load to the binary log (on), keep it out (off: sql_log_bin=0), or the server's setting (undefined). */
  binlog: 'on' | 'off' | undefined;
  /** --bulk-insert: MariaDB's empty-table bulk insert where the planner finds it safe (auto), also with binary logging on (on), or never (off). */
  bulkInsert: 'auto' | 'on' | 'off';
  /** --analyze: ANALYZE TABLE after the load; 'auto' runs it when the load started from an empty table. */
  analyze: 'on' | 'off' | 'auto';
  /** --expect-rows / --expect-checksum: compared with the table after the load (before a swap publishes it). */
  expect: Expectation | undefined;
  /** --max-rate, --replica/--max-lag, --max-threads-running, --max-pause. */
  throttle: ThrottleOptions;
}

/** Raw yargs values for load/plan (strings as typed; numbers where yargs parsed them). */
export interface LoadArgs extends FormatFlags, ConnectionFlags, ThrottleArgs {
  file?: string;
  table?: string;
  columns?: string;
  skipFields?: string;
  jobs?: number;
  chunkSize?: string;
  strategy?: string;
  mode?: string;
  dryRun?: boolean;
  progress?: string;
  json?: boolean;
  chart?: string;
  maxErrors?: number;
  rejectFile?: string;
  onDuplicate?: string;
  ignore?: boolean;
  replace?: boolean;
  allowTruncation?: boolean;
  restart?: boolean;
  keepHistory?: boolean;
  allowDdl?: boolean;
  keepOld?: boolean;
  order?: string;
  keepBom?: boolean;
  bookkeepingSchema?: string;
  skipSizeReport?: boolean;
  tmpdir?: string;
  spool?: boolean;
  s3Endpoint?: string;
  s3Region?: string;
  sortMemory?: string;
  wait?: boolean;
  route?: string;
  verify?: boolean;
  backend?: string | string[];
  binlog?: string;
  bulkInsert?: string;
  analyze?: string;
  expectRows?: string | number;
  expectChecksum?: string | number;
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], option: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new FlatloadError('USAGE', `--${option}: "${value}" is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** `a,b,@skip,c` → column targets; names may be backquoted. */
export function parseColumnList(text: string): ColumnTarget[] {
  const out: ColumnTarget[] = [];
  for (const raw of splitCommas(text)) {
    const item = raw.trim();
    if (item === '') throw new FlatloadError('USAGE', `--columns: empty column name in "${text}"`);
    if (item.startsWith('@')) {
      const name = item.slice(1);
      if (!/^[A-Za-z0-9_$.]+$/.test(name)) throw new FlatloadError('USAGE', `--columns: "${item}" is not a valid user variable`);
      out.push({ name, isVariable: true });
    } else if (item.startsWith('`')) {
      if (!item.endsWith('`') || item.length < 3) throw new FlatloadError('USAGE', `--columns: unbalanced backquote in "${item}"`);
      out.push({ name: item.slice(1, -1).replace(/``/g, '`'), isVariable: false });
    } else {
      out.push({ name: item, isVariable: false });
    }
  }
  return out;
}

function splitCommas(text: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '`') {
      if (quoted && text[i + 1] === '`') {
        cur += '``';
        i++;
        continue;
      }
      quoted = !quoted;
    }
    if (c === ',' && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

/** --expect-rows N and --expect-checksum C (the value CHECKSUM TABLE returns: a whole number). */
export function parseExpectation(rows: string | number | undefined, checksum: string | number | undefined, source = '--expect-rows/--expect-checksum'): Expectation | undefined {
  if (rows === undefined && checksum === undefined) return undefined;
  const whole = (v: string | number, flag: string): string => {
    const text = String(Array.isArray(v) ? (v as unknown[])[v.length - 1] : v).trim();
    if (!/^\d+$/.test(text)) throw new FlatloadError('USAGE', `--${flag}: "${text}" is not a whole number >= 0${flag === 'expect-checksum' ? ' (the value CHECKSUM TABLE returns)' : ''}`);
    return text;
  };
  const n = rows === undefined ? undefined : Number(whole(rows, 'expect-rows'));
  if (n !== undefined && !Number.isSafeInteger(n)) throw new FlatloadError('USAGE', `--expect-rows: ${String(rows)} is too large`);
  return { rows: n, checksum: checksum === undefined ? undefined : whole(checksum, 'expect-checksum').replace(/^0+(?=\d)/, ''), source };
}

/** `--skip-fields a,b`: header fields to discard, by name. */
export function parseSkipFields(text: string | undefined): string[] {
  if (text === undefined) return [];
  const names = text.split(',').map((s) => s.trim());
  if (names.some((n) => n === '')) throw new FlatloadError('USAGE', `--skip-fields: empty name in "${text}"`);
  return names;
}

/**
 * `--columns header` reads the names from the first record, which is then a
 * header line: --ignore-lines defaults to 1 (more skips more lines after
 * it; 0 would load the names as a row, so it is refused).
 */
function headerFormat(a: LoadArgs): { fromHeader: boolean; format: FileFormat } {
  const fromHeader = a.columns !== undefined && a.columns.trim().toLowerCase() === 'header';
  if (!fromHeader) {
    if (a.skipFields !== undefined) throw new FlatloadError('USAGE', '--skip-fields names header fields to discard: it goes with --columns header');
    return { fromHeader, format: resolveFormat(a) };
  }
  if (a.ignoreLines === 0) throw new FlatloadError('USAGE', '--columns header reads the names from the first line, which must then be skipped: --ignore-lines 0 would load it as a row');
  return { fromHeader, format: resolveFormat({ ...a, ignoreLines: a.ignoreLines ?? 1 }) };
}

/** `--backend b1=mysql://user:pw@host:port` (repeatable) by server name. Messages never repeat a URL. */
export function parseBackends(arg: string | string[] | undefined): Record<string, UrlParts> {
  const out: Record<string, UrlParts> = {};
  for (const item of arg === undefined ? [] : Array.isArray(arg) ? arg : [arg]) {
    const eq = item.indexOf('=');
    const name = eq === -1 ? '' : item.slice(0, eq);
    if (!/^[A-Za-z0-9_$-]+$/.test(name)) throw new FlatloadError('USAGE', '--backend takes NAME=URL, NAME being the backend server\'s name on the front (mysql.servers), e.g. b1=mysql://user@host:3306');
    if (out[name]) throw new FlatloadError('USAGE', `--backend ${name} is given twice`);
    out[name] = parseConnectionUrl(item.slice(eq + 1), `--backend ${name}`);
  }
  return out;
}

export function toLoadOptions(a: LoadArgs): LoadOptions {
  if (!a.file) throw new FlatloadError('USAGE', 'missing the input file (use - for standard input)');
  if (!a.table) throw new FlatloadError('USAGE', 'missing --table [db.]table');
  const name = splitQualifiedName(a.table);
  if (!name) throw new FlatloadError('USAGE', `--table: "${a.table}" is not a table name (db.table or table; backquote names with dots)`);
  if (a.jobs !== undefined && (!Number.isInteger(a.jobs) || a.jobs < 1 || a.jobs > 64)) {
    throw new FlatloadError('USAGE', `--jobs must be a whole number from 1 to 64, got ${String(a.jobs)}`);
  }
  if (a.maxErrors !== undefined && (!Number.isInteger(a.maxErrors) || a.maxErrors < 0)) {
    throw new FlatloadError('USAGE', `--max-errors must be a whole number >= 0, got ${String(a.maxErrors)}`);
  }
  if (a.ignore && a.replace) throw new FlatloadError('USAGE', '--ignore and --replace are mutually exclusive');
  let onDuplicate = oneOf(a.onDuplicate, ['error', 'ignore', 'replace'] as const, 'on-duplicate', 'error');
  if (a.ignore || a.replace) {
    if (a.onDuplicate !== undefined) throw new FlatloadError('USAGE', '--ignore/--replace are aliases of --on-duplicate; give one of them');
    onDuplicate = a.ignore ? 'ignore' : 'replace';
  }
  const chunkSizeBytes = a.chunkSize === undefined ? undefined : parseByteSize(a.chunkSize, 'chunk-size');
  const header = headerFormat(a);
  const sortMemoryBytes = a.sortMemory === undefined ? DEFAULT_SORT_MEMORY : parseByteSize(a.sortMemory, 'sort-memory', true);
  if (sortMemoryBytes > MAX_SORT_MEMORY) throw new FlatloadError('USAGE', `--sort-memory is at most 2GiB (a larger input is sorted out of core), got ${a.sortMemory}`);
  return {
    file: a.file,
    db: name.db,
    table: name.table,
    format: header.format,
    columns: a.columns === undefined || header.fromHeader ? undefined : parseColumnList(a.columns),
    columnsFromHeader: header.fromHeader,
    skipFields: parseSkipFields(a.skipFields),
    jobs: a.jobs,
    chunkSizeBytes,
    strategy: a.strategy === undefined ? undefined : oneOf(a.strategy, STRATEGIES, 'strategy', 'load-data'),
    mode: oneOf(a.mode, MODES, 'mode', 'append'),
    dryRun: a.dryRun ?? false,
    progress: oneOf(a.progress, PROGRESS_MODES, 'progress', 'auto'),
    json: a.json ?? false,
    chartPath: a.chart,
    maxErrors: a.maxErrors ?? 0,
    rejectFile: a.rejectFile,
    onDuplicate,
    allowTruncation: a.allowTruncation ?? false,
    restart: a.restart ?? false,
    keepHistory: a.keepHistory ?? false,
    allowDdl: a.allowDdl ?? false,
    keepOld: a.keepOld ?? false,
    order: oneOf(a.order, ['auto', 'key', 'chunk', 'file'] as const, 'order', 'auto'),
    stripBom: !(a.keepBom ?? false),
    bookkeepingSchema: a.bookkeepingSchema,
    sizeReport: !(a.skipSizeReport ?? false),
    tmpdir: a.tmpdir,
    spool: a.spool ?? false,
    s3: { endpoint: a.s3Endpoint, region: a.s3Region },
    sortMemoryBytes,
    sortMemoryGiven: a.sortMemory !== undefined,
    wait: a.wait ?? false,
    route: a.route === undefined || a.route === 'auto' ? undefined : oneOf(a.route, ['front', 'direct'] as const, 'route', 'front'),
    verify: a.verify ?? false,
    backends: parseBackends(a.backend),
    expect: parseExpectation(a.expectRows, a.expectChecksum),
    binlog: a.binlog === undefined ? undefined : oneOf(a.binlog, ['on', 'off'] as const, 'binlog', 'on'),
    bulkInsert: oneOf(a.bulkInsert, ['auto', 'on', 'off'] as const, 'bulk-insert', 'auto'),
    analyze: oneOf(a.analyze, ['on', 'off', 'auto'] as const, 'analyze', 'auto'),
    throttle: toThrottleOptions(a),
  };
}
