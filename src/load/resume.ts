import type { CheckpointStore, DoneChunk, JobPhase } from '../checkpoint/store.js';
import type { CutChunk } from '../chunking/types.js';
import type { Queryable } from '../db/control.js';
import { quoteId, quoteQualified, quoteString } from '../db/quote.js';
import { parseRecord } from '../input/fields.js';
import type { EventHub } from '../report/events.js';
import type { ChunkInput } from './chunkInput.js';
import { keySpecOf } from './keyOrder.js';
import type { Prepared } from './prepare.js';
import { FlatloadError } from '../errors/index.js';
import type { LoadPlan } from '../plan/types.js';

/** The job's resume bookkeeping, as the apply step needs it. */
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
  const [r] = await control.query(`SELECT COUNT(*) AS n FROM ${quoteQualified(plan.loadTarget.db, plan.loadTarget.table)}`);
  const actual = Number((r as Array<{ n: number }>)[0]!.n);
  const expected = cp.rowsBefore + [...cp.done.values()].reduce((a, d) => a + d.rowsLoaded, 0);
  if (actual < expected) {
    throw new FlatloadError('RESUME_MISMATCH', `the table holds ${actual} rows but the interrupted load had committed ${expected - cp.rowsBefore} to the ${cp.rowsBefore} it started with: rows were deleted since`, {
      hint: 'rerun with --restart (and empty the table first, or use --mode replace)',
    });
  }
  if (actual === expected) return undefined;
  let next = 0;
  while (cp.done.has(next)) next++;
  return { index: next, skip: actual - expected };
}

/**
 * Skips chunks an earlier run committed, after checking they are the same
 * chunks (same byte range and record count; the job's identity already
 * vouches for the input's content).
 */
export async function* skippingDone(chunks: AsyncIterable<CutChunk>, done: Map<number, DoneChunk>, file: string): AsyncGenerator<CutChunk & { alreadyDone?: boolean }> {
  for await (const c of chunks) {
    const d = done.get(c.index);
    if (!d) {
      yield c;
      continue;
    }
    if (d.startByte !== c.startByte || d.endByte !== c.endByte || d.records !== c.records) {
      throw new FlatloadError('RESUME_MISMATCH', `chunk ${c.index} is not what the interrupted run committed: the input changed`, {
        file,
        chunk: c.index,
        byteOffset: c.startByte,
        hint: 'rerun with --restart to discard the earlier run (its committed rows stay in the table)',
      });
    }
    yield { ...c, alreadyDone: true };
  }
}


/**
 * A plan whose chunks cannot be told apart after a crash (MyRocks unsorted
 * bulk load, parallel MyISAM): a resume empties the table and starts again —
 * but only when the load started on an empty table; otherwise it refuses,
 * since emptying would delete rows that were there before.
 */
export async function restartIfRequired(control: Queryable, plan: LoadPlan, cp: CheckpointContext, events: EventHub): Promise<boolean> {
  const resumed = cp.done.size > 0 || cp.phase !== 'created';
  if (!resumed || plan.guarantee.kind !== 'restart-required' || cp.phase === 'finished') return false;
  const t = quoteQualified(plan.loadTarget.db, plan.loadTarget.table);
  if (cp.rowsBefore !== 0) {
    throw new FlatloadError('RESUME_MISMATCH', `this load cannot resume: ${plan.guarantee.text}; and ${t} had rows before the load started, which emptying it would delete`, {
      hint: 'remove the rows this load added yourself, then rerun with --restart; or load with --mode replace or swap',
    });
  }
  await control.query(`TRUNCATE TABLE ${t}`);
  await cp.store.clearChunks(cp.jobId);
  cp.done.clear();
  events.emit({ type: 'note', message: `this plan cannot resume part-way (${plan.guarantee.kind}): emptied ${t}, which was empty when the load started, and loading from the first record` });
  return true;
}

function sqlValue(v: Buffer | null | undefined, numeric: boolean): string {
  if (v === null || v === undefined) return 'NULL';
  const text = v.toString('utf8');
  return numeric && /^-?\d+(\.\d+)?$/.test(text) ? text : quoteString(text);
}

/**
 * The DELETE that removes whatever an interrupted attempt at this chunk left
 * in the table, for plans that guarantee exactly-once by key range: the
 * chunk's pre-assigned keys, or (key-ordered input) the range between its
 * first and last record's clustered key.
 */
export async function keyRangeDelete(plan: LoadPlan, chunk: CutChunk, input: ChunkInput, prep: Prepared, firstKey: bigint | undefined): Promise<string | undefined> {
  const t = quoteQualified(plan.loadTarget.db, plan.loadTarget.table);
  if (plan.surrogateKey?.kind === 'pre-assign' && firstKey !== undefined) {
    const lo = firstKey + BigInt(chunk.firstRecord);
    const hi = lo + BigInt(chunk.records) - 1n;
    return `DELETE FROM ${t} WHERE ${quoteId(plan.surrogateKey.column)} BETWEEN ${lo} AND ${hi}`;
  }
  const cols = plan.guarantee.keyColumns;
  const spec = cols ? keySpecOf(prep.table, plan.columns) : undefined;
  if (!cols || !spec || chunk.records <= 0) return undefined;
  const { bytes, records } = await input.records(chunk);
  const ends = [records[0]!, records[records.length - 1]!];
  const [lo, hi] = ends.map((r) => {
    const values = parseRecord(bytes, r.pos, r.pos + r.length, prep.scan, prep.charset, prep.targets).values;
    return spec.fields.map((f, i) => sqlValue(values[f], spec.numeric[i] === true));
  });
  const tuple = `(${cols.map(quoteId).join(', ')})`;
  return `DELETE FROM ${t} WHERE ${tuple} >= (${lo!.join(', ')}) AND ${tuple} <= (${hi!.join(', ')})`;
}
