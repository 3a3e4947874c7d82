import type { Connection } from 'mysql2/promise';
import type { Measured } from './measure.js';
import { session } from './quiet.js';
import { settle, type Settled } from './settle.js';

export interface RunResult {
  seconds: number;
  ok: boolean;
  /** Why a run does not count (exit code, row count, checksum), or ''. */
  note: string;
  /** 1-minute load average when the run started: the machine is shared. */
  load1: number;
  settled: Settled;
  measured: Measured;
}

export interface Series<T> {
  item: T;
  /** In the order they ran. */
  runs: RunResult[];
  /** Median seconds of the runs (all must be ok for the series to be). */
  median: number;
  ok: boolean;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The median of the figures a run measured (nulls, not measured, left out); null when none was. */
export function medianOf(xs: Array<number | null>): number | null {
  const ok = xs.filter((x): x is number => x !== null);
  return ok.length ? median(ok) : null;
}

export interface RunSteps {
  /** Names the run in the session's record of load averages at start (quiet.ts). */
  label?: string;
  admin: Connection;
  serverPid: number | undefined;
  /** Empties the target (a fresh table), untimed. */
  prepare(): Promise<void>;
  run(): Promise<Measured>;
  /** After the run: '' when the table holds what it should, else why not. */
  check(m: Measured): Promise<string>;
}

/** One measured run on a server at rest: prepare, settle, time, check. */
export async function settledRun(s: RunSteps): Promise<RunResult> {
  await s.prepare();
  const settled = await settle(s.admin, s.serverPid);
  // Read after settling (and once the bench's own previous run has left the load average), as the measured command starts.
  const load1 = await session.quietStart(s.label ?? 'a run');
  const measured = await s.run();
  const note = measured.code !== 0 ? `exit ${measured.code}: ${(measured.stderr || measured.stdout).trim().split('\n').slice(-2).join(' ').slice(0, 160)}` : await s.check(measured);
  return { seconds: measured.wallSeconds, ok: note === '', note, load1, settled, measured };
}

/**
 * Each item `repeat` times, in rounds whose order rotates (round r starts at
 * item r), so no item always follows the same predecessor or runs first; each
 * keeps its median.
 */
export async function inRounds<T>(items: T[], repeat: number, runOne: (item: T) => Promise<RunResult>): Promise<Series<T>[]> {
  const runs: RunResult[][] = items.map(() => []);
  for (let round = 0; round < repeat; round++) {
    for (let k = 0; k < items.length; k++) {
      const i = (k + round) % items.length;
      runs[i]!.push(await runOne(items[i]!));
    }
  }
  return items.map((item, i) => {
    const rs = runs[i]!;
    return { item, runs: rs, median: median(rs.map((r) => r.seconds)), ok: rs.length > 0 && rs.every((r) => r.ok) };
  });
}

/** "12.30 [11.9–13.0] (11.9, 12.3, 13.0)": the median, the min–max spread and every run, in the order they ran. */
export function formatRuns(s: Series<unknown>): string {
  if (!s.ok) return `failed: ${s.runs.find((r) => !r.ok)?.note ?? ''}`;
  const xs = s.runs.map((r) => r.seconds);
  const spread = xs.length > 1 ? ` [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}]` : '';
  return `${s.median.toFixed(2)}${spread} (${xs.map((x) => x.toFixed(1)).join(', ')})`;
}

/** Column heading for formatRuns: the table states its rounds. */
export const runsHeading = (rounds: number): string => `median s [min–max] (${rounds} round${rounds === 1 ? '' : 's'}, in order)`;

export function loadRange(runs: RunResult[]): string {
  const l = runs.map((r) => r.load1);
  return l.length ? `${Math.min(...l).toFixed(2)}–${Math.max(...l).toFixed(2)}` : '';
}
