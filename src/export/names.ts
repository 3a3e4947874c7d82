/**
 * Which table a file of an export goes to, from its name alone (as
 * mysqlimport does: the name without its extensions), and which files belong
 * together: `orders.000.csv.gz` and `orders.001.csv.gz` are one table loaded
 * from two inputs, in the order of their part numbers. Pure.
 */
import { basename } from 'node:path';
import type { Expectation } from '../config/loadOptions.js';
import { FlatloadError } from '../errors/index.js';

const COMPRESSION = ['gz', 'zst'];
/** Extensions of data files found in a directory; anything else there is not loaded. */
export const DATA_EXTENSIONS = ['txt', 'csv', 'tsv', 'dat'];
/** mysqldump --tab writes each table's CREATE TABLE beside its rows as `t.sql`. */
export const DDL_EXTENSION = 'sql';

export interface FileName {
  db: string | undefined;
  table: string;
  /** The part number of a table split over several files, or null. */
  part: number | null;
  kind: 'data' | 'ddl' | 'other';
}

/**
 * `shop.orders.003.csv.gz` → db shop, table orders, part 3. Known extensions
 * come off the end (compression, then one data or .sql extension), then an
 * all-digit part number; what is left is `table` or `db.table`.
 */
export function parseFileName(path: string): FileName {
  const parts = basename(path).split('.');
  let kind: FileName['kind'] = 'other';
  if (parts.length > 1 && COMPRESSION.includes(parts[parts.length - 1]!.toLowerCase())) parts.pop();
  if (parts.length > 1) {
    const ext = parts[parts.length - 1]!.toLowerCase();
    if (DATA_EXTENSIONS.includes(ext)) kind = 'data';
    else if (ext === DDL_EXTENSION) kind = 'ddl';
    if (kind !== 'other') parts.pop();
  }
  let part: number | null = null;
  if (parts.length > 1 && /^\d+$/.test(parts[parts.length - 1]!)) part = Number(parts.pop());
  if (parts.some((p) => p === '') || parts.length > 2) {
    throw new FlatloadError('USAGE', `cannot tell the table from the file name "${basename(path)}": name it table.ext, db.table.ext or table.NNN.ext, or map it in a --manifest`, { file: path });
  }
  return parts.length === 2 ? { db: parts[0], table: parts[1]!, part, kind } : { db: undefined, table: parts[0]!, part, kind };
}

/** Reject files (and their logs) a previous run wrote beside the inputs are not inputs. */
export function isRejectFile(path: string): boolean {
  return /\.rejects(\.[^.]+)?(\.log)?$/i.test(basename(path));
}

export interface ExportTable {
  db: string | undefined;
  table: string;
  /** Its inputs, in load order. */
  files: string[];
  /** The CREATE TABLE file (mysqldump --tab's t.sql), if the export has one. */
  ddl: string | undefined;
  /** Options for this table's files (manifest), as command-line option names. */
  options: Record<string, string | number | boolean>;
  /** What the exporter recorded (a manifest's rows/checksum, mydumper's metadata), checked after the table's last file. */
  expect?: Expectation | undefined;
}

export function tableKey(t: { db: string | undefined; table: string }): string {
  return t.db === undefined ? t.table : `${t.db}.${t.table}`;
}

/**
 * Groups files into tables: `.sql` files are their table's DDL, every other
 * file is data (a directory's listing is filtered to data files before). A
 * table's files load in part-number order; a table named twice without part
 * numbers is ambiguous.
 */
export function groupFiles(paths: readonly string[]): ExportTable[] {
  const byKey = new Map<string, { t: ExportTable; parts: Array<{ file: string; part: number | null }> }>();
  const ddls = new Map<string, string>();
  for (const file of paths) {
    if (isRejectFile(file)) continue;
    const n = parseFileName(file);
    if (n.kind === 'ddl') {
      ddls.set(tableKey(n), file);
      continue;
    }
    const key = tableKey(n);
    let entry = byKey.get(key);
    if (!entry) {
      entry = { t: { db: n.db, table: n.table, files: [], ddl: undefined, options: {} }, parts: [] };
      byKey.set(key, entry);
    }
    entry.parts.push({ file, part: n.part });
  }
  const out: ExportTable[] = [];
  for (const [key, { t, parts }] of byKey) {
    if (parts.length > 1 && parts.some((p) => p.part === null)) {
      throw new FlatloadError('USAGE', `several files go to table ${key} and not all have a part number: ${parts.map((p) => basename(p.file)).join(', ')}`, {
        hint: 'name split files table.000.ext, table.001.ext …, or map them in a --manifest',
      });
    }
    parts.sort((a, b) => (a.part ?? 0) - (b.part ?? 0) || (a.file < b.file ? -1 : 1));
    t.files = parts.map((p) => p.file);
    t.ddl = ddls.get(key);
    out.push(t);
  }
  return out.sort((a, b) => (tableKey(a) < tableKey(b) ? -1 : 1));
}

/** `*` and `?` in the last path component of a pattern, matched against a name. */
export function globMatcher(pattern: string): RegExp {
  const body = basename(pattern).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

export function isGlob(arg: string): boolean {
  return /[*?]/.test(basename(arg));
}
