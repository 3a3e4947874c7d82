import type { Queryable } from '../db/control.js';
export type { CheckpointContext } from './resume.js';
import type { CutChunk } from '../chunking/types.js';
import type { LoadOptions } from '../config/loadOptions.js';
import { openPool, type Session } from '../db/connect.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import type { LocalInput } from '../input/spool.js';
import { readTableFingerprint } from '../introspect/table.js';
import { loadDataSql } from '../plan/sql.js';
import type { LoadPlan } from '../plan/types.js';
import type { EventHub } from '../report/events.js';
import { ChunkInput } from './chunkInput.js';
import { loadDataExecutor } from './loadDataExecutor.js';
import { ErrorBudget } from './budget.js';
import { insertExecutor } from './insertExecutor.js';
import { keySpecOf } from './keyOrder.js';
import { headerBytes } from './header.js';
import { keyRangeDelete, landedPrefix, restartIfRequired, skippingDone, type CheckpointContext, type ResumedChunk } from './resume.js';
import type { RejectedRow } from './isolate.js';
import type { ChunkContext, ChunkOutcome } from './runner.js';
import { locateRecords } from '../chunking/records.js';
import { decodeRejects, encodeRejects, RejectFile, type RejectRecord } from '../report/rejectFile.js';
import type { Prepared } from './prepare.js';
import { runChunks, type RunResult } from './runner.js';
import { CheckpointStore } from '../checkpoint/store.js';
import { quoteQualified } from '../db/quote.js';

const MAX_WARNINGS = 65535;
/** The user variable that numbers rows for pre-assigned surrogate keys. */
const KEY_VAR = '@flatload_key';

export interface Applied {
  run: RunResult;
  input: ChunkInput;
  /** Records in the input, when the whole input was read. */
  totalRecords: number | undefined;
  /** Rows and chunks committed by an earlier, interrupted run of this job. */
  resumed: { chunks: number; rows: number; rejected: number; bytes: number };
  rejectFile: { path: string; log: string; rows: number } | undefined;
}

/**
 * Server errors that mean a DDL statement already took effect: a rerun after
 * a crash between the (atomic) DDL and the bookkeeping update that records it
 * finds its own work done — column or index already added or dropped, shadow
 * table already renamed or dropped.
 */
const ALREADY_DONE_ERRNOS = new Set([1050, 1051, 1060, 1061, 1091, 1146]);

async function runStatements(
  control: Queryable,
  statements: Array<{ sql: string; reason: string }>,
  what: string,
  vars: Record<string, string>,
  rerun: boolean,
  events: EventHub,
): Promise<void> {
  for (const s of statements) {
    const sql = s.sql.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
      const v = vars[name];
      if (v === undefined) throw new FlatloadError('INTERNAL', `plan statement needs {{${name}}}, which is not known yet`);
      return v;
    });
    try {
      await control.query(sql);
    } catch (err) {
      const errno = (err as { errno?: number }).errno;
      if (rerun && errno !== undefined && ALREADY_DONE_ERRNOS.has(errno)) {
        events.emit({ type: 'note', message: `${what}: the interrupted run had already done this (${(err as Error).message}): ${sql.slice(0, 120)}` });
        continue;
      }
      throw toFlatloadError(err, `${what} (${s.reason})`);
    }
  }
}

/** The chunks the plan loads, over the input's plain file (scan() finds them all before anything is loaded). */
export function openChunkInput(plan: LoadPlan, prep: Prepared, o: LoadOptions, local: LocalInput): ChunkInput {
  const unchunkable = prep.unchunkableReason !== undefined;
  const byRowCount = plan.guarantee.kind === 'exactly-once-by-row-count';
  const sortSpec = plan.sortChunks && !byRowCount && !unchunkable ? keySpecOf(prep.table, plan.columns) : undefined;
  return new ChunkInput(
    local,
    {
      format: prep.scan,
      charset: prep.charset,
      targets: prep.targets,
      chunkSizeBytes: unchunkable ? Number.MAX_SAFE_INTEGER : plan.chunkSizeBytes,
      maxRecordsPerChunk: unchunkable ? undefined : plan.chunkMaxRecords,
      maxRecordBytes: unchunkable ? Number.MAX_SAFE_INTEGER : Math.max(plan.chunkSizeBytes, 1 << 20),
      ignoreLines: unchunkable ? 0 : o.format.ignoreLines,
      stripBom: o.stripBom && prep.charset.utf8,
      file: o.file,
    },
    o.format,
    sortSpec ? { spec: sortSpec, fmt: prep.scan, cs: prep.charset, targets: prep.targets } : undefined,
  );
}

export async function applyPlan(
  plan: LoadPlan,
  prep: Prepared,
  o: LoadOptions,
  input: ChunkInput,
  session: Session,
  control: Queryable,
  events: EventHub,
  signal: AbortSignal | undefined,
  checkpoint: CheckpointContext,
  rejectPath: string,
): Promise<Applied> {
  if (plan.strategy === 'insert' && prep.unchunkableReason !== undefined) {
    throw new FlatloadError('UNSUPPORTED', `the insert strategy needs records it can find, and ${prep.unchunkableReason}`, { file: o.file });
  }
  if (plan.strategy !== 'insert' && !prep.server.localInfile) {
    throw new FlatloadError('LOCAL_INFILE_DISABLED', 'the server has local_infile=OFF, so it refuses LOAD DATA LOCAL INFILE', {
      table: prep.display,
      hint: 'enable it with SET GLOBAL local_infile=1 (or local_infile=1 under [mysqld]), or load with --strategy insert',
    });
  }
  const cp = checkpoint;
  const fingerprint = (): Promise<string | null> => readTableFingerprint(control, plan.loadTarget.db, plan.loadTarget.table);
  if (cp.phase === 'prepared' && cp.tableFingerprint !== null) {
    // Chunks committed by the interrupted run are skipped: they must still be in the table.
    const now = await fingerprint();
    if (now !== cp.tableFingerprint) {
      throw new FlatloadError('RESUME_MISMATCH', `cannot resume: ${quoteQualified(plan.loadTarget.db, plan.loadTarget.table)} was emptied or re-created since the interrupted run committed ${cp.done.size} chunk(s) into it (then: ${cp.tableFingerprint}; now: ${now ?? 'missing'})`, {
        table: prep.display,
        hint: 'add --restart to load the whole input again',
      });
    }
  }
  const truncated = await restartIfRequired(control, plan, cp, events);
  if (cp.phase === 'created') {
    await runStatements(control, plan.before, 'preparing the table', {}, cp.resumed, events);
    if (plan.commitScope !== 'chunk') {
      // What the table held before the first chunk (after `before` emptied or created it): the base for row-count resume.
      const [r] = await control.query(`SELECT COUNT(*) AS n FROM ${quoteQualified(plan.loadTarget.db, plan.loadTarget.table)}`);
      cp.rowsBefore = Number((r as Array<{ n: number }>)[0]!.n);
    }
    cp.tableFingerprint = await fingerprint();
    await cp.store.update(cp.jobId, { phase: 'prepared', tableFingerprint: cp.tableFingerprint, ...(cp.rowsBefore !== null ? { rowsBefore: cp.rowsBefore } : {}) });
  } else if (truncated) {
    cp.tableFingerprint = await fingerprint();
    await cp.store.update(cp.jobId, { tableFingerprint: cp.tableFingerprint });
  }
  const unchunkable = prep.unchunkableReason !== undefined;
  const byRowCount = plan.guarantee.kind === 'exactly-once-by-row-count';
  if (plan.sortChunks && !input.sortsChunks) events.emit({ type: 'note', message: 'rows are sent in file order: the clustered key is not among the file\'s fields, or the engine cannot roll a chunk back' });
  const chunks = skippingDone(unchunkable ? wholeFile(input.source.sizeBytes) : input.chunks(), cp.done, o.file);
  const resumed = { chunks: 0, rows: 0, rejected: 0, bytes: 0 };
  for (const d of cp.done.values()) {
    resumed.chunks++;
    resumed.rows += d.rowsLoaded;
    resumed.rejected += d.rejected;
    resumed.bytes += d.endByte - d.startByte;
  }
  // Resuming by counting rows needs one stream in file order; one transaction for the whole load needs one connection.
  const jobs = unchunkable || byRowCount || plan.commitScope === 'load' ? 1 : plan.concurrency;
  const pieceBytes = Math.max(16 * 1024, Math.min(4 << 20, Math.floor(prep.server.maxAllowedPacketBytes / 2)));
  const key = plan.surrogateKey?.kind === 'pre-assign' ? plan.surrogateKey : undefined;
  const firstKey = key ? BigInt(key.firstValue) : 0n;

  events.emit({
    type: 'start',
    totalBytes: input.source.sizeBytes,
    jobs,
    table: prep.display,
    strategy: plan.strategy,
    resumedChunks: resumed.chunks,
    resumedBytes: resumed.bytes,
    resumedRows: resumed.rows,
  });
  if (unchunkable) events.emit({ type: 'note', message: `loading as one chunk: ${prep.unchunkableReason}` });

  const partial = await landedPrefix(control, plan, cp);
  if (partial) {
    events.emit({ type: 'note', message: `the interrupted run left the first ${partial.skip} record(s) of chunk ${partial.index} in the table: loading the rest of that chunk` });
  }
  const budget = new ErrorBudget(o.maxErrors, resumed.rejected);
  const allRejects: RejectRecord[] = [];
  for (const d of cp.done.values()) allRejects.push(...decodeRejects(d.rejects, d.index));
  let rejectFile: RejectFile | undefined;
  const rejectSink = (): RejectFile => {
    rejectFile ??= new RejectFile(rejectPath, headerBytes(input.head, o, prep), o.format.linesTerminatedBy);
    return rejectFile;
  };

  const pool = openPool(session, jobs, { localInfile: true });
  try {
    const sql = (fileToken: string): string => {
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
      return unchunkable && o.format.ignoreLines > 0 ? `${base} IGNORE ${o.format.ignoreLines} LINES` : base;
    };
    const beforeCommit = async (c: CutChunk, ctx: ChunkContext, outcome: ChunkOutcome, rejects: RejectedRow[]): Promise<void> => {
      const chunk = c as ResumedChunk;
      // With no transaction to share, the bookkeeping row goes through the control connection into InnoDB: writing it
      // on the loading session would interleave a second table into a MyRocks bulk load, which finalises it early.
      const [bk, bkEngine] = plan.commitScope === 'none' ? [control, 'InnoDB'] : [ctx.conn, prep.table.engine];
      await CheckpointStore.markChunk(bk, cp.schema, bkEngine, cp.jobId, {
        index: chunk.index,
        startByte: chunk.original?.startByte ?? chunk.startByte,
        endByte: chunk.endByte,
        records: chunk.original?.records ?? outcome.records,
        rowsLoaded: outcome.rowsLoaded + (chunk.original?.skipped ?? 0),
        rejected: outcome.rejected,
        sha1: null,
        rejects: encodeRejects(rejects),
      });
    };
    const keepRejects = (recs: RejectRecord[]): void => {
      if (recs.length === 0) return;
      allRejects.push(...recs);
      rejectSink().append(recs);
    };
    const afterCommit = async (chunk: CutChunk, rejects: RejectedRow[]): Promise<void> => {
      keepRejects(rejects.map((r) => ({ ...r, chunk: chunk.index })));
    };
    // A MyRocks chunk an interrupted bulk load may have touched is reloaded without bulk load: the DELETE that removes
    // its rows leaves tombstones over its range, and RocksDB refuses to ingest a file overlapping them
    // (ER_OVERLAPPING_KEYS). Through the memtable, committing in the middle, it stays within the row-lock limit; its key
    // range still makes it exactly-once (a rerun deletes the range again). Later chunks' ranges lie above it.
    const isBulkToggle = (sql: string): boolean => /^SET SESSION rocksdb_bulk_load\s*=/.test(sql);
    const resuming = cp.done.size > 0 || cp.phase !== 'created';
    const notBulk = new Set<number>();
    if (resuming && (plan.chunkBefore ?? []).some((x) => isBulkToggle(x.sql))) {
      // One stream in file order: only the first chunk not done can have been touched (ingested in part, or deleted by
      // an earlier resume, whose tombstones outlive the rows).
      let first = 0;
      while (cp.done.has(first)) first++;
      notBulk.add(first);
    }
    const chunkBefore = (c: CutChunk): string[] => {
      const sqls = (plan.chunkBefore ?? []).map((x) => x.sql);
      return notBulk.has(c.index) ? [...sqls.filter((x) => !isBulkToggle(x)), 'SET SESSION rocksdb_commit_in_the_middle = 1'] : sqls;
    };
    const chunkAfter = (c: CutChunk): string[] => {
      const sqls = (plan.chunkAfter ?? []).map((x) => x.sql);
      return notBulk.has(c.index) ? [...sqls.filter((x) => !isBulkToggle(x)), 'SET SESSION rocksdb_commit_in_the_middle = 0'] : sqls;
    };
    const fields = plan.columns ?? prep.table.columns.map((c) => ({ name: c.name, isVariable: false }));
    const executor = plan.strategy === 'insert'
      ? insertExecutor({
          input,
          file: o.file,
          db: plan.loadTarget.db,
          table: plan.loadTarget.table,
          fields,
          textField: prep.targets.textField,
          characterSet: prep.characterSet,
          scan: { format: prep.scan, charset: prep.charset, targets: prep.targets },
          key: key ? { column: key.column, first: firstKey } : undefined,
          duplicates: plan.duplicates,
          allowAltered: o.allowTruncation,
          batchBytes: plan.insertBatchBytes ?? Math.max(64 * 1024, Math.min(4 << 20, Math.floor(prep.server.maxAllowedPacketBytes / 2))),
          scope: plan.commitScope,
          chunkBefore,
          chunkAfter,
          budget,
          events,
          beforeCommit,
          afterCommit,
        })
      : loadDataExecutor({
      input,
      file: o.file,
      scope: plan.commitScope,
      chunkBefore,
      chunkAfter,
      sql,
      pre: (chunk, first) => (key ? [`SET ${KEY_VAR} = ${(firstKey + BigInt(chunk.firstRecord + first) - 1n).toString()}`] : []),
      pieceBytes,
      maxWarnings: MAX_WARNINGS,
      events,
      scan: { format: prep.scan, charset: prep.charset, targets: prep.targets },
      duplicatesExpected: plan.duplicates !== 'error',
      allowAltered: o.allowTruncation,
      budget,
      beforeCommit,
      afterCommit,
    });
    /**
     * A chunk-scoped transaction holds a named lock from before START TRANSACTION until after COMMIT. A session that
     * lost its client (a dropped connection, a killed flatload) releases it only once the server has rolled its
     * transaction back or finished committing it, so a retry, or a resumed run, that takes the lock and then reads the
     * chunk's bookkeeping row knows for sure whether the chunk landed: the connection may die after the server
     * committed but before the client heard.
     */
    const lockName = (chunk: CutChunk): string => `flatload:${cp.jobId}:${chunk.index}`;
    const underChunkLock: typeof executor = async (chunk, ctx) => {
      const [r] = await ctx.conn.query('SELECT GET_LOCK(?, 60) AS got', [lockName(chunk)]);
      if (Number((r as Array<{ got: unknown }>)[0]!.got) !== 1) {
        throw new FlatloadError('CONNECTION_LOST', `chunk ${chunk.index}: an earlier session still holds it after 60 s; cannot tell whether it committed`, { chunk: chunk.index });
      }
      try {
        if (ctx.attempt > 1 || cp.resumed) {
          const d = await cp.store.doneChunk(cp.jobId, chunk.index);
          if (d) {
            events.emit({ type: 'note', message: `chunk ${chunk.index}: committed by a session whose connection was lost before it heard; not loaded again` });
            keepRejects(decodeRejects(d.rejects, d.index));
            return { records: d.records, rowsLoaded: d.rowsLoaded, rejected: d.rejected, warnings: 0, bytes: d.endByte - d.startByte };
          }
        }
        return await withResumeFixups(chunk, ctx);
      } finally {
        await ctx.conn.query('DO RELEASE_LOCK(?)', [lockName(chunk)]).catch(() => undefined);
      }
    };
    const withResumeFixups: typeof executor = async (chunk, ctx) => {
      // A resumed load first removes what an interrupted attempt at this chunk may have left (key-range guarantee).
      if (resuming && plan.guarantee.kind === 'exactly-once-by-key-range') {
        const del = await keyRangeDelete(plan, chunk, input, prep, key ? firstKey : undefined);
        const [res] = del ? await ctx.conn.query(del) : [undefined];
        const deleted = Number((res as { affectedRows?: number } | undefined)?.affectedRows ?? 0);
        if (notBulk.has(chunk.index)) {
          events.emit({ type: 'note', message: `chunk ${chunk.index}: removed the ${deleted} row(s) an interrupted attempt had loaded; loading it without bulk load` });
        }
      }
      if (!partial || chunk.index !== partial.index) return executor(chunk, ctx);
      // Only the records the interrupted statement did not get to.
      const bytes = await input.readAll(chunk);
      const recs = locateRecords(bytes, chunk.startByte, chunk.firstLine, prep.scan, prep.charset, prep.targets);
      const from = recs[partial.skip];
      if (partial.skip > recs.length) throw new FlatloadError('RESUME_MISMATCH', `the table holds ${partial.skip} more rows than chunk ${chunk.index} has records`, { chunk: chunk.index });
      if (!from) {
        // The whole chunk landed before the crash; only its bookkeeping row is missing.
        const whole: ResumedChunk = { ...chunk, original: { startByte: chunk.startByte, records: chunk.records, skipped: partial.skip } };
        await beforeCommit(whole, ctx, { records: 0, rowsLoaded: 0, rejected: 0, warnings: 0, bytes: 0 }, []);
        return { records: partial.skip, rowsLoaded: partial.skip, rejected: 0, warnings: 0, bytes: 0 };
      }
      const rest: ResumedChunk = {
        ...chunk,
        startByte: from.offset,
        firstLine: from.line,
        firstRecord: chunk.firstRecord + partial.skip,
        records: chunk.records - partial.skip,
        original: { startByte: chunk.startByte, records: chunk.records, skipped: partial.skip },
      };
      const out = await executor(rest, ctx);
      return { ...out, records: out.records + partial.skip, rowsLoaded: out.rowsLoaded + partial.skip };
    };
    const execute: typeof executor = (chunk, ctx) => (plan.commitScope === 'chunk' ? underChunkLock(chunk, ctx) : withResumeFixups(chunk, ctx));
    const run = await runChunks({
      pool,
      jobs,
      chunks,
      isDone: (c) => (c as { alreadyDone?: boolean }).alreadyDone === true,
      execute,
      // One transaction for the whole load: opened with the session, committed at its end (nothing to retry: a lost connection lost it all).
      // Every warning of a chunk must be readable to account for its rows: the server keeps only 64 by default.
      sessionSql: [
        `SET SESSION max_error_count = ${MAX_WARNINGS}`,
        ...plan.sessionSettings.map((s) => `SET SESSION ${s.name} = ${s.value}`),
        ...(plan.commitScope === 'load' ? ['START TRANSACTION'] : []),
      ],
      sessionEnd: [...(plan.commitScope === 'load' ? ['COMMIT'] : []), ...plan.sessionEnd.map((s) => s.sql)],
      // Work held by a session until its end (one transaction for the whole load; a bulk load finalised at session end)
      // dies with its connection: retrying one chunk would quietly lose the others, so the load stops instead.
      // An engine that cannot roll back keeps part of an interrupted chunk: a retry would load that part twice, so the
      // load stops there and the rerun counts the table's rows to skip exactly that part.
      ...(plan.commitScope !== 'chunk' || plan.sessionEnd.length > 0 ? { maxAttempts: 1 } : {}),
      events,
      ...(signal ? { signal } : {}),
    });
    const totalRecords = unchunkable ? run.totals.records + resumed.rows : input.summary?.records;
    if (input.summary) await cp.store.update(cp.jobId, { chunksTotal: input.summary.chunks, rowsInInput: input.summary.records });
    if (!run.stoppedBy) {
      await cp.store.update(cp.jobId, { phase: 'loaded' });
      const vars: Record<string, string> = {};
      if (key && totalRecords !== undefined) vars['nextAutoIncrement'] = (firstKey + BigInt(totalRecords)).toString();
      try {
        if (cp.phase !== 'finished') {
          await runStatements(control, plan.after, 'finishing the load', vars, cp.resumed && cp.phase === 'loaded', events);
          await cp.store.update(cp.jobId, { phase: 'finished' });
        }
        // The rejected rows live only in the reject file once the job is done: write it (durably) first.
        if (rejectFile || allRejects.length) rejectSink().rewrite(allRejects);
        await cp.store.finish(cp.jobId, cp.keepHistory, await readTableFingerprint(control, plan.target.db, plan.target.table));
      } catch (err) {
        run.stoppedBy = toFlatloadError(err, 'finishing the load');
      }
    } else if (rejectFile || allRejects.length) {
      try {
        rejectSink().rewrite(allRejects);
      } catch (err) {
        // The rows are kept in the bookkeeping; a rerun writes the file again.
        events.emit({ type: 'warning', message: toFlatloadError(err, 'writing the reject file').message });
      }
    }
    if (run.stoppedBy) {
      const state = run.stoppedBy.code === 'INTERRUPTED' ? 'interrupted' : 'failed';
      await cp.store.update(cp.jobId, { state, message: run.stoppedBy.message }).catch(() => undefined);
    }
    return { run, input, totalRecords, resumed, rejectFile: rejectFile ? { path: rejectFile.path, log: rejectFile.logPath, rows: allRejects.length } : undefined };
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** An unsplittable input: one chunk, the server counts its records. */
async function* wholeFile(sizeBytes: number): AsyncGenerator<CutChunk> {
  yield { index: 0, startByte: 0, endByte: sizeBytes, firstLine: 1, firstRecord: 0, records: -1, newlines: 0 };
}
