/**
 * Least privilege, as a pure function of the plan and of `SHOW GRANTS`:
 * which privileges a load needs (requiredPrivileges), and which of those the
 * current user's grants do not give (missingPrivileges / checkPrivileges).
 * No I/O: the caller reads the grants (ServerFacts.grants) and CURRENT_USER().
 *
 * Every need below was checked statement by statement against MariaDB 10.11
 * with a user holding exactly the listed privileges (test/db/security.test.ts
 * and docs/security.md).
 *
 * How the server combines grants, and what this module copies of it:
 * - A privilege counts if it is granted globally (ON *.*), on the database,
 *   on the table, or (only for needs that name columns) on every column.
 * - Database grants: only the FIRST matching database row counts, not the
 *   union. A grant naming the database exactly wins over wildcard patterns
 *   (`_`, `%`; `\_` is a literal underscore). When several wildcard patterns
 *   match and none is exact, the server picks one by an internal sort order;
 *   this module counts all of them, so it can miss a gap that the server
 *   then reports at load time, but never invents one.
 * - Roles: the privileges of a role count when SHOW GRANTS lists them, which
 *   MariaDB does only for the roles active in the session (the default role
 *   at login). A role granted but not active is reported in `inactiveRoles`.
 *   MySQL 8 lists active roles' privileges merged into the user's lines.
 * - MySQL partial revokes (`REVOKE … ON db.* FROM u`) take a global privilege
 *   away for that database.
 * - Routine (FUNCTION/PROCEDURE/PACKAGE) and PROXY grants are ignored.
 */
import { FlatloadError } from '../errors/index.js';
import { quoteId } from '../db/quote.js';
import { derivedName, OLD_SUFFIX, SHADOW_SUFFIX } from './rules/modes.js';
import type { LoadPlan, PlannedStatement } from './types.js';

export type Privilege =
  | 'SELECT'
  | 'INSERT'
  | 'UPDATE'
  | 'DELETE'
  | 'CREATE'
  | 'DROP'
  | 'ALTER'
  | 'INDEX'
  | 'REFERENCES'
  | 'TRIGGER'
  | 'LOCK TABLES'
  | 'CREATE TEMPORARY TABLES'
  | 'FILE'
  | 'RELOAD'
  | 'PROCESS'
  | 'SUPER'
  | 'BINLOG ADMIN'
  | 'SYSTEM VARIABLES ADMIN';

/** db `*` means the server as a whole (ON *.*); no table means the whole database. */
export interface PrivilegeTarget {
  db: string;
  table?: string;
}

export interface PrivilegeNeed {
  privilege: Privilege;
  on: PrivilegeTarget;
  /** What flatload runs that needs it, in words for the error message. */
  why: string;
  /** Only an optional feature needs it (e.g. the size report): the load itself runs without. */
  optional?: boolean;
  /** Privileges that serve instead (e.g. SUPER for BINLOG ADMIN). */
  alternatives?: Privilege[];
  /** The need is met by column grants on all of these columns too. */
  columns?: string[];
}

export const GLOBAL = '*';

/** Privileges that exist only ON *.*. */
const GLOBAL_ONLY = new Set([
  'FILE',
  'RELOAD',
  'PROCESS',
  'SUPER',
  'SHUTDOWN',
  'SHOW DATABASES',
  'REPLICATION SLAVE',
  'REPLICATION CLIENT',
  'CREATE USER',
  'CREATE TABLESPACE',
  'CREATE ROLE',
  'DROP ROLE',
  'BINLOG ADMIN',
  'BINLOG MONITOR',
  'BINLOG REPLAY',
  'CONNECTION ADMIN',
  'FEDERATED ADMIN',
  'READ ONLY ADMIN',
  'REPLICATION MASTER ADMIN',
  'REPLICATION SLAVE ADMIN',
  'SLAVE MONITOR',
  'SYSTEM VARIABLES ADMIN',
]);

/** Privileges a table-level grant (and so ALL PRIVILEGES ON db.tbl) can carry. */
const TABLE_LEVEL = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'REFERENCES',
  'INDEX',
  'ALTER',
  'CREATE VIEW',
  'SHOW VIEW',
  'TRIGGER',
  'DELETE HISTORY',
]);

const COLUMN_LEVEL = new Set(['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']);

// ------------------------------------------------------------------ needs

export type ModeName = 'append' | 'replace' | 'swap';

export interface PrivilegePlan {
  /** load-data | insert | surrogate-key */
  strategy: string;
  mode: ModeName;
  db: string;
  table: string;
  /** Schema of the resume bookkeeping tables. */
  bookkeepingDb: string;
  /** Their names (default flatload_jobs and flatload_chunks, as src/checkpoint/store.ts creates them). */
  bookkeepingTables?: string[];
  /** Whether the plan keeps resume bookkeeping at all (default true). */
  bookkeeping?: boolean;
  /** Secondary indexes are dropped before the load and re-added after it. */
  deferIndexes: boolean;
  /** The surrogate AUTO_INCREMENT column is taken out for the load and put back. */
  surrogateDefer: boolean;
  /** Measure the table's on-disk size afterwards (optional privileges). */
  sizeReport: boolean;
  /** --on-duplicate (default error). */
  onDuplicate?: 'error' | 'ignore' | 'replace';
  /** How --mode replace empties the table (default truncate). */
  replaceWith?: 'truncate' | 'delete';
  /** --mode swap: the table loaded and renamed into place (default `<table>__flatload_new`, as the planner names it). */
  shadowTable?: string;
  /** --mode swap: the name the previous table gets (default `<table>__flatload_old`). */
  oldTable?: string;
  /** --keep-old: the previous table is kept after the swap (and not dropped). */
  keepOld?: boolean;
  /** Upper-case engine of the target, to narrow the size-report needs. */
  engine?: string;
}

function need(privilege: Privilege, db: string, table: string | undefined, why: string, extra: Partial<PrivilegeNeed> = {}): PrivilegeNeed {
  return { privilege, on: table === undefined ? { db } : { db, table }, why, ...extra };
}

/**
 * The privileges a plan needs, one entry per privilege and object, each with
 * the statement that needs it. Optional ones are marked `optional`.
 */
export function requiredPrivileges(p: PrivilegePlan): PrivilegeNeed[] {
  const out: PrivilegeNeed[] = [];
  const { db, table } = p;
  const swap = p.mode === 'swap';
  const shadow = p.shadowTable ?? derivedName(table, SHADOW_SUFFIX);
  const old = p.oldTable ?? derivedName(table, OLD_SUFFIX);
  const load = swap ? shadow : table;

  out.push(need('SELECT', db, table, 'reading the table definition and checking whether the table is empty (SELECT 1 … LIMIT 1)'));
  if (swap) {
    out.push(need('DROP', db, shadow, `DROP TABLE IF EXISTS ${shadow} (a copy left by an earlier run)`));
    out.push(need('CREATE', db, shadow, `CREATE TABLE ${shadow} LIKE ${table} (--mode swap loads into a copy)`));
    out.push(need('SELECT', db, table, `CREATE TABLE ${shadow} LIKE ${table} reads the definition`));
  }
  const verb = p.strategy === 'insert' ? 'INSERT' : 'LOAD DATA LOCAL INFILE';
  out.push(need('INSERT', db, load, `${verb} writes the rows`));
  if (p.onDuplicate === 'replace') {
    out.push(need('DELETE', db, load, `${verb} … REPLACE deletes the old row of a duplicate key (--on-duplicate replace)`));
  }
  if (p.mode === 'replace') {
    if ((p.replaceWith ?? 'truncate') === 'truncate') {
      out.push(need('DROP', db, table, 'TRUNCATE TABLE empties the table first (--mode replace)'));
    } else {
      out.push(need('DELETE', db, table, 'DELETE FROM empties the table first (--mode replace)'));
    }
  }
  if (p.deferIndexes) {
    out.push(need('ALTER', db, load, 'ALTER TABLE … DROP INDEX before the load and ADD INDEX after it (or DISABLE/ENABLE KEYS)'));
  }
  if (p.surrogateDefer) {
    out.push(need('ALTER', db, load, 'ALTER TABLE takes the surrogate AUTO_INCREMENT column out for the load and puts it back'));
  } else if (p.strategy === 'surrogate-key') {
    out.push(need('ALTER', db, load, 'ALTER TABLE … AUTO_INCREMENT = past the last pre-assigned key'));
  }
  if (swap) {
    const rename = `RENAME TABLE ${table} TO ${old}, ${shadow} TO ${table}`;
    out.push(...renameNeeds(db, table, old, rename), ...renameNeeds(db, shadow, table, rename));
    if (!p.keepOld) out.push(need('DROP', db, old, `DROP TABLE ${old} after the swap`));
  }
  if (p.bookkeeping ?? true) out.push(...bookkeepingNeeds(p.bookkeepingDb, p.bookkeepingTables));
  if (p.sizeReport) out.push(...sizeReportNeeds(db, table, p.engine));
  return mergeNeeds(out);
}

/**
 * The resume bookkeeping tables (src/checkpoint/store.ts) and the statements
 * run on them: CREATE TABLE IF NOT EXISTS, SELECT, INSERT (… ON DUPLICATE KEY
 * UPDATE on the jobs table), UPDATE … WHERE (jobs only), DELETE … WHERE.
 * MyRocks/TokuDB targets keep their chunk rows in flatload_chunks_rocksdb /
 * flatload_chunks_tokudb instead of flatload_chunks.
 */
export const BOOKKEEPING_TABLES = ['flatload_jobs', 'flatload_chunks'];

export function bookkeepingNeeds(schema: string, tables: readonly string[] = BOOKKEEPING_TABLES): PrivilegeNeed[] {
  const out: PrivilegeNeed[] = [];
  for (const bk of tables) {
    const jobs = bk === 'flatload_jobs';
    out.push(need('CREATE', schema, bk, `CREATE TABLE IF NOT EXISTS ${bk} (resume bookkeeping)`));
    out.push(need('SELECT', schema, bk, `reading ${bk} to resume (and the WHERE of its ${jobs ? 'UPDATE/' : ''}DELETE)`));
    out.push(need('INSERT', schema, bk, jobs ? `recording the load in ${bk}` : `recording each committed chunk in ${bk}, in the chunk's transaction`));
    if (jobs) out.push(need('UPDATE', schema, bk, `updating the load's state in ${bk} (also INSERT … ON DUPLICATE KEY UPDATE)`));
    out.push(need('DELETE', schema, bk, `clearing a finished or restarted load from ${bk}`));
  }
  return out;
}

/** RENAME TABLE from TO to: ALTER and DROP on the old name, CREATE and INSERT on the new (verified on MariaDB 10.11). */
function renameNeeds(db: string, from: string, to: string, why: string): PrivilegeNeed[] {
  return [
    need('ALTER', db, from, `${why} (renaming needs ALTER and DROP on the old name)`),
    need('DROP', db, from, `${why} (renaming needs ALTER and DROP on the old name)`),
    need('CREATE', db, to, `${why} (renaming needs CREATE and INSERT on the new name)`),
    need('INSERT', db, to, `${why} (renaming needs CREATE and INSERT on the new name)`),
  ];
}

/** The size report's statements (src/report/sizes.ts); all optional: a figure it cannot get is reported as unknown. */
export function sizeReportNeeds(db: string, table: string, engine?: string): PrivilegeNeed[] {
  const e = engine?.toUpperCase();
  const opt = { optional: true };
  const out: PrivilegeNeed[] = [];
  if (e === undefined || e === 'INNODB') {
    out.push(need('PROCESS', GLOBAL, undefined, 'size report: information_schema.INNODB_SYS_TABLESPACES (MySQL: INNODB_TABLESPACES)', opt));
    out.push(need('RELOAD', GLOBAL, undefined, 'size report: FLUSH TABLES … FOR EXPORT writes the dirty pages first', opt));
    out.push(need('LOCK TABLES', db, undefined, 'size report: FLUSH TABLES … FOR EXPORT locks the table', opt));
    out.push(need('SELECT', db, table, 'size report: FLUSH TABLES … FOR EXPORT', opt));
  }
  if (e === undefined || (e !== 'INNODB' && e !== 'ROCKSDB')) {
    out.push(need('RELOAD', GLOBAL, undefined, 'size report: FLUSH TABLES writes cached blocks (Aria, MyISAM)', opt));
  }
  if (e === undefined || e === 'ROCKSDB') {
    out.push(need('SUPER', GLOBAL, undefined, 'size report: SET GLOBAL rocksdb_force_flush_memtable_now', { ...opt, alternatives: ['SYSTEM VARIABLES ADMIN'] }));
  }
  out.push(need('SELECT', db, table, 'size report: ANALYZE TABLE refreshes the figures (needs SELECT and INSERT)', opt));
  out.push(need('INSERT', db, table, 'size report: ANALYZE TABLE refreshes the figures (needs SELECT and INSERT)', opt));
  return mergeNeeds(out);
}

// ------------------------------------------------------------------ needs of SQL statements

/** Reads `name`, `db.name`, `` `d b`.`n` `` from the start of `text`; returns the parts and the rest. */
function readQualified(text: string): { db: string | undefined; name: string; rest: string } | undefined {
  const parts: string[] = [];
  let i = 0;
  const skipWs = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  skipWs();
  for (;;) {
    if (text[i] === '`' || text[i] === '"') {
      const q = text[i]!;
      let name = '';
      i++;
      for (;;) {
        if (i >= text.length) return undefined;
        if (text[i] === q) {
          if (text[i + 1] === q) {
            name += q;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        name += text[i++];
      }
      parts.push(name);
    } else {
      const m = /^[^\s.,;()`"]+/.exec(text.slice(i));
      if (!m) return undefined;
      parts.push(m[0]);
      i += m[0].length;
    }
    if (text[i] === '.' && parts.length < 2) {
      i++;
      continue;
    }
    break;
  }
  if (parts.length === 1) return { db: undefined, name: parts[0]!, rest: text.slice(i) };
  return { db: parts[0], name: parts[1]!, rest: text.slice(i) };
}

/** Reads a comma-separated list of qualified names. */
function readNameList(text: string): Array<{ db: string | undefined; name: string }> {
  const out: Array<{ db: string | undefined; name: string }> = [];
  let rest = text;
  for (;;) {
    const q = readQualified(rest);
    if (!q) break;
    out.push({ db: q.db, name: q.name });
    const m = /^\s*,/.exec(q.rest);
    if (!m) break;
    rest = q.rest.slice(m[0].length);
  }
  return out;
}

/**
 * The privileges one statement needs, for the statement kinds flatload
 * plans (DDL around the load, session settings, the load itself);
 * undefined for a statement it does not recognise. SELECT/SHOW and plain
 * SET SESSION need nothing beyond what introspection already needed.
 */
export function statementPrivileges(sql: string, defaultDb: string, why?: string): PrivilegeNeed[] | undefined {
  const text = sql.trim().replace(/;\s*$/, '');
  const reason = why ?? text.replace(/\s+/g, ' ').slice(0, 120);
  const on = (q: { db: string | undefined; name: string }): [string, string] => [q.db ?? defaultDb, q.name];
  let m: RegExpExecArray | null;
  if (/^(SELECT|SHOW|DESCRIBE|EXPLAIN|DO|COMMIT|ROLLBACK|START\s+TRANSACTION|BEGIN|UNLOCK\s+TABLES)\b/i.test(text)) return [];
  if ((m = /^SET\s+(GLOBAL\s+|@@GLOBAL\.)/i.exec(text))) {
    return [need('SUPER', GLOBAL, undefined, reason, { alternatives: ['SYSTEM VARIABLES ADMIN'] })];
  }
  if (/^SET\s+(SESSION\s+|LOCAL\s+|@@SESSION\.|@@)?sql_log_bin\b/i.test(text)) {
    return [need('BINLOG ADMIN', GLOBAL, undefined, reason, { alternatives: ['SUPER'] })];
  }
  if (/^SET\b/i.test(text)) return [];
  if ((m = /^TRUNCATE\s+(TABLE\s+)?/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    return q ? [need('DROP', ...on(q), reason)] : undefined;
  }
  if ((m = /^DELETE\s+(LOW_PRIORITY\s+|QUICK\s+|IGNORE\s+)*FROM\s+/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    if (!q) return undefined;
    const out = [need('DELETE', ...on(q), reason)];
    if (/\bWHERE\b/i.test(q.rest)) out.push(need('SELECT', ...on(q), reason));
    return out;
  }
  if ((m = /^CREATE\s+(TEMPORARY\s+)?TABLE\s+(IF\s+NOT\s+EXISTS\s+)?/i.exec(text))) {
    if (m[1]) return [need('CREATE TEMPORARY TABLES', defaultDb, undefined, reason)];
    const q = readQualified(text.slice(m[0].length));
    if (!q) return undefined;
    const out = [need('CREATE', ...on(q), reason)];
    const like = /^\s*\(?\s*LIKE\s+/i.exec(q.rest);
    if (like) {
      const src = readQualified(q.rest.slice(like[0].length));
      if (src) out.push(need('SELECT', ...on(src), reason));
    }
    return out;
  }
  if ((m = /^DROP\s+(TEMPORARY\s+)?TABLES?\s+(IF\s+EXISTS\s+)?/i.exec(text))) {
    if (m[1]) return [];
    return readNameList(text.slice(m[0].length)).map((q) => need('DROP', ...on(q), reason));
  }
  if ((m = /^RENAME\s+TABLES?\s+/i.exec(text))) {
    const out: PrivilegeNeed[] = [];
    let rest = text.slice(m[0].length);
    for (;;) {
      const from = readQualified(rest);
      if (!from) return undefined;
      const to1 = /^\s*TO\s+/i.exec(from.rest);
      if (!to1) return undefined;
      const to = readQualified(from.rest.slice(to1[0].length));
      if (!to) return undefined;
      const [fdb, ft] = on(from);
      const [tdb, tt] = on(to);
      out.push(need('ALTER', fdb, ft, reason), need('DROP', fdb, ft, reason), need('CREATE', tdb, tt, reason), need('INSERT', tdb, tt, reason));
      const comma = /^\s*,\s*/.exec(to.rest);
      if (!comma) break;
      rest = to.rest.slice(comma[0].length);
    }
    return out;
  }
  if ((m = /^ALTER\s+(ONLINE\s+|IGNORE\s+)*TABLE\s+/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    if (!q) return undefined;
    const out = [need('ALTER', ...on(q), reason)];
    const ren = /\bRENAME\s+(TO\s+|AS\s+)?/i.exec(q.rest);
    if (ren) {
      const to = readQualified(q.rest.slice(ren.index + ren[0].length));
      if (to) out.push(need('DROP', ...on(q), reason), need('CREATE', ...on(to), reason), need('INSERT', ...on(to), reason));
    }
    return out;
  }
  if ((m = /^(CREATE\s+(UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX|DROP\s+INDEX)\s+(IF\s+(NOT\s+)?EXISTS\s+)?\S+\s+ON\s+/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    return q ? [need('INDEX', ...on(q), reason)] : undefined;
  }
  if ((m = /^(ANALYZE|OPTIMIZE)\s+(NO_WRITE_TO_BINLOG\s+|LOCAL\s+)?TABLES?\s+/i.exec(text))) {
    return readNameList(text.slice(m[0].length)).flatMap((q) => [need('SELECT', ...on(q), reason), need('INSERT', ...on(q), reason)]);
  }
  if ((m = /^FLUSH\s+(NO_WRITE_TO_BINLOG\s+|LOCAL\s+)?TABLES?\b\s*/i.exec(text))) {
    const names = readNameList(text.slice(m[0].length));
    const out = [need('RELOAD', GLOBAL, undefined, reason)];
    if (/\bFOR\s+EXPORT\b/i.test(text) || /\bWITH\s+READ\s+LOCK\b/i.test(text)) {
      for (const q of names) out.push(need('LOCK TABLES', on(q)[0], undefined, reason), need('SELECT', ...on(q), reason));
    }
    return out;
  }
  if ((m = /^LOCK\s+TABLES?\s+/i.exec(text))) {
    return readNameList(text.slice(m[0].length)).flatMap((q) => [need('LOCK TABLES', on(q)[0], undefined, reason), need('SELECT', ...on(q), reason)]);
  }
  if ((m = /^(INSERT|REPLACE)\s+(LOW_PRIORITY\s+|DELAYED\s+|HIGH_PRIORITY\s+|IGNORE\s+)*(INTO\s+)?/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    if (!q) return undefined;
    const out = [need('INSERT', ...on(q), reason)];
    if (/^REPLACE/i.test(m[1]!)) out.push(need('DELETE', ...on(q), reason));
    if (/\bON\s+DUPLICATE\s+KEY\s+UPDATE\b/i.test(q.rest)) out.push(need('UPDATE', ...on(q), reason));
    return out;
  }
  if ((m = /^UPDATE\s+(LOW_PRIORITY\s+|IGNORE\s+)*/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    return q ? [need('UPDATE', ...on(q), reason), need('SELECT', ...on(q), reason)] : undefined;
  }
  if ((m = /^LOAD\s+DATA\b[\s\S]*?\bINTO\s+TABLE\s+/i.exec(text))) {
    const q = readQualified(text.slice(m[0].length));
    if (!q) return undefined;
    const out = [need('INSERT', ...on(q), reason)];
    if (/\bREPLACE\s+INTO\s+TABLE\b/i.test(text)) out.push(need('DELETE', ...on(q), reason));
    if (!/\bLOCAL\b/i.test(text.slice(0, m[0].length))) out.push(need('FILE', GLOBAL, undefined, reason));
    return out;
  }
  return undefined;
}

export interface PlanPrivilegeOptions {
  /** Schema of the resume bookkeeping tables; undefined: the plan keeps none (a dry run). */
  bookkeepingSchema?: string;
  bookkeepingTables?: string[];
  /** The size report runs afterwards (optional needs). */
  sizeReport?: boolean;
  /** Upper-case engine of the target (narrows the size-report needs). */
  engine?: string;
}

/**
 * The needs of a concrete LoadPlan: derived from the statements the plan
 * will run (before/after, session and per-chunk SQL), plus the load itself,
 * introspection, bookkeeping and the optional size report. Statements it does
 * not recognise are listed in `unrecognised` rather than guessed.
 */
export function privilegesForPlan(plan: LoadPlan, opts: PlanPrivilegeOptions = {}): { needs: PrivilegeNeed[]; unrecognised: string[] } {
  const { db, table } = plan.target;
  const load = plan.loadTarget;
  const out: PrivilegeNeed[] = [];
  const unrecognised: string[] = [];
  out.push(need('SELECT', db, table, 'reading the table definition and checking whether the table is empty (SELECT 1 … LIMIT 1)'));
  const verb = plan.strategy === 'insert' ? 'INSERT' : 'LOAD DATA LOCAL INFILE';
  out.push(need('INSERT', load.db, load.table, `${verb} writes the rows`));
  if (plan.duplicates === 'replace') {
    out.push(need('DELETE', load.db, load.table, `${verb} … REPLACE deletes the old row of a duplicate key (--on-duplicate replace)`));
  }
  const statements: PlannedStatement[] = [
    ...plan.before,
    ...plan.sessionSettings.map((s) => ({ sql: `SET SESSION ${s.name} = ${s.value}`, reason: s.reason })),
    ...(plan.chunkBefore ?? []),
    ...(plan.chunkAfter ?? []),
    ...plan.sessionEnd,
    ...plan.after,
  ];
  for (const st of statements) {
    const needs = statementPrivileges(st.sql, load.db, `${st.sql.replace(/\s+/g, ' ').slice(0, 100)} (${st.reason})`);
    if (needs === undefined) unrecognised.push(st.sql);
    else out.push(...needs);
  }
  if (opts.bookkeepingSchema !== undefined) out.push(...bookkeepingNeeds(opts.bookkeepingSchema, opts.bookkeepingTables));
  if (opts.sizeReport) out.push(...sizeReportNeeds(db, table, opts.engine));
  return { needs: mergeNeeds(out), unrecognised };
}

/** One entry per privilege and object; reasons joined; required wins over optional. */
function mergeNeeds(needs: PrivilegeNeed[]): PrivilegeNeed[] {
  const byKey = new Map<string, PrivilegeNeed>();
  for (const n of needs) {
    const key = `${n.privilege}\u0000${n.on.db}\u0000${n.on.table ?? ''}`;
    const prev = byKey.get(key);
    if (!prev) {
      byKey.set(key, { ...n });
      continue;
    }
    if (!prev.why.split('; ').includes(n.why)) prev.why = `${prev.why}; ${n.why}`;
    if (!n.optional) delete prev.optional;
  }
  return [...byKey.values()];
}

// ------------------------------------------------------------------ parsing SHOW GRANTS

interface Token {
  kind: 'word' | 'quoted' | 'string' | 'punct';
  text: string;
}

function tokenize(line: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '`' || c === '"' || c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= line.length) return undefined;
        const d = line[i]!;
        if (d === c) {
          if (line[i + 1] === c) {
            text += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (d === '\\' && c === "'" && i + 1 < line.length) {
          // String literals (user/host in MySQL 5.x, password hashes) escape with a backslash.
          text += line[i + 1]!;
          i += 2;
          continue;
        }
        text += d;
        i++;
      }
      out.push({ kind: c === '`' ? 'quoted' : c === '"' ? 'quoted' : 'string', text });
      continue;
    }
    if (',.()@*;='.includes(c)) {
      out.push({ kind: 'punct', text: c });
      i++;
      continue;
    }
    let j = i;
    while (j < line.length && !/\s/.test(line[j]!) && !',.()@*;=`"\''.includes(line[j]!)) j++;
    out.push({ kind: 'word', text: line.slice(i, j) });
    i = j;
  }
  return out;
}

export interface Grantee {
  user: string;
  /** undefined for a MariaDB role (roles have no host). */
  host: string | undefined;
}

export type GrantLevel =
  | { kind: 'global' }
  | { kind: 'db'; db: string }
  | { kind: 'table'; db: string | undefined; table: string }
  | { kind: 'other' };

export type ParsedGrant =
  | {
      kind: 'privileges';
      /** GRANT (true) or a MySQL partial REVOKE (false). */
      grant: boolean;
      /** Normalised names (upper case, single spaces, `_` as space); ALL PRIVILEGES as 'ALL'. */
      privileges: Array<{ name: string; columns: string[] | undefined }>;
      level: GrantLevel;
      grantees: Grantee[];
    }
  | { kind: 'roles'; roles: Grantee[]; grantees: Grantee[] };

function normPrivilege(words: string[]): string {
  const name = words.join(' ').toUpperCase().replace(/_/g, ' ').replace(/\s+/g, ' ').trim();
  return name === 'ALL PRIVILEGES' ? 'ALL' : name;
}

const isWord = (t: Token | undefined, w: string): boolean => t?.kind === 'word' && t.text.toUpperCase() === w;

/** Parses one SHOW GRANTS line; undefined for lines that grant nothing flatload uses (or cannot be read). */
export function parseGrant(line: string): ParsedGrant | undefined {
  const toks = tokenize(line.trim().replace(/;\s*$/, ''));
  if (!toks || toks.length === 0) return undefined;
  let i = 0;
  const peek = (): Token | undefined => toks[i];
  const first = toks[i++];
  const grant = isWord(first, 'GRANT');
  if (!grant && !isWord(first, 'REVOKE')) return undefined;

  // The list before ON (privileges) or TO (roles).
  const items: Array<{ words: string[]; name: Token | undefined; host: string | undefined; columns: string[] | undefined }> = [];
  let cur: { words: string[]; name: Token | undefined; host: string | undefined; columns: string[] | undefined } = {
    words: [],
    name: undefined,
    host: undefined,
    columns: undefined,
  };
  let terminator: 'ON' | 'TO' | 'FROM' | undefined;
  while (i < toks.length) {
    const t = toks[i]!;
    if (t.kind === 'word' && ['ON', 'TO', 'FROM'].includes(t.text.toUpperCase()) && (cur.words.length > 0 || cur.name)) {
      terminator = t.text.toUpperCase() as 'ON' | 'TO' | 'FROM';
      i++;
      break;
    }
    if (t.kind === 'punct' && t.text === ',') {
      items.push(cur);
      cur = { words: [], name: undefined, host: undefined, columns: undefined };
      i++;
      continue;
    }
    if (t.kind === 'punct' && t.text === '(') {
      const cols: string[] = [];
      i++;
      while (i < toks.length && !(toks[i]!.kind === 'punct' && toks[i]!.text === ')')) {
        const c = toks[i]!;
        if (!(c.kind === 'punct' && c.text === ',')) cols.push(c.text);
        i++;
      }
      if (i >= toks.length) return undefined;
      i++;
      cur.columns = cols;
      continue;
    }
    if (t.kind === 'punct' && t.text === '@') {
      const h = toks[i + 1];
      if (!h) return undefined;
      cur.host = h.text;
      i += 2;
      continue;
    }
    if (t.kind === 'word') cur.words.push(t.text);
    else if (t.kind === 'quoted' || t.kind === 'string') cur.name = t;
    else return undefined;
    i++;
  }
  items.push(cur);
  if (!terminator) return undefined;

  const readGrantees = (): Grantee[] => {
    const gs: Grantee[] = [];
    while (i < toks.length) {
      const t = toks[i]!;
      if (t.kind === 'word' && ['IDENTIFIED', 'REQUIRE', 'WITH', 'AS', 'USING', 'PASSWORD', 'ACCOUNT'].includes(t.text.toUpperCase())) break;
      if (t.kind === 'punct' && t.text === ',') {
        i++;
        continue;
      }
      if (t.kind === 'punct') break;
      const user = t.text;
      i++;
      let host: string | undefined;
      if (peek()?.kind === 'punct' && peek()!.text === '@') {
        const h = toks[i + 1];
        if (!h || h.kind === 'punct') break;
        host = h.text;
        i += 2;
      }
      gs.push({ user, host });
    }
    return gs;
  };

  if (terminator === 'TO' || (terminator === 'FROM' && items.every((it) => it.words.length === 0))) {
    // GRANT role[, role] TO grantee — roles are names, not privilege words.
    const roles: Grantee[] = items.map((it) => ({ user: it.name?.text ?? it.words.join(' '), host: it.host }));
    if (!grant) return undefined;
    return { kind: 'roles', roles, grantees: readGrantees() };
  }
  if (terminator !== 'ON') return undefined;
  const privileges = items.map((it) => ({ name: normPrivilege(it.words), columns: it.columns }));
  if (privileges.some((p) => p.name === 'PROXY')) return undefined;

  // Object type, then the level.
  let level: GrantLevel;
  if (isWord(peek(), 'TABLE')) i++;
  if (['FUNCTION', 'PROCEDURE', 'PACKAGE'].some((w) => isWord(peek(), w))) {
    i++;
    if (isWord(peek(), 'BODY')) i++;
    level = { kind: 'other' };
    // Skip the routine name.
    while (i < toks.length && !isWord(toks[i], 'TO') && !isWord(toks[i], 'FROM')) i++;
  } else {
    const a = toks[i++];
    if (!a) return undefined;
    const dot = peek()?.kind === 'punct' && peek()!.text === '.';
    if (dot) {
      i++;
      const b = toks[i++];
      if (!b) return undefined;
      const aStar = a.kind === 'punct' && a.text === '*';
      const bStar = b.kind === 'punct' && b.text === '*';
      if (aStar && bStar) level = { kind: 'global' };
      else if (aStar) return undefined;
      else if (bStar) level = { kind: 'db', db: a.text };
      else level = { kind: 'table', db: a.text, table: b.text };
    } else if (a.kind === 'punct' && a.text === '*') {
      level = { kind: 'other' }; // `ON *`: the default database at grant time; SHOW GRANTS never prints it
    } else {
      level = { kind: 'table', db: undefined, table: a.text };
    }
  }
  if (!(isWord(peek(), 'TO') || isWord(peek(), 'FROM'))) return undefined;
  i++;
  return { kind: 'privileges', grant, privileges, level, grantees: readGrantees() };
}

// ------------------------------------------------------------------ matching

/** SQL LIKE as the grant tables use it: `%` any run, `_` one character, `\` escapes. */
export function grantPatternMatches(pattern: string, name: string, caseInsensitive = false): boolean {
  const p = caseInsensitive ? pattern.toLowerCase() : pattern;
  const n = caseInsensitive ? name.toLowerCase() : name;
  const pc = [...p];
  const nc = [...n];
  const memo = new Map<string, boolean>();
  const m = (pi: number, ni: number): boolean => {
    const key = `${pi},${ni}`;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (pi === pc.length) r = ni === nc.length;
    else {
      const c = pc[pi]!;
      if (c === '%') r = m(pi + 1, ni) || (ni < nc.length && m(pi, ni + 1));
      else if (c === '_') r = ni < nc.length && m(pi + 1, ni + 1);
      else if (c === '\\' && pi + 1 < pc.length) r = ni < nc.length && nc[ni] === pc[pi + 1] && m(pi + 2, ni + 1);
      else r = ni < nc.length && nc[ni] === c && m(pi + 1, ni + 1);
    }
    memo.set(key, r);
    return r;
  };
  return m(0, 0);
}

function hasWildcard(pattern: string): boolean {
  return /(^|[^\\])[%_]/.test(pattern);
}

function unescapePattern(pattern: string): string {
  return pattern.replace(/\\(.)/g, '$1');
}

interface PrivSet {
  all: boolean;
  names: Set<string>;
}

interface GranteeGrants {
  global: PrivSet;
  dbs: Array<{ pattern: string; privs: PrivSet }>;
  tables: Array<{ db: string; table: string; privs: PrivSet }>;
  columns: Array<{ db: string; table: string; privilege: string; columns: string[] }>;
  revokes: Array<{ db: string; names: Set<string> }>;
}

const granteeKey = (g: Grantee): string => (g.host === undefined ? g.user : `${g.user}@${g.host.toLowerCase()}`);

/** `user@host` as CURRENT_USER() returns it (the user part may itself contain `@`). */
export function parseAccount(account: string): Grantee {
  const at = account.lastIndexOf('@');
  return at === -1 ? { user: account, host: undefined } : { user: account.slice(0, at), host: account.slice(at + 1) };
}

function emptyGrants(): GranteeGrants {
  return { global: { all: false, names: new Set() }, dbs: [], tables: [], columns: [], revokes: [] };
}

function addPrivs(set: PrivSet, names: string[]): void {
  for (const n of names) {
    if (n === 'ALL') set.all = true;
    else set.names.add(n);
  }
}

export interface CheckOptions {
  /** CURRENT_USER(), e.g. "loader@%". Without it every privilege line counts, whoever it names. */
  currentUser?: string;
  /** The server's lower_case_table_names: 1 or 2 compare names case-insensitively. */
  lowerCaseTableNames?: number;
}

export interface PrivilegeCheck {
  /** False when no grant line could be read: then nothing is claimed missing (let the server decide). */
  known: boolean;
  /** Needed privileges the grants do not give. */
  missing: PrivilegeNeed[];
  /** Optional ones (size report) the grants do not give. */
  missingOptional: PrivilegeNeed[];
  /** Roles granted to the user whose privileges SHOW GRANTS does not list (not active in this session). */
  inactiveRoles: string[];
  /** Lines that looked like grants but could not be parsed (ignored). */
  unparsed: string[];
}

export function checkPrivileges(grants: readonly string[], needs: readonly PrivilegeNeed[], opts: CheckOptions = {}): PrivilegeCheck {
  const ci = (opts.lowerCaseTableNames ?? 0) > 0;
  const parsed: ParsedGrant[] = [];
  const unparsed: string[] = [];
  for (const line of grants) {
    const g = parseGrant(line);
    if (g) parsed.push(g);
    else if (/^\s*(GRANT|REVOKE)\b/i.test(line) && !/^\s*GRANT\s+PROXY\b/i.test(line) && !/\bON\s+(FUNCTION|PROCEDURE|PACKAGE)\b/i.test(line)) {
      unparsed.push(redactGrant(line));
    }
  }

  // Which grantees' lines apply: the user, PUBLIC, and the roles reachable from them.
  const privilegeLines = parsed.filter((g): g is Extract<ParsedGrant, { kind: 'privileges' }> => g.kind === 'privileges');
  const roleLines = parsed.filter((g): g is Extract<ParsedGrant, { kind: 'roles' }> => g.kind === 'roles');
  const withPrivileges = new Set(privilegeLines.flatMap((g) => g.grantees.map(granteeKey)));
  let applies: (key: string) => boolean;
  const inactiveRoles: string[] = [];
  if (opts.currentUser !== undefined) {
    const active = new Set<string>([granteeKey(parseAccount(opts.currentUser)), 'PUBLIC']);
    for (let changed = true; changed; ) {
      changed = false;
      for (const r of roleLines) {
        if (!r.grantees.some((g) => active.has(granteeKey(g)))) continue;
        for (const role of r.roles) {
          const k = granteeKey(role);
          if (!active.has(k)) {
            active.add(k);
            changed = true;
          }
        }
      }
    }
    for (const r of roleLines) {
      if (!r.grantees.some((g) => active.has(granteeKey(g)))) continue;
      for (const role of r.roles) if (!withPrivileges.has(granteeKey(role))) inactiveRoles.push(granteeKey(role));
    }
    applies = (k) => active.has(k);
  } else {
    for (const r of roleLines) for (const role of r.roles) if (!withPrivileges.has(granteeKey(role))) inactiveRoles.push(granteeKey(role));
    applies = () => true;
  }

  const byGrantee = new Map<string, GranteeGrants>();
  for (const g of privilegeLines) {
    for (const who of g.grantees) {
      const key = granteeKey(who);
      if (!applies(key)) continue;
      let gg = byGrantee.get(key);
      if (!gg) byGrantee.set(key, (gg = emptyGrants()));
      const whole = g.privileges.filter((p) => p.columns === undefined).map((p) => p.name);
      const lvl = g.level;
      if (!g.grant) {
        if (lvl.kind === 'db') gg.revokes.push({ db: unescapePattern(lvl.db), names: new Set(whole) });
        continue;
      }
      if (lvl.kind === 'global') addPrivs(gg.global, whole);
      else if (lvl.kind === 'db') {
        let entry = gg.dbs.find((d) => d.pattern === lvl.db);
        if (!entry) gg.dbs.push((entry = { pattern: lvl.db, privs: { all: false, names: new Set() } }));
        addPrivs(entry.privs, whole);
      } else if (lvl.kind === 'table' && lvl.db !== undefined) {
        const db = lvl.db;
        let entry = gg.tables.find((t) => t.db === db && t.table === lvl.table);
        if (!entry) gg.tables.push((entry = { db, table: lvl.table, privs: { all: false, names: new Set() } }));
        addPrivs(entry.privs, whole);
        for (const p of g.privileges) {
          if (p.columns !== undefined) gg.columns.push({ db, table: lvl.table, privilege: p.name, columns: p.columns });
        }
      }
    }
  }

  const known = parsed.length > 0;
  const missing: PrivilegeNeed[] = [];
  const missingOptional: PrivilegeNeed[] = [];
  if (known) {
    for (const n of needs) {
      const ok = [...byGrantee.values()].some((gg) => satisfies(gg, n, ci));
      if (!ok) (n.optional ? missingOptional : missing).push(n);
    }
  }
  return { known, missing, missingOptional, inactiveRoles: [...new Set(inactiveRoles)], unparsed };
}

function holds(set: PrivSet, privilege: string, levelAllows: (p: string) => boolean): boolean {
  return set.names.has(privilege) || (set.all && levelAllows(privilege));
}

function satisfies(gg: GranteeGrants, n: PrivilegeNeed, ci: boolean): boolean {
  return [n.privilege, ...(n.alternatives ?? [])].some((p) => satisfiesOne(gg, p, n, ci));
}

function satisfiesOne(gg: GranteeGrants, privilege: string, n: PrivilegeNeed, ci: boolean): boolean {
  const eq = (a: string, b: string): boolean => (ci ? a.toLowerCase() === b.toLowerCase() : a === b);
  const isGlobalNeed = n.on.db === GLOBAL;
  // ALL PRIVILEGES ON *.* is every privilege except GRANT OPTION (and PROXY).
  if (holds(gg.global, privilege, (p) => p !== 'GRANT OPTION')) {
    const revoked = !isGlobalNeed && gg.revokes.some((r) => eq(r.db, n.on.db) && (r.names.has(privilege) || r.names.has('ALL')));
    if (!revoked) return true;
  }
  if (isGlobalNeed || GLOBAL_ONLY.has(privilege)) return false;

  // Database level: the exact name wins over patterns; among patterns, any match (see the header).
  const matching = gg.dbs.filter((d) => grantPatternMatches(d.pattern, n.on.db, ci));
  const exact = matching.filter((d) => !hasWildcard(d.pattern));
  const dbRows = exact.length > 0 ? exact : matching;
  if (dbRows.some((d) => holds(d.privs, privilege, (p) => !GLOBAL_ONLY.has(p) && p !== 'GRANT OPTION'))) return true;

  if (n.on.table === undefined) return false;
  const table = n.on.table;
  const t = gg.tables.find((x) => eq(x.db, n.on.db) && eq(x.table, table));
  if (t && holds(t.privs, privilege, (p) => TABLE_LEVEL.has(p))) return true;

  if (n.columns && n.columns.length > 0 && COLUMN_LEVEL.has(privilege)) {
    const granted = new Set(
      gg.columns
        .filter((c) => c.privilege === privilege && eq(c.db, n.on.db) && eq(c.table, table))
        .flatMap((c) => c.columns.map((x) => x.toLowerCase())),
    );
    if (n.columns.every((c) => granted.has(c.toLowerCase()))) return true;
  }
  return false;
}

/**
 * The needs the grants do not give (optional ones included; filter on
 * `optional`). Empty when the grants could not be read at all: a planner
 * must not refuse a load on a guess.
 */
export function missingPrivileges(grants: readonly string[], needs: readonly PrivilegeNeed[], currentUser?: string, opts: Omit<CheckOptions, 'currentUser'> = {}): PrivilegeNeed[] {
  const r = checkPrivileges(grants, needs, currentUser === undefined ? opts : { ...opts, currentUser });
  return [...r.missing, ...r.missingOptional];
}

// ------------------------------------------------------------------ words for people

export function describeTarget(on: PrivilegeTarget): string {
  if (on.db === GLOBAL) return '*.*';
  return on.table === undefined ? `${quoteId(on.db)}.*` : `${quoteId(on.db)}.${quoteId(on.table)}`;
}

/** "DROP on `db`.`t` (TRUNCATE TABLE empties the table first (--mode replace))" */
export function describeNeed(n: PrivilegeNeed): string {
  const alt = n.alternatives?.length ? ` (or ${n.alternatives.join(' or ')})` : '';
  return `${n.privilege}${alt} on ${describeTarget(n.on)}: ${n.why}`;
}

function quoteAccount(account: string): string {
  const g = parseAccount(account);
  return g.host === undefined ? quoteId(g.user) : `${quoteId(g.user)}@${quoteId(g.host)}`;
}

/** GRANT statements a DBA can run to give exactly what is missing, one per object. */
export function grantStatements(needs: readonly PrivilegeNeed[], account: string): string[] {
  const byObject = new Map<string, Set<string>>();
  for (const n of needs) {
    const obj = describeTarget(n.on);
    const set = byObject.get(obj) ?? new Set<string>();
    set.add(n.privilege);
    byObject.set(obj, set);
  }
  return [...byObject].map(([obj, privs]) => `GRANT ${[...privs].join(', ')} ON ${obj} TO ${quoteAccount(account)};`);
}

/**
 * The planning-time error for missing privileges (MISSING_PRIVILEGE), or
 * undefined when nothing required is missing.
 */
export function missingPrivilegeError(check: PrivilegeCheck, account: string | undefined, context: { table?: string } = {}): FlatloadError | undefined {
  if (!check.known || check.missing.length === 0) return undefined;
  const who = account ?? 'the current user';
  const lines = check.missing.map((n) => `  - ${describeNeed(n)}`);
  const roles = check.inactiveRoles.length
    ? `\n  (roles granted but not active in this session, so not counted: ${check.inactiveRoles.join(', ')}; SET DEFAULT ROLE makes one active at login)`
    : '';
  return new FlatloadError('MISSING_PRIVILEGE', `${who} lacks privileges this plan needs:\n${lines.join('\n')}${roles}`, {
    ...context,
    hint: `a DBA can grant them with: ${grantStatements(check.missing, account ?? 'USER@HOST').join(' ')}`,
  });
}

/**
 * A SHOW GRANTS line with its secrets blanked: MariaDB and MySQL 5.x print the
 * password hash (IDENTIFIED BY PASSWORD '*…'), and authentication plugins
 * their strings (IDENTIFIED VIA … USING '…', AS '…'). Use before a grant
 * line is logged, reported or put in an error.
 */
export function redactGrant(line: string): string {
  return line
    .replace(/(\bIDENTIFIED\s+(?:BY|WITH|VIA)\b.*)$/is, (m) => m.replace(/'(?:[^'\\]|\\.|'')*'/g, "'<redacted>'"))
    .replace(/(\bPASSWORD\s*)'(?:[^'\\]|\\.|'')*'/gi, "$1'<redacted>'");
}
