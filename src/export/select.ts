/**
 * Choosing the tables of an export: `--include` / `--exclude` (names or
 * `*`/`?` patterns, repeatable) and `--rename FROM=TO`. A pattern matches a
 * table by its `db.table` or its bare name. Every table left out keeps its
 * reason, which `flatload plan DIR` prints. Pure.
 */
import { splitQualifiedName } from '../config/names.js';
import { FlatloadError } from '../errors/index.js';
import { tableKey, type ExportTable } from './names.js';

export interface Selection {
  include: string[];
  exclude: string[];
  rename: Array<{ from: string; to: { db: string | undefined; table: string } }>;
}

export interface LeftOut {
  /** `db.table` (or `table` when no database is known). */
  table: string;
  files: string[];
  reason: string;
}

export interface Selected<T extends ExportTable> {
  picked: Array<T & { renamedFrom?: string }>;
  left: LeftOut[];
  notes: string[];
}

function list(v: string | string[] | undefined): string[] {
  const items = v === undefined ? [] : Array.isArray(v) ? v : [v];
  // A comma list is several patterns: `--include orders,users` as `--include orders --include users`.
  return items.flatMap((s) => s.split(',')).map((s) => s.trim());
}

const PATTERN = /^[A-Za-z0-9_$*?.-]+$/;

/** The flags as given on the command line, checked. */
export function parseSelection(a: { include?: string | string[] | undefined; exclude?: string | string[] | undefined; rename?: string | string[] | undefined }): Selection {
  const check = (flag: string) => (p: string): string => {
    if (p === '' || !PATTERN.test(p) || p.split('.').length > 2) {
      throw new FlatloadError('USAGE', `--${flag}: "${p}" is not a table name or pattern (table, db.table; * and ? match any characters, e.g. 'shop.tmp_*')`);
    }
    return p;
  };
  const rename: Selection['rename'] = [];
  for (const item of list(a.rename)) {
    const eq = item.indexOf('=');
    const from = eq === -1 ? '' : item.slice(0, eq).trim();
    const to = eq === -1 ? undefined : splitQualifiedName(item.slice(eq + 1).trim());
    if (!from || !to || /[*?]/.test(from) || !splitQualifiedName(from)) {
      throw new FlatloadError('USAGE', `--rename takes FROM=TO, each a table or db.table without patterns (e.g. orders=orders_staging), got "${item}"`);
    }
    if (rename.some((r) => r.from === from)) throw new FlatloadError('USAGE', `--rename ${from} is given twice`);
    rename.push({ from, to });
  }
  return { include: list(a.include).map(check('include')), exclude: list(a.exclude).map(check('exclude')), rename };
}

export function isEmptySelection(s: Selection): boolean {
  return s.include.length === 0 && s.exclude.length === 0 && s.rename.length === 0;
}

function patternRegex(p: string): RegExp {
  return new RegExp(`^${p.replace(/[.+^${}()|[\]\\-]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

/** Whether a pattern names the table: `db.table` patterns match its qualified name, others its bare name. */
export function matches(pattern: string, db: string | undefined, table: string): boolean {
  const re = patternRegex(pattern);
  return pattern.includes('.') ? db !== undefined && re.test(`${db}.${table}`) : re.test(table);
}

/**
 * The tables to load, renamed, and those left out with why. `defaultDb`
 * is the connection's database, for tables whose file names none. An
 * --include that matches no table, or a --rename of a table not loaded, is
 * a mistake in a nightly job's command line: an error, not a silent no-op.
 */
export function selectTables<T extends ExportTable>(tables: readonly T[], s: Selection, defaultDb: string | undefined): Selected<T> {
  const picked: Array<T & { renamedFrom?: string }> = [];
  const left: LeftOut[] = [];
  const notes: string[] = [];
  const used = new Set<string>();
  for (const t of tables) {
    const db = t.db ?? defaultDb;
    const key = tableKey({ db, table: t.table });
    const inc = s.include.filter((p) => matches(p, db, t.table));
    inc.forEach((p) => used.add(`i:${p}`));
    const exc = s.exclude.filter((p) => matches(p, db, t.table));
    exc.forEach((p) => used.add(`e:${p}`));
    if (s.include.length > 0 && inc.length === 0) left.push({ table: key, files: t.files, reason: `matched by no --include (${s.include.join(', ')})` });
    else if (exc.length > 0) left.push({ table: key, files: t.files, reason: `--exclude ${exc.join(', ')}` });
    else picked.push({ ...t });
  }
  const idle = s.include.filter((p) => !used.has(`i:${p}`));
  if (idle.length) throw new FlatloadError('USAGE', `--include ${idle.join(', ')} matches no table of the export (its tables: ${tables.map((t) => tableKey({ db: t.db ?? defaultDb, table: t.table })).join(', ')})`);
  for (const p of s.exclude.filter((x) => !used.has(`e:${x}`))) notes.push(`--exclude ${p} matched no table`);
  for (const r of s.rename) {
    const hits = picked.filter((t) => matches(r.from, t.db ?? defaultDb, t.table));
    if (hits.length === 0) throw new FlatloadError('USAGE', `--rename ${r.from}=…: the export loads no table ${r.from} (${picked.map((t) => tableKey({ db: t.db ?? defaultDb, table: t.table })).join(', ') || 'none'})`);
    if (hits.length > 1) throw new FlatloadError('USAGE', `--rename ${r.from}=…: ${r.from} names ${hits.length} tables of the export; name one as db.table`);
    const t = hits[0]!;
    t.renamedFrom = tableKey({ db: t.db ?? defaultDb, table: t.table });
    t.db = r.to.db ?? t.db;
    t.table = r.to.table;
  }
  const seen = new Map<string, string>();
  for (const t of picked) {
    const key = tableKey({ db: t.db ?? defaultDb, table: t.table });
    const other = seen.get(key);
    if (other !== undefined) throw new FlatloadError('USAGE', `two tables of the export would load into ${key} (${other} and ${t.renamedFrom ?? key}): --rename one of them elsewhere`);
    seen.set(key, t.renamedFrom ?? key);
  }
  if (picked.length === 0) throw new FlatloadError('USAGE', `--include/--exclude leave no table of the export to load (${left.map((l) => `${l.table}: ${l.reason}`).join('; ')})`);
  return { picked, left, notes };
}

/**
 * Tables the exporter listed (mydumper's metadata) whose data file is not
 * in the export, and that the selection would load: the export is not the
 * whole set, an error (exit 9) before anything changes. A table that
 * --include/--exclude leave out is not wanted, so its missing file is not.
 */
export function missingTables(missing: ReadonlyArray<{ db: string; table: string; fileTable: string; rows: number | undefined; file: string }>, s: Selection): FlatloadError | undefined {
  const wanted = missing.filter((m) => {
    const hit = (p: string): boolean => matches(p, m.db, m.table) || matches(p, m.db, m.fileTable);
    return (s.include.length === 0 || s.include.some(hit)) && !s.exclude.some(hit);
  });
  if (wanted.length === 0) return undefined;
  const names = wanted.map((m) => `${m.db}.${m.table}${m.rows === undefined ? '' : ` (${m.rows} rows)`}`);
  return new FlatloadError('EXPECTATION_MISMATCH', `the export is not the whole set: ${wanted[0]!.file} lists ${names.join(', ')}, but no data file holds ${wanted.length === 1 ? 'it' : 'them'}`, {
    file: wanted[0]!.file,
    hint: `fetch the export again (a file was lost in transfer), or leave ${wanted.length === 1 ? 'the table' : 'the tables'} out with --exclude ${wanted.map((m) => `${m.db}.${m.table}`).join(',')}`,
  });
}
