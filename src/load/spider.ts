/**
 * The pieces of a load into a Spider table that the job's Spider targets
 * (src/job/targets/) put together: the backends' connections, the shares'
 * events and reject files, the routed report, and --verify's counts.
 */
import { extname } from 'node:path';
import type { Connection } from 'mysql2/promise';
import type { ConnectionOptions } from '../config/connection.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openSession } from '../db/connect.js';
import type { ControlConnection, Queryable } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { quoteQualified } from '../db/quote.js';
import { selectNumber, selectRows } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import type { LocalInput } from '../input/spool.js';
import type { RouteBackend, RoutePlan } from '../plan/route.js';
import { EventHub } from '../report/events.js';
import type { LoadReport, ShardReport } from '../report/summary.js';
import type { ShardMap } from '../shard/map.js';
import type { ExecuteResult } from './execute.js';

/** A backend as the front names it. */
export const backendName = (b: RouteBackend): string => b.server ?? b.key;

/**
 * How flatload connects to a backend: the address from the front's shard
 * map with flatload's own user, password and TLS settings, or what
 * --backend NAME=URL gives for it (the database stays the map's).
 */
export function backendConnection(conn: ConnectionOptions, b: RouteBackend, front: string, o: LoadOptions): ConnectionOptions {
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
export function checkBackendNames(o: LoadOptions, backends: RouteBackend[]): void {
  const known = backends.flatMap((b) => (b.server === undefined ? [] : [b.server]));
  const unknown = Object.keys(o.backends).filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new FlatloadError('USAGE', `--backend ${unknown.join(', ')}: the table's partitions name the servers ${known.join(', ') || '(none)'}`);
}

/** Why each backend cannot be reached with the user's credentials (reached backends are absent). */
export async function unreachableBackends(conn: ConnectionOptions, backends: RouteBackend[], front: string, o: LoadOptions): Promise<Map<string, string>> {
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

export async function tableColumns(conn: Connection, db: string, table: string): Promise<Array<{ name: string; autoIncrement: boolean }>> {
  const [rows] = await conn.query('SELECT COLUMN_NAME AS c, EXTRA AS x FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION', [db, table]);
  return (rows as Array<{ c: string; x: string | null }>).map((r) => ({ name: r.c, autoIncrement: /auto_increment/i.test(r.x ?? '') }));
}

/** The AUTO_INCREMENT column the input does not carry (the front would fill it), if any. */
export function frontFilled(columns: Array<{ name: string; autoIncrement: boolean }>, o: LoadOptions): string | undefined {
  const auto = columns.find((c) => c.autoIncrement);
  if (!auto || !o.columns) return undefined;
  return o.columns.some((c) => !c.isVariable && c.name.toLowerCase() === auto.name.toLowerCase()) ? undefined : auto.name;
}

/**
 * One backend's events on the load's own hub: notes and warnings named,
 * chunk and connection events numbered apart from the other backends' (so
 * one progress display counts them all); each share's own start, scan and
 * done stay with it.
 */
export function shareEvents(events: EventHub, name: string, share: number): EventHub {
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
export async function verified(report: LoadReport, conn: ConnectionOptions, o: LoadOptions, map: ShardMap, plan: RoutePlan, control?: ControlConnection): Promise<FlatloadError | undefined> {
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
 * The routed job's report from its shares': sums of what each backend
 * loaded, the shares' notes named by backend, and the first share's error
 * (said of the backend and the user's input), if any.
 */
export function directReport(
  plan: RoutePlan,
  results: ReadonlyArray<PromiseSettledResult<{ r: ExecuteResult; seconds: number }>>,
  local: LocalInput,
  split: { records: number[] },
  display: string,
  seconds: number,
): { result: Omit<ExecuteResult, 'error'>; firstError: FlatloadError | undefined } {
  const shards = results.map((r, i) => shardReport(plan.backends[i]!, r.status === 'fulfilled' ? { status: 'fulfilled', value: r.value.r } : r, r.status === 'fulfilled' ? r.value.seconds : 0));
  const ok = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ ...r.value.r, name: backendName(plan.backends[i]!) }] : []));
  const firstError = results
    .map((r, i) => {
      const e = r.status === 'rejected' ? toFlatloadError(r.reason, 'loading') : r.value.r.error;
      return e && shareError(e, backendName(plan.backends[i]!), local.display);
    })
    .find((e) => e !== undefined);
  const base = ok[0];
  if (!base) throw firstError ?? new FlatloadError('INTERNAL', 'no backend share ran');
  const sum = (f: (r: LoadReport) => number): number => ok.reduce((a, r) => a + f(r.report), 0);
  const report: LoadReport = {
    ...base.report,
    table: display,
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
  return { result: { report, plan: base.plan, facts: base.facts, sql: base.sql }, firstError };
}
