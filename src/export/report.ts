/**
 * The report of a whole export: one row per table (rows, rejects, seconds,
 * on-disk size) and the totals, as text or one JSON object. Pure.
 */
import { fmtInt, fmtMB } from '../report/format.js';
import { describeCheck, type CheckResult } from '../report/summary.js';
import { renderThrottleSummary, type ThrottleReport } from '../report/throttle.js';

export interface ExportTableReport {
  table: string;
  files: string[];
  status: 'ok' | 'rejected-within-budget' | 'stopped' | 'already-loaded' | 'not-started' | 'dry-run';
  engine: string | null;
  strategy: string | null;
  rows: number;
  rejected: number;
  seconds: number;
  inputBytes: number;
  onDiskBytes: number | null;
  /** Chunks committed by an earlier, interrupted run of the export. */
  resumedChunks: number;
  rejectFiles: string[];
  error: { code: string; message: string } | null;
  /** ANALYZE TABLE after the table's last file (--analyze). */
  analyze?: { seconds: number; note: string | null };
  /** The table against what the exporter recorded (manifest rows/checksum, mydumper's metadata); absent when it recorded nothing. */
  check?: CheckResult;
}

export interface ExportReport {
  status: 'ok' | 'rejected-within-budget' | 'stopped' | 'already-loaded' | 'dry-run';
  exportId: string | null;
  source: string;
  mode: string;
  jobs: number;
  tables: ExportTableReport[];
  totals: { rows: number; rejected: number; inputBytes: number; onDiskBytes: number | null; seconds: number };
  notes: string[];
  /** --max-rate, --replica, --max-threads-running: one throttle over every table; absent without them. */
  throttle?: ThrottleReport;
}

export function exportTotals(tables: readonly ExportTableReport[], seconds: number): ExportReport['totals'] {
  const sizes = tables.map((t) => t.onDiskBytes);
  return {
    rows: tables.reduce((a, t) => a + t.rows, 0),
    rejected: tables.reduce((a, t) => a + t.rejected, 0),
    inputBytes: tables.reduce((a, t) => a + t.inputBytes, 0),
    onDiskBytes: sizes.every((s) => s !== null) ? sizes.reduce<number>((a, s) => a + s, 0) : null,
    seconds,
  };
}

/** The export's status: stopped if any table stopped, else rejected rows if any table has some, else ok. */
export function exportStatus(tables: readonly ExportTableReport[]): ExportReport['status'] {
  if (tables.some((t) => t.status === 'stopped' || t.status === 'not-started')) return 'stopped';
  if (tables.some((t) => t.status === 'rejected-within-budget')) return 'rejected-within-budget';
  if (tables.length > 0 && tables.every((t) => t.status === 'already-loaded')) return 'already-loaded';
  return 'ok';
}

const HEAD: Record<ExportReport['status'], string> = {
  ok: 'loaded export',
  'rejected-within-budget': 'loaded export with rejected rows',
  stopped: 'stopped export',
  'already-loaded': 'export already loaded, nothing done',
  'dry-run': 'dry run of export',
};

export function renderExportReport(r: ExportReport): string {
  const rows = r.tables.map((t) => [
    t.table,
    t.status,
    fmtInt(t.rows),
    fmtInt(t.rejected),
    t.seconds.toFixed(2),
    fmtMB(t.inputBytes),
    t.onDiskBytes === null ? '-' : fmtMB(t.onDiskBytes),
    t.engine ?? '-',
  ]);
  const tot = r.totals;
  rows.push(['total', r.status, fmtInt(tot.rows), fmtInt(tot.rejected), tot.seconds.toFixed(2), fmtMB(tot.inputBytes), tot.onDiskBytes === null ? '-' : fmtMB(tot.onDiskBytes), '']);
  const head = ['table', 'status', 'rows', 'rejected', 'seconds', 'input', 'on disk', 'engine'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i]!.length)));
  const line = (cells: string[]): string => `  ${cells.map((c, i) => (i >= 2 && i <= 6 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}`.trimEnd();
  const out = [`${HEAD[r.status]}: ${r.source} (mode ${r.mode}, ${r.tables.length} table${r.tables.length === 1 ? '' : 's'}, ${r.jobs} connection${r.jobs === 1 ? '' : 's'} shared)`, line(head), ...rows.map(line)];
  for (const t of r.tables) {
    if (t.analyze) out.push(`  ${t.table}: ANALYZE TABLE ${t.analyze.seconds.toFixed(2)} s${t.analyze.note ? ` (${t.analyze.note})` : ''}`);
    if (t.check) out.push(`  ${t.table}: check ${describeCheck(t.check)}`);
    if (t.error) out.push(`  ${t.table}: ${t.error.message.split('\n')[0]}`);
    for (const f of t.rejectFiles) out.push(`  ${t.table}: rejected rows in ${f}`);
  }
  if (r.throttle && r.status !== 'dry-run') out.push(renderThrottleSummary(r.throttle));
  for (const n of r.notes) out.push(`note: ${n}`);
  return out.join('\n');
}
