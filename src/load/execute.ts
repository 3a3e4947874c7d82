import { availableParallelism } from 'node:os';
import type { Connection } from 'mysql2/promise';
import { charsetInfo, WIDE_CHARSETS } from '../chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import type { ConnectionOptions } from '../config/connection.js';
import { isChunkable } from '../config/format.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openPool, openSession, type Session } from '../db/connect.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import { openInput } from '../input/source.js';
import { readServerFacts } from '../introspect/server.js';
import { readTableFacts } from '../introspect/table.js';
import type { ServerFacts, TableFacts } from '../introspect/types.js';
import { loadDataSql, type ColumnTarget } from '../plan/sql.js';
import type { EventHub } from '../report/events.js';
import type { LoadReport } from '../report/summary.js';
import { ChunkInput } from './chunkInput.js';
import { loadDataExecutor, type RowProblem } from './loadDataExecutor.js';
import { runChunks } from './runner.js';

export interface ExecuteResult {
  report: LoadReport;
  error: FlatloadError | undefined;
}

const MAX_WARNINGS = 65535;

export function scanFormatOf(o: LoadOptions): ScanFormat {
  return {
    fieldTerm: o.format.fieldsTerminatedBy,
    lineTerm: o.format.linesTerminatedBy,
    enclosure: o.format.fieldsEnclosedBy.length ? o.format.fieldsEnclosedBy[0]! : -1,
    escape: o.format.fieldsEscapedBy.length ? o.format.fieldsEscapedBy[0]! : -1,
  };
}

async function one<T>(conn: Connection, sql: string, values?: unknown[]): Promise<T | undefined> {
  const [rows] = await conn.query(sql, values);
  return (rows as T[])[0];
}

/**
 * Which target fields the server scans as text in the file's character set:
 * CHAR/VARCHAR/TEXT/ENUM/SET columns. Binary, numeric and temporal columns
 * and @variables are scanned byte by byte (MariaDB 10.11, MDEV-34883).
 */
export function scanTargets(table: TableFacts, columns: readonly ColumnTarget[] | undefined): ScanTargets {
  const byName = new Map(table.columns.map((c) => [c.name.toLowerCase(), c]));
  const isText = (cs: string | null): boolean => cs !== null && cs !== 'binary';
  const textField = columns
    ? columns.map((c) => !c.isVariable && isText(byName.get(c.name.toLowerCase())?.characterSet ?? null))
    : table.columns.map((c) => isText(c.characterSet));
  return { fields: textField.length, textField };
}

export function defaultJobs(server: ServerFacts): number {
  return Math.max(1, Math.min(server.serverCpus ?? availableParallelism(), 8));
}

/** Problems found by the server: the load stops, naming each row (reject files and budgets come with isolation). */
function problemsError(file: string, chunkIndex: number, problems: RowProblem[]): FlatloadError {
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

export async function executeLoad(o: LoadOptions, conn: ConnectionOptions, events: EventHub, signal?: AbortSignal): Promise<ExecuteResult> {
  const t0 = Date.now();
  const source = openInput(o.file);
  const { session, conn: control } = await openSession(conn, { localInfile: false });
  try {
    return await run(o, source, session, control, events, t0, signal);
  } finally {
    await control.end().catch(() => undefined);
  }
}

async function run(
  o: LoadOptions,
  source: ReturnType<typeof openInput>,
  session: Session,
  control: Connection,
  events: EventHub,
  t0: number,
  signal: AbortSignal | undefined,
): Promise<ExecuteResult> {
  const db = o.db ?? session.options.database;
  if (!db) throw new FlatloadError('USAGE', 'no database given: use --table db.table, --database, or a URL with /db');
  const display = `${db}.${o.table}`;
  let server: ServerFacts;
  let table: TableFacts;
  try {
    server = await readServerFacts(control);
    table = await readTableFacts(control, db, o.table);
  } catch (err) {
    throw toFlatloadError(err, `reading ${display}`, { table: display });
  }
  if (!server.localInfile) {
    throw new FlatloadError('LOCAL_INFILE_DISABLED', `the server has local_infile=OFF, so LOAD DATA LOCAL INFILE is refused`, {
      table: display,
      hint: 'enable it with SET GLOBAL local_infile=1 (or local_infile=1 under [mysqld]), or load with --strategy insert',
    });
  }
  const columns: ColumnTarget[] | undefined = o.columns;
  if (columns) {
    const known = new Set(table.columns.map((c) => c.name.toLowerCase()));
    const unknown = columns.filter((c) => !c.isVariable && !known.has(c.name.toLowerCase()));
    if (unknown.length) {
      throw new FlatloadError('UNKNOWN_COLUMN', `--columns names ${unknown.map((c) => `\`${c.name}\``).join(', ')}, not in ${display}`, { table: display });
    }
  }
  const targets = scanTargets(table, columns);
  const characterSet = o.format.characterSet ?? (await one<{ cs: string }>(control, 'SELECT @@character_set_database AS cs'))?.cs ?? 'utf8mb4';
  const charset = charsetInfo(characterSet);
  if (WIDE_CHARSETS.has(characterSet.toLowerCase())) {
    throw new FlatloadError('UNSUPPORTED', `the file's character set would be ${characterSet}: LOAD DATA reads it but loads garbage`, {
      file: o.file,
      hint: 'convert the file to UTF-8 and load it with --character-set utf8mb4',
    });
  }
  if (!charset) {
    throw new FlatloadError('UNSUPPORTED', `character set ${characterSet} is not one flatload can scan for record boundaries`, { file: o.file });
  }
  const scan = scanFormatOf(o);
  const chunkable = isChunkable(o.format);
  const chunkSizeBytes = chunkable.ok ? o.chunkSizeBytes : Number.MAX_SAFE_INTEGER;
  const jobs = o.jobs ?? defaultJobs(server);
  const input = new ChunkInput(source, {
    format: scan,
    charset,
    targets,
    chunkSizeBytes,
    maxRecordBytes: Math.max(o.chunkSizeBytes, 1 << 20),
    ignoreLines: o.format.ignoreLines,
    stripBom: o.stripBom && /^utf8/.test(characterSet),
    file: o.file,
  });
  const pieceBytes = Math.max(16 * 1024, Math.min(4 << 20, Math.floor(server.maxAllowedPacketBytes / 2)));
  events.emit({
    type: 'start',
    totalBytes: source.seekable ? source.sizeBytes : undefined,
    jobs,
    table: display,
    strategy: 'load-data',
    resumedChunks: 0,
    resumedBytes: 0,
    resumedRows: 0,
  });
  if (!chunkable.ok) events.emit({ type: 'note', message: `loading as one chunk: ${chunkable.reason}` });

  const pool = openPool(session, jobs, { localInfile: true });
  try {
    const executor = loadDataExecutor({
      input,
      file: o.file,
      statementFor: (chunk) => {
        const fileToken = `flatload-chunk-${chunk.index}`;
        return {
          fileToken,
          sql: loadDataSql({ fileToken, db, table: o.table, format: o.format, characterSet, columns, duplicates: o.onDuplicate }),
        };
      },
      pieceBytes,
      maxWarnings: MAX_WARNINGS,
      events,
      scan: { format: scan, charset, targets },
      duplicatesExpected: o.onDuplicate !== 'error',
      allowAltered: o.allowTruncation,
      onRowProblems: async (chunk, _ctx, problems) => {
        throw problemsError(o.file, chunk.index, problems.length ? problems : []);
      },
    });
    const result = await runChunks({
      pool,
      jobs,
      chunks: input.chunks(),
      execute: executor,
      sessionSql: [`SET SESSION max_error_count = ${MAX_WARNINGS}`],
      events,
      ...(signal ? { signal } : {}),
    });
    events.emit({ type: 'done' });
    const seconds = (Date.now() - t0) / 1000;
    const inputBytes = input.summary?.totalBytes ?? input.bytesScanned;
    const slowest = result.perChunk.reduce<(typeof result.perChunk)[number] | undefined>(
      (a, b) => (!a || b.elapsedMs > a.elapsedMs ? b : a),
      undefined,
    );
    const report: LoadReport = {
      status: result.stoppedBy ? 'stopped' : result.totals.rejected > 0 ? 'rejected-within-budget' : 'ok',
      table: display,
      engine: table.engine,
      strategy: 'load-data',
      mode: o.mode,
      rows: result.totals.rowsLoaded,
      rowsInInput: input.summary?.records ?? result.totals.records,
      rejected: result.totals.rejected,
      skippedDuplicates: result.totals.records - result.totals.rowsLoaded - result.totals.rejected,
      warnings: result.totals.warnings,
      inputBytes,
      inputBytesCompressed: source.compression !== 'none' ? (source.sizeBytes ?? null) : null,
      seconds,
      rowsPerSec: seconds > 0 ? result.totals.rowsLoaded / seconds : 0,
      mbPerSec: seconds > 0 ? inputBytes / 1e6 / seconds : 0,
      jobs,
      chunks: result.chunks,
      chunkSizeBytes: o.chunkSizeBytes,
      resumedChunks: result.skippedChunks,
      encrypted: session.encrypted,
      rejectFile: null,
      slowestChunk: slowest ? { chunk: slowest.chunk, seconds: slowest.elapsedMs / 1000, rows: slowest.records } : null,
      timeline: [],
      sizes: null,
      notes: [],
      error: result.stoppedBy ? { code: result.stoppedBy.code, message: result.stoppedBy.message } : null,
    };
    if (input.summary?.bomBytes) report.notes.push('skipped a UTF-8 byte-order mark at the start of the file');
    return { report, error: result.stoppedBy };
  } finally {
    await pool.end().catch(() => undefined);
  }
}
