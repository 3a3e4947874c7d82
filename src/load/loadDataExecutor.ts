import type { CharsetInfo } from '../chunking/charsets.js';
import { locateRecords, type RecordLocation } from '../chunking/records.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import type { CutChunk } from '../chunking/types.js';
import { FlatloadError } from '../errors/index.js';
import type { EventHub } from '../report/events.js';
import type { ChunkInput } from './chunkInput.js';
import { runLoadData, type LoadDataResult } from './loadData.js';
import type { ChunkContext, ChunkExecutor, ChunkOutcome } from './runner.js';
import { classifyWarning, warningRow, type ServerWarning, type WarningClass } from './warnings.js';

export interface RowProblem {
  class: WarningClass;
  warning: ServerWarning;
  /** Where the row is in the input, when the warning names a row. */
  location: RecordLocation | undefined;
}

export interface LoadDataExecutorOptions {
  input: ChunkInput;
  file: string;
  /** The LOAD DATA statement for a chunk, the file token it uses, and statements to run first in the same session. */
  statementFor(chunk: CutChunk): { sql: string; fileToken: string; pre: string[] };
  /** Each chunk in its own transaction (false: the engine cannot roll back; nothing to wrap). */
  transactional: boolean;
  pieceBytes: number;
  maxWarnings: number;
  events: EventHub;
  scan: { format: ScanFormat; charset: CharsetInfo; targets: ScanTargets | undefined };
  /** Duplicates skipped under --on-duplicate ignore are expected, not problems. */
  duplicatesExpected: boolean;
  /** Value changes tolerated (--allow-truncation). */
  allowAltered: boolean;
  /** Runs inside the chunk's transaction just before COMMIT (resume bookkeeping). */
  beforeCommit?: (chunk: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome) => Promise<void>;
  /**
   * Called after the chunk was rolled back because rows were skipped or
   * changed: returns an outcome if it loaded the chunk another way
   * (isolating bad rows), or throws to stop the load.
   */
  onRowProblems: (chunk: CutChunk, ctx: ChunkContext, problems: RowProblem[], result: LoadDataResult) => Promise<ChunkOutcome>;
}

/** Maps the server's warnings to input rows (re-scanning the chunk only when there are warnings). */
export async function describeProblems(
  o: Pick<LoadDataExecutorOptions, 'input' | 'scan' | 'duplicatesExpected' | 'allowAltered'>,
  chunk: CutChunk,
  result: LoadDataResult,
): Promise<RowProblem[]> {
  const relevant = result.warnings
    .map((w) => ({ w, cls: classifyWarning(w) }))
    .filter(({ cls }) => cls !== 'note' && !(cls === 'skipped' && o.duplicatesExpected) && !(cls === 'altered' && o.allowAltered));
  if (relevant.length === 0) return [];
  let records: RecordLocation[] | undefined;
  const locate = async (row: number): Promise<RecordLocation | undefined> => {
    if (!records) {
      const bytes = await o.input.readAll(chunk);
      records = locateRecords(bytes, chunk.startByte, chunk.firstLine, o.scan.format, o.scan.charset, o.scan.targets);
    }
    return records[row - 1];
  };
  const out: RowProblem[] = [];
  for (const { w, cls } of relevant) {
    const row = warningRow(w.message);
    out.push({ class: cls, warning: w, location: row === undefined ? undefined : await locate(row) });
  }
  return out;
}

export function loadDataExecutor(o: LoadDataExecutorOptions): ChunkExecutor {
  return async (chunk, ctx) => {
    const { conn } = ctx;
    const { sql, fileToken, pre } = o.statementFor(chunk);
    if (o.transactional) await conn.query('START TRANSACTION');
    let committed = !o.transactional;
    try {
      for (const p of pre) await conn.query(p);
      const result = await runLoadData({
        conn,
        sql,
        fileToken,
        open: () => o.input.open(chunk, o.pieceBytes),
        onBytes: (bytes) => o.events.emit({ type: 'chunk-bytes', chunk: chunk.index, bytes }),
        maxWarnings: o.maxWarnings,
      });
      ctx.setState('checking');
      if (chunk.records >= 0 && result.info.records !== chunk.records) {
        throw new FlatloadError(
          'INPUT_MALFORMED',
          `the server read ${result.info.records} records in chunk ${chunk.index} where flatload found ${chunk.records}: the format options do not match the file`,
          {
            file: o.file,
            line: chunk.firstLine,
            byteOffset: chunk.startByte,
            chunk: chunk.index,
            hint: 'check --fields-terminated-by, --lines-terminated-by, --fields-enclosed-by and --character-set',
          },
        );
      }
      const problems = await describeProblems(o, chunk, result);
      const dupSkipped = o.duplicatesExpected ? result.info.skipped : 0;
      if (problems.length === 0 && (o.duplicatesExpected || result.info.skipped === 0) && !result.warningsTruncated) {
        const records = chunk.records >= 0 ? chunk.records : result.info.records;
        const outcome: ChunkOutcome = {
          records,
          rowsLoaded: records - dupSkipped,
          rejected: 0,
          warnings: result.warnings.length,
          bytes: result.bytesSent,
        };
        if (o.beforeCommit) await o.beforeCommit(chunk, ctx, outcome);
        ctx.setState('committing');
        if (o.transactional) await conn.query('COMMIT');
        committed = true;
        return outcome;
      }
      if (!o.transactional) {
        throw new FlatloadError(
          'ROWS_REJECTED',
          `chunk ${chunk.index} loaded with ${problems.length} row problem(s), and this engine cannot roll the chunk back: its rows stay in the table`,
          { file: o.file, chunk: chunk.index, line: chunk.firstLine, byteOffset: chunk.startByte },
        );
      }
      await conn.query('ROLLBACK');
      committed = true; // nothing left open
      o.events.emit({ type: 'chunk-rolled-back', chunk: chunk.index, reason: `${problems.length} row problem(s)` });
      ctx.setState('isolating');
      return await o.onRowProblems(chunk, ctx, problems, result);
    } finally {
      if (!committed) await conn.query('ROLLBACK').catch(() => undefined);
    }
  };
}
