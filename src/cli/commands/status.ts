import { jobStage } from '../../report/activity.js';
import { ExportStore } from '../../checkpoint/exports.js';
import { targetName } from '../../checkpoint/identity.js';
import { selectNumber } from '../../db/rows.js';
import { CheckpointStore, type JobSummary } from '../../checkpoint/store.js';
import type { Queryable } from '../../db/control.js';
import { exportStatusOf, renderExportStatus, type ExportStatus } from '../../export/status.js';
import { openSession } from '../../db/connect.js';
import { splitQualifiedName } from '../../config/names.js';
import { EXIT, FlatloadError, maskUrlSecrets, type ExitCode } from '../../errors/index.js';
import { connectionFromArgs, type ConnectionArgs } from '../connection.js';
import type { CliIo } from '../io.js';

export interface StatusArgs extends ConnectionArgs {
  table?: string;
  json?: boolean;
  bookkeepingSchema?: string;
}

/** A running load holds its job's lock: a job marked running whose lock no process holds was killed. */
function stateLabel(j: JobSummary): string {
  if (j.state === 'done') return 'done';
  const stage = jobStage(j);
  if (j.heldBy !== null) return `running (${stage}) by ${j.owner ?? `connection ${j.heldBy}`}`;
  if (j.state === 'running') return `stopped (${stage}): no process holds it; rerun the load to resume`;
  return `${j.state} (${stage})`;
}

function render(jobs: JobSummary[]): string {
  if (jobs.length === 0) return 'no flatload jobs recorded';
  const rows = jobs.map((j) => [
    j.jobId,
    stateLabel(j),
    j.target,
    `${j.chunksDone}/${j.chunksTotal ?? '?'}`,
    j.rowsDone.toLocaleString('en-US') + (j.rowsInInput !== null ? ` of ${j.rowsInInput.toLocaleString('en-US')}` : ''),
    j.startedAt,
    j.lastProgressAt,
    j.inputPath,
  ]);
  const head = ['job', 'state', 'table', 'chunks', 'rows', 'started', 'last progress', 'input'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const out = [line(head), ...rows.map(line)];
  for (const j of jobs) if (j.message && j.state !== 'done') out.push(`  ${j.jobId}: ${j.message.split('\n')[0]}`);
  return out.join('\n');
}

/** Every export recorded (with a table `target`, or a table in `database`, if given), each with its tables' loads. */
async function exportsOf(conn: Queryable, bookkeepingSchema: string | undefined, target: string | undefined, database: string | undefined): Promise<ExportStatus[]> {
  const schemas = bookkeepingSchema ? [bookkeepingSchema] : await ExportStore.schemas(conn);
  const out: ExportStatus[] = [];
  for (const s of schemas) {
    if (!(await ExportStore.exists(conn, s))) continue;
    for (const e of await new ExportStore(conn, s).list()) {
      if (target !== undefined && !e.members.some((m) => m.target === target)) continue;
      if (database !== undefined && !e.members.some((m) => m.loadTarget.startsWith(`${database}.`))) continue;
      const jobs: JobSummary[] = [];
      // The loads keep their jobs in their table's database, or with the export's (--bookkeeping-schema).
      for (const db of new Set([s, ...e.members.map((m) => m.loadTarget.slice(0, m.loadTarget.indexOf('.')))])) {
        if (await CheckpointStore.exists(conn, db)) jobs.push(...(await new CheckpointStore(conn, db).list()));
      }
      out.push(exportStatusOf(e, jobs));
    }
  }
  return out;
}

/** `flatload status`: the resume bookkeeping, read-only. */
export async function statusCommand(a: StatusArgs, io: CliIo): Promise<ExitCode> {
  const { options } = await connectionFromArgs(a, io.cwd, io.env);
  const { conn } = await openSession(options);
  try {
    let target: string | undefined;
    let fold = false;
    let schemas: string[];
    if (a.table) {
      const name = splitQualifiedName(a.table);
      if (!name) throw new FlatloadError('USAGE', `--table: "${a.table}" is not a table name`);
      const db = name.db ?? options.database;
      if (!db) throw new FlatloadError('USAGE', 'no database given: use --table db.table or --database');
      fold = (await selectNumber(conn, 'SELECT @@lower_case_table_names AS n')) !== 0;
      target = targetName(db, name.table, fold ? 1 : 0);
      schemas = [a.bookkeepingSchema ?? db];
    } else {
      // -D names the database whose loads to show; without it, every database that has bookkeeping.
      schemas = a.bookkeepingSchema ? [a.bookkeepingSchema] : a.database ? [a.database] : await CheckpointStore.schemas(conn);
    }
    let jobs: JobSummary[] = [];
    for (const s of schemas) {
      if (!(await CheckpointStore.exists(conn, s))) continue;
      jobs.push(...(await new CheckpointStore(conn, s).list(target, fold)));
    }
    const exports = await exportsOf(conn, a.bookkeepingSchema, target, a.table ? undefined : a.database);
    // A load that is part of an export is shown with its export, not again on its own.
    const members = new Set(exports.flatMap((e) => e.jobIds));
    jobs = jobs.filter((j) => !members.has(j.jobId));
    // Rows an older flatload wrote may hold a signed URL whole: what is printed is masked all the same.
    // (Each string masked on its own: a mask over the JSON text could take an escaping backslash for part of a value.)
    if (a.json) io.stdout.write(`${JSON.stringify({ exports, jobs }, (_k, v: unknown) => (typeof v === 'string' ? maskUrlSecrets(v) : v))}\n`);
    else io.stdout.write(`${maskUrlSecrets([...exports.map(renderExportStatus), ...(jobs.length > 0 || exports.length === 0 ? [render(jobs)] : [])].join('\n\n'))}\n`);
    return EXIT.ok;
  } finally {
    await conn.end().catch(() => undefined);
  }
}
