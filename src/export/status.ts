/**
 * An export as `flatload status` shows it: one job, with a line per table
 * gathered from the loads of that table's files. Pure.
 */
import { jobStage, type Activity } from '../report/activity.js';
import type { ExportMember, StoredExport } from '../checkpoint/exports.js';
import type { JobSummary } from '../checkpoint/store.js';

export interface ExportTableStatus {
  table: string;
  state: 'done' | 'running' | 'stopped' | 'not started';
  files: number;
  filesDone: number;
  chunksDone: number;
  rowsDone: number;
  /** What the table's running (or stopped) load was doing before its first chunk could load — scanning, sorting — if it had not got further. */
  activity: Activity | null;
  /** The state as shown: `running (sorting: 3 runs, 12.0 MiB of 40.0 MiB)` while its load sorts, else the state. */
  shown: string;
}

export interface ExportStatus {
  exportId: string;
  source: string;
  mode: string;
  state: string;
  phase: string;
  startedAt: string;
  /** The latest progress of the export or any of its loads (a committed chunk). */
  updatedAt: string;
  message: string | null;
  tables: ExportTableStatus[];
  /** The member loads (shown here, not again among the single loads). */
  jobIds: string[];
}

/** The latest load of each of the member's files (a file loaded twice, say after --restart, counts once). */
function memberJobs(m: ExportMember, jobs: readonly JobSummary[]): JobSummary[] {
  const out: JobSummary[] = [];
  for (const f of m.files) {
    const runs = jobs.filter((j) => j.target === m.loadTarget && j.inputPath === f.path);
    const latest = runs.reduce<JobSummary | undefined>((a, j) => (!a || j.startedAt >= a.startedAt ? j : a), undefined);
    if (latest) out.push(latest);
  }
  return out;
}

export function exportStatusOf(e: StoredExport, jobs: readonly JobSummary[]): ExportStatus {
  const running = e.heldBy !== null;
  const jobIds: string[] = [];
  let lastProgress = e.updatedAt.slice(0, 19);
  const tables = e.members.map((m): ExportTableStatus => {
    const mine = memberJobs(m, jobs);
    jobIds.push(...mine.map((j) => j.jobId));
    for (const j of mine) if (j.lastProgressAt > lastProgress) lastProgress = j.lastProgressAt;
    const filesDone = mine.filter((j) => j.state === 'done').length;
    const state: ExportTableStatus['state'] =
      e.state === 'done' || filesDone === m.files.length ? 'done' : mine.some((j) => j.heldBy !== null) ? 'running' : mine.length === 0 ? 'not started' : 'stopped';
    // The file in hand: the one a process holds, else the last one that stopped.
    const current = state === 'running' ? mine.find((j) => j.heldBy !== null) : state === 'stopped' ? mine.findLast((j) => j.state !== 'done') : undefined;
    const activity = current?.activity ?? null;
    return {
      table: m.target,
      state,
      files: m.files.length,
      filesDone: e.state === 'done' ? m.files.length : filesDone,
      chunksDone: mine.reduce((a, j) => a + j.chunksDone, 0),
      rowsDone: mine.reduce((a, j) => a + j.rowsDone, 0),
      activity,
      shown: current && activity ? `${state} (${jobStage(current)})` : state,
    };
  });
  const state =
    e.state === 'done' ? 'done' : running ? `running (${e.phase}) by ${e.owner ?? `connection ${e.heldBy}`}` : e.state === 'running' ? `stopped (${e.phase}): no process holds it; rerun the load to resume` : `${e.state} (${e.phase})`;
  return { exportId: e.exportId, source: e.source, mode: e.mode, state, phase: e.phase, startedAt: e.startedAt.slice(0, 19), updatedAt: lastProgress, message: e.message, tables, jobIds };
}

export function renderExportStatus(s: ExportStatus): string {
  const done = s.tables.filter((t) => t.state === 'done').length;
  const out = [`export ${s.exportId}  ${s.state}  ${s.source}  mode ${s.mode}  tables ${done}/${s.tables.length} done  started ${s.startedAt}  last progress ${s.updatedAt}`];
  const rows = s.tables.map((t) => [t.table, t.shown, `${t.filesDone}/${t.files}`, String(t.chunksDone), t.rowsDone.toLocaleString('en-US')]);
  const head = ['table', 'state', 'files', 'chunks', 'rows'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) out.push(`  ${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd());
  if (s.message && !s.state.startsWith('done')) out.push(`  ${s.message.split('\n')[0]}`);
  return out.join('\n');
}
