/**
 * What a resumed table load skips and checks, from what checkpoint/ stored:
 * the chunks an earlier run committed, and (engines that cannot roll back)
 * the prefix of an interrupted chunk already in the table.
 */
import type { LoadMode } from '../config/loadOptions.js';
import { selectNumber } from '../db/rows.js';
import type { CheckpointStore, DoneChunk, JobPhase } from '../checkpoint/store.js';
import type { CutChunk } from '../chunking/types.js';
import type { Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';
import { CHUNK_DIGEST, digestKindOf, type DigestKind } from '../input/digest.js';
import type { LoadPlan } from '../plan/types.js';

/** The job's resume bookkeeping, as the load needs it. */
export interface CheckpointContext {
  store: CheckpointStore;
  schema: string;
  jobId: string;
  /** Chunks an earlier run committed. */
  done: Map<number, DoneChunk>;
  phase: JobPhase;
  keepHistory: boolean;
  /** This run continues an interrupted one (its DDL may have run already). */
  resumed: boolean;
  /** Rows the table held when the job started (engines that cannot roll back a chunk). */
  rowsBefore: number | null;
  /** The load target's fingerprint once it was prepared: a resume checks the table is still that one. */
  tableFingerprint: string | null;
}

/** A chunk resumed after a crash left its first `skipped` records in a non-transactional table. */
export type ResumedChunk = CutChunk & { original?: { startByte: number; records: number; skipped: number } };

/**
 * For engines that cannot roll back (MyISAM, Aria): with one stream, a chunk
 * interrupted mid-statement left a prefix of its records in the table. The
 * table's row count against the bookkeeping says how many.
 */
export async function landedPrefix(control: Queryable, plan: LoadPlan, cp: CheckpointContext): Promise<{ index: number; skip: number } | undefined> {
  if (plan.guarantee.kind !== 'exactly-once-by-row-count' || cp.rowsBefore === null || (cp.done.size === 0 && cp.phase === 'created')) return undefined;
  const actual = await selectNumber(control, `SELECT COUNT(*) AS n FROM ${quoteQualified(plan.loadTarget.db, plan.loadTarget.table)}`);
  const expected = cp.rowsBefore + [...cp.done.values()].reduce((a, d) => a + d.rowsLoaded, 0);
  if (actual < expected) {
    throw new FlatloadError('RESUME_MISMATCH', `the table holds ${actual} rows but the interrupted load had committed ${expected - cp.rowsBefore} to the ${cp.rowsBefore} it started with: rows were deleted since`, {
      hint: 'rerun with --restart (and empty the table first, or use --mode replace)',
    });
  }
  if (actual === expected) return undefined;
  return { index: firstNotDone(cp), skip: actual - expected };
}

/** The first chunk no run committed: with one stream in file order, the only one an interrupted attempt can have touched. */
export function firstNotDone(cp: Pick<CheckpointContext, 'done'>): number {
  let next = 0;
  while (cp.done.has(next)) next++;
  return next;
}

/**
 * The digest a streamed input's chunks are taken with: the one the job's
 * committed chunks were stored with, so they compare. A job an older flatload
 * started keeps SHA-1 for every chunk (its rerun stores SHA-1 for new chunks
 * too, so the job stays of one kind); any other, BLAKE3.
 */
export function chunkDigestKind(done: ReadonlyMap<number, DoneChunk>): DigestKind {
  for (const d of done.values()) if (d.digest !== null) return digestKindOf(d.digest, CHUNK_DIGEST);
  return 'blake3';
}

/** How a refusal to resume offers --restart: only an append leaves the discarded run's rows in the table (replace empties it again, swap makes its shadow anew). */
export function restartHint(mode: LoadMode): string {
  return mode === 'append' ? 'add --restart to discard it (its committed rows stay in the table, so remove them first if this run loads the same rows)' : 'add --restart to discard it';
}

/**
 * Skips chunks an earlier run committed, after checking they are the same
 * chunks (same byte range and record count, and the same bytes where the
 * commit stored their digest: a streamed input, which no identity vouches
 * for). Skip-and-verify comes first: a chunk not committed that comes before
 * the last committed one is held back until every committed chunk has been
 * checked, so no new chunk loads from an input found different later on.
 */
export async function* skippingDone(chunks: AsyncIterable<CutChunk>, done: Map<number, DoneChunk>, file: string, mode: LoadMode): AsyncGenerator<CutChunk & { alreadyDone?: boolean }> {
  let last = -1;
  for (const i of done.keys()) last = Math.max(last, i);
  const held: CutChunk[] = [];
  let seen = 0;
  for await (const c of chunks) {
    const d = done.get(c.index);
    if (!d) {
      if (c.index < last) held.push(c);
      else yield* [...held.splice(0), c];
      continue;
    }
    const digest = (c as { digest?: string }).digest;
    const bytesDiffer = d.digest !== null && digest !== undefined && d.digest !== digest;
    if (d.startByte !== c.startByte || d.endByte !== c.endByte || d.records !== c.records || bytesDiffer) {
      throw new FlatloadError('RESUME_MISMATCH', `chunk ${c.index} is not what the interrupted run committed: the input changed${bytesDiffer ? ` (the bytes ${c.startByte}-${c.endByte} differ: digest ${d.digest!.slice(0, 12)}… then, ${digest.slice(0, 12)}… now)` : ''}`, {
        file,
        chunk: c.index,
        byteOffset: c.startByte,
        hint: `${file === 'standard input' ? 'pipe the same bytes again' : 'put the original input back'} to finish it; or ${restartHint(mode)}`,
      });
    }
    seen++;
    yield { ...c, alreadyDone: true };
    if (c.index === last) yield* held.splice(0);
  }
  if (seen < done.size) {
    throw new FlatloadError('RESUME_MISMATCH', `the input ends before chunk ${last}, which the interrupted run committed: the input changed`, {
      file,
      hint: `${file === 'standard input' ? 'pipe the same bytes again' : 'put the original input back'} to finish it; or ${restartHint(mode)}`,
    });
  }
}
