/**
 * The one job ladder (docs/jobs.md). Every kind of job — a table, a Spider
 * table routed to its backends, a whole export — is a set of hooks, one per
 * rung, and `climb` runs them in order: held → found (fresh | resume |
 * done) → prepared → started → loaded → reported → verified → finished, or
 * stopped (failed | interrupted). Recording a stop, adding the command that
 * resumes it and releasing what the job holds happen here and nowhere else.
 */
import { toFlatloadError } from '../db/errors.js';
import type { FlatloadError } from '../errors/index.js';

export const RUNGS = ['held', 'found', 'prepared', 'started', 'loaded', 'reported', 'verified', 'finished'] as const;
export type Rung = (typeof RUNGS)[number];
/** Which job this run is: a new one, the unfinished one it continues, or one already finished. */
export type Found = 'fresh' | 'resume' | 'done';
export type Stopped = 'failed' | 'interrupted';

/** The state a stop leaves the job in: an interruption resumes as it was, anything else failed. */
export function stoppedState(e: FlatloadError): Stopped {
  return e.code === 'INTERRUPTED' ? 'interrupted' : 'failed';
}

/** Where a kind of job records its stops, which differ in what the rungs below the ladder already record. */
export interface StopRules {
  /** The rungs whose thrown errors are recorded as the job's stop. */
  readonly recordThrownIn: readonly Rung[];
  /** The load records the stops it comes through itself (a table's apply step, with its partial-chunk hint). */
  readonly loadRecordsItsStops: boolean;
  /** A mismatch found by the verify rung keeps the job from finishing (an export publishes only a matching set). */
  readonly verifyGatesFinish: boolean;
  /** From this rung on (its row written by then), a thrown error carries the command that resumes the job too; null: never. */
  readonly resumeThrownFrom: Rung | null;
}

export interface LadderJob<R> {
  readonly kind: 'table' | 'spider-direct' | 'export';
  /** What a thrown error no rung mapped is said to have happened while doing. */
  readonly doing: string;
  readonly rules: StopRules;
  /** held: the job's lock taken (and on Galera its lease) — or, in a dry run, nothing held. */
  hold(): Promise<void>;
  /** found: fresh, resume or done; the job's stored state read (nothing written in a dry run). */
  find(): Promise<Found>;
  /** The result without loading, when the climb ends at found (already done, or a dry run). */
  endsAtFound(found: Found): Promise<R | undefined>;
  prepare(): Promise<void>;
  /** started: the job recorded as running (a table's from prepared on), so that a stop from here on resumes. */
  start(): Promise<void>;
  /** loaded: the rows in; a stop the load came through (committing what it could) is returned, not thrown. */
  load(): Promise<FlatloadError | undefined>;
  report(stoppedBy: FlatloadError | undefined): Promise<void>;
  /** verified: --verify and the exporter's figures; a mismatch is returned. */
  verify(): Promise<FlatloadError | undefined>;
  finish(): Promise<void>;
  /** Writes the stopped state to the job's bookkeeping. */
  mark(state: Stopped, e: FlatloadError): Promise<void>;
  /** The error with the command that resumes the job, when a rerun can finish it. */
  withResume(e: FlatloadError): FlatloadError;
  /** The job's result, ending with `error` if it is one. */
  result(error: FlatloadError | undefined): R;
  /** Always, at the end; `thrown` when the climb ended in one. */
  release(thrown: FlatloadError | undefined): Promise<void>;
}

/** Climbs the job's rungs in order; see the header. */
export async function climb<R>(job: LadderJob<R>): Promise<R> {
  let at: Rung = 'held';
  let thrown: FlatloadError | undefined;
  const step = async <T>(rung: Rung, hook: () => Promise<T>): Promise<T> => {
    at = rung;
    return hook();
  };
  try {
    await step('held', () => job.hold());
    const found = await step('found', () => job.find());
    const early = await job.endsAtFound(found);
    if (early !== undefined) return early;
    await step('prepared', () => job.prepare());
    await step('started', () => job.start());
    const stoppedBy = await step('loaded', () => job.load());
    await step('reported', () => job.report(stoppedBy));
    if (stoppedBy) {
      if (!job.rules.loadRecordsItsStops) await job.mark(stoppedState(stoppedBy), stoppedBy);
      return job.result(job.withResume(stoppedBy));
    }
    const mismatch = await step('verified', () => job.verify());
    if (mismatch && job.rules.verifyGatesFinish) {
      await job.mark(stoppedState(mismatch), mismatch);
      return job.result(mismatch);
    }
    await step('finished', () => job.finish());
    return job.result(mismatch);
  } catch (err) {
    const fe = toFlatloadError(err, job.doing);
    thrown = fe;
    // Whatever stopped it, the bookkeeping must not go on saying the job is running.
    if (job.rules.recordThrownIn.includes(at)) await job.mark(stoppedState(fe), fe).catch(() => undefined);
    const from = job.rules.resumeThrownFrom;
    throw from !== null && RUNGS.indexOf(at) >= RUNGS.indexOf(from) ? job.withResume(fe) : fe;
  } finally {
    await job.release(thrown);
  }
}
