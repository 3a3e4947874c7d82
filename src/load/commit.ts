import type { CutChunk } from '../chunking/types.js';
import type { ErrorBudget } from './budget.js';
import type { RejectedRow } from '../report/rejectFile.js';
import type { ChunkContext, ChunkOutcome } from './runner.js';
import { collapseRepeats, counted } from './warnings.js';

export interface CommitArgs {
  chunk: CutChunk;
  ctx: ChunkContext;
  outcome: ChunkOutcome;
  rejects: RejectedRow[];
  budget: ErrorBudget;
  file: string;
  /** Ends the chunk's transaction (COMMIT, or releases its savepoint). */
  commit: () => Promise<void>;
  beforeCommit: (chunk: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome, rejects: RejectedRow[]) => Promise<void>;
  afterCommit: (chunk: CutChunk, rejects: RejectedRow[]) => Promise<void>;
}

/**
 * The end of every chunk, whatever the strategy: reserve its rejects in the
 * error budget (throws when over), write its bookkeeping row inside its
 * transaction, COMMIT, then hand the rejects to the reject file. A failure
 * before COMMIT gives the reservation back; the caller rolls back.
 */
export async function commitChunk(a: CommitArgs): Promise<void> {
  const first = a.rejects[0];
  const release = a.budget.reserve(
    a.rejects.length,
    { file: a.file, chunk: a.chunk.index, ...(first ? { line: first.line, byteOffset: first.byteOffset } : {}) },
    describeRejects(a.rejects),
  );
  try {
    await a.beforeCommit(a.chunk, a.ctx, a.outcome, a.rejects);
    a.ctx.setState('committing');
    await a.commit();
  } catch (err) {
    release();
    throw err;
  }
  await a.afterCommit(a.chunk, a.rejects);
}

export function describeRejects(rejects: readonly RejectedRow[], limit = 10): string {
  const lines = rejects.slice(0, limit).map((r) => `    line ${r.line} (byte offset ${r.byteOffset}): ${collapseRepeats(r.errors.map((e) => `[${e.code}] ${e.message}`)).map(counted).join('; ')}`);
  if (rejects.length > limit) lines.push(`    … and ${rejects.length - limit} more`);
  return lines.join('\n');
}
