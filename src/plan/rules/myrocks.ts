/**
 * MyRocks (MariaDB rocksdb plugin, Percona Server MyRocks, facebook/mysql-5.6).
 * Rules and measurements: docs/strategies.md §MyRocks.
 */
import { step } from '../ops.js';
import { baseDecision, bytesForRecords, isOn, plural, variable, type Ctx, type EngineDecision } from './context.js';

const DEFAULT_MAX_ROW_LOCKS = 1_048_576;

export function planMyrocks(ctx: Ctx): EngineDecision {
  const d = baseDecision(ctx);
  const blockers = bulkLoadBlockers(ctx);
  if (blockers.length === 0) planBulkLoad(ctx, d);
  else planTransactions(ctx, d, blockers);
  return d;
}

/** Why the MyRocks bulk load cannot be used here; empty when it can. */
function bulkLoadBlockers(ctx: Ctx): string[] {
  const { server, table, options } = ctx;
  const api = isOn(variable(server, 'rocksdb_enable_bulk_load_api'));
  const hiddenPk = table.clusteredKey === undefined;
  // Pre-assigned surrogate keys start at AUTO_INCREMENT, above every existing key: disjoint from the rows already there.
  const clusteredIsSurrogate = ctx.preAssign && table.clusteredKey !== undefined && table.clusteredKey.columns.length === 1 && table.clusteredKey.columns[0]!.toLowerCase() === ctx.autoInc?.column.toLowerCase();
  const disjoint = ctx.emptyAtStart || clusteredIsSurrogate;

  const blockers: string[] = [];
  if (api === false) blockers.push('rocksdb_enable_bulk_load_api=OFF [docs/rules.md#myrocks-bulk-load]');
  if (hiddenPk) blockers.push('the table has no PRIMARY KEY (hidden key): bulk load ignores such tables [docs/rules.md#myrocks-bulk-load]');
  if (!disjoint) {
    blockers.push(
      'the table has rows and the loaded keys may overlap them: bulk load then fails at finalisation with "External file requires flush" / ER_OVERLAPPING_KEYS and keeps none of the session\'s rows [docs/rules.md#myrocks-overlapping-keys; not measured here]',
    );
  }
  if (options.onDuplicate !== 'error') {
    blockers.push(`--on-duplicate ${options.onDuplicate}: bulk load skips duplicate handling; a duplicate stops it with 1062 or 4054 and leaves partial data [docs/rules.md#myrocks-duplicates; not measured here]`);
  }
  return blockers;
}

/** One stream, rows straight into SST files: per chunk when the rows come in key order, else once for the session. */
function planBulkLoad(ctx: Ctx, d: EngineDecision): void {
  const { server } = ctx;
  d.commitScope = 'none';
  d.concurrency = 1;
  if (ctx.parallel > 1) {
    (ctx.jobsForced ? ctx.warnings : ctx.reasons).push(
      `${ctx.jobsForced ? `--jobs ${ctx.parallel} ignored: ` : ''}concurrency 1: two sessions bulk-loading one table fail — overlapping key ranges end in ER_OVERLAPPING_KEYS (4055) after part of the rows were ingested, and even disjoint pre-assigned ranges can corrupt a table with a secondary index ("Corrupt or unsupported format_version") [docs/rules.md#myrocks-parallel-bulk-load; not measured here]`,
    );
  }
  if (ctx.keyOrdered) planBulkPerChunk(ctx, d);
  else planBulkPerSession(ctx, d);
  const sk = ctx.secondary.length;
  if (sk > 0) {
    ctx.reasons.push(
      `${plural(sk, 'secondary index', 'secondary indexes')} go through the normal write batch (bulk load writes only the primary key to SST files); rocksdb_bulk_load_allow_sk=1 fails per chunk (4055), and it and dropping them to re-add after the load are not known to be faster [docs/rules.md#myrocks-secondary-keys; not measured here]`,
    );
  }
  ctx.warnings.push('MyRocks bulk load skips unique checks: a duplicate primary key stops the load (1062 or 4054) and what was finalised stays [docs/rules.md#myrocks-duplicates; not measured here]');
  if (server.binlog) ctx.warnings.push('binary logging is on: MyRocks recommends sql_log_bin=0 for bulk loads (needs a privilege; replicas then miss the rows) — flatload leaves it on [docs/rules.md#myrocks-binary-log]');
}

/** Key-ordered rows: each chunk is its own bulk load, finalised before its bookkeeping row. */
function planBulkPerChunk(ctx: Ctx, d: EngineDecision): void {
  const { table } = ctx;
  d.chunkBefore.push(step({ kind: 'bulk-load', on: true }, 'rows of this chunk go straight into SST files (PK in order) [docs/rules.md#myrocks-sorted-and-unsorted-input]'));
  d.chunkAfter.push(
    step({ kind: 'bulk-load', on: false }, 'finalise this chunk\'s bulk load: ingests its SST files; 4054/4055 are reported here, not by LOAD DATA, so it must be checked [docs/rules.md#myrocks-finalisation-errors]'),
  );
  d.guarantee = {
    kind: 'exactly-once-by-key-range',
    text: 'bulk load cannot roll back, but each chunk is a separate bulk load over its own key range, ingested before its bookkeeping row: on resume the interrupted chunk\'s key range is deleted and the chunk reloaded',
    keyColumns: table.clusteredKey!.columns,
  };
  ctx.reasons.push(
    `MyRocks with rows in ${table.clusteredKey!.name} order (${ctx.keyOrderWhy.replace(/^key order: /, '')}): rocksdb_bulk_load=1 for each chunk, finalised after it, so every chunk is ingested before its bookkeeping row; a little slower than one bulk load for the whole session, in exchange for key-range resume [docs/rules.md#myrocks-sorted-and-unsorted-input; not measured here]`,
  );
}

/** Rows out of key order: one bulk load for the session, the loader sorting them, finalised at its end. */
function planBulkPerSession(ctx: Ctx, d: EngineDecision): void {
  const { table } = ctx;
  d.session.push(
    step({ kind: 'set-session', name: 'rocksdb_bulk_load_allow_unsorted', value: '1' }, 'the rows are not in primary-key order: the bulk loader sorts them through temp files [docs/rules.md#myrocks-sorted-and-unsorted-input]'),
    step({ kind: 'bulk-load', on: true }, 'write primary-key rows straight into SST files instead of the memtable; faster than transactions [docs/rules.md#myrocks-bulk-load; docs/rules.md#measured-myrocks-bulk-load]'),
  );
  d.sessionEnd.push(
    step({ kind: 'bulk-load', on: false }, 'finalise the bulk load and ingest the SST files; errors (4054/4055, "External file requires flush") appear only here and must be checked [docs/rules.md#myrocks-finalisation-errors]'),
  );
  d.guarantee = {
    kind: 'restart-required',
    text: 'MyRocks bulk load is not transactional: rows stay invisible until the session finalises, and an interrupted load leaves an unknown part of them ingested; resume must empty the table (TRUNCATE) and load again from the first record',
  };
  ctx.reasons.push(
    `MyRocks, rows not in ${table.clusteredKey!.name} order (${ctx.keyOrderWhy.replace(/^key order: /, '')}): one bulk load with rocksdb_bulk_load_allow_unsorted=1, finalised once at the end (a bulk load per chunk fails: every chunk spans the whole key range, ER_OVERLAPPING_KEYS) [docs/rules.md#myrocks-sorted-and-unsorted-input; not measured here]`,
  );
}

/** Row-locking transactions, each chunk small enough to stay under rocksdb_max_row_locks. */
function planTransactions(ctx: Ctx, d: EngineDecision, blockers: string[]): void {
  const { server } = ctx;
  const maxLocks = Number(variable(server, 'rocksdb_max_row_locks') ?? DEFAULT_MAX_ROW_LOCKS) || DEFAULT_MAX_ROW_LOCKS;
  // A row a transaction writes counts twice against the limit; a quarter leaves room for the bookkeeping row and a
  // 2x margin (docs/rules.md#myrocks-row-lock-limit).
  const maxRecords = Math.max(1, Math.floor(maxLocks / 4));
  d.chunkMaxRecords = maxRecords;
  const bytes = bytesForRecords(maxRecords, ctx.input.avgRecordBytes);
  if (bytes !== undefined && bytes < d.chunkSizeBytes) d.chunkSizeBytes = bytes;
  ctx.reasons.push(`no MyRocks bulk load: ${blockers.join('; ')}`);
  ctx.reasons.push(
    `MyRocks transactions lock every written row: a chunk is capped at ${maxRecords} records (a quarter of rocksdb_max_row_locks=${maxLocks}: each row written counts twice against it, and a 2x margin) and ${d.chunkSizeBytes} bytes so it never hits the limit (ERROR 1296) [docs/rules.md#myrocks-row-lock-limit]`,
  );
  ctx.reasons.push(`concurrency ${d.concurrency}: row locks only, chunks load in parallel [not measured here]`);
  ctx.warnings.push('MyRocks without bulk load is slower than its bulk load, most with a unique secondary key [docs/rules.md#measured-myrocks-bulk-load]');
}
