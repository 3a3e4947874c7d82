import { Readable } from 'node:stream';
import type { PoolConnection } from 'mysql2/promise';
import type { CutChunk } from '../chunking/types.js';
import type { SentRecord } from './chunkInput.js';
import { runLoadData } from './loadData.js';
import { classifyWarning, warningRow, type ServerWarning } from './warnings.js';

/** A row the server would skip or change: its original bytes and why. */
export interface RejectedRow {
  line: number;
  byteOffset: number;
  /** The record's bytes exactly as in the input (terminator included). */
  bytes: Buffer;
  errors: Array<{ code: number; message: string }>;
}

export interface IsolateOptions {
  conn: PoolConnection;
  chunk: CutChunk;
  /** The chunk's bytes and its records. */
  bytes: Buffer;
  /** In the order they are sent; `pos` is where each is in `bytes`. */
  records: SentRecord[];
  /** LOAD DATA for a sub-range, given its file token. */
  sql(fileToken: string): string;
  /** Statements before each sub-range (sets the surrogate key counter to the range's first record). */
  pre(firstRecordInChunk: number): string[];
  pieceBytes: number;
  maxWarnings: number;
  isProblem(w: ServerWarning): boolean;
  /** Duplicates count as problems (--on-duplicate error). */
  duplicatesAreProblems: boolean;
  onBytes(bytes: number): void;
}

export interface Isolated {
  rowsLoaded: number;
  rejects: RejectedRow[];
  warnings: number;
  statements: number;
}

function pieces(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out.length ? out : [Buffer.alloc(0)];
}

/**
 * Loads a chunk whose full load showed bad rows, inside the chunk's
 * transaction: sub-ranges are tried under savepoints; a clean range stays,
 * a range with problems is rolled back to its savepoint and split (at the
 * rows the warnings name, else in halves) until each bad row stands alone
 * and is rejected with the server's own messages. pgloader's method, with
 * LOAD DATA's exact value conversions.
 */
export async function isolateBadRows(o: IsolateOptions): Promise<Isolated> {
  const { conn, chunk, records } = o;
  void chunk;
  const out: Isolated = { rowsLoaded: 0, rejects: [], warnings: 0, statements: 0 };
  let sp = 0;

  const attempt = async (
    a: number,
    b: number,
  ): Promise<{ ok: boolean; named: Map<number, ServerWarning[]>; unnamed: boolean; all: ServerWarning[]; landed: number }> => {
    const name = `flatload_r${sp++}`;
    await conn.query(`SAVEPOINT ${name}`);
    for (const p of o.pre(a)) await conn.query(p);
    // Records a..b are contiguous in the sent bytes (sorted or not).
    const start = records[a]!.pos;
    const end = records[b - 1]!.pos + records[b - 1]!.length;
    const token = `flatload-chunk-${chunk.index}-rows-${a}-${b}`;
    out.statements++;
    const res = await runLoadData({
      conn,
      sql: o.sql(token),
      fileToken: token,
      open: () => Readable.from(pieces(o.bytes.subarray(start, end), o.pieceBytes), { objectMode: false }),
      onBytes: o.onBytes,
      maxWarnings: o.maxWarnings,
    });
    const problems = res.warnings.filter((w) => o.isProblem(w));
    const skipped = o.duplicatesAreProblems ? res.info.skipped : 0;
    const ok = problems.length === 0 && skipped === 0 && !res.warningsTruncated && res.info.records === b - a;
    if (ok) {
      await conn.query(`RELEASE SAVEPOINT ${name}`);
      out.warnings += res.warnings.length;
      // Duplicates skipped on purpose (--on-duplicate ignore) are in the range but not in the table.
      return { ok, named: new Map(), unnamed: false, all: [], landed: b - a - (o.duplicatesAreProblems ? 0 : res.info.skipped) };
    }
    await conn.query(`ROLLBACK TO SAVEPOINT ${name}`);
    const named = new Map<number, ServerWarning[]>();
    let unnamed = res.warningsTruncated || res.info.records !== b - a;
    let namedSkips = 0;
    for (const w of problems) {
      const row = warningRow(w.message);
      if (row === undefined || row < 1 || row > b - a) {
        unnamed = true;
        continue;
      }
      const list = named.get(a + row - 1) ?? [];
      list.push(w);
      named.set(a + row - 1, list);
      if (classifyWarning(w) === 'skipped') namedSkips++;
    }
    if (skipped > namedSkips) unnamed = true;
    return { ok, named, unnamed, all: problems, landed: 0 };
  };

  const solve = async (a: number, b: number): Promise<void> => {
    if (b <= a) return;
    const r = await attempt(a, b);
    if (r.ok) {
      out.rowsLoaded += r.landed;
      return;
    }
    if (b - a === 1) {
      const rec = records[a]!;
      const errors = (r.all.length ? r.all : [{ level: 'Error', code: 0, message: 'the server skipped this row' }]).map((w) => ({
        code: w.code,
        message: w.message,
      }));
      out.rejects.push({ line: rec.line, byteOffset: rec.offset, bytes: o.bytes.subarray(rec.pos, rec.pos + rec.length), errors });
      return;
    }
    if (!r.unnamed && r.named.size > 0) {
      // The warnings name the bad rows: load the runs between them, and each named row alone.
      let from = a;
      for (const row of [...r.named.keys()].sort((x, y) => x - y)) {
        await solve(from, row);
        await solve(row, row + 1);
        from = row + 1;
      }
      await solve(from, b);
      return;
    }
    const mid = (a + b) >>> 1;
    await solve(a, mid);
    await solve(mid, b);
  };

  await solve(0, records.length);
  return out;
}
