/**
 * The order rows are sent in. An InnoDB table is a B-tree on its clustered
 * key and a MyRocks table is sorted by its primary key: rows in that key's
 * order are appended, rows in random order are inserted all over the tree.
 * When the file is not in key order, flatload sorts it out of core first
 * (docs/ordering.md) — decided here, before the engine rule, which then
 * sees key-ordered rows. Rules: docs/rules.md#key-order-and-page-splits.
 */
import { formatBytes } from '../../config/size.js';
import { FlatloadError } from '../../errors/index.js';
import { clusteredKeyInFile, type FileKey } from '../../introspect/keySpec.js';
import type { IndexFacts } from '../../introspect/types.js';
import { sortBytesPerRecord } from '../../order/sortChunk.js';
import { runSpaceEstimate, runSpaceText } from '../runSpace.js';
import type { Ctx } from './context.js';

const MB = 1e6;

function fmtMB(bytes: number): string {
  return `${Math.round(bytes / MB).toLocaleString('en-US')} MB`;
}

/**
 * Whether the order rows arrive in can decide which of two rows the server
 * keeps: a duplicate is skipped (--on-duplicate ignore), replaces the earlier
 * row (replace), or is rejected within --max-errors. With the default and no
 * --max-errors the first duplicate stops the load whatever the order.
 */
export function duplicatesDecide(options: Ctx['options']): boolean {
  return options.onDuplicate !== 'error' || options.maxErrors > 0;
}

export function dupWhat(options: Ctx['options']): string {
  return options.onDuplicate !== 'error' ? `--on-duplicate ${options.onDuplicate}` : `--max-errors ${options.maxErrors}`;
}

/**
 * Why sorting by `key` could change which of two rows the server keeps (or
 * rejects), or undefined when it cannot: the sort keeps file order among
 * equal keys, so only keys it cannot tell equal, another UNIQUE key, or
 * something that sees the order (a trigger, a foreign key into the table
 * itself) make the order visible. `besides`: the indexes no duplicate can
 * reach (the sort key, and a clustered key flatload numbers).
 */
export function orderVisible(ctx: Ctx, key: FileKey, besides: ReadonlyArray<string>): string | undefined {
  const { options, table } = ctx;
  if (!duplicatesDecide(options)) return undefined;
  const dup = dupWhat(options);
  if (!key.exact) return `${dup} keeps the row the server's own load of the file would keep only in file order: ${key.inexact ?? `${key.name} is not compared by its bytes`}`;
  if (options.allowTruncation) {
    return `${dup} with --allow-truncation keeps the row the server's own load of the file would keep only in file order: a key the server changes with a warning ('12abc' stored as 12, text cut to its column's length) is sorted as the file has it`;
  }
  const other = table.indexes.find((i) => i.unique && !besides.some((b) => b.toLowerCase() === i.name.toLowerCase()));
  if (other) {
    return `${dup} with another UNIQUE key ${other.name} (${other.columns.join(', ')}): sorting by ${key.name} would change which of two rows with the same ${other.name} arrives first, and so which one the server keeps`;
  }
  if (ctx.insertTriggers > 0) return `${dup} with an INSERT trigger on the table: the trigger sees the rows in the order they arrive`;
  const self = table.foreignKeys.find((f) => f.referencedTable.toLowerCase() === table.table.toLowerCase());
  if (self) return `${dup} with the foreign key ${self.name} into the table itself: whether a row's parent is there yet depends on the order`;
  return undefined;
}

/** Decides ctx.order (and, when it orders by key, ctx.keyOrdered and its reason). */
export function planOrder(ctx: Ctx, clusterBy: IndexFacts | undefined): void {
  const { options, input, engine, reasons, warnings } = ctx;
  const forced = options.order === 'key';
  let perChunk = options.order === 'chunk';
  if (perChunk && engine === 'rocksdb') {
    warnings.push("--order chunk ignored: MyRocks' bulk load takes rows in the whole input's key order, so the input is ordered as --order auto would");
    perChunk = false;
  }
  if (options.order === 'file') {
    if (engine === 'innodb' || engine === 'rocksdb') reasons.push('--order file: the rows go in file order');
    return;
  }
  if (ctx.bulkInsert) {
    reasons.push(`file order: ${ctx.autoInc!.column}, the clustered key, is numbered in file order, so the rows reach it in key order, and the bulk insert builds the secondary indexes by sorting: no sort here [docs/rules.md#mariadb-empty-table-bulk-insert]`);
    return;
  }
  const refuse = (why: string): void => {
    (forced || perChunk ? warnings : reasons).push(`${forced || perChunk ? `--order ${options.order} ignored: ` : 'file order: '}${why}`);
  };
  if (engine !== 'innodb' && engine !== 'rocksdb') {
    if (forced || perChunk) refuse(`ENGINE=${ctx.table.engine} does not store rows by key, and its resume counts rows in file order`);
    return;
  }
  const cutAtKeys = equalKeysDecide(ctx);
  const surrogate = surrogateOrder(ctx, clusterBy);
  if (surrogate) {
    const visible = orderVisible(ctx, surrogate, [surrogate.name, ...(clusterBy ? [clusterBy.name] : [])]);
    if (visible) {
      refuse(visible);
      return;
    }
    if (perChunk) warnings.push(`--order chunk ignored: flatload numbers ${ctx.autoInc!.column} itself, in ${surrogate.name} order, which takes the whole input sorted (--order file keeps file order)`);
    else if (input.uniqueKeyOrder[surrogate.name] === 'sorted' && !forced && !cutAtKeys) return;
    orderBy(ctx, surrogate, forced, true);
    return;
  }
  const key: FileKey | undefined = clusteredKeyInFile(ctx.table, ctx.columns, clusterBy);
  if (!key) {
    refuse(clusterBy ? `the file does not carry every column of ${clusterBy.name}, the key the rows cluster by` : 'the table has no clustered key (rows append by a hidden row id in any order)');
    return;
  }
  const visible = orderVisible(ctx, key, [key.name]);
  if (visible) {
    refuse(visible);
    return;
  }
  // A sample in byte order of a key that is not compared by its bytes is kept as it is: it is at least as local as a sort by bytes.
  // MyRocks' bulk load per chunk stops (4054) at the first record out of order with part of the chunk ingested: a sample in
  // order does not show the whole file is, so an exact key is sorted (an ordered input sorts cheaply) and its chunk ranges known.
  const sampleIsEnough = !(cutAtKeys && key.exact) && !(engine === 'rocksdb' && key.exact);
  if ((ctx.keyOrdered || input.keyOrder === 'sorted') && !forced && !perChunk && sampleIsEnough) return;
  if (engine === 'rocksdb' && !key.exact) {
    refuse(`${key.inexact ?? `${key.name} is not compared by its bytes`}; MyRocks' bulk load needs the server's exact order`);
    return;
  }
  if (input.keyOrder === 'unknown' && !forced && !perChunk) {
    refuse('no sample of the input to tell its order');
    return;
  }
  if (perChunk) {
    if (chunksReadBack(ctx)) sortChunksBy(ctx, key, `--order chunk: each chunk is sorted by ${key.name} in memory before it is sent, the chunks in file order`, 'reason');
    else refuse('each chunk is sorted in memory as it is read back from the file, and a compressed file or standard input is read once as it streams');
    return;
  }
  orderBy(ctx, key, forced, false);
}

/** Equal keys cut into two file-order chunks can land in either order over two streams, and that decides a duplicate. */
function equalKeysDecide(ctx: Ctx): boolean {
  return duplicatesDecide(ctx.options) && ctx.parallel > 1;
}

/** A plain file's chunks are read back by range when they load, so each can be sorted then (a stream's cannot). */
function chunksReadBack(ctx: Ctx): boolean {
  const { input } = ctx;
  return input.kind === 'file' && input.compression === 'none' && input.sizeBytes !== undefined;
}

/** File-order chunks, each sorted by key in memory as it is sent (docs/ordering.md#10-sorting-each-chunk). */
function sortChunksBy(ctx: Ctx, key: FileKey, why: string, as: 'reason' | 'warning'): void {
  ctx.order = { kind: 'file', sortedBy: key };
  ctx.keyOrderWhy = `key order: within each chunk only (chunks of ascending ${key.name}, in file order)`;
  // Each chunk's sweep splits pages the chunks before it filled, half-empty: a DBA sizing the table needs to know.
  const size = 'the table is left larger on disk than a whole sort leaves it (1.7-1.8x measured; OPTIMIZE TABLE rebuilds it)';
  (as === 'reason' ? ctx.reasons : ctx.warnings).push(`${why}; ${size} [docs/ordering.md#10-sorting-each-chunk]`);
}

/**
 * Where the whole input cannot be sorted (no room for the runs in --tmpdir, or none writable), an InnoDB load of a
 * plain file sorts each chunk instead, which needs no disk and spares the server much of the random inserts
 * (docs/ordering.md#10-sorting-each-chunk); otherwise it goes in file order. Not when equal keys in two chunks would
 * decide a duplicate over two streams.
 */
function fallBack(ctx: Ctx, key: FileKey, numbered: boolean, why: string, fix: string): void {
  // A key flatload numbers goes in file order: sorting a chunk by another key would send it out of order.
  if (ctx.engine === 'innodb' && !equalKeysDecide(ctx) && !numbered && chunksReadBack(ctx)) {
    sortChunksBy(ctx, key, `${why}: each chunk is sorted by ${key.name} in memory instead, the chunks in file order (${fix})`, 'warning');
    return;
  }
  ctx.warnings.push(`${why}: it goes in file order (${fix})`);
}

/**
 * A clustered AUTO_INCREMENT key that flatload numbers (pre-assigned, absent
 * from the file) is ascending whatever the order; a UNIQUE key of the file
 * is then what arrives at random. Sorting by that key and numbering the rows
 * in its order gives both B-trees ascending keys (docs/ordering.md#1-why).
 */
function surrogateOrder(ctx: Ctx, clusterBy: IndexFacts | undefined): FileKey | undefined {
  const ai = ctx.autoInc;
  if (!ctx.preAssign || !ai || !clusterBy || clusterBy.columns.length !== 1 || clusterBy.columns[0]!.toLowerCase() !== ai.column.toLowerCase()) return undefined;
  for (const ix of ctx.table.indexes) {
    if (!ix.unique || ix.primary) continue;
    const key = clusteredKeyInFile(ctx.table, ctx.columns, ix);
    if (key && (ctx.engine !== 'rocksdb' || key.exact)) return key;
  }
  return undefined;
}

function orderBy(ctx: Ctx, key: FileKey, forced: boolean, numbered: boolean): void {
  const { input, engine, reasons, warnings, options } = ctx;
  const size = input.sizeBytes ?? 0;
  const records = input.estimatedRecords ?? Math.ceil(size / 32);
  // A small input is held whole and sorted without runs (docs/ordering.md, "Inputs that fit in memory").
  const holds = (options.sortsAside ? 2 : 1) * size + sortBytesPerRecord(key) * records;
  if (input.sizeBytes !== undefined && holds <= options.sortMemoryBytes) {
    ctx.order = { kind: 'key', key, spillBytes: 0, inMemory: true };
    ctx.keyOrderWhy = `key order: flatload sorts the input by ${key.name} first (in memory: its ${fmtMB(size)}${options.sortsAside ? ' twice over' : ''} and the sort's arrays, about ${fmtMB(holds)}, are within --sort-memory ${formatBytes(options.sortMemoryBytes)}), so chunks arrive with disjoint, ascending key ranges`;
  } else {
    const space = runSpaceEstimate(size, records, input.sampleRunRatio);
    const need = space.bytes;
    const runs = runSpaceText(input.sizeBytes, space, input.avgRecordBytes);
    const where = input.spillDir ? `--tmpdir (${input.spillDir})` : '--tmpdir';
    // The automatic order falls back to sorting each chunk or to file order, saying why; --order key, which the user asked for, is refused.
    if (input.spillUnwritable) {
      if (forced) {
        throw new FlatloadError('OUTPUT_UNWRITABLE', `--order key cannot be honoured: the input is sorted in runs in --tmpdir, and ${input.spillUnwritable}`, {
          hint: `point --tmpdir at a writable directory with room for about the input's size, or use ${engine === 'innodb' ? '--order chunk (each chunk sorted in memory) or ' : ''}--order file`,
        });
      }
      fallBack(ctx, key, numbered, `the input is not in ${key.name} order, and sorting it writes runs in --tmpdir, but ${input.spillUnwritable}`, 'point --tmpdir at a writable directory to sort it whole');
      return;
    }
    if (input.spillFreeBytes !== undefined && input.spillFreeBytes < need) {
      if (forced) {
        throw new FlatloadError('SPILL', `--order key cannot be honoured: sorting the input needs ${runs}, in ${where}, where ${fmtMB(input.spillFreeBytes)} are free`, {
          hint: `point --tmpdir at a larger file system, raise --sort-memory to sort it in memory, or use ${engine === 'innodb' ? '--order chunk (each chunk sorted in memory) or ' : ''}--order file`,
        });
      }
      fallBack(ctx, key, numbered, `the input is not in ${key.name} order, and sorting it needs ${runs}, in ${where}, where ${fmtMB(input.spillFreeBytes)} are free`, 'point --tmpdir at a larger file system to sort it whole');
      return;
    }
    ctx.order = { kind: 'key', key, spillBytes: need, ...(space.ratio !== undefined ? { runRatio: space.ratio } : {}) };
    ctx.keyOrderWhy = `key order: flatload sorts the input by ${key.name} first (out of core: ${runs}, in --tmpdir, deleted afterwards), so chunks arrive with disjoint, ascending key ranges`;
  }
  ctx.keyOrdered = true;
  if (numbered) {
    const ai = ctx.autoInc!.column;
    reasons.push(
      `${forced ? '--order key' : `the sampled records are not in ${key.name} order`}: the input is sorted by ${key.name} before loading and ${ai} is numbered in that order, so both ${ai} and ${key.name} receive ascending keys instead of one of them random ones [docs/rules.md#key-order-and-page-splits; docs/ordering.md]`,
    );
    warnings.push(`${ai} numbers the rows in ${key.name} order, not in file order (--order file keeps file order)`);
    return;
  }
  reasons.push(
    `${forced ? '--order key' : `the sampled records are not in ${key.name} order`}: the input is sorted by ${key.name} before loading — rows in key order are appended to the ${engine === 'innodb' ? 'B-tree' : 'LSM tree'} instead of being inserted all over it [docs/rules.md#key-order-and-page-splits; docs/ordering.md]`,
  );
}
