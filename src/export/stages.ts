/**
 * The stages of a whole export that its job (src/job/export.ts) runs in
 * order: the tables and their files, the refusals before anything changes,
 * the missing tables created from their .sql files, the shadows made (swap)
 * or the tables emptied (replace), and (swap) one RENAME TABLE for all.
 */
import { readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import type { LoadArgs, LoadMode } from '../config/loadOptions.js';
import { ControlConnection } from '../db/control.js';
import { asServerError, toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { selectNumber, selectRows } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import { parseVersion } from '../introspect/server.js';
import type { ExecuteResult } from '../load/execute.js';
import { sqlOf, type Op, type TableRef } from '../plan/ops.js';
import { queryOp, type LockWaitOptions } from '../load/lockWait.js';
import type { RoutePlan } from '../plan/route.js';
import { defaultRejectPath } from '../report/rejectFile.js';
import { derivedName, OLD_SUFFIX, planMode, SHADOW_SUFFIX, type ModePlan } from '../plan/rules/modes.js';
import { engineKind } from '../plan/rules/context.js';
import { readTableFacts } from '../introspect/table.js';
import { ER } from '../db/errnos.js';
import type { ForeignKeyEdge } from './fkOrder.js';
import { allStatements, SESSION_VARIABLES, sidecarPlan } from './ddl.js';
import type { DiscoveredTable, PassedOver } from './discover.js';
import { tableKey } from './names.js';
import type { Selected } from './select.js';
import { readRemoteText } from '../input/open.js';
import { isRemoteInput, maskInputUrl } from '../input/remote.js';
import type { S3Settings } from '../input/s3.js';
import type { ExportReport, ExportTableReport } from './report.js';

export interface ExportArgs extends LoadArgs {
  files: string[];
  manifest?: string | undefined;
  createTables?: boolean | undefined;
  /** --run-sql-files: run every statement of a missing table's .sql file as the file says, not only its CREATE TABLE. */
  runSqlFiles?: boolean | undefined;
  rejectDir?: string | undefined;
  include?: string | string[] | undefined;
  exclude?: string | string[] | undefined;
  rename?: string | string[] | undefined;
}

export interface ExportRun {
  report: ExportReport;
  /** Each table's plan (dry run): text, and the JSON form. */
  plans: Array<{ table: string; text: string; json: unknown }>;
  /** The first error that stopped a table (the export's exit status). */
  error: FlatloadError | undefined;
}

export interface Target extends DiscoveredTable {
  key: string;
  db: string;
  ref: TableRef;
  shadow: TableRef;
  old: TableRef;
  exists: boolean;
  /** A Spider table loads as its single load does: straight to its backends when it can (load/spider.ts). */
  spider: boolean;
  /** `--rename`: the table the export's files name. */
  renamedFrom?: string | undefined;
}

export async function hasRows(control: ControlConnection, t: TableRef): Promise<boolean> {
  return (await selectRows(control, `SELECT 1 FROM ${quoteQualified(t.db, t.table)} LIMIT 1`)).length > 0;
}

async function tableExists(control: ControlConnection, t: TableRef): Promise<boolean> {
  return (await selectNumber(control, 'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [t.db, t.table])) > 0;
}

async function isSpider(control: ControlConnection, t: TableRef): Promise<boolean> {
  const rows = await selectRows<{ e: string | null }>(control, 'SELECT ENGINE AS e FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [t.db, t.table]);
  return (rows[0]?.e ?? '').toUpperCase() === 'SPIDER';
}

/**
 * Swap loads into a shadow made by CREATE TABLE … LIKE: a Spider table's
 * shadow names the same backend tables, so its rows would land in the live
 * ones before the RENAME. Refused before anything changes.
 */
export function refuseSpiderSwap(targets: readonly Target[], mode: string): void {
  const spider = targets.find((t) => t.spider);
  if (mode !== 'swap' || !spider) return;
  throw new FlatloadError('UNSUPPORTED', `${spider.key} is a Spider table: --mode swap would load its shadow, which names the same backend tables, so the rows would reach the live tables before the swap`, {
    table: spider.key,
    hint: 'load the export with --mode replace (the front empties every backend table first) or append',
  });
}

/** Connections to share when --jobs is not given: the server's cores (thread_pool_size) or the client's, at most 8 — the single load's default. */
export async function defaultBudget(control: ControlConnection, clientCpus: number): Promise<number> {
  const rows = await selectRows<{ Value: string }>(control, "SHOW VARIABLES LIKE 'thread_pool_size'");
  const cpus = Number(rows[0]?.Value);
  return Math.max(1, Math.min(8, Number.isFinite(cpus) && cpus > 0 ? cpus : clientCpus));
}

/** The server's version as one number, as executable comments compare it (10.11.6 → 101106). */
async function serverVersion(control: ControlConnection): Promise<number> {
  const rows = await selectRows<{ v: string }>(control, 'SELECT @@version AS v');
  const [a, b, c] = parseVersion(String(rows[0]?.v ?? ''), '').number;
  return a * 10000 + b * 100 + c;
}

/** The statements a missing table's .sql file (local or remote) runs: read and checked before anything changes. */
async function sidecarStatements(t: Target, version: number, runWhole: boolean, s3: S3Settings): Promise<{ run: string[]; sessionVariables: readonly string[] }> {
  const shown = maskInputUrl(t.ddl!);
  let text: string;
  try {
    text = isRemoteInput(t.ddl!) ? await readRemoteText(t.ddl!, s3) : readFileSync(t.ddl!, 'utf8');
  } catch (err) {
    if (err instanceof FlatloadError) throw err;
    throw new FlatloadError('INPUT_UNREADABLE', `cannot read ${shown}: ${(err as Error).message}`, { file: shown });
  }
  if (runWhole) return { run: allStatements(text, shown, version), sessionVariables: SESSION_VARIABLES };
  return sidecarPlan(text, { file: shown, db: t.db, table: t.table, serverVersion: version });
}

/**
 * The table's checked .sql statements run in its database. The session
 * variables they set are set back afterwards: this connection goes on to
 * keep the bookkeeping.
 */
async function createFromDdl(control: ControlConnection, t: Target, sql: { run: string[]; sessionVariables: readonly string[] }): Promise<void> {
  const shown = maskInputUrl(t.ddl!);
  await control.query(`USE ${quoteQualified(undefined, t.db)}`);
  const names = sql.sessionVariables;
  const saved = new Map<string, string | null>();
  if (names.length > 0) {
    const rows = await selectRows<{ Variable_name: string; Value: string }>(control, `SHOW SESSION VARIABLES WHERE Variable_name IN (${names.map(() => '?').join(', ')})`, [...names]);
    // SHOW prints a NULL (character_set_results) as ''; only sql_mode may really be ''.
    for (const r of rows) saved.set(r.Variable_name.toLowerCase(), r.Value === '' && r.Variable_name.toLowerCase() !== 'sql_mode' ? null : r.Value);
  }
  try {
    for (const statement of sql.run) {
      try {
        await control.query(statement);
      } catch (err) {
        throw schemaError(err, `creating ${t.key} from ${shown}`, t.key);
      }
    }
  } finally {
    if (saved.size > 0) await control.query(`SET ${[...saved.keys()].map((n) => `SESSION ${n} = ?`).join(', ')}`, [...saved.values()]);
  }
  if (!(await tableExists(control, t.ref))) {
    throw new FlatloadError('UNKNOWN_TABLE', `${shown} ran but did not create ${t.key} (its CREATE TABLE names another table?)`, { file: shown, table: t.key });
  }
}

/**
 * Server errors from the export's own DDL that no rerun can get past: the
 * schema refuses it (a view where a table was expected, a foreign key, a
 * name taken). Exit 7 as the single load's refusals, not 4 ("run again").
 */
const SCHEMA_REFUSALS: ReadonlySet<number> = new Set([ER.TABLE_EXISTS, ER.WRONG_OBJECT, ER.ROW_IS_REFERENCED, ER.ROW_IS_REFERENCED_2, ER.TRUNCATE_ILLEGAL_FK, ER.CANNOT_ADD_FOREIGN, ER.FK_CANNOT_OPEN_PARENT]);

export function schemaError(err: unknown, where: string, table: string): FlatloadError {
  const e = asServerError(err);
  // 1005 is also a full disk or a lost file; errno 150 is a foreign key that cannot be made.
  const refused = e?.errno !== undefined && (SCHEMA_REFUSALS.has(e.errno) || (e.errno === ER.CANT_CREATE_TABLE && /errno: ?150/.test(e.sqlMessage ?? '')));
  if (!(err instanceof FlatloadError) && refused) {
    return new FlatloadError('UNSUPPORTED', `${where}: the server refuses it (${e.errno}: ${e.sqlMessage ?? e.message ?? ''})`, { table, serverErrno: e.errno, hint: 'the same command fails the same way until the tables change' });
  }
  return toFlatloadError(err, where, { table });
}

async function run(control: ControlConnection, op: Op, table: string, locks?: LockWaitOptions): Promise<void> {
  try {
    await queryOp(control, op, sqlOf(op), locks);
  } catch (err) {
    throw schemaError(err, sqlOf(op), table);
  }
}

export function tableReport(t: Target, status: ExportTableReport['status']): ExportTableReport {
  return { table: t.key, files: t.sizes.map((f) => f.path), status, engine: null, strategy: null, rows: 0, rejected: 0, seconds: 0, inputBytes: 0, onDiskBytes: null, resumedChunks: 0, rejectFiles: [], error: null };
}

/** orders.rejects.tsv → orders.rejects.1.tsv for the second listing of the same input. */
function repeatRejectPath(path: string, repeat: number): string {
  const ext = extname(path);
  return `${path.slice(0, path.length - ext.length)}.${repeat}${ext}`;
}

/** Adds one file's load to its table's line of the report. */
export function addLoad(r: ExportTableReport, res: ExecuteResult & { route?: { plan: RoutePlan } | undefined }): void {
  const x = res.report;
  r.engine = x.engine;
  r.strategy = res.route?.plan.route === 'direct' ? 'direct to the backends' : x.strategy;
  r.rows += x.rows;
  r.rejected += x.rejected;
  r.seconds += x.seconds;
  if (x.analyze) r.analyze = x.analyze;
  r.inputBytes += x.inputBytes;
  if (x.status !== 'already-loaded') r.resumedChunks += x.resumedChunks;
  if (x.sizes) r.onDiskBytes = x.sizes.onDiskBytes;
  if (x.rejectFile && x.rejected > 0) r.rejectFiles.push(x.rejectFile);
  if (x.status === 'stopped') r.status = 'stopped';
  else if (x.status === 'rejected-within-budget' && r.status !== 'stopped') r.status = 'rejected-within-budget';
  else if (x.status === 'ok' && r.status === 'already-loaded') r.status = 'ok';
}

/** Each picked table with what the export needs of it: names, whether it exists, whether it is a Spider table. */
export async function exportTargets(picked: readonly DiscoveredTable[], database: string | undefined, control: ControlConnection): Promise<Target[]> {
  const targets: Target[] = [];
  for (const t of picked) {
    const db = t.db ?? database;
    if (!db) throw new FlatloadError('USAGE', `no database for ${t.sizes[0]!.path}: name it db.table.ext, give --database, or map it in a --manifest`, { file: t.sizes[0]!.path });
    const ref = { db, table: t.table };
    targets.push({
      ...t,
      key: `${db}.${t.table}`,
      db,
      ref,
      shadow: { db, table: derivedName(t.table, SHADOW_SUFFIX) },
      old: { db, table: derivedName(t.table, OLD_SUFFIX) },
      exists: await tableExists(control, ref),
      spider: await isSpider(control, ref),
    });
  }
  return targets;
}

/** Refusals before anything changes: a Spider table in swap mode, a renamed table missing, a missing table with no way to create it. */
export function checkTargets(targets: readonly Target[], mode: string, a: ExportArgs): void {
  refuseSpiderSwap(targets, mode);
  const renamedMissing = targets.find((t) => !t.exists && t.renamedFrom !== undefined);
  if (renamedMissing) {
    throw new FlatloadError('UNKNOWN_TABLE', `table ${renamedMissing.key} (--rename ${renamedMissing.renamedFrom}=…) does not exist, and a .sql file creates the table it names, not the new name`, {
      file: renamedMissing.files[0]!,
      table: renamedMissing.key,
      hint: `create ${renamedMissing.key} first (CREATE TABLE … LIKE the original)`,
    });
  }
  for (const t of targets) {
    if (t.exists) continue;
    if (!t.ddl) {
      throw new FlatloadError('UNKNOWN_TABLE', `table ${t.key} does not exist (for ${t.sizes.map((f) => f.path).join(', ')}), and the export has no ${t.table}.sql to create it from`, { file: t.sizes[0]!.path, table: t.key });
    }
    if (!a.createTables) {
      throw new FlatloadError('UNKNOWN_TABLE', `table ${t.key} does not exist (for ${t.sizes.map((f) => f.path).join(', ')})`, {
        file: t.sizes[0]!.path,
        table: t.key,
        hint: `add --create-tables to create it from ${maskInputUrl(t.ddl)}`,
      });
    }
  }
}

export type Sidecar = { run: string[]; sessionVariables: readonly string[] };

/** Every .sql file that will run (the missing tables'), read and checked. */
export async function readSidecars(control: ControlConnection, targets: readonly Target[], runWhole: boolean, s3: S3Settings): Promise<Map<string, Sidecar>> {
  const sidecars = new Map<string, Sidecar>();
  const missing = targets.filter((t) => !t.exists);
  const version = missing.length > 0 ? await serverVersion(control) : 0;
  for (const t of missing) sidecars.set(t.key, await sidecarStatements(t, version, runWhole, s3));
  return sidecars;
}

/**
 * Every missing table created from its .sql file (tables first, then rows),
 * with foreign_key_checks off as mysqldump's own dump files do: a child's
 * file may come before its parent's (errno 150 otherwise).
 */
export async function createMissing(control: ControlConnection, targets: Target[], sidecars: ReadonlyMap<string, Sidecar>, notes: string[]): Promise<void> {
  const missing = targets.filter((t) => !t.exists);
  if (missing.length === 0) return;
  const checks = await selectNumber(control, 'SELECT @@SESSION.foreign_key_checks AS n');
  await control.query('SET SESSION foreign_key_checks = 0');
  try {
    for (const t of missing) {
      await createFromDdl(control, t, sidecars.get(t.key)!);
      t.exists = true;
      t.spider = await isSpider(control, t.ref);
      notes.push(`created ${t.key} from ${maskInputUrl(t.ddl!)}`);
    }
  } finally {
    await control.query('SET SESSION foreign_key_checks = ?', [checks]);
  }
}

/** The foreign keys between the export's tables (child → parent), as the server has them. */
export async function exportForeignKeys(control: ControlConnection, targets: readonly Target[]): Promise<ForeignKeyEdge[]> {
  const dbs = [...new Set(targets.map((t) => t.db))];
  if (dbs.length === 0) return [];
  const rows = await selectRows<{ cdb: string; ct: string; pdb: string; pt: string }>(
    control,
    `SELECT DISTINCT TABLE_SCHEMA AS cdb, TABLE_NAME AS ct, REFERENCED_TABLE_SCHEMA AS pdb, REFERENCED_TABLE_NAME AS pt FROM information_schema.KEY_COLUMN_USAGE
      WHERE REFERENCED_TABLE_NAME IS NOT NULL AND TABLE_SCHEMA IN (${dbs.map(() => '?').join(', ')})`,
    dbs,
  );
  return rows.map((r) => ({ child: tableKey({ db: r.cdb, table: r.ct }), parent: tableKey({ db: r.pdb, table: r.pt }) }));
}

/**
 * Each existing table's --mode plan, made as its single load makes it: swap
 * refuses what the single swap refuses (foreign keys either way, triggers, a
 * view), replace empties with DELETE a table that foreign keys reference.
 */
export async function modePlans(control: ControlConnection, targets: readonly Target[], mode: LoadMode, keepOld: boolean): Promise<Map<string, ModePlan>> {
  const plans = new Map<string, ModePlan>();
  if (mode === 'append') return plans;
  for (const t of targets) {
    if (!t.exists) continue;
    const facts = await readTableFacts(control.connection, t.db, t.table);
    plans.set(t.key, planMode(mode, facts, engineKind(facts.engine), keepOld));
  }
  return plans;
}

/**
 * Swap: a fresh shadow for every table; replace: every table emptied as its
 * single load would (TRUNCATE, or DELETE when foreign keys reference it), in
 * the order given (children before their parents). Once per export.
 */
export async function prepareTables(control: ControlConnection, targets: readonly Target[], mode: string, plans: ReadonlyMap<string, ModePlan>, locks: LockWaitOptions): Promise<void> {
  for (const t of targets) {
    if (mode === 'swap') {
      await run(control, { kind: 'drop-table', table: t.shadow, ifExists: true }, t.key, locks);
      await run(control, { kind: 'create-like', table: t.shadow, like: t.ref }, t.key);
    } else if (mode === 'replace') {
      for (const s of plans.get(t.key)!.before) await run(control, s.op, t.key, locks);
    }
  }
}

/** A file's reject file: one per part in --reject-dir; beside the input, a repeated listing's gets its own (orders.rejects.1.tsv). */
export function rejectFileFor(rejectDir: string | undefined, t: Target, i: number, repeat: number): string | undefined {
  if (rejectDir !== undefined) return join(rejectDir, `${t.key}${t.files.length > 1 ? `.${i}` : ''}.rejects.txt`);
  return repeat > 0 ? repeatRejectPath(defaultRejectPath(t.files[i]!, t.table), repeat) : undefined;
}

/** What `flatload plan DIR` says a table's load adds: ANALYZE and the check against the exporter's figures. */
export function tablePlanNotes(t: Target & { empty: boolean }, analyze: string, mode: string): string[] {
  const notes: string[] = [];
  if (analyze === 'on' || (analyze === 'auto' && (mode !== 'append' || t.empty))) notes.push(`${t.key}: ANALYZE TABLE after its last file (${analyze === 'on' ? '--analyze on' : '--analyze auto: the table starts empty'})`);
  if (t.expect) notes.push(`${t.key}: after its load, ${[t.expect.rows !== undefined ? `COUNT(*) = ${t.expect.rows}` : '', t.expect.checksum !== undefined ? `CHECKSUM TABLE = ${t.expect.checksum}` : ''].filter(Boolean).join(' and ')} (${t.expect.source})${mode === 'swap' ? ', checked on its shadow before the RENAME' : ''}; a difference stops the export with exit code 9`);
  return notes;
}

/** What `flatload plan DIR` says the export adds around its tables' loads. */
export function exportPlanNotes(targets: readonly Target[], mode: string, jobs: number): string[] {
  const notes: string[] = [];
  if (mode === 'swap') {
    const op: Op = { kind: 'swap-set', swaps: targets.map((t) => ({ target: t.ref, shadow: t.shadow, old: t.old })) };
    notes.push(`mode swap: each table loads into its shadow (CREATE TABLE … LIKE), and once every table is loaded: ${sqlOf(op)}`);
  } else if (mode === 'replace') {
    notes.push('mode replace: every table is emptied (TRUNCATE) before the first row of the export loads');
  }
  notes.push(`${jobs} loading stream(s) shared by the tables, chunk by chunk: tables read and sort their inputs one after another, smallest first, holding none, so the server starts on the smallest while the next is sorted [docs/exports.md#start-order]`);
  return notes;
}

/** What the selection picked and left out, and the files passed over: the plan and the report say so. */
export function selectionNotes(total: number, chosen: Selected<DiscoveredTable>, passedOver: readonly PassedOver[], defaultDb: string | undefined): string[] {
  const notes: string[] = [];
  if (chosen.left.length > 0 || chosen.picked.some((t) => t.renamedFrom !== undefined)) {
    const names = chosen.picked.map((t) => `${tableKey({ db: t.db ?? defaultDb, table: t.table })}${t.renamedFrom !== undefined ? ` (from ${t.renamedFrom}, --rename)` : ''}`);
    notes.push(`loading ${chosen.picked.length} of the export's ${total} table(s): ${names.join(', ')}`);
  }
  for (const l of chosen.left) notes.push(`left out ${l.table} (${l.files.map((f) => basename(f)).join(', ')}): ${l.reason}`);
  notes.push(...chosen.notes);
  for (const p of passedOver) notes.push(`passed over ${p.path}: ${p.reason}`);
  return notes;
}

/**
 * Publishes every table at once: one RENAME TABLE moves each table to its
 * old name and each shadow to the table's name, atomically on one server.
 * A rerun after a crash around the RENAME finds either every shadow (not
 * renamed yet) or none (renamed): anything else is not flatload's doing.
 */
export async function swapAll(control: ControlConnection, targets: readonly Target[], keepOld: boolean, notes: string[], locks: LockWaitOptions): Promise<void> {
  const shadows = await Promise.all(targets.map((t) => tableExists(control, t.shadow)));
  if (shadows.every((s) => s)) {
    for (const t of targets) await run(control, { kind: 'drop-table', table: t.old, ifExists: true }, t.key, locks);
    await run(control, { kind: 'swap-set', swaps: targets.map((t) => ({ target: t.ref, shadow: t.shadow, old: t.old })) }, targets.map((t) => t.key).join(', '), locks);
    notes.push(`swapped ${targets.length} table(s) in one RENAME TABLE`);
  } else if (shadows.some((s) => s)) {
    const left = targets.filter((_, i) => shadows[i]).map((t) => `${t.db}.${t.shadow.table}`);
    throw new FlatloadError('RESUME_MISMATCH', `cannot swap the export: some shadow tables are gone and some are left (${left.join(', ')}); they were renamed or dropped outside this export`, {
      hint: 'add --restart to load the whole export again',
    });
  } else {
    notes.push('the tables had been swapped by the interrupted run');
  }
  if (!keepOld) for (const t of targets) await run(control, { kind: 'drop-table', table: t.old, ifExists: true }, t.key, locks);
}
