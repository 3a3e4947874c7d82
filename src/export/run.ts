/**
 * A whole export as one job, in stages: find the tables and their files,
 * take the export's lock and bookkeeping row, create missing tables from
 * their .sql files (tables first, then rows), make the shadow tables (swap)
 * or empty the tables (replace), load every table — each file through the
 * single-table load, so each keeps its own plan, job row and resume — with
 * the loading streams shared chunk by chunk (slots.ts), smallest table first,
 * then (swap) publish all tables with one RENAME TABLE, and report.
 */
import { readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { acquireJobLock, jobLockHolder, ownerText } from '../checkpoint/lock.js';
import { exportIdOf, ExportStore, type ExportMember, type StoredExport } from '../checkpoint/exports.js';
import type { ConnectionOptions } from '../config/connection.js';
import { toLoadOptions, type LoadArgs } from '../config/loadOptions.js';
import { openSession, type Session } from '../db/connect.js';
import { ControlConnection } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { selectNumber, selectRows } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import { parseVersion, readAccountConnections } from '../introspect/server.js';
import { executeLoad } from '../load/execute.js';
import { checkExpectation } from '../load/expect.js';
import { executeTargetLoad, type TargetResult } from '../load/spider.js';
import { SharedConnections } from '../load/sharedConnections.js';
import { ServerThrottle } from '../load/throttle.js';
import { throttles } from '../config/throttle.js';
import type { StreamGate } from '../load/runner.js';
import { warmSortAside } from '../order/memorySort.js';
import { planJson, renderPlan } from '../plan/explain.js';
import { renderRoute } from '../plan/route.js';
import { sqlOf, type Op, type TableRef } from '../plan/ops.js';
import { EventHub } from '../report/events.js';
import { defaultRejectPath } from '../report/rejectFile.js';
import { derivedName, OLD_SUFFIX, SHADOW_SUFFIX } from '../plan/rules/modes.js';
import { allStatements, SESSION_VARIABLES, sidecarPlan } from './ddl.js';
import { discoverExport, type DiscoveredTable, type PassedOver } from './discover.js';
import { tableKey } from './names.js';
import { parseSelection, selectTables, type Selected } from './select.js';
import { discoverRemoteExport, namesRemote } from './remoteDiscover.js';
import { readRemoteText } from '../input/open.js';
import { isRemoteInput, maskInputUrl } from '../input/remote.js';
import type { S3Settings } from '../input/s3.js';
import { ExportProgress } from './progress.js';
import { exportStatus, exportTotals, type ExportReport, type ExportTableReport } from './report.js';
import { connectionLayout, StreamBudget, streamsFor, startOrder } from './slots.js';

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

interface Target extends DiscoveredTable {
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

async function hasRows(control: ControlConnection, t: TableRef): Promise<boolean> {
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
function refuseSpiderSwap(targets: readonly Target[], mode: string): void {
  const spider = targets.find((t) => t.spider);
  if (mode !== 'swap' || !spider) return;
  throw new FlatloadError('UNSUPPORTED', `${spider.key} is a Spider table: --mode swap would load its shadow, which names the same backend tables, so the rows would reach the live tables before the swap`, {
    table: spider.key,
    hint: 'load the export with --mode replace (the front empties every backend table first) or append',
  });
}

/** Connections to share when --jobs is not given: the server's cores (thread_pool_size) or the client's, at most 8 — the single load's default. */
async function defaultBudget(control: ControlConnection, clientCpus: number): Promise<number> {
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
        throw toFlatloadError(err, `creating ${t.key} from ${shown}`);
      }
    }
  } finally {
    if (saved.size > 0) await control.query(`SET ${[...saved.keys()].map((n) => `SESSION ${n} = ?`).join(', ')}`, [...saved.values()]);
  }
  if (!(await tableExists(control, t.ref))) {
    throw new FlatloadError('UNKNOWN_TABLE', `${shown} ran but did not create ${t.key} (its CREATE TABLE names another table?)`, { file: shown, table: t.key });
  }
}

async function run(control: ControlConnection, op: Op): Promise<void> {
  await control.query(sqlOf(op));
}

function tableReport(t: Target, status: ExportTableReport['status']): ExportTableReport {
  return { table: t.key, files: t.sizes.map((f) => f.path), status, engine: null, strategy: null, rows: 0, rejected: 0, seconds: 0, inputBytes: 0, onDiskBytes: null, resumedChunks: 0, rejectFiles: [], error: null };
}

/** orders.rejects.tsv → orders.rejects.1.tsv for the second listing of the same input. */
function repeatRejectPath(path: string, repeat: number): string {
  const ext = extname(path);
  return `${path.slice(0, path.length - ext.length)}.${repeat}${ext}`;
}

/** Adds one file's load to its table's line of the report. */
function addLoad(r: ExportTableReport, res: TargetResult): void {
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

export async function executeExport(
  a: ExportArgs,
  conn: ConnectionOptions,
  io: { cwd: string; stderr: NodeJS.WriteStream; signal: AbortSignal; resumeCommand: string; clientCpus: number },
): Promise<ExportRun> {
  const t0 = Date.now();
  // The flags shared by every table, checked once (a table's manifest options are checked with its load).
  const base = toLoadOptions({ ...a, file: a.files[0] ?? '-', table: 'export' });
  const mode = base.mode;
  const selection = parseSelection(a);
  const found = namesRemote(a.files) ? await discoverRemoteExport(a.files, a.manifest, base.s3) : discoverExport(a.files, a.manifest, io.cwd);
  const chosen = selectTables(found.tables, selection, conn.database);
  const { session, conn: first } = await openSession(conn, { localInfile: false });
  const control = new ControlConnection(first, session);
  // --binlog off: the export's own CREATE, TRUNCATE and RENAME stay off the binary log with the rows (each table's load sets its connections).
  if (base.binlog === 'off' && (await selectNumber(control, 'SELECT @@log_bin AS n')) > 0) {
    await control.query('SET SESSION sql_log_bin = 0').catch(async (err: unknown) => {
      await control.end();
      throw toFlatloadError(err, '--binlog off: SET SESSION sql_log_bin = 0 (needs BINLOG ADMIN, or SUPER)');
    });
  }
  const notes: string[] = selectionNotes(found.tables.length, chosen, found.passedOver, conn.database);
  // One throttle spans every table: a replica's lag or the rate is the export's, not a table's.
  const throttleEvents = new EventHub();
  const throttle = throttles(base.throttle) ? new ServerThrottle(base.throttle, conn, session, throttleEvents) : undefined;
  /** Set once this process holds the export: only then may a failure be written to its bookkeeping row. */
  let held: { store: ExportStore; exportId: string } | undefined;
  /** The export's loading connections, shared by its tables chunk by chunk. */
  let loading: SharedConnections | undefined;
  try {
    await throttle?.check();
    const targets: Target[] = [];
    for (const t of chosen.picked) {
      const db = t.db ?? conn.database;
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
    // Every .sql file that will run is read and checked before anything changes.
    const sidecars = new Map<string, { run: string[]; sessionVariables: readonly string[] }>();
    const missing = targets.filter((t) => !t.exists);
    const version = missing.length > 0 ? await serverVersion(control) : 0;
    for (const t of missing) sidecars.set(t.key, await sidecarStatements(t, version, a.runSqlFiles === true, base.s3));
    const account = await readAccountConnections(control.connection);
    const left = account && account.limit - account.open;
    if (account && left !== undefined && left < 2) {
      const why = `max_user_connections is ${account.limit} for this account and it has ${account.open} open, this export's included: loading needs two more, one for the table being loaded and one to load over`;
      if (!base.dryRun) throw new FlatloadError('CONNECTION_REFUSED', why, { hint: 'close a connection of this account, or raise its MAX_USER_CONNECTIONS' });
      notes.push(`the export would stop before loading anything: ${why}`);
    }
    const layout = connectionLayout(base.jobs ?? (await defaultBudget(control, io.clientCpus)), left);
    const jobs = layout.jobs;
    if (layout.warning) notes.push(layout.warning);
    if (base.dryRun) {
      const withEmpty = await Promise.all(targets.map(async (t) => ({ ...t, empty: !t.exists || !(await hasRows(control, t.ref)) })));
      const planned = await planExport(a, conn, session, withEmpty, found.source, mode, jobs, notes);
      if (throttle) planned.report.throttle = throttle.throttle.report();
      return planned;
    }
    warmSortAside();

    const members: ExportMember[] = targets.map((t) => ({
      target: t.key,
      loadTarget: mode === 'swap' ? `${t.db}.${t.shadow.table}` : t.key,
      files: t.sizes,
    }));
    const exportId = exportIdOf(mode, members, { keepOld: base.keepOld, manifest: a.manifest ?? null, options: targets.map((t) => t.options) });
    const schema = base.bookkeepingSchema ?? conn.database ?? targets[0]!.db;
    const store = new ExportStore(control, schema);
    await store.ensureTable();
    await acquireJobLock(control, exportId, {
      wait: base.wait,
      describeHolder: async () => `export ${exportId} is held by ${(await store.get(exportId))?.owner ?? 'another flatload'} (server connection ${(await jobLockHolder(control, exportId))?.connectionId ?? '?'})`,
      onWaiting: (m) => io.stderr.write(`${m}\n`),
    });
    held = { store, exportId };
    let stored: StoredExport | undefined = await store.get(exportId);
    const reports = targets.map((t) => tableReport(t, 'not-started'));
    const finishReport = (error: FlatloadError | undefined, status?: ExportReport['status']): ExportRun => ({
      report: {
        status: status ?? exportStatus(reports),
        exportId,
        source: found.source,
        mode,
        jobs,
        tables: reports,
        totals: exportTotals(reports, (Date.now() - t0) / 1000),
        notes,
        ...(throttle ? { throttle: throttle.throttle.report() } : {}),
      },
      plans: [],
      error,
    });
    if (stored?.state === 'done' && !base.restart) {
      notes.push(`this export (the same files, sizes and modification times, into the same tables) was loaded at ${stored.finishedAt ?? stored.updatedAt} (export ${exportId}); add --restart to load it again`);
      for (const r of reports) r.status = 'already-loaded';
      return finishReport(undefined, 'already-loaded');
    }
    const fresh = !stored || stored.state === 'done' || base.restart;
    if (fresh) {
      await store.create({ exportId, source: found.source, mode, members, owner: ownerText() });
      stored = await store.get(exportId);
    } else {
      notes.push(`resuming export ${exportId} (${stored!.phase})`);
      await store.update(exportId, { state: 'running', owner: ownerText(), message: null });
    }
    const phase = stored!.phase;

    // Tables first, then rows: every missing table is created before any table loads.
    for (const t of targets) {
      if (t.exists) continue;
      await createFromDdl(control, t, sidecars.get(t.key)!);
      t.spider = await isSpider(control, t.ref);
      notes.push(`created ${t.key} from ${maskInputUrl(t.ddl!)}`);
    }
    refuseSpiderSwap(targets, mode);
    // Swap and replace prepare every table once per export; a resumed export finds them prepared.
    let restartMembers = base.restart;
    if (phase === 'created') {
      for (const t of targets) {
        if (mode === 'swap') {
          await run(control, { kind: 'drop-table', table: t.shadow, ifExists: true });
          await run(control, { kind: 'create-like', table: t.shadow, like: t.ref });
        } else if (mode === 'replace') {
          await run(control, { kind: 'truncate', table: t.ref });
        }
      }
      // The tables were just emptied or made anew: earlier loads of these files into them count for nothing.
      if (mode !== 'append') restartMembers = true;
      await store.update(exportId, { phase: 'prepared' });
    }

    const connections = SharedConnections.open(session, jobs);
    loading = connections;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    io.signal.addEventListener('abort', onAbort, { once: true });
    if (io.signal.aborted) stop.abort();
    // As for one file: a bar on a terminal, lines otherwise (and with --json, whose stdout is for the report).
    const display = base.progress === 'auto' ? (io.stderr.isTTY && !base.json ? 'bar' : 'lines') : base.progress;
    const progress = new ExportProgress(io.stderr, display, targets.map((t) => ({ key: t.key, sizeBytes: t.sizeBytes })));
    const throttleHub = progress.throttleHub();
    throttleEvents.on((e) => throttleHub.emit(e));
    let firstError: FlatloadError | undefined;
    /** Tables that loaded but do not match the exporter's figures: the others still load, and the set is not published. */
    const mismatches: FlatloadError[] = [];
    const loadTable = async (t: Target, r: ExportTableReport, gate: StreamGate, started: () => void): Promise<void> => {
      r.status = 'already-loaded';
      // Routed straight to its backends, a Spider table loads over their connections, not the export's streams: the
      // next table need not wait for it to ask for one.
      if (t.spider) started();
      // ANALYZE once, after the table's last file; auto: when the table started empty (replace and swap always do).
      const analyze = base.analyze !== 'auto' ? base.analyze : mode !== 'append' || !(await hasRows(control, t.ref)) ? 'on' : 'auto';
      const hub = progress.hubFor(t.key);
      for (const [i, file] of t.files.entries()) {
        if (stop.signal.aborted) {
          r.status = 'stopped';
          break;
        }
        // The same file listed again (a manifest naming it twice, a part that is a symlink to another) is another part.
        const repeat = t.files.slice(0, i).filter((f) => f === file).length;
        // Beside the input, a repeated listing's rejects get a file of their own (orders.rejects.1.tsv), as a part's do in --reject-dir.
        const beside = repeat > 0 ? repeatRejectPath(defaultRejectPath(file, t.table), repeat) : undefined;
        const rejectFile = a.rejectDir === undefined ? beside : join(a.rejectDir, `${t.key}${t.files.length > 1 ? `.${i}` : ''}.rejects.txt`);
        const options = toLoadOptions({
          ...a,
          ...t.options,
          file,
          table: quoteQualified(t.db, mode === 'swap' ? t.shadow.table : t.table),
          mode: 'append',
          jobs: streamsFor(t.sizeBytes, jobs),
          restart: restartMembers,
          keepOld: false,
          dryRun: false,
          progress: 'none',
          json: false,
          chart: undefined,
          rejectFile,
          // The size is the table's: measured once, after its last file.
          skipSizeReport: (a.skipSizeReport ?? false) || i < t.files.length - 1,
          analyze: i < t.files.length - 1 ? 'off' : analyze,
        });
        const within = { export: { session, streams: { gate, connections }, throttle: throttle?.throttle, repeat } };
        const res = t.spider ? await executeTargetLoad(options, conn, hub, stop.signal, io.resumeCommand, within) : await executeLoad(options, conn, hub, stop.signal, io.resumeCommand, within);
        addLoad(r, res);
        const v = res.report.verify;
        if (v) notes.push(`${t.key}: --verify: COUNT(*) through the front ${v.front}, the backends' rows make ${v.expectedFront} (${v.backends.map((b) => `${b.backend} ${b.rows}`).join(', ')})`);
        if (res.error) throw res.error;
      }
      // The whole table against the exporter's figures (a swap's shadow, before the one RENAME publishes the set).
      if (t.expect && r.status !== 'stopped') {
        const { result, error } = await checkExpectation(control, mode === 'swap' ? t.shadow : t.ref, t.key, t.expect);
        r.check = result;
        if (error) {
          r.status = 'stopped';
          r.error = { code: error.code, message: error.message };
          mismatches.push(error);
        }
      }
    };
    if (phase === 'loaded') {
      // Every table was loaded by the interrupted run (in swap mode into shadows that may be renamed already).
      notes.push('every table was loaded by the interrupted run');
      for (const r of reports) r.status = 'already-loaded';
    }
    const order = phase === 'loaded' ? [] : startOrder(targets.map((t, i) => ({ t, r: reports[i]!, key: t.key, sizeBytes: t.sizeBytes })));
    const streams = new StreamBudget(jobs, order.map((x) => x.key));
    const running = new Set<Promise<void>>();
    for (const { t, r } of order) {
      while (running.size >= layout.tables) await Promise.race(running);
      if (stop.signal.aborted) break;
      // Tables read and sort their inputs one after another (the scans share this process's one JavaScript thread, the
      // in-memory sorts its one sort worker, so two at once would only make both late): the next starts once this one
      // asks for its first stream.
      let prepared!: () => void;
      const ready = new Promise<void>((resolve) => (prepared = resolve));
      const shared = streams.gateFor(t.key);
      const gate: StreamGate = {
        take: () => {
          prepared();
          return shared.take();
        },
        give: () => shared.give(),
      };
      const p: Promise<void> = loadTable(t, r, gate, () => {
        prepared();
        streams.started(t.key);
      })
        .then(() => progress.finished(t.key, r.status !== 'stopped', r.rows))
        .catch((err: unknown) => {
          const fe = toFlatloadError(err, `loading ${t.key}`);
          r.status = 'stopped';
          r.error = { code: fe.code, message: fe.message };
          progress.finished(t.key, false, r.rows);
          firstError ??= fe;
          // One table stopped stops the export: the others commit their chunks in flight and stop, resumable.
          stop.abort();
        })
        .finally(() => {
          prepared();
          streams.started(t.key);
          running.delete(p);
        });
      running.add(p);
      await ready;
    }
    await Promise.all([...running]);
    progress.close();
    io.signal.removeEventListener('abort', onAbort);
    if (firstError || stop.signal.aborted) {
      const error = firstError ?? new FlatloadError('INTERRUPTED', 'interrupted: the tables in flight committed or rolled back their chunks; nothing is half-loaded');
      await store.update(exportId, { state: error.code === 'INTERRUPTED' ? 'interrupted' : 'failed', message: error.message });
      return finishReport(error.context.resumeCommand || !io.resumeCommand ? error : error.withContext({ resumeCommand: io.resumeCommand }));
    }
    if (mismatches.length > 0) {
      // Not marked loaded: the rerun loads nothing again (every file is done) but checks again, and publishes only then.
      const error = mismatches.length === 1 ? mismatches[0]! : new FlatloadError('EXPECTATION_MISMATCH', `${mismatches.length} tables do not match the export: ${mismatches.map((m) => m.message).join('; ')}`, { hint: mismatches[0]!.context.hint });
      await store.update(exportId, { state: 'failed', message: error.message });
      if (mode === 'swap') notes.push('no table was swapped in: the set is published only when every table matches the export');
      return finishReport(error);
    }
    await store.update(exportId, { phase: 'loaded' });
    if (mode === 'swap') await swapAll(control, targets, base.keepOld, notes);
    await store.update(exportId, { state: 'done', phase: 'finished', finished: true });
    return finishReport(undefined);
  } catch (err) {
    const fe = toFlatloadError(err, 'loading the export');
    // Whatever stopped it (a RENAME refused, the server gone), the export must not go on saying it is running.
    await held?.store.update(held.exportId, { state: 'failed', message: fe.message }).catch(() => undefined);
    throw fe;
  } finally {
    throttle?.close();
    await loading?.end();
    await control.end();
  }
}

/** What the selection picked and left out, and the files passed over: the plan and the report say so. */
function selectionNotes(total: number, chosen: Selected<DiscoveredTable>, passedOver: readonly PassedOver[], defaultDb: string | undefined): string[] {
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
async function swapAll(control: ControlConnection, targets: readonly Target[], keepOld: boolean, notes: string[]): Promise<void> {
  const shadows = await Promise.all(targets.map((t) => tableExists(control, t.shadow)));
  if (shadows.every((s) => s)) {
    for (const t of targets) await run(control, { kind: 'drop-table', table: t.old, ifExists: true });
    await run(control, { kind: 'swap-set', swaps: targets.map((t) => ({ target: t.ref, shadow: t.shadow, old: t.old })) });
    notes.push(`swapped ${targets.length} table(s) in one RENAME TABLE`);
  } else if (shadows.some((s) => s)) {
    const left = targets.filter((_, i) => shadows[i]).map((t) => `${t.db}.${t.shadow.table}`);
    throw new FlatloadError('RESUME_MISMATCH', `cannot swap the export: some shadow tables are gone and some are left (${left.join(', ')}); they were renamed or dropped outside this export`, {
      hint: 'add --restart to load the whole export again',
    });
  } else {
    notes.push('the tables had been swapped by the interrupted run');
  }
  if (!keepOld) for (const t of targets) await run(control, { kind: 'drop-table', table: t.old, ifExists: true });
}

/** `flatload plan DIR`: each table's plan as its single load would run it, plus what the export adds. */
async function planExport(a: ExportArgs, conn: ConnectionOptions, session: Session, targets: ReadonlyArray<Target & { empty: boolean }>, source: string, mode: string, jobs: number, notes: string[]): Promise<ExportRun> {
  const base = toLoadOptions({ ...a, file: a.files[0] ?? '-', table: 'export' });
  const plans: ExportRun['plans'] = [];
  const reports: ExportTableReport[] = [];
  for (const t of startOrder(targets)) {
    reports.push(tableReport(t, 'dry-run'));
    if (!t.exists) {
      const text = `${t.key}: does not exist yet; --create-tables creates it from ${maskInputUrl(t.ddl!)} before any rows load, and its plan is made then`;
      plans.push({ table: t.key, text, json: null });
      continue;
    }
    const options = toLoadOptions({ ...a, ...t.options, file: t.files[0]!, table: quoteQualified(t.db, t.table), mode: mode === 'swap' || mode === 'replace' ? 'append' : mode, jobs: streamsFor(t.sizeBytes, jobs), dryRun: true, chart: undefined });
    const within = { export: { session } };
    const res: TargetResult = t.spider ? await executeTargetLoad(options, conn, new EventHub(), undefined, '', within) : await executeLoad(options, conn, new EventHub(), undefined, '', within);
    const files = t.files.length > 1 ? ` (${t.files.length} files, loaded one after another in this order: ${t.sizes.map((f) => f.path).join(', ')})` : '';
    const route = res.route ? `${renderRoute(res.route.plan, res.route.map)}\n${res.route.plan.route === 'direct' ? "each backend's share is planned on its backend; the first one's:\n" : ''}` : '';
    if (base.analyze === 'on' || (base.analyze === 'auto' && (mode !== 'append' || t.empty))) notes.push(`${t.key}: ANALYZE TABLE after its last file (${base.analyze === 'on' ? '--analyze on' : '--analyze auto: the table starts empty'})`);
    if (t.expect) notes.push(`${t.key}: after its load, ${[t.expect.rows !== undefined ? `COUNT(*) = ${t.expect.rows}` : '', t.expect.checksum !== undefined ? `CHECKSUM TABLE = ${t.expect.checksum}` : ''].filter(Boolean).join(' and ')} (${t.expect.source})${mode === 'swap' ? ', checked on its shadow before the RENAME' : ''}; a difference stops the export with exit code 9`);
    plans.push({ table: t.key, text: `== ${t.key}${files}\n${route}${renderPlan(res.plan, res.facts, res.sql)}`, json: planJson(res.plan, res.facts, res.sql) });
  }
  if (mode === 'swap') {
    const op: Op = { kind: 'swap-set', swaps: targets.map((t) => ({ target: t.ref, shadow: t.shadow, old: t.old })) };
    notes.push(`mode swap: each table loads into its shadow (CREATE TABLE … LIKE), and once every table is loaded: ${sqlOf(op)}`);
  } else if (mode === 'replace') {
    notes.push('mode replace: every table is emptied (TRUNCATE) before the first row of the export loads');
  }
  notes.push(`${jobs} loading stream(s) shared by the tables, chunk by chunk: tables read and sort their inputs one after another, smallest first, holding none, so the server starts on the smallest while the next is sorted [docs/exports.md#start-order]`);
  return {
    report: { status: 'dry-run', exportId: null, source, mode, jobs, tables: reports, totals: exportTotals(reports, 0), notes },
    plans,
    error: undefined,
  };
}
