import type { Connection } from 'mysql2/promise';
import type { CutChunk } from '../chunking/types.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openPool, type Session } from '../db/connect.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import type { InputSource } from '../input/source.js';
import { loadDataSql } from '../plan/sql.js';
import type { LoadPlan } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import { ChunkInput } from './chunkInput.js';
import { loadDataExecutor, type RowProblem } from './loadDataExecutor.js';
import type { Prepared } from './prepare.js';
import { runChunks, type RunResult } from './runner.js';

const MAX_WARNINGS = 65535;
/** The user variable that numbers rows for pre-assigned surrogate keys. */
const KEY_VAR = '@flatload_key';

export interface Applied {
  run: RunResult;
  input: ChunkInput;
  /** Records in the input, when the whole input was read. */
  totalRecords: number | undefined;
}

/** Problems found by the server stop the load, naming each row. */
export function problemsError(file: string, chunkIndex: number, problems: RowProblem[]): FlatloadError {
  const shown = problems.slice(0, 10).map((p) => {
    const where = p.location ? `line ${p.location.line} (byte offset ${p.location.offset})` : `chunk ${chunkIndex}, row not named by the server`;
    return `    ${where}: [${p.warning.code}] ${p.warning.message}`;
  });
  const more = problems.length > 10 ? `\n    … and ${problems.length - 10} more` : '';
  const first = problems.find((p) => p.location)?.location;
  return new FlatloadError(
    'ROWS_REJECTED',
    `the server skipped or changed ${problems.length} row value(s); the chunk was rolled back:\n${shown.join('\n')}${more}`,
    { file, chunk: chunkIndex, ...(first ? { line: first.line, byteOffset: first.offset } : {}) },
  );
}

async function runStatements(control: Connection, statements: Array<{ sql: string; reason: string }>, what: string, vars: Record<string, string>): Promise<void> {
  for (const s of statements) {
    const sql = s.sql.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
      const v = vars[name];
      if (v === undefined) throw new FlatloadError('INTERNAL', `plan statement needs {{${name}}}, which is not known yet`);
      return v;
    });
    try {
      await control.query(sql);
    } catch (err) {
      throw toFlatloadError(err, `${what} (${s.reason})`);
    }
  }
}

export async function applyPlan(
  plan: LoadPlan,
  prep: Prepared,
  o: LoadOptions,
  source: InputSource,
  session: Session,
  control: Connection,
  events: EventHub,
  signal: AbortSignal | undefined,
): Promise<Applied> {
  if (plan.strategy !== 'insert' && !prep.server.localInfile) {
    throw new FlatloadError('LOCAL_INFILE_DISABLED', 'the server has local_infile=OFF, so it refuses LOAD DATA LOCAL INFILE', {
      table: prep.display,
      hint: 'enable it with SET GLOBAL local_infile=1 (or local_infile=1 under [mysqld]), or load with --strategy insert',
    });
  }
  await runStatements(control, plan.before, 'preparing the table', {});
  const unchunkable = prep.unchunkableReason !== undefined;
  if (unchunkable && !source.seekable) {
    throw new FlatloadError('UNSUPPORTED', `this format cannot be split into records (${prep.unchunkableReason}), so it must be a plain file, not a stream`, {
      file: o.file,
    });
  }
  const input = new ChunkInput(source, {
    format: prep.scan,
    charset: prep.charset,
    targets: prep.targets,
    chunkSizeBytes: unchunkable ? Number.MAX_SAFE_INTEGER : plan.chunkSizeBytes,
    maxRecordBytes: unchunkable ? Number.MAX_SAFE_INTEGER : Math.max(plan.chunkSizeBytes, 1 << 20),
    ignoreLines: unchunkable ? 0 : o.format.ignoreLines,
    stripBom: o.stripBom && prep.charset.utf8,
    file: o.file,
  }, o.format);
  const chunks: AsyncIterable<CutChunk> = unchunkable ? wholeFile(source) : input.chunks();
  const jobs = unchunkable ? 1 : plan.concurrency;
  const pieceBytes = Math.max(16 * 1024, Math.min(4 << 20, Math.floor(prep.server.maxAllowedPacketBytes / 2)));
  const key = plan.surrogateKey?.kind === 'pre-assign' ? plan.surrogateKey : undefined;
  const firstKey = key ? BigInt(key.firstValue) : 0n;

  events.emit({
    type: 'start',
    totalBytes: source.seekable ? source.sizeBytes : undefined,
    jobs,
    table: prep.display,
    strategy: plan.strategy,
    resumedChunks: 0,
    resumedBytes: 0,
    resumedRows: 0,
  });
  if (unchunkable) events.emit({ type: 'note', message: `loading as one chunk: ${prep.unchunkableReason}` });

  const pool = openPool(session, jobs, { localInfile: true });
  try {
    const executor = loadDataExecutor({
      input,
      file: o.file,
      transactional: plan.commitScope === 'chunk',
      statementFor: (chunk) => {
        const fileToken = `flatload-chunk-${chunk.index}`;
        const base = loadDataSql({
          fileToken,
          db: plan.loadTarget.db,
          table: plan.loadTarget.table,
          format: o.format,
          characterSet: prep.characterSet,
          columns: plan.columns,
          duplicates: plan.duplicates,
          setClause: key ? `\`${key.column.replace(/`/g, '``')}\` = (${KEY_VAR} := ${KEY_VAR} + 1)` : undefined,
        });
        const sql = unchunkable && o.format.ignoreLines > 0 ? `${base} IGNORE ${o.format.ignoreLines} LINES` : base;
        const pre = key ? [`SET ${KEY_VAR} = ${(firstKey + BigInt(chunk.firstRecord) - 1n).toString()}`] : [];
        return { fileToken, sql, pre };
      },
      pieceBytes,
      maxWarnings: MAX_WARNINGS,
      events,
      scan: { format: prep.scan, charset: prep.charset, targets: prep.targets },
      duplicatesExpected: plan.duplicates !== 'error',
      allowAltered: o.allowTruncation,
      onRowProblems: async (chunk, _ctx, problems) => {
        throw problemsError(o.file, chunk.index, problems);
      },
    });
    const run = await runChunks({
      pool,
      jobs,
      chunks,
      execute: executor,
      sessionSql: plan.sessionSettings.map((s) => `SET SESSION ${s.name} = ${s.value}`),
      sessionEnd: plan.sessionEnd.map((s) => s.sql),
      events,
      ...(signal ? { signal } : {}),
    });
    const totalRecords = unchunkable ? run.totals.records : input.summary?.records;
    if (!run.stoppedBy) {
      const vars: Record<string, string> = {};
      if (key && totalRecords !== undefined) vars['nextAutoIncrement'] = (firstKey + BigInt(totalRecords)).toString();
      try {
        await runStatements(control, plan.after, 'finishing the load', vars);
      } catch (err) {
        run.stoppedBy = err as FlatloadError;
      }
    }
    return { run, input, totalRecords };
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** An unsplittable input: one chunk, the server counts its records. */
async function* wholeFile(source: InputSource): AsyncGenerator<CutChunk> {
  yield { index: 0, startByte: 0, endByte: source.sizeBytes ?? 0, firstLine: 1, firstRecord: 0, records: -1, newlines: 0 };
}
