import { CheckpointStore, type JobSummary } from '../../checkpoint/store.js';
import { openSession } from '../../db/connect.js';
import { splitQualifiedName } from '../../config/names.js';
import { EXIT, FlatloadError, type ExitCode } from '../../errors/index.js';
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
  if (j.heldBy !== null) return `running (${j.phase}) by ${j.owner ?? `connection ${j.heldBy}`}`;
  if (j.state === 'running') return `stopped (${j.phase}): no process holds it; rerun the load to resume`;
  return `${j.state} (${j.phase})`;
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

/** `flatload status`: the resume bookkeeping, read-only. */
export async function statusCommand(a: StatusArgs, io: CliIo): Promise<ExitCode> {
  const { options } = await connectionFromArgs(a, io.cwd, io.env);
  const { conn } = await openSession(options);
  try {
    let target: string | undefined;
    let schemas: string[];
    if (a.table) {
      const name = splitQualifiedName(a.table);
      if (!name) throw new FlatloadError('USAGE', `--table: "${a.table}" is not a table name`);
      const db = name.db ?? options.database;
      if (!db) throw new FlatloadError('USAGE', 'no database given: use --table db.table or --database');
      target = `${db}.${name.table}`;
      schemas = [a.bookkeepingSchema ?? db];
    } else {
      schemas = a.bookkeepingSchema ? [a.bookkeepingSchema] : await CheckpointStore.schemas(conn);
    }
    const jobs: JobSummary[] = [];
    for (const s of schemas) {
      if (!(await CheckpointStore.exists(conn, s))) continue;
      jobs.push(...(await new CheckpointStore(conn, s).list(target)));
    }
    io.stdout.write(a.json ? `${JSON.stringify({ jobs })}\n` : `${render(jobs)}\n`);
    return EXIT.ok;
  } finally {
    await conn.end().catch(() => undefined);
  }
}
