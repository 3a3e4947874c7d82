import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { identityDifferences, jobIdentity, jobIdOf, routedIdentity, type JobIdentity } from '../checkpoint/identity.js';
import { holdJob } from '../checkpoint/job.js';
import { jobLockHolder, ownerText } from '../checkpoint/lock.js';
import { CheckpointStore } from '../checkpoint/store.js';
import type { ConnectionOptions } from '../config/connection.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openSession } from '../db/connect.js';
import { ControlConnection, type Queryable } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { selectNumber, selectRows } from '../db/rows.js';
import { FlatloadError, isFlatloadError } from '../errors/index.js';
import { openInput } from '../input/source.js';
import { isRemoteInput, maskInputUrl } from '../input/remote.js';
import { materializeInput } from '../input/spool.js';
import { readShardMap } from '../introspect/cluster.js';
import { prepareLoad } from '../introspect/target.js';
import { partitionFields, planRoute, routeBackends, type RouteBackend, type RoutePlan } from '../plan/route.js';
import { EventHub } from '../report/events.js';
import { defaultRejectPath } from '../report/rejectFile.js';
import type { LoadReport, ShardReport } from '../report/summary.js';
import type { ShardMap } from '../shard/map.js';
import { autoChunkSize, executeLoad, withResumeCommand, type ExecuteResult, type LoadWithin } from './execute.js';
import { removeDir, splitByShard } from './shardSplit.js';

export interface TargetResult extends ExecuteResult {
  /** For a Spider table: how its rows reached the backends, and its shard map. */
  route?: { plan: RoutePlan; map: ShardMap };
}

/** A backend as the front names it. */
const backendName = (b: RouteBackend): string => b.server ?? b.key;

/**
 * How flatload connects to a backend: the address from the front's shard
 * map with flatload's own user, password and TLS settings, or what
 * --backend NAME=URL gives for it (the database stays the map's).
 */
function backendConnection(conn: ConnectionOptions, b: RouteBackend, front: string, o: LoadOptions): ConnectionOptions {
  const own = b.server === undefined ? undefined : o.backends[b.server];
  const host = own?.host ?? b.host;
  const port = own?.port ?? (own?.host ? 3306 : b.port);
  return {
    ...conn,
    host,
    port,
    // The front's node list would send every connection back to the front: a backend is its one node.
    nodes: [{ host, port }],
    socketPath: own?.socketPath ?? (own?.host ? undefined : b.socket),
    database: b.database,
    user: own?.user ?? conn.user,
    password: own?.password ?? conn.password,
    targetSource: own ? `--backend ${b.server}` : `backend ${backendName(b)} of ${front} (the front's mysql.servers)`,
  };
}

/** --backend names a server the shard map does not use: a typo, said before anything runs. */
function checkBackendNames(o: LoadOptions, backends: RouteBackend[]): void {
  const known = backends.flatMap((b) => (b.server === undefined ? [] : [b.server]));
  const unknown = Object.keys(o.backends).filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new FlatloadError('USAGE', `--backend ${unknown.join(', ')}: the table's partitions name the servers ${known.join(', ') || '(none)'}`);
}

/** Why each backend cannot be reached with the user's credentials (reached backends are absent). */
async function unreachableBackends(conn: ConnectionOptions, backends: RouteBackend[], front: string, o: LoadOptions): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    backends.map(async (b) => {
      try {
        const { conn: c } = await openSession(backendConnection(conn, b, front, o), { localInfile: false });
        try {
          await c.query(`SELECT 1 FROM ${quoteQualified(b.database, b.table)} LIMIT 0`);
        } finally {
          await c.end().catch(() => undefined);
        }
      } catch (err) {
        out.set(b.key, toFlatloadError(err, `reaching backend ${backendName(b)}`).message.split('\n')[0]!);
      }
    }),
  );
  return out;
}

async function tableColumns(conn: Connection, db: string, table: string): Promise<Array<{ name: string; autoIncrement: boolean }>> {
  const [rows] = await conn.query('SELECT COLUMN_NAME AS c, EXTRA AS x FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION', [db, table]);
  return (rows as Array<{ c: string; x: string | null }>).map((r) => ({ name: r.c, autoIncrement: /auto_increment/i.test(r.x ?? '') }));
}

/** The AUTO_INCREMENT column the input does not carry (the front would fill it), if any. */
function frontFilled(columns: Array<{ name: string; autoIncrement: boolean }>, o: LoadOptions): string | undefined {
  const auto = columns.find((c) => c.autoIncrement);
  if (!auto || !o.columns) return undefined;
  return o.columns.some((c) => !c.isVariable && c.name.toLowerCase() === auto.name.toLowerCase()) ? undefined : auto.name;
}

/**
 * Any load: a Spider table is planned for (front or direct, see
 * plan/route.ts); everything else goes to executeLoad as it is.
 */
export async function executeTargetLoad(
  o: LoadOptions,
  conn: ConnectionOptions,
  events: EventHub,
  signal?: AbortSignal,
  resumeCommand = '',
  /** A table of an export: through the front it loads over the export's streams; routed, over its backends' own connections. */
  within: LoadWithin = {},
): Promise<TargetResult> {
  const db = o.db ?? conn.database;
  let facts: { map: ShardMap; plan: RoutePlan } | undefined;
  if (db !== undefined) {
    const { conn: c } = await openSession(conn, { localInfile: false });
    try {
      const [rows] = await c.query('SELECT ENGINE AS e FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [db, o.table]);
      const spider = String((rows as Array<{ e: string | null }>)[0]?.e ?? '').toUpperCase() === 'SPIDER';
      const map = spider
        ? await readShardMap(c, db, o.table).catch((err: unknown) => {
            // Without SELECT on mysql.servers the backends are unknown, but the front can still take the load.
            if (o.route === 'direct' || !isFlatloadError(err) || err.code !== 'MISSING_PRIVILEGE') throw err;
            events.emit({ type: 'note', message: `${err.message}: loading through the Spider front` });
            return undefined;
          })
        : undefined;
      if (map) {
        const { backends } = routeBackends(map);
        checkBackendNames(o, backends);
        const columns = await tableColumns(c, db, o.table);
        const plan = planRoute(
          {
            map,
            unreachable: await unreachableBackends(conn, backends, `${db}.${o.table}`, o),
            fields: partitionFields(
              map,
              o.columns,
              columns.map((x) => x.name),
            ),
            inputReason: o.format.linesTerminatedBy.length === 0 ? 'the input has no line terminator (LINES TERMINATED BY empty), so flatload cannot cut it into records' : undefined,
            frontFilled: frontFilled(columns, o),
            mode: o.mode,
            strategy: o.strategy,
          },
          o.route,
        );
        facts = { map, plan };
      }
    } finally {
      await c.end().catch(() => undefined);
    }
  }
  if (!facts) return executeLoad(o, conn, events, signal, resumeCommand, within);
  if (facts.plan.route === 'direct' && (o.columnsFromHeader || o.expect)) {
    // The split reads fields by position before any backend's load reads the header, and no share holds the whole table to check.
    throw new FlatloadError('UNSUPPORTED', `${o.columnsFromHeader ? '--columns header' : '--expect-rows/--expect-checksum'} is not supported for a Spider table loaded --route direct`, {
      hint: o.columnsFromHeader ? 'name the columns with --columns a,b,c, or load through the front with --route front' : 'load through the front with --route front, or check the backends with --verify',
    });
  }
  if (o.dryRun && facts.plan.route === 'direct') {
    // Each share gets a plan of its own from its backend; the first one's shows what they look like.
    const b = facts.plan.backends[0]!;
    const result = await executeLoad({ ...o, db: b.database, table: b.table }, backendConnection(conn, b, `${facts.map.db}.${facts.map.table}`, o), events, signal, resumeCommand);
    return { ...result, route: facts };
  }
  if (!o.dryRun) for (const r of facts.plan.reasons) events.emit({ type: 'note', message: r });
  if (facts.plan.route === 'front' || o.dryRun) {
    const result = await executeLoad(o, conn, events, signal, resumeCommand, within);
    result.report.notes.unshift(...facts.plan.reasons);
    if (o.verify && !o.dryRun && !result.error) result.error = await verified(result.report, conn, o, facts.map, facts.plan);
    return { ...result, route: facts };
  }
  return { ...(await loadDirect(o, conn, events, signal, resumeCommand, facts.map, facts.plan, within.export?.repeat ?? 0)), route: facts };
}

/** Where a routed job's shares are split to (one directory per job, so a rerun finds what a killed run left). */
const routeDir = (tmp: string, jobId: string): string => join(tmp, `flatload-route-${jobId}`);

/**
 * The routed job on the front, before anything is loaded: an unfinished run
 * of this load with another identity (the shard map above all) is refused,
 * or discarded with --restart. Returns whether this run continues one.
 */
async function checkRoutedJob(store: CheckpointStore, identity: JobIdentity, o: LoadOptions, tmp: string, foldTableNames: boolean): Promise<boolean> {
  const jobId = jobIdOf(identity);
  if (!(await CheckpointStore.exists(store.conn, store.schema))) return false;
  await store.ensureTables('InnoDB');
  const found = await store.findUnfinished(identity.target, identity.input.path, foldTableNames);
  // Another listing of the same file in the same export is another part, with a job of its own.
  const stored = found && (found.identity.repeat ?? 0) === (identity.repeat ?? 0) ? found : undefined;
  if (!stored || stored.jobId === jobId) return stored !== undefined;
  const holder = await jobLockHolder(store.conn, stored.jobId);
  if (holder) {
    throw new FlatloadError('JOB_RUNNING', `a load of ${stored.inputPath} into ${stored.target} with another shard map or other options is running: ${stored.owner ?? `connection ${holder.connectionId}`}`, {
      table: stored.target,
      hint: 'wait for it to finish (flatload status shows it)',
    });
  }
  // Every run splits anew, so the shares a killed run of that job left behind are of no use to anyone.
  removeDir(routeDir(tmp, stored.jobId));
  if (!o.restart) {
    const diffs = identityDifferences(stored.identity, identity);
    throw new FlatloadError(
      'RESUME_MISMATCH',
      `an unfinished load of ${stored.inputPath} into ${stored.target} (job ${stored.jobId}) exists, and this run differs from it:\n    ${diffs.join('\n    ')}`,
      {
        file: o.file,
        table: stored.target,
        hint: 'rerun the original command against the original shard map to finish it; or add --restart to discard it (its committed rows stay on the backends, so remove them first if this run loads the same rows)',
      },
    );
  }
  await store.abandon(stored.jobId);
  return false;
}

/** Records the routed job as running (once the input has split: an input error leaves nothing to resume). */
async function startRoutedJob(store: CheckpointStore, identity: JobIdentity, continues: boolean, plan: RoutePlan, resumeCommand: string): Promise<string> {
  const jobId = jobIdOf(identity);
  if (continues) {
    await store.update(jobId, { state: 'running', message: null, owner: ownerText() });
    return jobId;
  }
  await store.ensureTables('InnoDB');
  await store.createJob({ jobId, target: identity.target, inputPath: identity.input.path, identity, plan: { route: plan }, rowsBefore: null, resumeCommand, owner: ownerText(), chunksTotal: null, rowsInInput: null });
  return jobId;
}

/**
 * One backend's events on the load's own hub: notes and warnings named,
 * chunk and connection events numbered apart from the other backends' (so
 * one progress display counts them all); each share's own start, scan and
 * done stay with it.
 */
function shareEvents(events: EventHub, name: string, share: number): EventHub {
  const hub = new EventHub();
  const chunk = (c: number): number => share * 1_000_000 + c;
  const slot = (s: number): number => share * 1000 + s;
  hub.on((e) => {
    switch (e.type) {
      case 'note':
      case 'warning':
        events.emit({ ...e, message: `${name}: ${e.message}` });
        break;
      case 'connection-state':
        events.emit({ ...e, slot: slot(e.slot), ...(e.chunk === undefined ? {} : { chunk: chunk(e.chunk) }) });
        break;
      case 'chunk-start':
      case 'chunk-committed':
        events.emit({ ...e, chunk: chunk(e.chunk), slot: slot(e.slot) });
        break;
      case 'chunk-bytes':
      case 'chunk-retry':
      case 'chunk-rolled-back':
        events.emit({ ...e, chunk: chunk(e.chunk) });
        break;
      case 'throttle':
        events.emit({ ...e, reason: e.reason && `${name}: ${e.reason}` });
        break;
      case 'start':
      case 'scan':
      case 'done':
        break;
    }
  });
  return hub;
}

function shardReport(b: RouteBackend, r: PromiseSettledResult<ExecuteResult>, seconds: number): ShardReport {
  const base = { backend: backendName(b), key: b.key, seconds };
  if (r.status === 'rejected') {
    const e = toFlatloadError(r.reason, `loading into backend ${backendName(b)}`);
    return { ...base, status: 'stopped', rows: 0, rowsInInput: null, chunks: 0, resumedChunks: 0, error: { code: e.code, message: e.message } };
  }
  const rep = r.value.report;
  return { ...base, status: rep.status, rows: rep.rows, rowsInInput: rep.rowsInInput, chunks: rep.chunks, resumedChunks: rep.resumedChunks, error: rep.error };
}

/**
 * COUNT(*) through the front against COUNT(*) and CHECKSUM TABLE on every
 * backend table. Spider does not filter a backend table by partition: with
 * p0 and p2 both on b1's table, the front read every b1 row twice (observed
 * on MariaDB 10.11, docs/scale-out.md), so the front is expected to count
 * each backend's rows once per partition on it.
 */
async function verifyCounts(front: Queryable, connect: (b: RouteBackend) => ConnectionOptions, map: ShardMap, plan: RoutePlan): Promise<NonNullable<LoadReport['verify']>> {
  const viaFront = await selectNumber(front, `SELECT COUNT(*) AS n FROM ${quoteQualified(map.db, map.table)}`);
  const backends = await Promise.all(
    plan.backends.map(async (b) => {
      const { conn: c } = await openSession(connect(b), { localInfile: false });
      try {
        const t = quoteQualified(b.database, b.table);
        const rows = await selectNumber(c, `SELECT COUNT(*) AS n FROM ${t}`);
        const sum = await selectRows<{ Checksum: string | number | null }>(c, `CHECKSUM TABLE ${t}`);
        const checksum = sum[0]?.Checksum === null || sum[0]?.Checksum === undefined ? null : String(sum[0].Checksum);
        return { backend: backendName(b), rows, partitions: b.partitions.length, checksum };
      } finally {
        await c.end().catch(() => undefined);
      }
    }),
  );
  const expectedFront = backends.reduce((a, b) => a + b.rows * b.partitions, 0);
  return { front: viaFront, expectedFront, backends, equal: viaFront === expectedFront };
}

/**
 * A share's error, said of the backend and the user's input: its file is the
 * share split from the input (deleted at the end), so its line and byte
 * offset count within that share.
 */
function shareError(e: FlatloadError, name: string, input: string): FlatloadError {
  const where = e.context.file === undefined ? {} : { file: `${input}, the records for ${name} (lines and offsets count within them)` };
  return new FlatloadError(e.code, `backend ${name}: ${e.message}`, { ...e.context, ...where }, { cause: e.cause });
}

/** The reject file of one backend's share: the load's, with the backend's name before its extension (rows.rejects.b1.csv). */
export function shareRejectPath(path: string, backend: string): string {
  const ext = extname(path);
  return `${path.slice(0, path.length - ext.length)}.${backend.replace(/[^A-Za-z0-9_.-]/g, '_')}${ext}`;
}

/** --verify: the counts into the report; an error when the front and the backends disagree. */
async function verified(report: LoadReport, conn: ConnectionOptions, o: LoadOptions, map: ShardMap, plan: RoutePlan, control?: ControlConnection): Promise<FlatloadError | undefined> {
  const own = control ? undefined : (await openSession(conn, { localInfile: false })).conn;
  try {
    report.verify = await verifyCounts(control ?? own!, (b) => backendConnection(conn, b, `${map.db}.${map.table}`, o), map, plan);
  } finally {
    await own?.end().catch(() => undefined);
  }
  if (report.verify.equal) return undefined;
  const error = new FlatloadError('SERVER_ERROR', `--verify: COUNT(*) through the front is ${report.verify.front}, the backends' rows make ${report.verify.expectedFront}`, { table: `${map.db}.${map.table}` });
  report.error = { code: error.code, message: error.message };
  return error;
}

/**
 * Direct routing: the input split by the partition rule into one file per
 * backend table (in --tmpdir, removed at the end), each loaded by the
 * single-server pipeline over that backend's own connections, all backends
 * at once. A chunk's bookkeeping row commits in the same transaction as its
 * rows, so it lives where the rows do: on the backend (a chunk is one
 * backend's range of its share). The front keeps the routed job itself,
 * whose identity holds the shard map, so a rerun against a changed map is
 * refused before any backend is touched.
 */
async function loadDirect(
  o: LoadOptions,
  conn: ConnectionOptions,
  events: EventHub,
  signal: AbortSignal | undefined,
  resumeCommand: string,
  map: ShardMap,
  plan: RoutePlan,
  /** How many times an export listed this file for this table before (see JobIdentity.repeat). */
  repeat: number,
): Promise<ExecuteResult> {
  const t0 = Date.now();
  if (isRemoteInput(o.file)) {
    // Splitting by the partition rule reads a local file; a remote one would have to be fetched whole first.
    throw new FlatloadError('UNSUPPORTED', `${maskInputUrl(o.file)}: a Spider table's direct route splits a local file; a remote input loads through the front`, { hint: 'add --route front, or download the file first' });
  }
  const source = openInput(o.file);
  const { session, conn: first } = await openSession(conn, { localInfile: false });
  const control = new ControlConnection(first, session);
  const tmp = o.tmpdir ?? tmpdir();
  const local = await materializeInput(source, tmp);
  let dir: string | undefined;
  try {
    const prep = await prepareLoad(o, session, control.connection, source);
    const store = new CheckpointStore(control, o.bookkeepingSchema ?? prep.db);
    const own = jobIdentity(o, source, local, prep.db, o.chunkSizeBytes ?? autoChunkSize(local.sizeBytes), prep.characterSet, prep.server.lowerCaseTableNames);
    const identity = { ...routedIdentity(own, map), ...(repeat > 0 ? { repeat } : {}) };
    const jobId = jobIdOf(identity);
    await holdJob(control, session, store, jobId, o, events, false);
    const continues = await checkRoutedJob(store, identity, o, tmp, prep.server.lowerCaseTableNames !== 0);
    dir = routeDir(tmp, jobId);
    const ts = Date.now();
    const split = await splitByShard({
      path: local.path,
      display: local.display,
      format: prep.scan,
      charset: prep.charset,
      targets: prep.targets,
      ignoreLines: o.format.ignoreLines,
      stripBom: o.stripBom && prep.charset.utf8,
      rule: map.rule,
      fields: plan.fields,
      partitionShare: plan.partitionBackend,
      shareNames: plan.backends.map(backendName),
      dir,
    });
    const shares = plan.backends.map((b, i) => `${backendName(b)} ${split.records[i]!.toLocaleString('en-US')}`).join(', ');
    await startRoutedJob(store, identity, continues, plan, resumeCommand);
    events.emit({ type: 'note', message: `split ${local.display} by the partition rule in ${((Date.now() - ts) / 1000).toFixed(1)} s: ${shares} records` });
    events.emit({ type: 'start', totalBytes: split.bytes.reduce((a, b) => a + b, 0), jobs: plan.backends.length, table: prep.display, strategy: 'direct to the backends', resumedChunks: 0, resumedBytes: 0, resumedRows: 0 });

    const results = await Promise.allSettled(
      plan.backends.map(async (b, i) => {
        const started = Date.now();
        const name = backendName(b);
        const share: LoadOptions = {
          ...o,
          file: split.paths[i]!,
          db: b.database,
          table: b.table,
          // The split files hold data records only, the header and a byte-order mark dropped.
          format: { ...o.format, ignoreLines: 0 },
          stripBom: false,
          rejectFile: shareRejectPath(o.rejectFile ?? defaultRejectPath(o.file, o.table), name),
          chartPath: undefined,
          route: undefined,
          verify: false,
        };
        const r = await executeLoad(share, backendConnection(conn, b, prep.display, o), shareEvents(events, name, i), signal, resumeCommand, { share: { input: identity.input, map, key: b.key, repeat } });
        events.emit({ type: 'note', message: `${name}: ${r.report.rows.toLocaleString('en-US')} rows in ${((Date.now() - started) / 1000).toFixed(1)} s` });
        return { r, seconds: (Date.now() - started) / 1000 };
      }),
    );
    events.emit({ type: 'done' });
    const shards = results.map((r, i) => shardReport(plan.backends[i]!, r.status === 'fulfilled' ? { status: 'fulfilled', value: r.value.r } : r, r.status === 'fulfilled' ? r.value.seconds : 0));
    const ok = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ ...r.value.r, name: backendName(plan.backends[i]!) }] : []));
    const firstError = results
      .map((r, i) => {
        const e = r.status === 'rejected' ? toFlatloadError(r.reason, 'loading') : r.value.r.error;
        return e && shareError(e, backendName(plan.backends[i]!), local.display);
      })
      .find((e) => e !== undefined);
    const seconds = (Date.now() - t0) / 1000;
    const base = ok[0];
    if (!base) throw firstError ?? new FlatloadError('INTERNAL', 'no backend share ran');
    const sum = (f: (r: LoadReport) => number): number => ok.reduce((a, r) => a + f(r.report), 0);
    const report: LoadReport = {
      ...base.report,
      table: prep.display,
      engine: 'SPIDER',
      status: firstError ? 'stopped' : ok.every((r) => r.report.status === 'already-loaded') ? 'already-loaded' : sum((r) => r.rejected) > 0 ? 'rejected-within-budget' : 'ok',
      rows: sum((r) => r.rows),
      rowsInInput: split.records.reduce((a, b) => a + b, 0),
      rejected: sum((r) => r.rejected),
      skippedDuplicates: sum((r) => r.skippedDuplicates),
      warnings: sum((r) => r.warnings),
      inputBytes: local.sizeBytes,
      seconds,
      // Rates describe this run: each share's rate times its time is the rows it loaded now (resumed chunks excluded).
      rowsPerSec: seconds > 0 ? Math.round(sum((r) => r.rowsPerSec * r.seconds)) / seconds : 0,
      mbPerSec: seconds > 0 ? local.sizeBytes / 1e6 / seconds : 0,
      jobs: sum((r) => r.jobs),
      chunks: sum((r) => r.chunks),
      resumedChunks: sum((r) => r.resumedChunks),
      rejectFile: null,
      slowestChunk: null,
      sizes: null,
      notes: [
        ...plan.reasons,
        ...ok.flatMap(({ name, report: r }) => [...r.notes.map((n) => `${name}: ${n}`), ...(r.rejectFile && r.rejected > 0 ? [`${name}: rejected rows in ${r.rejectFile}`] : [])]),
      ],
      error: firstError ? { code: firstError.code, message: firstError.message } : null,
      shards,
    };
    let error = firstError && withResumeCommand(firstError, resumeCommand);
    if (firstError) {
      await store.update(jobId, { state: firstError.code === 'INTERRUPTED' ? 'interrupted' : 'failed', message: firstError.message }).catch(() => undefined);
    } else {
      await store.finish(jobId, o.keepHistory, null);
      if (o.verify) error = await verified(report, conn, o, map, plan, control);
    }
    return { report, plan: base.plan, facts: base.facts, sql: base.sql, error };
  } catch (err) {
    throw toFlatloadError(err, 'loading');
  } finally {
    if (dir) removeDir(dir);
    local.dispose();
    await control.end();
  }
}
