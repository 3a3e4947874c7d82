import { selectNumber } from '../db/rows.js';
import { firstNotDone, type CheckpointContext, type ResumedChunk } from './resume.js';
import { locateRecords } from '../chunking/records.js';
import type { CutChunk } from '../chunking/types.js';
import { FlatloadError } from '../errors/index.js';
import { ER } from '../db/errnos.js';
import type { Prepared } from '../introspect/target.js';
import { sqlOf } from '../plan/ops.js';
import type { LoadPlan } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import { decodeRejects, type RejectedRow } from '../report/rejectFile.js';
import type { ChunkSource } from './chunkSource.js';
import { chunkKeyRange } from './keyRange.js';
import type { RejectKeeper } from './rejects.js';
import type { ChunkContext, ChunkExecutor, ChunkOutcome } from './runner.js';

export interface GuardOptions {
  plan: LoadPlan;
  prep: Prepared;
  input: ChunkSource;
  cp: CheckpointContext;
  events: EventHub;
  executor: ChunkExecutor;
  /** Chunks reloaded without MyRocks bulk load (see steps.ts). */
  notBulk: ReadonlySet<number>;
  /** Records of a chunk an interrupted statement left in a table that cannot roll back. */
  partial: { index: number; skip: number } | undefined;
  resuming: boolean;
  beforeCommit: (chunk: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome, rejects: RejectedRow[]) => Promise<void>;
  rejects: RejectKeeper;
}

/**
 * What runs around each chunk so that it lands exactly once:
 * - A chunk-scoped transaction holds a named lock from before START
 *   TRANSACTION until after COMMIT. A session that lost its client (a
 *   dropped connection, a killed flatload) releases it only once the server
 *   has rolled its transaction back or finished committing it, so a retry,
 *   or a resumed run, that takes the lock and then reads the chunk's
 *   bookkeeping row knows for sure whether the chunk landed: the connection
 *   may die after the server committed but before the client heard.
 * - A resumed load first runs the plan's resume step for the chunk (delete
 *   its key range), and for a table that cannot roll back sends only the
 *   records of the interrupted chunk that did not land.
 */
export function guardChunks(g: GuardOptions): ChunkExecutor {
  const { plan, cp, events } = g;
  const lockName = (chunk: CutChunk): string => `flatload:${cp.jobId}:${chunk.index}`;
  // One stream loads the chunks in order: only the first not done can hold rows of an interrupted attempt. A later
  // chunk's range may start at the key the chunk before it ends with (the input repeats it across the cut), and
  // deleting it would remove that chunk's committed row. Over several streams the ranges are pre-assigned, disjoint.
  const interrupted = firstNotDone(cp);
  const mayHoldRows = (chunk: CutChunk): boolean => plan.concurrency > 1 || chunk.index === interrupted;

  const withResumeFixups: ChunkExecutor = async (chunk, ctx) => {
    if (g.resuming && mayHoldRows(chunk)) {
      for (const s of plan.onResume) {
        if (s.op.kind !== 'delete-key-range') continue;
        const keyRange = await chunkKeyRange(plan, chunk, g.input, g.prep);
        if (!keyRange) continue;
        const [res] = await ctx.conn.query(sqlOf(s.op, { keyRange }));
        const deleted = Number((res as { affectedRows?: number }).affectedRows ?? 0);
        if (g.notBulk.has(chunk.index)) {
          events.emit({ type: 'note', message: `chunk ${chunk.index}: removed the ${deleted} row(s) an interrupted attempt had loaded; loading it without bulk load` });
        }
      }
    }
    const partial = g.partial;
    if (!partial || chunk.index !== partial.index) return g.executor(chunk, ctx);
    // Only the records the interrupted statement did not get to.
    const bytes = await g.input.readAll(chunk);
    const recs = locateRecords(bytes, chunk.startByte, chunk.firstLine, g.prep.scan, g.prep.charset, g.prep.targets);
    if (partial.skip > recs.length) throw new FlatloadError('RESUME_MISMATCH', `the table holds ${partial.skip} more rows than chunk ${chunk.index} has records`, { chunk: chunk.index });
    const original = { startByte: chunk.startByte, records: chunk.records, skipped: partial.skip };
    const from = recs[partial.skip];
    if (!from) {
      // The whole chunk landed before the crash; only its bookkeeping row is missing.
      await g.beforeCommit({ ...chunk, original } as ResumedChunk, ctx, { records: 0, rowsLoaded: 0, rejected: 0, warnings: 0, bytes: 0 }, []);
      return { records: partial.skip, rowsLoaded: partial.skip, rejected: 0, warnings: 0, bytes: 0 };
    }
    const rest: ResumedChunk = {
      ...chunk,
      startByte: from.offset,
      firstLine: from.line,
      firstRecord: chunk.firstRecord + partial.skip,
      records: chunk.records - partial.skip,
      original,
    };
    const out = await g.executor(rest, ctx);
    return { ...out, records: out.records + partial.skip, rowsLoaded: out.rowsLoaded + partial.skip };
  };

  /** The outcome of a chunk another session committed (its bookkeeping row exists), or undefined. */
  const committedElsewhere = async (chunk: CutChunk, why: string): Promise<ChunkOutcome | undefined> => {
    const d = await cp.store.doneChunk(cp.jobId, chunk.index);
    if (!d) return undefined;
    events.emit({ type: 'note', message: `chunk ${chunk.index}: ${why}; not loaded again` });
    g.rejects.keep(decodeRejects(d.rejects, d.index));
    return { records: d.records, rowsLoaded: d.rowsLoaded, rejected: d.rejected, warnings: 0, bytes: d.endByte - d.startByte };
  };

  const underChunkLock: ChunkExecutor = async (chunk, ctx) => {
    if ((await selectNumber(ctx.conn, 'SELECT GET_LOCK(?, 60) AS got', [lockName(chunk)])) !== 1) {
      throw new FlatloadError('CONNECTION_LOST', `chunk ${chunk.index}: an earlier session still holds it after 60 s; cannot tell whether it committed`, { chunk: chunk.index });
    }
    try {
      if (ctx.attempt > 1 || cp.resumed) {
        const done = await committedElsewhere(chunk, 'committed by a session whose connection was lost before it heard');
        if (done) return done;
      }
      try {
        return await withResumeFixups(chunk, ctx);
      } catch (err) {
        // On a Galera cluster the named lock is node-local: a session on another node may have committed this chunk
        // after it was looked up. Its bookkeeping row's key then refuses this one (1062), and the chunk rolled back.
        // Whichever row the 1062 was about, a chunk whose bookkeeping row exists is in the table.
        const dup = (err as { errno?: number }).errno === ER.DUP_ENTRY;
        const done = dup ? await committedElsewhere(chunk, 'committed meanwhile by a session on another node') : undefined;
        if (done) return done;
        throw err;
      }
    } finally {
      await ctx.conn.query('DO RELEASE_LOCK(?)', [lockName(chunk)]).catch(() => undefined);
    }
  };

  return plan.commitScope === 'chunk' ? underChunkLock : withResumeFixups;
}
