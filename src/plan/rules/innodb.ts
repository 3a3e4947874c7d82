/**
 * InnoDB: MariaDB 10.6+ (empty-table bulk insert), MySQL 8.0/8.4 and
 * Percona Server (no bulk path; row-by-row B-tree inserts).
 * Rules and measurements: docs/strategies.md §InnoDB.
 */
import { quoteId, quoteQualified } from '../../db/quote.js';
import type { IndexFacts } from '../../introspect/types.js';
import {
  exactlyOnce,
  indexList,
  isIntegerColumn,
  plural,
  setting,
  stmt,
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

function indexDdl(ix: IndexFacts): string {
  const kind = ix.type.toUpperCase() === 'FULLTEXT' ? 'FULLTEXT INDEX' : ix.type.toUpperCase() === 'SPATIAL' ? 'SPATIAL INDEX' : 'INDEX';
  return `ADD ${kind} ${quoteId(ix.name)} (${ix.columns.map(quoteId).join(', ')})`;
}

/** DROP the droppable secondary indexes before, ADD them back in one ALTER after (a sorted index build). */
export function deferIndexes(ctx: Ctx, d: EngineDecision, why: string): void {
  const t = quoteQualified(ctx.loadTarget.db, ctx.loadTarget.table);
  const ix = ctx.droppable;
  d.before.push(stmt(`ALTER TABLE ${t} ${ix.map((i) => `DROP INDEX ${quoteId(i.name)}`).join(', ')}`, `drop ${plural(ix.length, 'secondary index', 'secondary indexes')} (${indexList(ix)}) for the load: ${why}`));
  d.after.push(stmt(`ALTER TABLE ${t} ${ix.map(indexDdl).join(', ')}`, `re-add ${indexList(ix)} in one ALTER (one sorted build per index instead of random inserts)`));
}

export function planInnodb(ctx: Ctx): EngineDecision {
  const { server, table, options } = ctx;
  const d: EngineDecision = {
    concurrency: ctx.parallel,
    commitScope: 'chunk',
    guarantee: exactlyOnce(),
    sessionSettings: [],
    sessionEnd: [],
    chunkBefore: [],
    chunkAfter: [],
    before: [],
    after: [],
    sortChunks: false,
    chunkSizeBytes: options.chunkSizeBytes,
    chunkMaxRecords: undefined,
  };
  const ver = versionText(server);
  const lockMode = autoincLockMode(ctx);
  const bulkIndexes = ctx.secondary.filter((i) => i.type.toUpperCase() !== 'FULLTEXT' && i.type.toUpperCase() !== 'SPATIAL');

  // --- MariaDB empty-table bulk insert: one stream, one transaction ---------------------------
  let bulk = false;
  if (mariadbBulkAvailable(ctx)) {
    const blockers: string[] = [];
    if (!ctx.emptyAtStart) {
      blockers.push(ctx.emptyHow === 'delete' ? 'DELETE leaves delete-marked records, so the table is not empty for it [measured: probe after-delete]' : 'the table already has rows [engines.md M2]');
    }
    if (table.partitioned) blockers.push('the table is partitioned: 10.11 does not use it for partitioned tables [measured: probe partitioned]');
    if (options.onDuplicate === 'replace') blockers.push('REPLACE disables it [engines.md M4; measured: probe local-replace]');
    if (options.onDuplicate === 'ignore') {
      blockers.push('with IGNORE a duplicate key silently rolls back every row loaded before it in the bulk transaction [measured: probe dup-clustered, 1003 rows -> 502]');
    }
    if (table.foreignKeys.length > 0) blockers.push(`it needs foreign_key_checks=0, which would load ${plural(table.foreignKeys.length, 'foreign key')} unchecked [engines.md M7]`);
    if (ctx.jobsForced && (options.jobs ?? 1) > 1) blockers.push(`--jobs ${options.jobs} asks for parallel streams, and its table X lock serializes them (deadlock risk) [engines.md M8; baseline c-local-x2 uc=0]`);
    if (!versionAtLeast(server, [10, 7, 0])) blockers.push(`${ver} predates the sorted index build of 10.7 (MDEV-24621), which is where the measured gain comes from`);
    if (bulkIndexes.length === 0) {
      blockers.push(
        `the table has no secondary index to build: for LOAD DATA the clustered index is inserted row by row anyway (MDEV-34703), so one stream in one transaction lost to parallel chunks [measured: us-1s-load-uc0 vs us-2s-chunk]`,
      );
    }
    if (blockers.length === 0) {
      bulk = true;
      d.concurrency = 1;
      d.commitScope = 'load';
      d.sessionSettings.push(
        setting('unique_checks', '0', 'with foreign_key_checks=0, enables the empty-table bulk insert: the secondary indexes are buffered, sorted and built at COMMIT [engines.md M1, M6]'),
        setting('foreign_key_checks', '0', 'required by the bulk insert together with unique_checks=0; the table has no foreign keys to skip [engines.md M1]'),
      );
      d.guarantee = {
        kind: 'all-or-nothing',
        text: 'the whole load is one transaction on one connection (the bulk insert only applies to the first transaction into the empty table): an interruption rolls everything back and resume starts again from the first record',
      };
      ctx.reasons.push(
        `${ver}, InnoDB, empty table with ${plural(bulkIndexes.length, 'secondary index', 'secondary indexes')} (${indexList(bulkIndexes)}): one connection, one transaction, unique_checks=0 and foreign_key_checks=0 — the empty-table bulk insert builds the secondary indexes by sorting at COMMIT [engines.md M1-M3, M6; measured: u3-*-1s-load-uc0, sb-1s-load-uc0, pi-pre-1s-load-uc0]`,
      );
      ctx.reasons.push('concurrency 1: the bulk insert holds a table X lock until COMMIT; parallel streams would wait or deadlock [engines.md M8; baseline c-local-x2 uc=0]');
      ctx.warnings.push(
        'unique secondary keys are checked at COMMIT in the bulk insert: a duplicate there fails the whole load with ER_ERROR_DURING_COMMIT (1180) and rolls it back [engines.md M6; measured: probe dup-secondary]',
      );
      ctx.warnings.push('the bulk insert spills its sort buffers to tmpdir: it needs free space there of about the size of the secondary indexes [engines.md M12]');
      if (server.binlog) ctx.warnings.push('binary logging is on: the whole load reaches the binlog as one transaction at COMMIT, and replicas apply it row by row [engines.md M11]');
    } else {
      ctx.reasons.push(`no empty-table bulk insert: ${blockers.join('; ')}`);
    }
  } else if (server.flavor === 'mysql' || server.flavor === 'percona') {
    ctx.reasons.push(`${ver}, InnoDB: no empty-table bulk path in community MySQL (LOAD DATA … ALGORITHM=BULK is HeatWave only); rows go through the B-tree one by one [engines.md Y1, Y6]`);
  }

  // --- Concurrency for per-chunk loads --------------------------------------------------------
  if (!bulk) {
    const aiSerializes = table.autoIncrementColumn !== undefined && lockMode !== 2 && ctx.transport === 'load-data';
    if (aiSerializes && !ctx.jobsForced) {
      d.concurrency = 1;
      ctx.reasons.push(
        `concurrency 1: ${table.autoIncrementColumn} is AUTO_INCREMENT and innodb_autoinc_lock_mode=${lockMode}, so every LOAD DATA holds the table AUTO-INC lock to its end, even with the ids given — parallel streams serialize and were slower [engines.md Y2; measured: u3-pre-2s-chunk, sb-2s-chunk; baseline d5/d6]`,
      );
    } else if (aiSerializes) {
      ctx.warnings.push(`--jobs ${options.jobs}: with innodb_autoinc_lock_mode=${lockMode} the LOAD DATA statements serialize on the AUTO-INC lock; one stream was as fast [measured: u3-pre-2s-chunk]`);
      ctx.reasons.push(`concurrency ${d.concurrency}: from --jobs`);
    } else {
      ctx.reasons.push(
        `concurrency ${d.concurrency}: InnoDB row locks let chunks load in parallel; 2 streams on a 2-core server nearly halved the time, 4 did not help [measured: us-2s-chunk vs us-1s-chunk, us-4s-chunk; baseline c-local-x2/x4]`,
      );
    }
    ctx.reasons.push('commit scope chunk: each chunk is one transaction with its bookkeeping row');
  }

  // --- Secondary indexes on a per-chunk load: defer them (needs --allow-ddl) -------------------
  if (!bulk && ctx.emptyAtStart && ctx.droppable.length > 0) {
    if (options.allowDdl) {
      deferIndexes(ctx, d, `the table is empty, so one sorted build per index after the load replaces ${ctx.droppable.length > 1 ? 'their' : 'its'} random inserts [engines.md Y3; measured: pi-pre-drop-*, sb-drop-*]`);
      ctx.reasons.push(`--allow-ddl: secondary indexes ${indexList(ctx.droppable)} are dropped before the load and re-added in one ALTER after it [engines.md Y3]`);
      ctx.warnings.push('the table has no secondary indexes between the first and the last statement of the load; an interrupted load leaves them missing until resume finishes');
    } else {
      ctx.reasons.push(`secondary indexes ${indexList(ctx.droppable)} are kept: dropping and re-adding them after the load needs --allow-ddl [engines.md Y3]`);
    }
  }

  // --- Key order -----------------------------------------------------------------------------
  const key = table.clusteredKey;
  const sortable = key !== undefined && key.columns.every((c) => isIntegerColumn(table, c));
  if (options.sortChunks === 'on') {
    d.sortChunks = sortable;
    if (!sortable) ctx.warnings.push('--sort-chunks on: the clustered key is missing or not an integer, so chunks are sent as they are');
    else ctx.reasons.push('--sort-chunks on: each chunk is sent in clustered-key order');
  } else if (options.sortChunks === 'auto' && sortable && ctx.input.keyOrder === 'unsorted' && !ctx.preAssign) {
    d.sortChunks = SORT_CHUNKS_HELPS;
    ctx.reasons.push(
      SORT_CHUNKS_HELPS
        ? `records arrive out of ${key!.name} order: each chunk is sorted by the key before sending (sorted runs fill pages and cut page splits) [measured: us-2s-chunk-sorted vs us-2s-chunk]`
        : `records arrive out of ${key!.name} order; sorting each chunk did not pay for itself, so chunks go as they are [measured: us-2s-chunksorted vs us-2s-chunk]`,
    );
  }
  ctx.reasons.push(ctx.keyOrderWhy);
  return d;
}

/** Whether sorting each chunk by the clustered key beat sending it unsorted (measured, docs/strategies.md). */
export const SORT_CHUNKS_HELPS = false;
