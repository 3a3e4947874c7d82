/**
 * A whole export as one job, its hooks for the one ladder (climb.ts,
 * docs/jobs.md), once its tables are found: held (the export's lock) →
 * found (fresh | resume | already done) → prepared (create missing tables,
 * make the shadows or empty the tables) → loaded (every table, each file as
 * a table job of its own over the streams the tables share chunk by chunk,
 * smallest first) → verified (each table against the exporter's figures) →
 * finished (swap: one RENAME TABLE publishes all), or stopped.
 */
import { exportIdOf, ExportStore, type ExportMember } from '../checkpoint/exports.js';
import { acquireJobLock, jobLockHolder, ownerText } from '../checkpoint/lock.js';
import type { ConnectionOptions } from '../config/connection.js';
import { toLoadOptions, type LoadOptions } from '../config/loadOptions.js';
import { throttles } from '../config/throttle.js';
import { openSession, type Session } from '../db/connect.js';
import { ControlConnection } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { selectNumber, selectOne } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import { discoverExport } from '../export/discover.js';
import { ExportProgress } from '../export/progress.js';
import { discoverRemoteExport, namesRemote } from '../export/remoteDiscover.js';
import { supersede } from './exportRerun.js';
import { exportStatus, exportTotals, type ExportReport, type ExportTableReport } from '../export/report.js';
import { missingTables, parseSelection, selectTables } from '../export/select.js';
import { connectionLayout, StreamBudget, streamsFor } from '../export/slots.js';
import { foreignKeyNotes, foreignKeyOrder, type ForeignKeyOrder } from '../export/fkOrder.js';
import {
  addLoad,
  checkTargets,
  createMissing,
  defaultBudget,
  exportForeignKeys,
  exportTargets,
  modePlans,
  hasRows,
  exportPlanNotes,
  tablePlanNotes,
  prepareTables,
  readSidecars,
  refuseSpiderSwap,
  rejectFileFor,
  selectionNotes,
  swapAll,
  tableReport,
  type ExportArgs,
  type ExportRun,
  type Sidecar,
  type Target,
} from '../export/stages.js';
import { parseVersion, readAccountConnections } from '../introspect/server.js';
import { maskInputUrl } from '../input/remote.js';
import { checkExpectation } from '../load/expect.js';
import type { StreamGate } from '../load/runner.js';
import { SharedConnections } from '../load/sharedConnections.js';
import { ServerThrottle } from '../load/throttle.js';
import { warmSortAside } from '../order/memorySort.js';
import { planJson, renderPlan } from '../plan/explain.js';
import { renderRoute } from '../plan/route.js';
import { EventHub } from '../report/events.js';
import type { LockWaitOptions } from '../load/lockWait.js';
import { climb, type Found, type LadderJob, type StopRules } from './climb.js';
import { lockTable } from './ladder.js';
import { runLoad } from './run.js';
import type { JobResult } from './types.js';

type Io = { cwd: string; stderr: NodeJS.WriteStream; signal: AbortSignal; resumeCommand: string; clientCpus: number };

/** What the export's rungs share once it is held. */
interface ExportJob {
  a: ExportArgs;
  conn: ConnectionOptions;
  io: Io;
  base: LoadOptions;
  mode: string;
  session: Session;
  control: ControlConnection;
  targets: Target[];
  jobs: number;
  /** Tables loading at once. */
  tablesAtOnce: number;
  notes: string[];
  reports: ExportTableReport[];
  throttle: ServerThrottle | undefined;
  /** Earlier loads of these files count for nothing: --restart, or the tables were just emptied. */
  restartMembers: boolean;
  /** Files (`member#file`) an interrupted run loaded that now have other times but the same bytes (job/exportRerun.ts). */
  loadedBefore?: ReadonlySet<string>;
}

/** Rung: the connections the export may use, fitted to the account's limit. */
async function fitConnections(control: ControlConnection, base: LoadOptions, clientCpus: number, notes: string[]): Promise<{ jobs: number; tables: number }> {
  const account = await readAccountConnections(control.connection);
  const left = account && account.limit - account.open;
  if (account && left !== undefined && left < 2) {
    const why = `max_user_connections is ${account.limit} for this account and it has ${account.open} open, this export's included: loading needs two more, one for the table being loaded and one to load over`;
    if (!base.dryRun) throw new FlatloadError('CONNECTION_REFUSED', why, { hint: 'close a connection of this account, or raise its MAX_USER_CONNECTIONS' });
    notes.push(`the export would stop before loading anything: ${why}`);
  }
  const layout = connectionLayout(base.jobs ?? (await defaultBudget(control, clientCpus)), left);
  if (layout.warning) notes.push(layout.warning);
  return layout;
}

/** Rung: holds the export (its lock), its bookkeeping row ready. */
async function holdExport(x: ExportJob): Promise<{ store: ExportStore; exportId: string; members: ExportMember[] }> {
  const { targets, mode, base, control } = x;
  const members: ExportMember[] = targets.map((t) => ({ target: t.key, loadTarget: mode === 'swap' ? `${t.db}.${t.shadow.table}` : t.key, files: t.sizes }));
  const exportId = exportIdOf(mode, members, { keepOld: base.keepOld, manifest: x.a.manifest ?? null, options: targets.map((t) => t.options) });
  const store = new ExportStore(control, base.bookkeepingSchema ?? x.conn.database ?? targets[0]!.db);
  await store.ensureTable();
  await acquireJobLock(control, exportId, {
    wait: base.wait,
    describeHolder: async () => `export ${exportId} is held by ${(await store.get(exportId))?.owner ?? 'another flatload'} (server connection ${(await jobLockHolder(control, exportId))?.connectionId ?? '?'})`,
    onWaiting: (m) => x.io.stderr.write(`${m}\n`),
  });
  // Replace and swap own their tables whole: another export or load replacing one of them (its shadow) is refused.
  if (mode !== 'append') {
    const foldCase = (await selectNumber(control, 'SELECT @@lower_case_table_names AS n')) !== 0;
    for (const t of targets) await lockTable(control, store.schema, { db: t.db, table: t.table, foldCase }, base.wait, (m) => x.io.stderr.write(`${m}\n`));
  }
  return { store, exportId, members };
}

/** Rung: this export fresh, resumed (at its phase), or already done. */
async function findExport(x: ExportJob, store: ExportStore, exportId: string, members: ExportMember[], source: string): Promise<{ found: Found; phase: string }> {
  const stored = await store.get(exportId);
  if (stored?.state === 'done' && !x.base.restart) {
    x.notes.push(`this export (the same files, sizes and modification times, into the same tables) was loaded at ${stored.finishedAt ?? stored.updatedAt} (export ${exportId}); add --restart to load it again`);
    for (const r of x.reports) r.status = 'already-loaded';
    return { found: 'done', phase: stored.phase };
  }
  if (!stored || stored.state === 'done' || x.base.restart) {
    // Files of an interrupted run copied again: what it loaded must not load twice (checked before anything changes).
    const before = !stored && x.mode === 'append' && !x.base.restart ? await supersede(x.control, await store.list(), exportId, members, x.targets, x.base) : undefined;
    await store.create({ exportId, source, mode: x.mode, members, owner: ownerText() });
    if (before?.superseded) {
      x.loadedBefore = before.loaded;
      x.notes.push(`the files changed since the interrupted export ${before.superseded}: this is export ${exportId}`, ...before.notes);
      await store.update(before.superseded, { state: 'abandoned', message: `superseded by export ${exportId} (its files were copied again)` });
    }
    return { found: 'fresh', phase: (await store.get(exportId))!.phase };
  }
  x.notes.push(`resuming export ${exportId} (${stored.phase})`);
  await store.update(exportId, { state: 'running', owner: ownerText(), message: null });
  return { found: 'resume', phase: stored.phase };
}

/** One file of a table as a table job of its own. */
async function loadFile(x: ExportJob, t: Target, i: number, analyze: LoadOptions['analyze'], hub: EventHub, within: { gate: StreamGate; connections: SharedConnections; signal: AbortSignal }): Promise<JobResult> {
  const { a } = x;
  const file = t.files[i]!;
  // The same file listed again (a manifest naming it twice, a part that is a symlink to another) is another part.
  const repeat = t.files.slice(0, i).filter((f) => f === file).length;
  const options = toLoadOptions({
    ...a,
    ...t.options,
    file,
    table: quoteQualified(t.db, x.mode === 'swap' ? t.shadow.table : t.table),
    mode: 'append',
    jobs: streamsFor(t.sizeBytes, x.jobs),
    restart: x.restartMembers,
    keepOld: false,
    dryRun: false,
    progress: 'none',
    json: false,
    chart: undefined,
    rejectFile: rejectFileFor(a.rejectDir, t, i, repeat),
    // The size is the table's: measured once, after its last file.
    skipSizeReport: (a.skipSizeReport ?? false) || i < t.files.length - 1,
    analyze: i < t.files.length - 1 ? 'off' : analyze,
  });
  const inExport = { session: x.session, streams: { gate: within.gate, connections: within.connections }, throttle: x.throttle?.throttle, repeat };
  return runLoad(options, x.conn, hub, within.signal, x.io.resumeCommand, inExport);
}

/** Rungs for one table: each file loaded, then the whole table checked against the exporter's figures. */
async function loadTable(x: ExportJob, t: Target, r: ExportTableReport, run: { gate: StreamGate; connections: SharedConnections; stop: AbortController; progress: ExportProgress; mismatches: FlatloadError[] }, started: () => void): Promise<void> {
  r.status = 'already-loaded';
  // Routed straight to its backends, a Spider table loads over their connections, not the export's streams: the
  // next table need not wait for it to ask for one.
  if (t.spider) started();
  // ANALYZE once, after the table's last file; auto: when the table started empty (replace and swap always do).
  const analyze = x.base.analyze !== 'auto' ? x.base.analyze : x.mode !== 'append' || !(await hasRows(x.control, t.ref)) ? 'on' : 'auto';
  const hub = run.progress.hubFor(t.key);
  for (const i of t.files.keys()) {
    if (run.stop.signal.aborted) {
      r.status = 'stopped';
      break;
    }
    if (x.loadedBefore?.has(`${x.targets.indexOf(t)}#${i}`)) continue;
    const res = await loadFile(x, t, i, analyze, hub, { gate: run.gate, connections: run.connections, signal: run.stop.signal });
    addLoad(r, res);
    const v = res.report.verify;
    if (v) x.notes.push(`${t.key}: --verify: COUNT(*) through the front ${v.front}, the backends' rows make ${v.expectedFront} (${v.backends.map((b) => `${b.backend} ${b.rows}`).join(', ')})`);
    if (res.error) throw res.error;
  }
  // The whole table against the exporter's figures (a swap's shadow, before the one RENAME publishes the set).
  if (!t.expect || r.status === 'stopped') return;
  const { result, error } = await checkExpectation(x.control, x.mode === 'swap' ? t.shadow : t.ref, t.key, t.expect);
  r.check = result;
  if (!error) return;
  r.status = 'stopped';
  r.error = { code: error.code, message: error.message };
  run.mismatches.push(error);
}

/**
 * Rung: every table loaded, a few at a time. Tables read and sort their
 * inputs one after another (the scans share this process's one JavaScript
 * thread, the in-memory sorts its one sort worker, so two at once would only
 * make both late): the next starts once this one asks for its first stream.
 */
async function loadTables(x: ExportJob, connections: SharedConnections, stop: AbortController, progress: ExportProgress, loaded: boolean): Promise<{ firstError: FlatloadError | undefined; mismatches: FlatloadError[] }> {
  const out: { firstError: FlatloadError | undefined; mismatches: FlatloadError[] } = { firstError: undefined, mismatches: [] };
  const fk = loaded ? undefined : await tableOrder(x);
  const todo = (fk?.order ?? []).map((t) => ({ t, r: x.reports[x.targets.indexOf(t)]! }));
  const streams = new StreamBudget(x.jobs, todo.map((o) => o.t.key));
  const running = new Set<Promise<void>>();
  const finished = new Set<string>();
  while (todo.length > 0) {
    while (running.size >= x.tablesAtOnce) await Promise.race(running);
    if (stop.signal.aborted) break;
    // A child starts once its parents have loaded: its rows are checked against theirs as they go in.
    const i = todo.findIndex((o) => fk!.waitsFor.get(o.t.key)!.every((p) => finished.has(p)));
    if (i < 0) {
      // Every table left waits for a parent still loading: none reserves a stream meanwhile, so the parents take them all.
      for (const o of todo) streams.started(o.t.key);
      await Promise.race(running);
      continue;
    }
    const { t, r } = todo.splice(i, 1)[0]!;
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
    const began = (): void => {
      prepared();
      streams.started(t.key);
    };
    const p: Promise<void> = loadTable(x, t, r, { gate, connections, stop, progress, mismatches: out.mismatches }, began)
      .then(() => progress.finished(t.key, r.status !== 'stopped', r.rows))
      .catch((err: unknown) => {
        const fe = toFlatloadError(err, `loading ${t.key}`);
        r.status = 'stopped';
        r.error = { code: fe.code, message: fe.message };
        progress.finished(t.key, false, r.rows);
        out.firstError ??= fe;
        // One table stopped stops the export: the others commit their chunks in flight and stop, resumable.
        stop.abort();
      })
      .finally(() => {
        began();
        finished.add(t.key);
        running.delete(p);
      });
    running.add(p);
    await ready;
  }
  await Promise.all([...running]);
  return out;
}

/** The tables in the order they start: parents before the tables whose foreign keys reference them, else smallest first. */
async function tableOrder(x: ExportJob): Promise<ForeignKeyOrder<Target>> {
  const fk = foreignKeyOrder(x.targets, await exportForeignKeys(x.control, x.targets));
  x.notes.push(...foreignKeyNotes(fk));
  return fk;
}

/** Rung: every table against the exporter's figures (checked as each finished loading); a mismatch keeps the set unpublished. */
function verifyExport(x: ExportJob, mismatches: FlatloadError[]): FlatloadError | undefined {
  if (mismatches.length === 0) return undefined;
  // Not marked loaded: the rerun loads nothing again (every file is done) but checks again, and publishes only then.
  const error = mismatches.length === 1 ? mismatches[0]! : new FlatloadError('EXPECTATION_MISMATCH', `${mismatches.length} tables do not match the export: ${mismatches.map((m) => m.message).join('; ')}`, { hint: mismatches[0]!.context.hint });
  if (x.mode === 'swap') x.notes.push('no table was swapped in: the set is published only when every table matches the export');
  return error;
}

/** How the export's quick exclusive statements wait for the tables' readers (load/lockWait.ts); notes go out as they happen. */
async function exportLockWaits(x: ExportJob): Promise<LockWaitOptions> {
  const server = await selectOne<{ v: string; c: string }>(x.control, 'SELECT VERSION() AS v, @@version_comment AS c');
  const mariadb = parseVersion(server?.v ?? '', server?.c ?? '').flavor === 'mariadb';
  return { maxPauseMs: x.base.throttle.maxPauseMs, mariadb, signal: x.io.signal, note: (m) => x.io.stderr.write(`note: ${m}\n`) };
}

/** Rung: publish a swap (one RENAME TABLE) and mark the export done. */
async function finishExport(x: ExportJob, store: ExportStore, exportId: string): Promise<void> {
  await store.update(exportId, { phase: 'loaded' });
  if (x.mode === 'swap') await swapAll(x.control, x.targets, x.base.keepOld, x.notes, await exportLockWaits(x));
  await store.update(exportId, { state: 'done', phase: 'finished', finished: true });
}

/** Rung: the tables made ready — missing ones created, then (once per export) shadows made or tables emptied. */
async function prepareExport(x: ExportJob, store: ExportStore, exportId: string, phase: string, sidecars: ReadonlyMap<string, Sidecar>): Promise<void> {
  // Tables first, then rows: every missing table is created before any table loads.
  await createMissing(x.control, x.targets, sidecars, x.notes);
  refuseSpiderSwap(x.targets, x.mode);
  // Swap and replace prepare every table once per export; a resumed export finds them prepared.
  if (phase !== 'created') return;
  // Made again now that the missing tables exist (a created table's swap is refused here, as an existing one's was).
  const plans = await modePlans(x.control, x.targets, x.base.mode, x.base.keepOld);
  // Replace empties children before their parents: DELETE of a parent fails while child rows reference it.
  const order = x.mode === 'replace' ? foreignKeyOrder(x.targets, await exportForeignKeys(x.control, x.targets)).order.reverse() : x.targets;
  await prepareTables(x.control, order, x.mode, plans, await exportLockWaits(x));
  // The tables were just emptied or made anew: earlier loads of these files into them count for nothing.
  if (x.mode !== 'append') x.restartMembers = true;
  await store.update(exportId, { phase: 'prepared' });
}

/** The load rung with what it needs around it: the shared connections, the stop signal, the progress display. */
async function loadAll(x: ExportJob, phase: string, throttleEvents: EventHub): Promise<{ firstError: FlatloadError | undefined; mismatches: FlatloadError[]; aborted: boolean }> {
  const connections = SharedConnections.open(x.session, x.jobs);
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  x.io.signal.addEventListener('abort', onAbort, { once: true });
  if (x.io.signal.aborted) stop.abort();
  // As for one file: a bar on a terminal, lines otherwise (and with --json, whose stdout is for the report).
  const display = x.base.progress === 'auto' ? (x.io.stderr.isTTY && !x.base.json ? 'bar' : 'lines') : x.base.progress;
  const progress = new ExportProgress(x.io.stderr, display, x.targets.map((t) => ({ key: t.key, sizeBytes: t.sizeBytes })));
  const throttleHub = progress.throttleHub();
  throttleEvents.on((e) => throttleHub.emit(e));
  const loaded = phase === 'loaded';
  if (loaded) {
    // Every table was loaded by the interrupted run (in swap mode into shadows that may be renamed already).
    x.notes.push('every table was loaded by the interrupted run');
    for (const r of x.reports) r.status = 'already-loaded';
  }
  try {
    const outcome = await loadTables(x, connections, stop, progress, loaded);
    return { ...outcome, aborted: stop.signal.aborted };
  } finally {
    progress.close();
    x.io.signal.removeEventListener('abort', onAbort);
    await connections.end();
  }
}

/** The export's report as it stands. */
function exportRun(x: ExportJob, t0: number, exportId: string | null, source: string, error: FlatloadError | undefined, status?: ExportReport['status']): ExportRun {
  return {
    report: {
      status: status ?? exportStatus(x.reports),
      exportId,
      source,
      mode: x.mode,
      jobs: x.jobs,
      tables: x.reports,
      totals: exportTotals(x.reports, (Date.now() - t0) / 1000),
      notes: x.notes,
      ...(x.throttle ? { throttle: x.throttle.throttle.report() } : {}),
    },
    plans: [],
    error,
  };
}

/** An export's stops: anything thrown once it is held is recorded; a table's stop is returned by the load. */
const EXPORT_STOPS: StopRules = {
  recordThrownIn: ['found', 'prepared', 'started', 'loaded', 'reported', 'verified', 'finished'],
  loadRecordsItsStops: false,
  verifyGatesFinish: true,
  resumeThrownFrom: null,
};

/** What the export's rungs hand on. */
interface ExportClimb {
  store?: ExportStore;
  exportId?: string;
  members?: ExportMember[];
  phase?: string;
  mismatches?: FlatloadError[];
}

/** The export's hooks for the ladder (climb.ts): held, found, prepared, loaded, verified, finished — or stopped. */
function exportLadder(x: ExportJob, t0: number, source: string, sidecars: ReadonlyMap<string, Sidecar>, throttleEvents: EventHub): LadderJob<ExportRun> {
  const k: ExportClimb = {};
  return {
    kind: 'export',
    doing: 'loading the export',
    rules: EXPORT_STOPS,
    hold: async () => {
      Object.assign(k, await holdExport(x));
    },
    find: async () => {
      const { found, phase } = await findExport(x, k.store!, k.exportId!, k.members!, source);
      k.phase = phase;
      return found;
    },
    endsAtFound: async (found) => (found === 'done' ? exportRun(x, t0, k.exportId!, source, undefined, 'already-loaded') : undefined),
    prepare: () => prepareExport(x, k.store!, k.exportId!, k.phase!, sidecars),
    // Recorded as running when it was found.
    start: async () => undefined,
    load: async () => {
      const { firstError, mismatches, aborted } = await loadAll(x, k.phase!, throttleEvents);
      k.mismatches = mismatches;
      return firstError ?? (aborted ? new FlatloadError('INTERRUPTED', 'interrupted: the tables in flight committed or rolled back their chunks; nothing is half-loaded') : undefined);
    },
    // Each table's report was written as it loaded.
    report: async () => undefined,
    verify: async () => verifyExport(x, k.mismatches!),
    finish: () => finishExport(x, k.store!, k.exportId!),
    mark: (state, e) => k.store!.update(k.exportId!, { state, message: e.message }),
    withResume: (e) => (e.context.resumeCommand || !x.io.resumeCommand ? e : e.withContext({ resumeCommand: x.io.resumeCommand })),
    result: (error) => exportRun(x, t0, k.exportId ?? null, source, error),
    // The export's lock goes with its control connection, which the command closes.
    release: async () => undefined,
  };
}

/** `flatload plan DIR`: each table's plan as its single load would run it, plus what the export adds. */
async function planExport(x: ExportJob, source: string): Promise<ExportRun> {
  const { a, mode, jobs, notes } = x;
  const plans: ExportRun['plans'] = [];
  const reports: ExportTableReport[] = [];
  const targets = await Promise.all(x.targets.map(async (t) => ({ ...t, empty: !t.exists || !(await hasRows(x.control, t.ref)) })));
  const fk = foreignKeyOrder(targets, await exportForeignKeys(x.control, x.targets));
  notes.push(...foreignKeyNotes(fk));
  for (const t of fk.order) {
    reports.push(tableReport(t, 'dry-run'));
    if (!t.exists) {
      const text = `${t.key}: does not exist yet; --create-tables creates it from ${maskInputUrl(t.ddl!)} before any rows load, and its plan is made then`;
      plans.push({ table: t.key, text, json: null });
      continue;
    }
    const options = toLoadOptions({ ...a, ...t.options, file: t.files[0]!, table: quoteQualified(t.db, t.table), mode: mode === 'swap' || mode === 'replace' ? 'append' : mode, jobs: streamsFor(t.sizeBytes, jobs), dryRun: true, chart: undefined });
    const res = await runLoad(options, x.conn, new EventHub(), undefined, '', { session: x.session });
    const files = t.files.length > 1 ? ` (${t.files.length} files, loaded one after another in this order: ${t.sizes.map((f) => f.path).join(', ')})` : '';
    const route = res.route ? `${renderRoute(res.route.plan, res.route.map)}\n${res.route.plan.route === 'direct' ? "each backend's share is planned on its backend; the first one's:\n" : ''}` : '';
    notes.push(...tablePlanNotes(t, x.base.analyze, mode));
    plans.push({ table: t.key, text: `== ${t.key}${files}\n${route}${renderPlan(res.plan, res.facts, res.sql)}`, json: planJson(res.plan, res.facts, res.sql) });
  }
  notes.push(...exportPlanNotes(targets, mode, jobs));
  return {
    report: { status: 'dry-run', exportId: null, source, mode, jobs, tables: reports, totals: exportTotals(reports, 0), notes, ...(x.throttle ? { throttle: x.throttle.throttle.report() } : {}) },
    plans,
    error: undefined,
  };
}

/** --binlog off: the export's own CREATE, TRUNCATE and RENAME stay off the binary log with the rows (each table's load sets its connections). */
async function binlogOff(control: ControlConnection, base: LoadOptions): Promise<void> {
  if (base.binlog !== 'off' || (await selectNumber(control, 'SELECT @@log_bin AS n')) === 0) return;
  await control.query('SET SESSION sql_log_bin = 0').catch(async (err: unknown) => {
    await control.end();
    throw toFlatloadError(err, '--binlog off: SET SESSION sql_log_bin = 0 (needs BINLOG ADMIN, or SUPER)');
  });
}

export async function executeExport(a: ExportArgs, conn: ConnectionOptions, io: Io): Promise<ExportRun> {
  const t0 = Date.now();
  // The flags shared by every table, checked once (a table's manifest options are checked with its load).
  const base = toLoadOptions({ ...a, file: a.files[0] ?? '-', table: 'export' });
  const found = namesRemote(a.files) ? await discoverRemoteExport(a.files, a.manifest, base.s3) : discoverExport(a.files, a.manifest, io.cwd);
  const selection = parseSelection(a);
  const chosen = selectTables(found.tables, selection, conn.database);
  const lost = missingTables(found.missing, selection);
  if (lost) throw lost;
  const { session, conn: first } = await openSession(conn, { localInfile: false });
  const control = new ControlConnection(first, session);
  await binlogOff(control, base);
  const notes: string[] = selectionNotes(found.tables.length, chosen, found.passedOver, conn.database);
  // One throttle spans every table: a replica's lag or the rate is the export's, not a table's.
  const throttleEvents = new EventHub();
  const throttle = throttles(base.throttle) ? new ServerThrottle(base.throttle, conn, session, throttleEvents) : undefined;
  try {
    await throttle?.check();
    const targets = await exportTargets(chosen.picked, conn.database, control);
    checkTargets(targets, base.mode, a);
    // Each table's --mode as its single load plans it: a swap the single load refuses is refused here, before anything changes.
    await modePlans(control, targets, base.mode, base.keepOld);
    // Every .sql file that will run is read and checked before anything changes.
    const sidecars = await readSidecars(control, targets, a.runSqlFiles === true, base.s3);
    const layout = await fitConnections(control, base, io.clientCpus, notes);
    const x: ExportJob = { a, conn, io, base, mode: base.mode, session, control, targets, jobs: layout.jobs, tablesAtOnce: layout.tables, notes, reports: targets.map((t) => tableReport(t, 'not-started')), throttle, restartMembers: base.restart };
    if (base.dryRun) return await planExport(x, found.source);
    warmSortAside();
    return await climb(exportLadder(x, t0, found.source, sidecars, throttleEvents));
  } catch (err) {
    throw toFlatloadError(err, 'loading the export');
  } finally {
    throttle?.close();
    await control.end();
  }
}
