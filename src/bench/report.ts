import { cpus, totalmem } from 'node:os';

export interface BenchRow {
  case: string;
  tool: string;
  rows: number;
  bytes: number;
  wallSeconds: number;
  clientCpuSeconds: number | null;
  clientPeakRssBytes: number | null;
  serverCpuSeconds: number | null;
  ok: boolean;
  note?: string;
}

const f1 = (n: number | null, d = 1): string => (n === null ? '–' : n.toFixed(d));

export function rowsPerSec(r: BenchRow): number {
  return r.rows / r.wallSeconds;
}

/** A markdown table of runs, with each run's speed relative to a baseline row. */
export function renderTable(rows: BenchRow[], baseline: BenchRow | undefined): string {
  const head = '| case | tool | wall s | rows/s | MB/s | client CPU s | client peak RSS MB | server CPU s | vs baseline |';
  const sep = '|---|---|---:|---:|---:|---:|---:|---:|---:|';
  const body = rows.map((r) => {
    const ratio = baseline && r.ok ? (rowsPerSec(r) / rowsPerSec(baseline)).toFixed(2) + '×' : '–';
    return `| ${r.case} | ${r.tool}${r.ok ? '' : ' (FAILED)'} | ${f1(r.wallSeconds, 2)} | ${Math.round(rowsPerSec(r)).toLocaleString('en-US')} | ${f1(r.bytes / 1e6 / r.wallSeconds)} | ${f1(r.clientCpuSeconds, 2)} | ${f1(r.clientPeakRssBytes === null ? null : r.clientPeakRssBytes / 1e6, 0)} | ${f1(r.serverCpuSeconds, 1)} | ${ratio} |`;
  });
  return [head, sep, ...body].join('\n');
}

export function machineDescription(serverVersion: string): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${serverVersion}`;
}
