/**
 * InnoDB: MariaDB (10.7+ has an empty-table bulk insert, used for a table with
 * secondary indexes whose clustered key flatload numbers: no duplicate of it
 * can vanish under LOAD DATA LOCAL), MySQL 8.0/8.4 and Percona Server (no
 * bulk path). Rules and measurements: docs/rules.md#innodb, docs/strategies.md.
 */
import { formatBytes } from '../../config/size.js';
import type { IndexFacts } from '../../introspect/types.js';
import { step, type Op } from '../ops.js';
import { writesBinlog } from './binlog.js';
import {
  baseDecision,
  indexList,
  loadableColumns,
  plural,
  sameName,
  variable,
  versionAtLeast,
  versionText,
  type Ctx,
  type EngineDecision,
} from './context.js';

/** innodb_autoinc_lock_mode as the server runs it (defaults: MariaDB 1, MySQL 8.0+ 2). */
export function autoincLockMode(ctx: Ctx): number {
  const v = Number(variable(ctx.server, 'innodb_autoinc_lock_mode'));
  if (Number.isInteger(v) && v >= 0 && v <= 2) return v;
  return ctx.server.flavor !== 'mariadb' && versionAtLeast(ctx.server, [8, 0, 0]) ? 2 : 1;
}

/** MariaDB 10.6+ builds an empty table in one bulk transaction when unique_checks=0 and foreign_key_checks=0 (MDEV-515, MDEV-24818). */
export function mariadbBulkAvailable(ctx: Ctx): boolean {
  return ctx.server.flavor === 'mariadb' && versionAtLeast(ctx.server, [10, 6, 0]);
}

function bufferPoolBytes(ctx: Ctx): number | undefined {
  const v = Number(variable(ctx.server, 'innodb_buffer_pool_size'));
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/** The table once loaded, taken as twice the input and the rows already there (undefined when either is unknown). */
function loadedBytes(ctx: Ctx): number | undefined {
  const size = ctx.input.sizeBytes;
  const present = ctx.emptyAtStart ? 0 : ctx.input.avgRecordBytes === undefined ? undefined : ctx.table.approxRows * ctx.input.avgRecordBytes;
  return size === undefined || present === undefined ? undefined : 2 * (size + present);
}

/**
 * Why MariaDB's empty-table bulk insert does not load this table, or
 * undefined when it does (docs/rules.md#mariadb-empty-table-bulk-insert).
 * It is used where it was measured faster (secondary indexes, sorted once at
 * the end of the statement, from 10.7) and where nothing it skips can lose a row: flatload
 * numbers the clustered key, so no duplicate of it can vanish under LOAD DATA
 * LOCAL, and a duplicate in a UNIQUE secondary index fails the index build (1180), which
 * gives the bulk insert up for a load by chunks.
 */
export function bulkInsertBlocker(ctx: Ctx): string | undefined {
  const { server, table, options } = ctx;
  const ai = ctx.autoInc;
  const clustered = table.clusteredKey;
  const numbered = ctx.preAssign && ai !== undefined && clustered?.columns.length === 1 && sameName(clustered.columns[0]!, ai.column);
  if (options.bulkInsert === 'off') return '--bulk-insert off';
  if (!versionAtLeast(server, [10, 7, 0])) return 'before MariaDB 10.7 it does not build the indexes by sorting';
  if (server.galera) return 'a Galera node does not use it (docs/rules.md#galera-no-bulk-insert)';
  if (ctx.transport !== 'load-data') return 'rows go as INSERTs';
  if (!numbered) return `the clustered key is not one flatload numbers${clustered ? '' : ' (there is none)'}: under LOAD DATA LOCAL a duplicate of it would make the rows before it vanish with only a warning (measured)`;
  if (ctx.secondary.length === 0) return 'the table has no secondary index: without one it was slower than per-chunk transactions (measured)';
  if (table.partitioned) return 'the table is partitioned (not measured here)';
  if (options.allowDdl && ctx.droppable.length > 0) return `--allow-ddl: ${indexList(ctx.droppable)} are dropped for the load and re-added in one ALTER instead (measured)`;
  if (table.foreignKeys.length > 0) return 'the table has foreign keys, which foreign_key_checks=0 would leave unchecked';
  if (table.referencedBy > 0) return 'foreign keys reference the table, so a restart could not empty it with TRUNCATE';
  if (ctx.insertTriggers > 0) return 'the table has INSERT triggers, whose failure would roll back the whole load';
  if (options.onDuplicate !== 'error') return `--on-duplicate ${options.onDuplicate}: a duplicate fails the bulk insert's index build instead of being skipped or replaced`;
  if (options.order !== 'auto' && options.order !== 'file') return `--order ${options.order}`;
  if (!ctx.input.seekable) return 'the input is read once as it streams (compressed, or standard input): the bulk insert gains only as one statement, which would take the whole input into --tmpdir first';
  if (options.chunkSizeGiven === true) return '--chunk-size: the bulk insert gains only as one statement for the whole input (measured)';
  if (options.throttled === true) return 'a throttle paces the load by chunks, and the bulk insert loads the input as one statement';
  const pool = bufferPoolBytes(ctx);
  const loaded = loadedBytes(ctx);
  if (pool !== undefined && loaded !== undefined && loaded > pool) {
    return `the table, about ${formatBytes(loaded)} once loaded, outgrows innodb_buffer_pool_size ${formatBytes(pool)}: past the pool it was not faster than per-chunk transactions, for twice the server CPU (measured)`;
  }
  if (writesBinlog(server, options.binlog) && options.bulkInsert !== 'on') {
    return 'binary logging is on: the whole load would reach the replicas as one transaction, applied after it commits (--bulk-insert on uses it anyway)';
  }
  return undefined;
}

/** Whether the bulk insert loads this table; says why not where it could have (MariaDB, InnoDB, an empty table). */
export function choosesBulkInsert(ctx: Ctx): boolean {
  if (ctx.engine !== 'innodb' || !mariadbBulkAvailable(ctx) || !ctx.emptyAtStart) return false;
  const why = bulkInsertBlocker(ctx);
  if (why) ctx.reasons.push(`${versionText(ctx.server)}: the empty-table bulk insert is not used: ${why} [docs/rules.md#mariadb-empty-table-bulk-insert]`);
  return why === undefined;
}

/**
 * One transaction for the whole load on one connection, with unique_checks=0
 * and foreign_key_checks=0: InnoDB writes one undo record for the table and
 * builds every index by sorting. A resume starts again.
 */
function planBulkInsert(ctx: Ctx, d: EngineDecision): EngineDecision {
  const why = '[docs/rules.md#mariadb-empty-table-bulk-insert]';
  d.concurrency = 1;
  d.commitScope = 'load';
  // One statement: a second LOAD DATA in the same transaction merges its keys into the indexes the first one built.
  d.chunkSizeBytes = Math.max(d.chunkSizeBytes, ctx.input.sizeBytes ?? 0);
  d.session.push(
    step({ kind: 'set-session', name: 'unique_checks', value: '0' }, `with foreign_key_checks=0, what lets InnoDB take its bulk path; a duplicate in a UNIQUE index is then found when the index is built ${why}`),
    step({ kind: 'set-session', name: 'foreign_key_checks', value: '0' }, `the table has no foreign keys to check ${why}`),
    step({ kind: 'transaction', edge: 'begin' }, `the whole load is one transaction: its first row, into the empty table, starts the bulk insert ${why}`),
  );
  d.sessionEnd.push(step({ kind: 'transaction', edge: 'commit' }, `ends the bulk insert; a duplicate in a UNIQUE index fails the statement that builds the indexes, or this (1180), and the load runs again by chunks ${why}`));
  d.guarantee = {
    kind: 'restart-required',
    text: 'the whole load is one transaction, committed after the last chunk: an interrupted load leaves the table as empty as it was, and resume loads again from the first record',
  };
  if (ctx.parallel > 1) {
    (ctx.jobsForced ? ctx.warnings : ctx.reasons).push(`${ctx.jobsForced ? `--jobs ${ctx.parallel} ignored: ` : ''}concurrency 1: the bulk insert is one transaction on one connection, holding a table lock ${why}`);
  }
  ctx.reasons.push(
    `${versionText(ctx.server)}: the empty-table bulk insert: ${ctx.autoInc!.column}, the clustered key, is numbered by flatload in file order, so no duplicate of it can vanish, and InnoDB builds ${indexList(ctx.secondary)} by sorting instead of inserting each key at a random place: measured faster than per-chunk transactions for such a table within the buffer pool, for less client CPU and about twice the server CPU (the sort runs on every core; --bulk-insert off spares it). A row the server would skip or change, or a duplicate found when the indexes are built, rolls the whole load back and it runs again by chunks, where bad rows are named ${why}`,
  );
  ctx.reasons.push('commit scope load: the whole load is one transaction; chunk bookkeeping rows go through the control connection');
  return d;
}

/** DROP the droppable secondary indexes before, ADD them back in one ALTER after (one sorted build per index). */
export function deferIndexes(ctx: Ctx, d: EngineDecision, why: string): void {
  const ix = ctx.droppable;
  const indexes = ix.map((i) => ({ name: i.name, columns: i.columns }));
  d.before.push(step({ kind: 'drop-indexes', table: ctx.loadTarget, indexes }, `drop ${plural(ix.length, 'secondary index', 'secondary indexes')} (${indexList(ix)}) for the load: ${why}`));
  d.after.push(step({ kind: 'add-indexes', table: ctx.loadTarget, indexes }, `re-add ${indexList(ix)} in one ALTER: one sorted build per index instead of random inserts`));
}

/**
 * Whether the AUTO_INCREMENT surrogate can be taken out of the load (--allow-ddl):
 * the table is empty, the key is the whole PRIMARY KEY and in no other index,
 * nothing references the table, and a UNIQUE NOT NULL key of real columns
 * remains to cluster the rows by while it is gone.
 */
export function deferSurrogatePossible(ctx: Ctx): { ok: true; natural: IndexFacts; restore: Extract<Op, { kind: 'add-auto-increment-key' }> } | { ok: false; why: string } {
  const { table } = ctx;
  const ai = ctx.autoInc;
  if (!ai) return { ok: false, why: 'no AUTO_INCREMENT column' };
  if (!ctx.emptyAtStart) return { ok: false, why: 'the table has rows, whose keys would be renumbered' };
  const pk = table.primaryKey;
  if (!pk || pk.columns.length !== 1 || !sameName(pk.columns[0]!, ai.column)) return { ok: false, why: `${ai.column} is not the whole PRIMARY KEY` };
  if (table.indexes.some((i) => !i.primary && i.columns.some((c) => sameName(c, ai.column)))) return { ok: false, why: `${ai.column} is part of another index` };
  if (table.referencedBy > 0) return { ok: false, why: 'foreign keys reference the table' };
  if (table.partitioned) return { ok: false, why: 'the table is partitioned' };
  const notNull = new Set(table.columns.filter((c) => !c.nullable).map((c) => c.name.toLowerCase()));
  const natural = table.indexes.find((i) => i.unique && !i.primary && i.columns.every((c) => notNull.has(c.toLowerCase())) && i.type.toUpperCase() === 'BTREE');
  if (!natural) return { ok: false, why: 'no UNIQUE NOT NULL key would cluster the rows meanwhile' };
  const col = table.columns.find((c) => sameName(c.name, ai.column))!;
  const cols = loadableColumns(table);
  const idx = cols.findIndex((c) => sameName(c.name, ai.column));
  return {
    ok: true,
    natural,
    restore: { kind: 'add-auto-increment-key', table: ctx.loadTarget, column: col.name, columnType: col.columnType, after: idx <= 0 ? null : cols[idx - 1]!.name },
  };
}

/**
 * Where a second stream buys little time for much more server CPU (key-ordered rows, clustered index only): the
 * table fitting half the buffer pool at twice the input, or past the whole pool, where the second stream overlaps
 * page reads and writes. The plan keeps its streams and says what they cost (docs/rules.md#key-ordered-streams).
 */
function keyOrderedStreams(ctx: Ctx): { loadedBytes: number; poolBytes: number; past: boolean } | undefined {
  const poolBytes = bufferPoolBytes(ctx);
  const loaded = loadedBytes(ctx);
  if (poolBytes === undefined || loaded === undefined) return undefined;
  const applies = ctx.server.flavor === 'mariadb' && ctx.transport === 'load-data' && !ctx.table.partitioned && ctx.keyOrdered && ctx.secondary.length === 0;
  // Between half the pool and all of it was not measured: the usual reason.
  if (!applies || (loaded > poolBytes / 2 && loaded <= poolBytes)) return undefined;
  return { loadedBytes: loaded, poolBytes, past: loaded > poolBytes };
}

/** The concurrency reason of a key-ordered load where keyOrderedStreams applies. */
function keyOrderedReason(ctx: Ctx, n: number, o: { loadedBytes: number; poolBytes: number; past: boolean }): string {
  const size = `about ${formatBytes(o.loadedBytes)} once loaded, innodb_buffer_pool_size ${formatBytes(o.poolBytes)}`;
  const into = ctx.emptyAtStart ? 'into an empty table with' : 'into a table with rows and';
  const where = o.past
    ? `${into} no secondary index, past the buffer pool (${size}): a second stream overlaps the page reads and writes but saves little time for much more server CPU`
    : `${into} no secondary index that fits the buffer pool (${size})${ctx.emptyAtStart ? ', so every row goes to the same end of one B-tree: there' : ': appending there,'} a second stream saves little time for much more server CPU`;
  return `concurrency ${n}: the chunks arrive in key order ${where}; --jobs 1 spares the server's CPU for a little more time [docs/rules.md#key-ordered-streams]`;
}

export function planInnodb(ctx: Ctx): EngineDecision {
  const { server, table, options } = ctx;
  const d = baseDecision(ctx);
  const ver = versionText(server);
  const lockMode = autoincLockMode(ctx);

  // --- The MariaDB empty-table bulk insert (decided before the order: planner.ts) ----------------
  if (ctx.bulkInsert) return planBulkInsert(ctx, d);
  if (server.flavor === 'mysql' || server.flavor === 'percona') {
    ctx.reasons.push(`${ver}, InnoDB: no empty-table bulk path in community MySQL (LOAD DATA … ALGORITHM=BULK is HeatWave only); rows go through the B-tree one by one [docs/rules.md#mysql-8-innodb]`);
  }

  // --- Concurrency ---------------------------------------------------------------------------
  const hasAutoInc = table.autoIncrementColumn !== undefined && !ctx.surrogateDefer;
  const aiSerializes = hasAutoInc && lockMode !== 2 && ctx.transport === 'load-data';
  const ordered = d.concurrency > 1 ? keyOrderedStreams(ctx) : undefined;
  if (options.jobs === 1) {
    // One stream because it was asked for, not because InnoDB needs it: the reason says who asked.
    const asked = options.connectionsBudgeted ? "the export's share for this table (its --jobs budget, at most one stream per 8 MiB of the table's input)" : '--jobs 1';
    ctx.reasons.push(
      `concurrency 1: ${asked}; InnoDB row locks would let chunks load in parallel [docs/rules.md#innodb-parallel-streams]`,
    );
  } else if (aiSerializes) {
    ctx.reasons.push(
      `concurrency ${d.concurrency}: ${table.autoIncrementColumn} is AUTO_INCREMENT and innodb_autoinc_lock_mode=${lockMode}, so LOAD DATA statements hold the AUTO-INC lock; with chunks of this size streams still overlap their parsing and index work, so ${plural(d.concurrency, 'stream')} are kept [docs/rules.md#auto-increment-lock-modes; docs/rules.md#measured-auto-increment-streams]`,
    );
  } else if (ordered) {
    ctx.reasons.push(keyOrderedReason(ctx, d.concurrency, ordered));
  } else {
    ctx.reasons.push(
      `concurrency ${d.concurrency}: InnoDB row locks let chunks load in parallel [docs/rules.md#innodb-parallel-streams]`,
    );
  }
  ctx.reasons.push('commit scope chunk: each chunk is one transaction with its bookkeeping row');

  // --- Secondary indexes: drop and re-add in one ALTER (--allow-ddl) ---------------------------
  const newRows = ctx.input.estimatedRecords;
  const mostlyNew = ctx.emptyAtStart || (newRows !== undefined && newRows >= table.approxRows);
  if (ctx.droppable.length > 0 && mostlyNew) {
    if (options.allowDdl) {
      const why = ctx.emptyAtStart
        ? 'one sorted build per index after the load beats maintaining them row by row [docs/rules.md#secondary-index-deferral]'
        : `the file (about ${newRows} records) is at least as large as the table (about ${table.approxRows} rows), so rebuilding the indexes over both should still beat inserting into them (not measured here) [docs/rules.md#secondary-index-deferral]`;
      deferIndexes(ctx, d, why);
      ctx.reasons.push(`--allow-ddl: secondary indexes ${indexList(ctx.droppable)} are dropped before the load and re-added in one ALTER after it: ${why}`);
      ctx.warnings.push(
        `between the first and the last statement of the load the table lacks ${plural(ctx.droppable.length, 'index', 'indexes')} ${indexList(ctx.droppable)}: queries that need them slow down, and an interrupted load leaves them missing until resume finishes`,
      );
    } else {
      ctx.reasons.push(`secondary indexes ${indexList(ctx.droppable)} are kept: dropping them for the load and re-adding them in one ALTER is faster, but needs --allow-ddl [docs/rules.md#secondary-index-deferral]`);
    }
  } else if (ctx.droppable.length > 0) {
    ctx.reasons.push(`secondary indexes ${indexList(ctx.droppable)} are kept: the table holds more rows (about ${table.approxRows}) than the file brings, so a rebuild would cost more than it saves`);
  }

  ctx.reasons.push(ctx.keyOrderWhy);
  return d;
}
