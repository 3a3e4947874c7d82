import { firstNotDone, type CheckpointContext } from './resume.js';
import type { CutChunk } from '../chunking/types.js';
import type { Queryable } from '../db/control.js';
import { toFlatloadError } from '../db/errors.js';
import { alreadyDoneErrnos, sqlOf, step, type RunValues, type Step } from '../plan/ops.js';
import { queryOp, type LockWaitOptions } from './lockWait.js';
import type { LoadPlan } from '../plan/types.js';
import type { EventHub } from '../report/events.js';

/**
 * Runs a list of the plan's steps on the control connection. On a rerun
 * (`rerun`), a once-only step that the interrupted run had already done —
 * DDL is atomic, but recording that it ran is a second statement — is
 * recognised by its own "already done" errors and passed over, saying so.
 * A quick statement that locks a live table waits for its readers politely
 * (`locks`: load/lockWait.ts).
 */
export async function runSteps(control: Queryable, steps: readonly Step[], what: string, values: RunValues, rerun: boolean, events: EventHub, locks?: Omit<LockWaitOptions, 'note'>): Promise<void> {
  const note = (message: string): void => events.emit({ type: 'note', message: `${what}: ${message}` });
  for (const s of steps) {
    const sql = sqlOf(s.op, values);
    try {
      await queryOp(control, s.op, sql, locks && { ...locks, note });
    } catch (err) {
      const errno = (err as { errno?: number }).errno;
      if (rerun && errno !== undefined && alreadyDoneErrnos(s.op).includes(errno)) {
        events.emit({ type: 'note', message: `${what}: the interrupted run had already done this (${(err as Error).message}): ${sql.slice(0, 120)}` });
        continue;
      }
      throw toFlatloadError(err, `${what} (${s.reason})`);
    }
  }
}

/**
 * The SQL each chunk runs right before and after its load statement. A
 * MyRocks chunk that an interrupted bulk load may have touched is reloaded
 * without bulk load: deleting its key range leaves tombstones, and RocksDB
 * refuses to ingest a file overlapping them (ER_OVERLAPPING_KEYS). Through
 * the memtable, committing in the middle, it stays within the row-lock
 * limit; its key range still makes it exactly-once. With one stream in file
 * order only the first chunk not done can have been touched.
 */
export function chunkStepsFor(plan: LoadPlan, cp: CheckpointContext, resuming: boolean): { before: (c: CutChunk) => string[]; after: (c: CutChunk) => string[]; notBulk: ReadonlySet<number> } {
  const notBulk = new Set<number>();
  if (resuming && plan.chunkBefore.some((s) => s.op.kind === 'bulk-load')) notBulk.add(firstNotDone(cp));
  const withoutBulk = (steps: readonly Step[], middle: boolean): Step[] => [
    ...steps.filter((s) => s.op.kind !== 'bulk-load'),
    step({ kind: 'commit-in-the-middle', on: middle }, 'reloading a chunk an interrupted bulk load touched'),
  ];
  const render = (steps: readonly Step[], middle: boolean) => (c: CutChunk): string[] => (notBulk.has(c.index) ? withoutBulk(steps, middle) : steps).map((s) => sqlOf(s.op));
  return { before: render(plan.chunkBefore, true), after: render(plan.chunkAfter, false), notBulk };
}
