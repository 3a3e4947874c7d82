/**
 * Which privileges a load needs, as a pure function of its plan: each
 * operation of the plan (plan/ops.ts) names what it needs, plus the load
 * statement, introspection, the resume bookkeeping and the optional size
 * report. Whether the current user holds them is plan/privilegeCheck.ts.
 *
 * Every need below was checked statement by statement against MariaDB 10.11
 * with a user holding exactly the listed privileges
 * (test/db/security-privileges.test.ts and docs/security.md).
 */
import type { Op, Step, TableRef } from './ops.js';
import type { LoadPlan } from './types.js';

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

function need(privilege: Privilege, db: string, table: string | undefined, why: string, extra: Partial<PrivilegeNeed> = {}): PrivilegeNeed {
  return { privilege, on: table === undefined ? { db } : { db, table }, why, ...extra };
}

const on = (t: TableRef): [string, string] => [t.db, t.table];

/** What one operation of a plan needs, `why` naming the operation. */
export function needsOfOp(op: Op, why: string): PrivilegeNeed[] {
  switch (op.kind) {
    case 'truncate':
      return [need('DROP', ...on(op.table), why)];
    case 'delete-all':
      return [need('DELETE', ...on(op.table), why)];
    case 'delete-key-range':
      // The WHERE reads the key columns.
      return [need('DELETE', ...on(op.table), why), need('SELECT', ...on(op.table), why)];
    case 'drop-table':
      return [need('DROP', ...on(op.table), why)];
    case 'create-like':
      return [need('CREATE', ...on(op.table), why), need('SELECT', ...on(op.like), why)];
    case 'swap-tables':
      return [...renameNeeds(op.target, op.old, why), ...renameNeeds(op.shadow, op.target, why)];
    case 'swap-set':
      return op.swaps.flatMap((w) => [...renameNeeds(w.target, w.old, why), ...renameNeeds(w.shadow, w.target, why)]);
    case 'drop-indexes':
    case 'add-indexes':
    case 'drop-column':
    case 'add-auto-increment-key':
    case 'disable-keys':
    case 'enable-keys':
    case 'auto-increment-after-input':
      return [need('ALTER', ...on(op.table), why)];
    case 'set-session':
      return op.name.toLowerCase() === 'sql_log_bin' ? [need('BINLOG ADMIN', GLOBAL, undefined, why, { alternatives: ['SUPER'] })] : [];
    case 'bulk-load':
    case 'commit-in-the-middle':
    case 'transaction':
      return [];
  }
}

/**
 * The resume bookkeeping tables (src/checkpoint/store.ts) and the statements
 * run on them: CREATE TABLE IF NOT EXISTS, SELECT, INSERT (… ON DUPLICATE KEY
 * UPDATE on the jobs table), UPDATE … WHERE (jobs only), DELETE … WHERE.
 * MyRocks/TokuDB targets keep their chunk rows in flatload_chunks_rocksdb /
 * flatload_chunks_tokudb instead of flatload_chunks; each chunk table has a
 * `_rejects` table beside it for rejected rows too big for one statement.
 */
export const BOOKKEEPING_TABLES = ['flatload_jobs', 'flatload_chunks', 'flatload_chunks_rejects'];

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
function renameNeeds(from: TableRef, to: TableRef, why: string): PrivilegeNeed[] {
  return [
    need('ALTER', ...on(from), `${why} (renaming needs ALTER and DROP on the old name)`),
    need('DROP', ...on(from), `${why} (renaming needs ALTER and DROP on the old name)`),
    need('CREATE', ...on(to), `${why} (renaming needs CREATE and INSERT on the new name)`),
    need('INSERT', ...on(to), `${why} (renaming needs CREATE and INSERT on the new name)`),
  ];
}

/** The size report's statements (src/introspect/sizes.ts); all optional: a figure it cannot get is reported as unknown. */
export function sizeReportNeeds(db: string, table: string, engine?: string): PrivilegeNeed[] {
  const e = engine?.toUpperCase();
  const opt = { optional: true };
  const out: PrivilegeNeed[] = [];
  if (e === undefined || e === 'INNODB') {
    out.push(need('PROCESS', GLOBAL, undefined, 'size report: information_schema.INNODB_SYS_TABLESPACES (MySQL: INNODB_TABLESPACES)', opt));
    out.push(need('RELOAD', GLOBAL, undefined, 'size report: FLUSH TABLES … FOR EXPORT writes a page-compressed table\'s dirty pages first', opt));
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

/** Introspection of the target, and the load statement itself (LOAD DATA LOCAL or INSERT, REPLACE). */
export function loadNeeds(plan: Pick<LoadPlan, 'target' | 'loadTarget' | 'strategy' | 'duplicates'>): PrivilegeNeed[] {
  const { db, table } = plan.target;
  const load = plan.loadTarget;
  const verb = plan.strategy === 'insert' ? 'INSERT' : 'LOAD DATA LOCAL INFILE';
  const out = [
    need('SELECT', db, table, 'reading the table definition and checking whether the table is empty (SELECT 1 … LIMIT 1)'),
    need('INSERT', load.db, load.table, `${verb} writes the rows`),
  ];
  if (plan.duplicates === 'replace') {
    out.push(need('DELETE', load.db, load.table, `${verb} … REPLACE deletes the old row of a duplicate key (--on-duplicate replace)`));
  }
  return out;
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
 * Everything a plan needs: introspection, the load statement, every
 * operation the plan runs (resume's included), the bookkeeping, and the
 * optional size report.
 */
export function privilegesForPlan(plan: LoadPlan, opts: PlanPrivilegeOptions = {}): PrivilegeNeed[] {
  const { db, table } = plan.target;
  const out = loadNeeds(plan);
  const steps: Step[] = [...plan.before, ...plan.session, ...plan.chunkBefore, ...plan.chunkAfter, ...plan.sessionEnd, ...plan.after, ...plan.onResume];
  for (const s of steps) out.push(...needsOfOp(s.op, s.reason));
  if (opts.bookkeepingSchema !== undefined) out.push(...bookkeepingNeeds(opts.bookkeepingSchema, opts.bookkeepingTables));
  if (opts.sizeReport) out.push(...sizeReportNeeds(db, table, opts.engine));
  return mergeNeeds(out);
}

/** One entry per privilege and object; reasons joined; required wins over optional. */
export function mergeNeeds(needs: PrivilegeNeed[]): PrivilegeNeed[] {
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
