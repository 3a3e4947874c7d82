import { showWarnings } from './loadData.js';
import type { ResultSetHeader } from 'mysql2/promise';
import type { CharsetInfo } from '../chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import type { CutChunk } from '../chunking/types.js';
import { asServerError, isConnectionLost, isRetryableLock } from '../db/errors.js';
import { ER } from '../db/errnos.js';
import { FlatloadError } from '../errors/index.js';
import { parseRecord, type FieldValue } from '../chunking/fields.js';
import type { ColumnTarget, DuplicateHandling } from '../config/loadOptions.js';
import type { EventHub } from '../report/events.js';
import type { ErrorBudget } from './budget.js';
import { copyOf, type ChunkSource, type SentRecord } from './chunkSource.js';
import { commitChunk } from './commit.js';
import { ChunkTxn } from './chunkTxn.js';
import type { CommitScope } from '../plan/types.js';
import type { RejectedRow } from '../report/rejectFile.js';
import type { ChunkContext, ChunkExecutor, ChunkOutcome } from './runner.js';
import { bisect, type RangeAttempt, type RowProblem } from './bisect.js';
import type { ServerWarning } from './warnings.js';

export interface InsertExecutorOptions {
  input: ChunkSource;
  file: string;
  /** `INSERT INTO t (cols…) VALUES ` (plan/sql.ts insertHeadSql). */
  head: string;
  /** Target of each file field, in file order; @variables discard their field. */
  fields: ColumnTarget[];
  /** Per target field: is the column binary (its bytes sent as they are)? Every other field goes in the file's character set. */
  binaryField: readonly boolean[];
  characterSet: string;
  scan: { format: ScanFormat; charset: CharsetInfo; targets: ScanTargets };
  /** Pre-assigned surrogate key: column and the value of record 0. */
  key: { column: string; first: bigint } | undefined;
  duplicates: DuplicateHandling;
  /** Warnings that reject a row (shared with the LOAD DATA executor). */
  isProblem: (w: ServerWarning) => boolean;
  /** Bytes per INSERT statement (under max_allowed_packet). */
  batchBytes: number;
  /** The server's max_allowed_packet: a row whose INSERT alone would not fit is rejected, never sent. */
  maxPacketBytes: number;
  /** Warnings kept per statement (max_error_count). */
  maxWarnings: number;
  scope: CommitScope;
  chunkBefore: (chunk: CutChunk) => readonly string[];
  chunkAfter: (chunk: CutChunk) => readonly string[];
  budget: ErrorBudget;
  events: EventHub;
  beforeCommit: (chunk: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome, rejects: RejectedRow[]) => Promise<void>;
  afterCommit: (chunk: CutChunk, rejects: RejectedRow[]) => Promise<void>;
}

interface Row {
  rec: SentRecord;
  /** Index of the record within the chunk. */
  index: number;
  /** "(v1, v2, …)" */
  sql: string;
}

/**
 * A value as LOAD DATA would hand it to the column: the field's bytes as a
 * string in the file's character set, numeric and temporal columns included
 * (as binary, ' 42 ' into an INT is truncated data, a warning; in a character
 * set its spaces are a note, as LOAD DATA has them).
 */
function literal(v: FieldValue, binary: boolean, charset: string): string {
  if (v === null) return 'NULL';
  if (v === undefined) return 'DEFAULT';
  if (v.length === 0) return "''";
  return `${binary ? '_binary' : `_${charset}`} 0x${v.toString('hex')}`;
}

/** Bytes of a statement's packet besides its SQL (header, command byte), with room to spare. */
const PACKET_MARGIN = 1024;

function rowProblem(code: number, message: string): RowProblem[] {
  return [{ code, message }];
}

/**
 * The `insert` strategy: when LOAD DATA LOCAL is off, each chunk is parsed
 * on the client (with LOAD DATA's own field rules) and sent as multi-row
 * INSERTs sized under max_allowed_packet, in the chunk's transaction. A
 * statement that fails or warns is rolled back to its savepoint and split
 * until each bad row stands alone and is rejected.
 */
export function insertExecutor(o: InsertExecutorOptions): ChunkExecutor {
  return async (chunk, ctx) => {
    const { conn } = ctx;
    const { bytes, records: recs } = await o.input.records(chunk);
    const { rows, rejects } = toRows(o, chunk, bytes, recs);
    const txn = new ChunkTxn(conn, o.scope);
    const tally = { savepoints: 0, warnings: 0 };
    const attempt = rangeAttempt(o, chunk, conn, rows, txn.canRollBack, tally);
    let done = false;
    try {
      await txn.begin();
      for (const sql of o.chunkBefore(chunk)) await conn.query(sql);
      let loaded = 0;
      for (const [a, b] of batchRanges(rows, o.head.length, o.batchBytes)) {
        loaded += await bisect(a, b, attempt, (i, errors) => rejects.push(rejectOf(bytes, rows[i]!.rec, errors)));
        if (b > a) o.events.emit({ type: 'chunk-bytes', chunk: chunk.index, bytes: rows[b - 1]!.rec.pos + rows[b - 1]!.rec.length - rows[a]!.rec.pos });
      }
      for (const sql of o.chunkAfter(chunk)) await conn.query(sql);
      rejects.sort((x, y) => x.byteOffset - y.byteOffset);
      const outcome: ChunkOutcome = { records: recs.length, rowsLoaded: loaded, rejected: rejects.length, warnings: tally.warnings, bytes: chunk.endByte - chunk.startByte };
      await commitChunk({ chunk, ctx, outcome, rejects, budget: o.budget, file: o.file, commit: () => txn.commit(), beforeCommit: o.beforeCommit, afterCommit: o.afterCommit });
      done = true;
      return outcome;
    } finally {
      if (!done) await txn.abort();
    }
  };
}

function rejectOf(bytes: Buffer, rec: SentRecord, errors: RowProblem[]): RejectedRow {
  return { line: rec.line, byteOffset: rec.offset, bytes: copyOf(bytes, rec), errors };
}

/** Each record parsed into its VALUES tuple, or rejected for its shape or size before anything is sent. */
function toRows(o: InsertExecutorOptions, chunk: CutChunk, bytes: Buffer, recs: readonly SentRecord[]): { rows: Row[]; rejects: RejectedRow[] } {
  const rejects: RejectedRow[] = [];
  const rows: Row[] = [];
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i]!;
    const parsed = parseRecord(bytes, rec.pos, rec.pos + rec.length, o.scan.format, o.scan.charset, o.scan.targets);
    // The rows LOAD DATA would warn about for their shape are rejected here (1261, 1262).
    if (parsed.values.some((v) => v === undefined)) {
      rejects.push(rejectOf(bytes, rec, rowProblem(ER.WARN_TOO_FEW_RECORDS, `Row ${i + 1} doesn't contain data for all columns`)));
      continue;
    }
    if (parsed.extraData) {
      rejects.push(rejectOf(bytes, rec, rowProblem(ER.WARN_TOO_MANY_RECORDS, `Row ${i + 1} was truncated; it contained more data than there were input columns`)));
      continue;
    }
    const values = parsed.values.flatMap((v, k) => (o.fields[k]!.isVariable ? [] : [literal(v, o.binaryField[k] === true, o.characterSet)]));
    if (o.key) values.push((o.key.first + BigInt(chunk.firstRecord + i)).toString());
    const sql = `(${values.join(',')})`;
    // Sent, it would cost the connection (the server drops it) on every retry; only LOAD DATA LOCAL streams such a row.
    if (o.head.length + sql.length + PACKET_MARGIN > o.maxPacketBytes) {
      const message = `the row is ${o.head.length + sql.length} bytes as an INSERT statement, over max_allowed_packet (${o.maxPacketBytes}); load it with LOAD DATA LOCAL (local_infile=ON) or raise max_allowed_packet`;
      rejects.push(rejectOf(bytes, rec, rowProblem(ER.NET_PACKET_TOO_LARGE, message)));
      continue;
    }
    rows.push({ rec, index: i, sql });
  }
  return { rows, rejects };
}

/** Rows cut into [start, end) ranges by bytes, so no statement comes near max_allowed_packet. Pure. */
function batchRanges(rows: readonly Pick<Row, 'sql'>[], headBytes: number, batchBytes: number): Array<[number, number]> {
  const batches: Array<[number, number]> = [];
  let start = 0;
  let size = headBytes;
  for (let i = 0; i < rows.length; i++) {
    const add = rows[i]!.sql.length + 1;
    if (i > start && size + add > batchBytes) {
      batches.push([start, i]);
      start = i;
      size = headBytes;
    }
    size += add;
  }
  batches.push([start, rows.length]);
  return batches;
}

/** Runs rows[a, b) as one statement under a savepoint, rolled back on trouble. */
function rangeAttempt(
  o: InsertExecutorOptions,
  chunk: CutChunk,
  conn: ChunkContext['conn'],
  rows: readonly Row[],
  rollbackable: boolean,
  tally: { savepoints: number; warnings: number },
): (a: number, b: number) => Promise<RangeAttempt> {
  return async (a, b) => {
    const name = `flatload_i${tally.savepoints++}`;
    if (rollbackable) await conn.query(`SAVEPOINT ${name}`);
    let problems: RowProblem[];
    try {
      const [res] = await conn.query<ResultSetHeader>(o.head + rows.slice(a, b).map((r) => r.sql).join(','));
      const ws = res.warningStatus > 0 ? await showWarnings(conn, o.maxWarnings) : [];
      const bad = ws.filter(o.isProblem);
      problems = bad.map((w) => ({ code: w.code, message: w.message }));
      // Warnings the server did not list may be problems: the range is split until every warning is listed.
      if (bad.length === 0 && res.warningStatus <= ws.length) {
        tally.warnings += ws.length;
        // INSERT IGNORE skips duplicates: "Records: n  Duplicates: d" says how many.
        const dup = o.duplicates === 'ignore' ? Number(/Duplicates:\s*(\d+)/.exec(res.info ?? '')?.[1] ?? 0) : 0;
        if (rollbackable) await conn.query(`RELEASE SAVEPOINT ${name}`);
        return { ok: true, landed: b - a - dup, problems: [] };
      }
    } catch (err) {
      if (isConnectionLost(err) || isRetryableLock(err)) throw err;
      const e = asServerError(err);
      if (e?.errno === undefined) throw err;
      problems = rowProblem(e.errno, e.sqlMessage ?? e.message ?? String(err));
    }
    if (!rollbackable) throw cannotRollBack(o, chunk, rows[a]!.rec, rows[b - 1]!.rec, problems);
    await conn.query(`ROLLBACK TO SAVEPOINT ${name}`);
    return { ok: false, landed: 0, problems };
  };
}

function cannotRollBack(o: InsertExecutorOptions, chunk: CutChunk, first: SentRecord, last: SentRecord, problems: RowProblem[]): FlatloadError {
  return new FlatloadError(
    'ROWS_REJECTED',
    `rows at lines ${first.line}…${last.line} of chunk ${chunk.index} failed and this engine cannot roll them back, so the rows before them are in the table: [${problems[0]?.code ?? '?'}] ${problems[0]?.message ?? ''}`,
    { file: o.file, chunk: chunk.index, line: first.line, byteOffset: first.offset, ...(problems[0] ? { serverErrno: problems[0].code } : {}), hint: 'fix the rows and load into a transactional (InnoDB) table, or reload after emptying the table' },
  );
}
