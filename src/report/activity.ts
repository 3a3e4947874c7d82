/**
 * What a running load is doing before its first chunk can load — copying a
 * compressed input, scanning it for record boundaries, sorting it — as its
 * job row records it for `flatload status`. Pure.
 */
import { formatBytes } from '../config/size.js';

export type ActivityKind = 'spooling' | 'scanning' | 'sorting';

export interface Activity {
  kind: ActivityKind;
  /** Input bytes read (scanning) or sorted into runs (sorting) so far; null when not counted (a sort in memory). */
  bytes: number | null;
  /** The input's bytes, when known (not for a compressed input before its one pass ends). */
  totalBytes: number | null;
  /** Runs written (or found intact from an interrupted run) so far; null when the sort writes none. */
  runs: number | null;
}

/** How often a running load rewrites its progress at most: often enough to watch, rare enough to cost nothing. */
export const ACTIVITY_EVERY_MS = 1000;

/** "412 MiB of 800 MiB", or "412 MiB" when the total is unknown. */
function amount(bytes: number, total: number | null): string {
  return total === null ? formatBytes(bytes) : `${formatBytes(bytes)} of ${formatBytes(total)}`;
}

/** The activity as status shows it: `sorting: 3 runs, 412 MiB of 800 MiB`, `scanning: 1.2 GiB of 4.0 GiB read`, `sorting in memory`. */
export function activityText(a: Activity): string {
  if (a.kind === 'sorting') {
    if (a.runs === null) return 'sorting in memory';
    return `sorting: ${a.runs} run${a.runs === 1 ? '' : 's'}${a.bytes === null ? '' : `, ${amount(a.bytes, a.totalBytes)}`}`;
  }
  if (a.bytes === null) return a.kind;
  return `${a.kind}: ${amount(a.bytes, a.totalBytes)} ${a.kind === 'spooling' ? 'copied' : 'read'}`;
}

/**
 * Whether a new reading of the activity is worth a write: a change of kind
 * at once, a change of progress once `everyMs` passed since the last write,
 * nothing that is the same as what was written.
 */
export function activityDue(last: { activity: Activity; atMs: number } | undefined, next: Activity, nowMs: number, everyMs = ACTIVITY_EVERY_MS): boolean {
  if (!last) return true;
  if (last.activity.kind !== next.kind) return true;
  const same = last.activity.bytes === next.bytes && last.activity.totalBytes === next.totalBytes && last.activity.runs === next.runs;
  return !same && nowMs - last.atMs >= everyMs;
}

/**
 * Where a job is, as status shows it beside its state: its phase, and what
 * its run was doing before the first chunk could load — with its progress
 * while a process runs it (`heldBy`), the word alone once it stopped.
 */
export function jobStage(j: { phase: string; activity: Activity | null; heldBy: number | null }): string {
  if (!j.activity) return j.phase;
  const doing = j.heldBy !== null ? activityText(j.activity) : j.activity.kind;
  // Nothing happened to the table yet: the activity says all. A resume re-reading its input also says how far the job was.
  return j.phase === 'created' ? doing : `${j.phase}, ${doing}`;
}
