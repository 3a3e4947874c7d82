/**
 * The job row follows what a long step before the first chunk is doing (a
 * scan, a sort), so that `flatload status` shows how far it is.
 */
import { activityDue, type Activity } from '../report/activity.js';
import type { CheckpointStore } from '../checkpoint/store.js';

/** How often the step's progress is read (written only when activityDue says so). */
const LOOK_EVERY_MS = 250;

/**
 * Waits for `work`, writing `progress()` to the job's row meanwhile; the last
 * write is done before it returns or throws, so it cannot land after the
 * row's next update (which records the stop, or the end of the scan).
 */
export async function followingActivity<T>(work: Promise<T>, progress: () => Activity, store: CheckpointStore, jobId: string): Promise<T> {
  let last: { activity: Activity; atMs: number } | undefined;
  let writing: Promise<void> | undefined;
  const look = (): void => {
    // One write at a time: a connection being replaced holds this one, and the next reading goes after it.
    if (writing) return;
    const activity = progress();
    if (!activityDue(last, activity, Date.now())) return;
    last = { activity, atMs: Date.now() };
    // Progress that cannot be written is not the load's failure: the row's next update, which must succeed, tells.
    writing = store
      .update(jobId, { activity })
      .catch(() => undefined)
      .finally(() => (writing = undefined));
  };
  const timer = setInterval(look, LOOK_EVERY_MS);
  try {
    return await work;
  } catch (err) {
    // Where it stopped, whatever the interval: a failure seconds into a sort is recorded as one during the sort.
    clearInterval(timer);
    await writing;
    const activity = progress();
    if (!last || activityDue(last, activity, Infinity)) await store.update(jobId, { activity }).catch(() => undefined);
    throw err;
  } finally {
    clearInterval(timer);
    await writing;
  }
}
