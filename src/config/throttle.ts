import { FlatloadError } from '../errors/index.js';
import { splitQualifiedName } from './names.js';
import { parseConnectionUrl, type UrlParts } from './url.js';

/** --max-rate: rows or bytes per second across every loading stream. */
export interface MaxRate {
  unit: 'rows' | 'bytes';
  perSecond: number;
  /** As the user wrote it, for the plan and the report. */
  text: string;
}

/** A replica whose lag pauses the load, by the name progress and errors use (r1, r2 … or NAME=URL's NAME). */
export interface ReplicaTarget {
  name: string;
  url: UrlParts;
}

/** --lag-heartbeat: a pt-heartbeat table (ts, server_id) each replica's lag is read from instead of Seconds_Behind_Master. */
export interface HeartbeatTable {
  db: string;
  table: string;
  /** As the user wrote it, for the plan and messages. */
  text: string;
}

/** Everything that slows a load down on purpose, validated once (config is pure: nothing is contacted here). */
export interface ThrottleOptions {
  maxRate: MaxRate | undefined;
  replicas: ReplicaTarget[];
  /** Pause while any replica is further behind than this (or its lag is unknown). */
  maxLagSeconds: number;
  /** Pause while the primary's Threads_running, flatload's own loading streams excluded, is over this. */
  maxThreadsRunning: number | undefined;
  /** One pause longer than this stops the load, resumable. */
  maxPauseMs: number;
  /** Where each replica's lag is read from; undefined: its own Seconds_Behind_Master. */
  lagHeartbeat?: HeartbeatTable | undefined;
}

/**
 * Thirty minutes: a replica restarted or caught in a long transaction
 * catches up well within it, and a nightly job whose replica is broken
 * stops the same night with the replica named, instead of holding its
 * rows until the business day.
 */
export const DEFAULT_MAX_PAUSE_MS = 30 * 60 * 1000;
/** Seconds_Behind_Master counts whole seconds; the default leaves room for a busy replica's normal jitter. */
export const DEFAULT_MAX_LAG_SECONDS = 10;

const BYTE_UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/**
 * `50000rows/s`, `50k rows/s`, `20MB/s`, `512KiB/s`: a positive number, an
 * optional k/M multiplier for rows, and the unit, with `/s`. Units are
 * spelled out so that "20M" can never be read as rows when bytes were meant.
 */
export function parseMaxRate(text: string): MaxRate {
  const bad = (why: string): FlatloadError =>
    new FlatloadError('USAGE', `--max-rate: "${text}" ${why}; write rows or bytes per second, e.g. 50000rows/s, 50k rows/s, 20MB/s or 16MiB/s`);
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z ]*?)\s*\/\s*s(?:ec)?\s*$/i.exec(text);
  if (!m) throw bad('is not a rate');
  const n = Number(m[1]);
  const unit = m[2]!.replace(/ /g, '').toLowerCase();
  let out: MaxRate;
  const rows = /^([km]?)rows?$/.exec(unit);
  if (rows) out = { unit: 'rows', perSecond: n * (rows[1] === 'k' ? 1e3 : rows[1] === 'm' ? 1e6 : 1), text: text.trim() };
  else if (BYTE_UNITS[unit] !== undefined) out = { unit: 'bytes', perSecond: n * BYTE_UNITS[unit], text: text.trim() };
  else throw bad(unit === '' ? 'has no unit' : `has an unknown unit "${m[2]}"`);
  if (!(out.perSecond >= 1)) throw bad('is below one row or byte per second');
  return out;
}

/** `90`, `90s`, `15m`, `2h`, `1h30m` → milliseconds; a bare number is seconds. */
export function parseDuration(text: string, option: string): number {
  const t = text.trim().toLowerCase();
  const whole = /^(\d+(?:\.\d+)?)$/.exec(t);
  let ms = 0;
  if (whole) ms = Number(whole[1]) * 1000;
  else {
    const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
    let at = 0;
    for (let m = re.exec(t); m; m = re.exec(t)) {
      ms += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
      at = re.lastIndex;
    }
    if (at === 0 || at !== t.length) throw new FlatloadError('USAGE', `--${option}: "${text}" is not a duration (e.g. 90, 90s, 15m, 2h, 1h30m)`);
  }
  if (!(ms > 0)) throw new FlatloadError('USAGE', `--${option} must be more than zero, got "${text}"`);
  return ms;
}

/** `--replica URL` or `--replica NAME=URL`, repeatable; unnamed ones are r1, r2 … in the order given. Messages never repeat a URL. */
export function parseReplicas(arg: string | string[] | undefined): ReplicaTarget[] {
  const out: ReplicaTarget[] = [];
  const list = arg === undefined ? [] : Array.isArray(arg) ? arg : [arg];
  list.forEach((item, i) => {
    const named = /^([A-Za-z0-9_$-]+)=(.*)$/s.exec(item);
    const name = named ? named[1]! : `r${i + 1}`;
    if (out.some((r) => r.name === name)) throw new FlatloadError('USAGE', `--replica ${name} is given twice`);
    const url = parseConnectionUrl(named ? named[2]! : item, `--replica ${name}`);
    if (!url.host && !url.socketPath) throw new FlatloadError('USAGE', `--replica ${name}: the URL names no host (mysql://user:password@host:port)`);
    out.push({ name, url });
  });
  return out;
}

/**
 * `db.table` (either part backquoted): the database must be named, since
 * flatload reads the table on each replica over a connection with no default
 * database.
 */
export function parseHeartbeatTable(text: string): HeartbeatTable {
  const name = splitQualifiedName(text.trim());
  if (!name?.db) throw new FlatloadError('USAGE', `--lag-heartbeat: "${text}" is not db.table (the database pt-heartbeat writes to, and its table, e.g. percona.heartbeat)`);
  return { db: name.db, table: name.table, text: text.trim() };
}

/** Raw values as typed (yargs gives strings; a repeated option an array, whose last value wins). */
export interface ThrottleArgs {
  maxRate?: string | string[];
  replica?: string | string[];
  maxLag?: string | number | Array<string | number>;
  maxThreadsRunning?: string | number | Array<string | number>;
  maxPause?: string | string[];
  lagHeartbeat?: string | string[];
}

const last = <T>(v: T | T[] | undefined): T | undefined => (Array.isArray(v) ? v[v.length - 1] : v);

function numberArg(v: string | number | Array<string | number> | undefined, option: string, whole: boolean, min: number): number | undefined {
  const raw = last(v);
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  const ok = whole ? /^\d+$/.test(text) : /^\d+(\.\d+)?$/.test(text);
  if (!ok || Number(text) < min) throw new FlatloadError('USAGE', `--${option} must be ${whole ? 'a whole number' : 'a number'} >= ${min}, got "${text}"`);
  return Number(text);
}

export function toThrottleOptions(a: ThrottleArgs): ThrottleOptions {
  const replicas = parseReplicas(a.replica);
  const maxLag = numberArg(a.maxLag, 'max-lag', false, 0);
  if (maxLag !== undefined && replicas.length === 0) throw new FlatloadError('USAGE', '--max-lag needs the replicas to watch: --replica mysql://user@host:port (repeatable)');
  const maxPause = last(a.maxPause);
  const maxRate = last(a.maxRate);
  const heartbeat = last(a.lagHeartbeat);
  if (heartbeat !== undefined && replicas.length === 0) throw new FlatloadError('USAGE', '--lag-heartbeat needs the replicas to read it on: --replica mysql://user@host:port (repeatable)');
  return {
    maxRate: maxRate === undefined ? undefined : parseMaxRate(maxRate),
    replicas,
    maxLagSeconds: maxLag ?? DEFAULT_MAX_LAG_SECONDS,
    maxThreadsRunning: numberArg(a.maxThreadsRunning, 'max-threads-running', true, 1),
    maxPauseMs: maxPause === undefined ? DEFAULT_MAX_PAUSE_MS : parseDuration(maxPause, 'max-pause'),
    ...(heartbeat === undefined ? {} : { lagHeartbeat: parseHeartbeatTable(heartbeat) }),
  };
}

/** Whether anything throttles the load. */
export function throttles(t: ThrottleOptions): boolean {
  return t.maxRate !== undefined || t.replicas.length > 0 || t.maxThreadsRunning !== undefined;
}
