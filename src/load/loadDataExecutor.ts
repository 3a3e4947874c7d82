import type { CharsetInfo } from '../chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import { chunkPlace, type CutChunk } from '../chunking/types.js';
import { FlatloadError } from '../errors/index.js';
import type { EventHub } from '../report/events.js';
import type { ErrorBudget } from './budget.js';
import type { ChunkSource, SentRecord } from './chunkSource.js';
import { commitChunk } from './commit.js';
import { bulkAbandoned, takingBulkPath } from './bulkInsert.js';
import { ChunkTxn } from './chunkTxn.js';
import type { CommitScope } from '../plan/types.js';
import type { RejectedRow } from '../report/rejectFile.js';
import { isolateBadRows } from './isolate.js';
import { refusedResult, runLoadData, type LoadDataResult } from './loadData.js';
import type { ChunkContext, ChunkExecutor, ChunkOutcome } from './runner.js';
import { describeWarnings, refusedRow, warningRow, type ServerWarning } from './warnings.js';

export interface LoadDataExecutorOptions {
  input: ChunkSource;
  file: string;
  /** The LOAD DATA statement for a file token. */
  sql: (fileToken: string) => string;
  /** Statements before a LOAD of the chunk's records from `firstRecordInChunk` on (the surrogate key counter). */
  pre: (chunk: CutChunk, firstRecordInChunk: number) => string[];
  scope: CommitScope;
  /** The plan's statements right before and right after each chunk's load (checked). */
  chunkBefore: (chunk: CutChunk) => readonly string[];
  chunkAfter: (chunk: CutChunk) => readonly string[];
  pieceBytes: number;
  maxWarnings: number;
  events: EventHub;
  scan: { format: ScanFormat; charset: CharsetInfo; targets: ScanTargets | undefined };
  /** Duplicates skipped under --on-duplicate ignore/replace are expected, not problems. */
  duplicatesExpected: boolean;
  /** Warnings that reject a row (warnings.ts problemPolicy). */
  isProblem: (w: ServerWarning) => boolean;
  budget: ErrorBudget;
  /** Runs inside the chunk's transaction just before COMMIT (resume bookkeeping, rejects included). */
  beforeCommit: (chunk: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome, rejects: RejectedRow[]) => Promise<void>;
  /** After COMMIT: the chunk's rejects go to the reject file. */
  afterCommit: (chunk: CutChunk, rejects: RejectedRow[]) => Promise<void>;
}


/**
 * One chunk through LOAD DATA LOCAL: load it whole; if the server's warnings
 * show skipped or changed rows, roll back to the chunk's savepoint and
 * isolate the bad rows (they go to the reject file, within --max-errors);
 * commit the good rows together with the chunk's bookkeeping.
 */
export function loadDataExecutor(o: LoadDataExecutorOptions): ChunkExecutor {
  // The load's one transaction (scope 'load') is checked to have taken the bulk path at its first statement.
  let bulkChecked = o.scope !== 'load';
  return async (chunk, ctx) => {
    const txn = new ChunkTxn(ctx.conn, o.scope);
    let done = false;
    try {
      const load = (): Promise<LoadDataResult> => loadWhole(o, chunk, ctx, txn);
      const result = bulkChecked ? await load() : await takingBulkPath(ctx.conn, chunk.index, load);
      bulkChecked = true;
      ctx.setState('checking');
      checkRecordCount(o, chunk, result);
      const { outcome, rejects } = await settle(o, chunk, ctx, txn, result);
      await commitChunk({ chunk, ctx, outcome, rejects, budget: o.budget, file: o.file, commit: () => txn.commit(), beforeCommit: o.beforeCommit, afterCommit: o.afterCommit });
      done = true;
      return outcome;
    } finally {
      if (!done) await txn.abort();
    }
  };
}

/** The chunk's transaction begun, its statements before, the LOAD DATA of all its records, its statements after. */
async function loadWhole(o: LoadDataExecutorOptions, chunk: CutChunk, ctx: ChunkContext, txn: ChunkTxn): Promise<LoadDataResult> {
  const { conn } = ctx;
  const fileToken = `flatload-chunk-${chunk.index}`;
  await txn.begin();
  for (const p of o.pre(chunk, 0)) await conn.query(p);
  for (const sql of o.chunkBefore(chunk)) await conn.query(sql);
  let result: LoadDataResult;
  try {
    result = await runLoadData({
      conn,
      sql: o.sql(fileToken),
      fileToken,
      open: () => o.input.open(chunk, o.pieceBytes),
      onBytes: (bytes) => o.events.emit({ type: 'chunk-bytes', chunk: chunk.index, bytes }),
      maxWarnings: o.maxWarnings,
    });
  } catch (err) {
    // Where the chunk cannot be rolled back, the rows before the stop are in the table: the error stops the load as it is.
    const refused = o.scope === 'load' || !txn.canRollBack ? undefined : refusedRow(err);
    if (!refused) throw err;
    return refusedResult(chunk.records, refused);
  }
  for (const sql of o.chunkAfter(chunk)) await conn.query(sql);
  return result;
}

/** The server read as many records as the scan found, or the input changed, or the format options do not match it. */
function checkRecordCount(o: LoadDataExecutorOptions, chunk: CutChunk, result: LoadDataResult): void {
  if (chunk.records < 0 || result.info.records === chunk.records) return;
  const changed = o.input.changed();
  if (changed) {
    throw new FlatloadError('INPUT_CHANGED', `the input changed while it was being loaded: ${changed} (the server read ${result.info.records} records in chunk ${chunk.index} where there were ${chunk.records})`, {
      file: o.file,
      ...chunkPlace(chunk),
      chunk: chunk.index,
      hint: 'load a file that nothing writes to meanwhile (copy it first); the rerun refuses to resume over a changed file',
    });
  }
  throw new FlatloadError(
    'INPUT_MALFORMED',
    `the server read ${result.info.records} records in chunk ${chunk.index} where flatload found ${chunk.records}: the format options do not match the file`,
    {
      file: o.file,
      ...chunkPlace(chunk),
      chunk: chunk.index,
      hint: 'check --fields-terminated-by, --lines-terminated-by, --fields-enclosed-by and --character-set',
    },
  );
}

interface Settled {
  outcome: ChunkOutcome;
  rejects: RejectedRow[];
}

/** What the chunk's load comes to: every row in, or the bad rows isolated (or the load stopped over them). */
async function settle(o: LoadDataExecutorOptions, chunk: CutChunk, ctx: ChunkContext, txn: ChunkTxn, result: LoadDataResult): Promise<Settled> {
  const problems = result.warnings.filter(o.isProblem);
  const dupSkips = o.duplicatesExpected ? 0 : result.info.skipped;
  if (problems.length === 0 && dupSkips === 0 && !result.warningsTruncated) {
    const records = chunk.records >= 0 ? chunk.records : result.info.records;
    const rowsLoaded = records - (o.duplicatesExpected ? result.info.skipped : 0);
    return { outcome: { records, rowsLoaded, rejected: 0, warnings: result.warnings.length, bytes: result.bytesSent }, rejects: [] };
  }
  // Warnings the server raised but did not keep (beyond max_error_count) may be problems too.
  const unseen = Math.max(0, result.info.warnings - result.warnings.length);
  // Rows the server names ("at row N") are counted in the order they were sent.
  const locate = async (): Promise<SentRecord[]> => (await o.input.records(chunk)).records;
  if (o.scope === 'load') {
    // The load by chunks that follows names the rows: the whole input in one chunk is too large to read back for it here.
    const first = problems[0];
    const what = first ? `, the first: [${first.code}] ${first.message}` : dupSkips ? `: ${dupSkips} duplicate-key row(s)` : '';
    throw bulkAbandoned(`the server skipped or changed ${problems.length + unseen || dupSkips} row(s) in chunk ${chunk.index}${what}`, { file: o.file, chunk: chunk.index });
  }
  if (!txn.canRollBack) {
    throw new FlatloadError(
      'ROWS_REJECTED',
      `chunk ${chunk.index} has rows the server skipped or changed, and this engine cannot roll a chunk back, so they are in the table:\n${describeWarnings(problems, await locate(), problems.length + unseen)}`,
      { file: o.file, chunk: chunk.index, ...chunkPlace(chunk), hint: 'fix the rows and load into a transactional (InnoDB) table, or reload after emptying the table' },
    );
  }
  // A duplicate key's warning (1062) names no row: isolating the chunk finds it, and the budget then stops the load there.
  const named = dupSkips === 0 && unseen === 0 && problems.length > 0 && problems.every((w) => warningRow(w.message) !== undefined);
  if (o.budget.max === 0 && named) {
    // The first bad row stops the load: no need to isolate the rest of the chunk.
    await txn.abort();
    const recs = await locate();
    const first = problems.map((w) => recs[(warningRow(w.message) ?? 0) - 1]).find((r) => r !== undefined);
    throw new FlatloadError(
      'ROWS_REJECTED',
      `the server skipped or changed row(s) in chunk ${chunk.index} (--max-errors 0); the chunk was rolled back and the load stopped:\n${describeWarnings(problems, recs)}`,
      { file: o.file, chunk: chunk.index, ...(first ? { line: first.line, byteOffset: first.offset } : chunkPlace(chunk)), hint: 'fix the rows, or allow some with --max-errors N (they go to the reject file), then rerun to resume' },
    );
  }
  return isolate(o, chunk, ctx, txn, result);
}

/** Rolls the chunk back to its start and loads it again in pieces, the rows the server rejects set aside. */
async function isolate(o: LoadDataExecutorOptions, chunk: CutChunk, ctx: ChunkContext, txn: ChunkTxn, result: LoadDataResult): Promise<Settled> {
  await txn.rollbackToStart();
  o.events.emit({ type: 'chunk-rolled-back', chunk: chunk.index, reason: 'isolating rows the server skipped or changed' });
  ctx.setState('isolating');
  const sent = await o.input.records(chunk);
  const recs = sent.records;
  const iso = await isolateBadRows({
    conn: ctx.conn,
    chunk,
    bytes: sent.bytes,
    records: recs,
    sql: o.sql,
    pre: (first) => o.pre(chunk, first),
    pieceBytes: o.pieceBytes,
    maxWarnings: o.maxWarnings,
    isProblem: o.isProblem,
    duplicatesAreProblems: !o.duplicatesExpected,
    onBytes: () => undefined,
  });
  const rejects = iso.rejects;
  return { outcome: { records: recs.length, rowsLoaded: iso.rowsLoaded, rejected: rejects.length, warnings: iso.warnings, bytes: result.bytesSent }, rejects };
}
