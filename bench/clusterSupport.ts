import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import { loadDataOptions } from '../fixtures/generate.js';

/**
 * Small helpers shared by the cluster measurements (galeraFacts, galeraChunks,
 * spiderFacts): they run against throwaway clusters only.
 */

export interface LocalLoad {
  ms: number;
  rows: number;
  warnings: number;
}

/** LOAD DATA LOCAL of a TSV file or buffer (fixture TSV dialect) into table. */
export async function loadLocal(conn: Connection, source: string | Buffer, table: string, columns?: string[]): Promise<LocalLoad> {
  const t = process.hrtime.bigint();
  const [res] = await conn.query<ResultSetHeader>({
    sql: `LOAD DATA LOCAL INFILE 'flatload-measure' INTO TABLE ${table} ${loadDataOptions('tsv')}${columns ? ` (${columns.join(', ')})` : ''}`,
    infileStreamFactory: () => (typeof source === 'string' ? createReadStream(source) : Readable.from([source])),
  });
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, rows: res.affectedRows, warnings: res.warningStatus };
}

/** SHOW GLOBAL STATUS values for the given names, as numbers where they are numbers. */
export async function globalStatus(conn: Connection, names: string[]): Promise<Record<string, string>> {
  const [rows] = await conn.query(`SHOW GLOBAL STATUS WHERE Variable_name IN (${names.map(() => '?').join(', ')})`, names);
  return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, r.Value]));
}

export async function scalar(conn: Connection, sql: string, values?: unknown[]): Promise<string | null> {
  const [rows] = await conn.query(sql, values);
  const first = (rows as Array<Record<string, unknown>>)[0];
  if (!first) return null;
  const v = Object.values(first)[0];
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return Buffer.isBuffer(v) ? v.toString('utf8') : JSON.stringify(v);
}

/** CHECKSUM TABLE's figure as text (null when the table is gone or the engine gives none). */
export async function checksumOf(conn: Connection, table: string, extended = false): Promise<string | null> {
  const [rows] = await conn.query(`CHECKSUM TABLE ${table}${extended ? ' EXTENDED' : ''}`);
  const v = (rows as Array<{ Checksum: string | number | null }>)[0]?.Checksum;
  return v === null || v === undefined ? null : String(v);
}

/** The server error number and message of a failed query, or 'ok'. */
export async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    const e = err as { errno?: number; code?: string; message?: string };
    return `${e.errno ?? e.code ?? '?'} ${e.code ?? ''}: ${e.message ?? String(err)}`.trim();
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Splits a TSV buffer into pieces of about `bytes` each, at line ends. */
export function splitLines(buf: Buffer, bytes: number): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (start < buf.length) {
    let end = Math.min(buf.length, start + bytes);
    if (end < buf.length) {
      const nl = buf.indexOf(0x0a, end);
      end = nl === -1 ? buf.length : nl + 1;
    }
    out.push(buf.subarray(start, end));
    start = end;
  }
  return out;
}
