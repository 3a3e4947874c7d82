import { Readable } from 'node:stream';
import type { PoolConnection } from 'mysql2/promise';
import type { CutChunk } from '../chunking/types.js';
import { copyOf, type SentRecord } from './chunkSource.js';
import type { RejectedRow } from '../report/rejectFile.js';
import { bisect, type RangeAttempt } from './bisect.js';
import { refusedResult, runLoadData, type LoadDataResult } from './loadData.js';
import { classifyWarning, refusedRow, warningRow, type ServerWarning } from './warnings.js';


export interface IsolateOptions {
  conn: PoolConnection;
  chunk: CutChunk;
  /** The chunk's bytes and its records. */
  bytes: Buffer;
  /** In the order they are sent; `pos` is where each is in `bytes`. */
  records: SentRecord[];
  /** LOAD DATA for a sub-range, given its file token. */
  sql: (fileToken: string) => string;
  /** Statements before each sub-range (sets the surrogate key counter to the range's first record). */
  pre: (firstRecordInChunk: number) => string[];
  pieceBytes: number;
  maxWarnings: number;
  isProblem: (w: ServerWarning) => boolean;
  /** Duplicates count as problems (--on-duplicate error). */
  duplicatesAreProblems: boolean;
  onBytes: (bytes: number) => void;
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
 * transaction, by bisection (load/bisect.ts): each sub-range is one LOAD
 * DATA under a savepoint, with LOAD DATA's exact value conversions.
 */
export async function isolateBadRows(o: IsolateOptions): Promise<Isolated> {
  const { conn, chunk, records } = o;
  const out: Isolated = { rowsLoaded: 0, rejects: [], warnings: 0, statements: 0 };
  let sp = 0;

  const attempt = async (a: number, b: number): Promise<RangeAttempt> => {
    const name = `flatload_r${sp++}`;
    await conn.query(`SAVEPOINT ${name}`);
    for (const p of o.pre(a)) await conn.query(p);
    // Records a..b are contiguous in the sent bytes (sorted or not).
    const start = records[a]!.pos;
    const end = records[b - 1]!.pos + records[b - 1]!.length;
    const token = `flatload-chunk-${chunk.index}-rows-${a}-${b}`;
    out.statements++;
    let res: LoadDataResult;
    try {
      res = await runLoadData({
        conn,
        sql: o.sql(token),
        fileToken: token,
        open: () => Readable.from(pieces(o.bytes.subarray(start, end), o.pieceBytes), { objectMode: false }),
        onBytes: o.onBytes,
        maxWarnings: o.maxWarnings,
      });
    } catch (err) {
      // The statement stopped at one bad row (--on-duplicate replace): named below as a warned row is, the rest tried again.
      const refused = refusedRow(err);
      if (!refused) throw err;
      res = refusedResult(b - a, refused);
    }
    const problems = res.warnings.filter((w) => o.isProblem(w));
    const skipped = o.duplicatesAreProblems ? res.info.skipped : 0;
    if (problems.length === 0 && skipped === 0 && !res.warningsTruncated && res.info.records === b - a) {
      await conn.query(`RELEASE SAVEPOINT ${name}`);
      out.warnings += res.warnings.length;
      // Duplicates skipped on purpose (--on-duplicate ignore) are in the range but not in the table.
      return { ok: true, landed: b - a - (o.duplicatesAreProblems ? 0 : res.info.skipped), problems: [] };
    }
    await conn.query(`ROLLBACK TO SAVEPOINT ${name}`);
    const named = new Set<number>();
    let unnamed = res.warningsTruncated || res.info.records !== b - a;
    let namedSkips = 0;
    for (const w of problems) {
      const row = warningRow(w.message);
      if (row === undefined || row < 1 || row > b - a) {
        unnamed = true;
        continue;
      }
      named.add(a + row - 1);
      if (classifyWarning(w) === 'skipped') namedSkips++;
    }
    if (skipped > namedSkips) unnamed = true;
    return { ok: false, landed: 0, problems: problems.map((w) => ({ code: w.code, message: w.message })), ...(unnamed ? {} : { named: [...named] }) };
  };

  out.rowsLoaded = await bisect(0, records.length, attempt, (i, errors) => {
    const rec = records[i]!;
    out.rejects.push({ line: rec.line, byteOffset: rec.offset, bytes: copyOf(o.bytes, rec), errors });
  });
  return out;
}
