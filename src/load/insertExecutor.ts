import type { ResultSetHeader } from 'mysql2/promise';
import type { CharsetInfo } from '../chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import type { CutChunk } from '../chunking/types.js';
import { asServerError, isConnectionLost, isRetryableLock } from '../db/errors.js';
import { quoteId, quoteQualified } from '../db/quote.js';
import { parseRecord, type FieldValue } from '../input/fields.js';
import type { ColumnTarget, DuplicateHandling } from '../plan/sql.js';
import type { EventHub } from '../report/events.js';
import type { ErrorBudget } from './budget.js';
import type { ChunkInput, SentRecord } from './chunkInput.js';
import { commitChunk } from './commit.js';
import { ChunkTxn } from './chunkTxn.js';
import type { CommitScope } from '../plan/types.js';
import type { RejectedRow } from './isolate.js';
import type { ChunkContext, ChunkExecutor, ChunkOutcome } from './runner.js';
import { classifyWarning, type ServerWarning } from './warnings.js';

export interface InsertExecutorOptions {
  input: ChunkInput;
  file: string;
  db: string;
  table: string;
  /** Target of each file field, in file order; @variables discard their field. */
  fields: ColumnTarget[];
  /** Per target field: does the column take text (sent in the file's character set) or bytes? */
  textField: readonly boolean[];
  characterSet: string;
  scan: { format: ScanFormat; charset: CharsetInfo; targets: ScanTargets };
  /** Pre-assigned surrogate key: column and the value of record 0. */
  key: { column: string; first: bigint } | undefined;
  duplicates: DuplicateHandling;
  allowAltered: boolean;
  /** Bytes per INSERT statement (under max_allowed_packet). */
  batchBytes: number;
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

/** A value as LOAD DATA would hand it to the column: the field's bytes as a string in the file's character set. */
function literal(v: FieldValue, text: boolean, charset: string): string {
  if (v === null) return 'NULL';
  if (v === undefined) return 'DEFAULT';
  if (v.length === 0) return "''";
  return `${text ? `_${charset}` : '_binary'} 0x${v.toString('hex')}`;
}

function rowProblem(code: number, message: string): Array<{ code: number; message: string }> {
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
  const cols = o.fields.filter((f) => !f.isVariable).map((f) => quoteId(f.name));
  if (o.key) cols.push(quoteId(o.key.column));
  const verb = o.duplicates === 'replace' ? 'REPLACE' : o.duplicates === 'ignore' ? 'INSERT IGNORE' : 'INSERT';
  const head = `${verb} INTO ${quoteQualified(o.db, o.table)} (${cols.join(', ')}) VALUES `;

  const isProblem = (w: ServerWarning): boolean => {
    const cls = classifyWarning(w);
    return cls !== 'note' && !(cls === 'skipped' && o.duplicates !== 'error') && !(cls === 'altered' && o.allowAltered);
  };

  return async (chunk, ctx) => {
    const { conn } = ctx;
    const { bytes, records: recs } = await o.input.records(chunk);
    o.input.release(chunk);
    const rejects: RejectedRow[] = [];
    const rows: Row[] = [];
    const recBytes = (r: SentRecord): Buffer => bytes.subarray(r.pos, r.pos + r.length);
    for (let i = 0; i < recs.length; i++) {
      const rec = recs[i]!;
      const parsed = parseRecord(bytes, rec.pos, rec.pos + rec.length, o.scan.format, o.scan.charset, o.scan.targets);
      // The rows LOAD DATA would warn about for their shape are rejected here (1261, 1262).
      if (parsed.values.some((v) => v === undefined)) {
        rejects.push({ line: rec.line, byteOffset: rec.offset, bytes: recBytes(rec), errors: rowProblem(1261, `Row ${i + 1} doesn't contain data for all columns`) });
        continue;
      }
      if (parsed.extraData) {
        rejects.push({ line: rec.line, byteOffset: rec.offset, bytes: recBytes(rec), errors: rowProblem(1262, `Row ${i + 1} was truncated; it contained more data than there were input columns`) });
        continue;
      }
      const values = parsed.values.flatMap((v, k) => (o.fields[k]!.isVariable ? [] : [literal(v, o.textField[k] === true, o.characterSet)]));
      if (o.key) values.push((o.key.first + BigInt(chunk.firstRecord + i)).toString());
      rows.push({ rec, index: i, sql: `(${values.join(',')})` });
    }

    let sp = 0;
    let loaded = 0;
    let skipped = 0;
    let warnings = 0;
    /** Runs rows[a, b) as one statement under a savepoint; splits on trouble. */
    const solve = async (a: number, b: number): Promise<void> => {
      if (b <= a) return;
      const name = `flatload_i${sp++}`;
      if (rollbackable) await conn.query(`SAVEPOINT ${name}`);
      let problems: Array<{ code: number; message: string }> = [];
      let ok = false;
      try {
        const [res] = await conn.query<ResultSetHeader>(head + rows.slice(a, b).map((r) => r.sql).join(','));
        const ws = res.warningStatus > 0 ? ((await conn.query('SHOW WARNINGS'))[0] as Array<{ Level: string; Code: number; Message: string }>) : [];
        const bad = ws.map((w) => ({ level: w.Level, code: Number(w.Code), message: w.Message })).filter(isProblem);
        problems = bad.map((w) => ({ code: w.code, message: w.message }));
        ok = bad.length === 0;
        if (ok) {
          warnings += ws.length;
          // INSERT IGNORE skips duplicates: "Records: n  Duplicates: d" says how many.
          const dup = o.duplicates === 'ignore' ? Number(/Duplicates:\s*(\d+)/.exec(res.info ?? '')?.[1] ?? 0) : 0;
          skipped += dup;
        }
      } catch (err) {
        if (isConnectionLost(err) || isRetryableLock(err)) throw err;
        const e = asServerError(err);
        if (e?.errno === undefined) throw err;
        problems = rowProblem(e.errno, e.sqlMessage ?? e.message ?? String(err));
      }
      if (ok) {
        if (rollbackable) await conn.query(`RELEASE SAVEPOINT ${name}`);
        loaded += b - a;
        return;
      }
      if (!rollbackable) {
        throw Object.assign(new Error(`rows at lines ${rows[a]!.rec.line}…${rows[b - 1]!.rec.line} failed and this engine cannot roll them back: ${problems[0]?.message ?? ''}`), { errno: problems[0]?.code });
      }
      await conn.query(`ROLLBACK TO SAVEPOINT ${name}`);
      if (b - a === 1) {
        const r = rows[a]!;
        rejects.push({ line: r.rec.line, byteOffset: r.rec.offset, bytes: recBytes(r.rec), errors: problems });
        return;
      }
      const mid = (a + b) >>> 1;
      await solve(a, mid);
      await solve(mid, b);
    };

    const txn = new ChunkTxn(conn, o.scope);
    const rollbackable = txn.canRollBack;
    let done = false;
    try {
      await txn.begin();
      for (const sql of o.chunkBefore(chunk)) await conn.query(sql);
      // Batches by bytes, so no statement comes near max_allowed_packet.
      let start = 0;
      let size = head.length;
      for (let i = 0; i < rows.length; i++) {
        const add = rows[i]!.sql.length + 1;
        if (i > start && size + add > o.batchBytes) {
          await solve(start, i);
          o.events.emit({ type: 'chunk-bytes', chunk: chunk.index, bytes: rows[i - 1]!.rec.pos + rows[i - 1]!.rec.length - rows[start]!.rec.pos });
          start = i;
          size = head.length;
        }
        size += add;
      }
      await solve(start, rows.length);
      for (const sql of o.chunkAfter(chunk)) await conn.query(sql);
      rejects.sort((x, y) => x.byteOffset - y.byteOffset);
      const outcome: ChunkOutcome = { records: recs.length, rowsLoaded: loaded - skipped, rejected: rejects.length, warnings, bytes: chunk.endByte - chunk.startByte };
      await commitChunk({ chunk, ctx, outcome, rejects, budget: o.budget, file: o.file, commit: () => txn.commit(), beforeCommit: o.beforeCommit, afterCommit: o.afterCommit });
      done = true;
      return outcome;
    } finally {
      if (!done) await txn.abort();
    }
  };
}
