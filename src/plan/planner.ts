/**
 * The strategy planner: a pure function from facts (server, table, input
 * sample) and options to a LoadPlan. No I/O, no clock, no os. Every decision
 * adds a reason naming the fact behind it; rules and the measurements behind
 * them are in docs/strategies.md.
 */
import { formatBytes } from '../config/size.js';
import type { ColumnTarget, StrategyName } from '../config/loadOptions.js';
import { FlatloadError } from '../errors/index.js';
import type { IndexFacts, ServerFacts } from '../introspect/types.js';
import { step, type Step, type TableRef } from './ops.js';
import { PLAN_VERSION, type Guarantee, type LoadPlan, type PlanFacts, type PlanOptions, type SurrogateKeyPlan } from './types.js';
import {
  engineKind,
  loadableColumns,
  plural,
  sameName,
  versionAtLeast,
  versionText,
  type AutoIncInfo,
  type Ctx,
  type EmptyHow,
  type EngineDecision,
} from './rules/context.js';
import { planBinlog } from './rules/binlog.js';
import { galeraOf, planGalera, refuseOnGalera } from './rules/galera.js';
import { planGeneric } from './rules/generic.js';
import { choosesBulkInsert, deferSurrogatePossible, planInnodb } from './rules/innodb.js';
import { planMode, type ModePlan } from './rules/modes.js';
import { duplicatesDecide, dupWhat, planOrder } from './rules/order.js';
import { clusteredKeyInFile } from '../introspect/keySpec.js';
import { planMyisamAria } from './rules/myisam.js';
import { planMyrocks } from './rules/myrocks.js';
import { planTokudb } from './rules/tokudb.js';
import { streamsThatFit } from './rules/connections.js';

const MAX_DEFAULT_STREAMS = 8;
const INSERT_BATCH_MAX = 1 << 20;
const INSERT_BATCH_MIN = 16 * 1024;

/** Warnings the server keeps per statement at most (max_error_count's ceiling); the load sets it so. */
export const MAX_LISTED_WARNINGS = 65535;

/**
 * Connections to use when neither --jobs nor an engine rule decides: the
 * server's cores (thread_pool_size on MariaDB), else the client's, at most 8:
 * streams beyond the cores did not pay (docs/rules.md#measured-parallel-streams).
 */
export function defaultConcurrency(server: ServerFacts, clientCpus: number): number {
  const cpus = server.serverCpus ?? clientCpus;
  return Math.max(1, Math.min(MAX_DEFAULT_STREAMS, Math.floor(Number.isFinite(cpus) ? cpus : 1)));
}

/** Bytes of SQL per multi-row INSERT: half of max_allowed_packet, at most 1 MiB, at least 16 KiB (docs/rules.md#packet-size-and-insert-batches). */
export function insertBatchBytes(server: ServerFacts): number {
  const packet = server.maxAllowedPacketBytes > 0 ? server.maxAllowedPacketBytes : 16 << 20;
  return Math.max(Math.min(INSERT_BATCH_MIN, Math.floor(packet / 2)), Math.min(INSERT_BATCH_MAX, Math.floor(packet / 2)));
}

function autoIncInfo(facts: PlanFacts, options: PlanOptions): AutoIncInfo | undefined {
  const { table, input } = facts;
  const column = table.autoIncrementColumn;
  if (column === undefined) return undefined;
  if (options.columns) {
    const has = options.columns.some((c) => !c.isVariable && sameName(c.name, column));
    return { column, inFile: has ? 'yes' : 'no', how: `--columns ${has ? 'names' : 'does not name'} it` };
  }
  if (input.headerColumns) {
    const has = input.headerColumns.some((c) => sameName(c, column));
    return { column, inFile: has ? 'yes' : 'no', how: `the header line ${has ? 'names' : 'does not name'} it` };
  }
  const n = input.sampleFieldCount;
  const loadable = loadableColumns(table).length;
  if (n === undefined) return { column, inFile: 'unknown', how: 'no sample of the input (standard input or empty file)' };
  if (n === loadable) return { column, inFile: 'yes', how: `the sample has ${n} fields per record, one per column` };
  if (n === loadable - 1) return { column, inFile: 'no', how: `the sample has ${n} fields per record, one fewer than the ${loadable} columns` };
  return { column, inFile: 'unknown', how: `the sample has ${n} fields per record for ${loadable} columns` };
}

function naturalChoice(localInfile: boolean, surrogate: boolean): StrategyName {
  if (!localInfile) return 'insert';
  return surrogate ? 'surrogate-key' : 'load-data';
}

interface Surrogate {
  ai: AutoIncInfo | undefined;
  keyAbsent: boolean;
  key: SurrogateKeyPlan | undefined;
  preAssign: boolean;
  columns: ColumnTarget[] | undefined;
}

/** Whether MyISAM/Aria number an absent AUTO_INCREMENT key themselves: one stream under the table lock. */
function serverNumbersInOrder(engine: Ctx['engine'], options: PlanOptions): boolean {
  return (engine === 'myisam' || engine === 'aria') && !(options.jobs !== undefined && options.jobs > 1);
}

/** The transport (LOAD DATA LOCAL or INSERT) and whether it was forced. */
function planStrategy(facts: PlanFacts, options: PlanOptions, ai: AutoIncInfo | undefined, engine: Ctx['engine'], reasons: string[], warnings: string[]): { strategy: StrategyName; plannerChoice: StrategyName } {
  const { server, table } = facts;
  const keyAbsent = ai?.inFile === 'no';
  const plannerChoice = naturalChoice(server.localInfile, keyAbsent && !serverNumbersInOrder(engine, options));
  if (!server.localInfile) {
    reasons.push('local_infile=OFF on the server: LOAD DATA LOCAL would be refused (ER 1148/3948/4166), so rows go as multi-row INSERT statements [docs/rules.md#local-infile]');
  }
  if (options.strategy === undefined) {
    const strategy = plannerChoice;
    reasons.push(`strategy ${strategy}: ${strategy === 'insert' ? 'LOAD DATA LOCAL is not available' : strategy === 'surrogate-key' ? `LOAD DATA LOCAL with the AUTO_INCREMENT key ${ai!.column} assigned by flatload (${ai!.how})` : 'LOAD DATA LOCAL, the fastest path the server offers [docs/rules.md#load-data-local-versus-multi-row-insert: multi-row INSERT was 1.2-5.2x slower]'}`);
    return { strategy, plannerChoice };
  }
  const strategy = options.strategy;
  if (strategy === 'surrogate-key' && !keyAbsent) {
    throw new FlatloadError(
      'USAGE',
      ai === undefined
        ? `--strategy surrogate-key: ${table.db}.${table.table} has no AUTO_INCREMENT column`
        : `--strategy surrogate-key: the AUTO_INCREMENT column ${ai.column} is ${ai.inFile === 'yes' ? 'in the file' : 'possibly in the file'} (${ai.how})`,
      { table: `${table.db}.${table.table}`, hint: ai ? `give --columns without ${ai.column}` : undefined },
    );
  }
  reasons.push(
    strategy === plannerChoice
      ? `strategy ${strategy}: forced by --strategy (the planner would have chosen it too)`
      : `strategy ${strategy}: forced by --strategy; the planner would have chosen ${plannerChoice}`,
  );
  if (strategy !== 'insert' && !server.localInfile) {
    warnings.push(`--strategy ${strategy} needs LOAD DATA LOCAL, but the server has local_infile=OFF: the load will be refused`);
  }
  return { strategy, plannerChoice };
}

/** An AUTO_INCREMENT key the file does not carry: numbered by the server or pre-assigned by flatload. */
function planSurrogate(facts: PlanFacts, options: PlanOptions, strategy: StrategyName, engine: Ctx['engine'], mode: ModePlan, reasons: string[], warnings: string[]): Surrogate {
  const { server, table } = facts;
  const ai = autoIncInfo(facts, options);
  const out: Surrogate = { ai, keyAbsent: ai?.inFile === 'no', key: undefined, preAssign: false, columns: options.columns };
  if (ai?.inFile === 'unknown') {
    reasons.push(`AUTO_INCREMENT ${ai.column}: assumed to be in the file (${ai.how}); give --columns to say otherwise`);
  }
  if (!out.keyAbsent || !ai) return out;
  if (out.columns === undefined) {
    out.columns = loadableColumns(table)
      .filter((c) => !sameName(c.name, ai.column))
      .map((c) => ({ name: c.name, isVariable: false }));
    reasons.push(`column list ${out.columns.map((c) => c.name).join(', ')}: every loadable column except ${ai.column}, which the file does not carry (${ai.how})`);
  }
  if (strategy === 'load-data') {
    out.key = { kind: 'server', column: ai.column };
    reasons.push(
      options.strategy === undefined && serverNumbersInOrder(engine, options)
        ? `${ai.column}: numbered by the server: one stream under the table lock takes the AUTO_INCREMENT values in file order, as pre-assigned keys would, and skips a per-row expression; an interrupted load resumes by row count, so the numbering is the same [docs/strategies.md: npm run bench -- --strategies]`
        : `${ai.column}: numbered by the server (--strategy load-data); with innodb_autoinc_lock_mode<2 parallel LOAD DATA statements serialize on the AUTO-INC lock [docs/rules.md#auto-increment-lock-modes]`,
    );
    return out;
  }
  const first = firstKey(mode.emptyHow, table.autoIncrementNext);
  if (first === undefined) {
    out.key = { kind: 'server', column: ai.column };
    warnings.push(`${ai.column}: the table has rows and its AUTO_INCREMENT value is unknown, so the server numbers the rows (no pre-assigned keys)`);
    return out;
  }
  out.preAssign = true;
  out.key = { kind: 'pre-assign', column: ai.column, firstValue: first.value };
  reasons.push(
    `${ai.column}: pre-assigned in file order from ${first.value} (${first.why}); each chunk starts at ${first.value} + its first record number, so the engine sees explicit ascending keys, replays are idempotent and chunk key ranges are disjoint [docs/resume.md#the-guarantee-per-engine-and-strategy; docs/rules.md#pre-assigned-keys]`,
  );
  if (mode.emptyHow === 'no') {
    warnings.push(`pre-assigned ${ai.column} values assume no other session inserts into the table during the load (they would take the same ids)`);
    if ((server.flavor === 'mysql' || server.flavor === 'percona') && versionAtLeast(server, [8, 0, 0])) {
      warnings.push('MySQL 8 caches information_schema.TABLES.AUTO_INCREMENT (information_schema_stats_expiry): the executor must confirm the first key with SELECT MAX(key)+1 before loading [docs/rules.md#information-schema-caches-auto-increment]');
    }
  }
  return out;
}

/** What every engine rule reads: derived once from the facts, the options and the decisions so far. */
function ruleContext(
  facts: PlanFacts,
  options: PlanOptions,
  engine: Ctx['engine'],
  strategy: StrategyName,
  mode: ModePlan,
  sk: Surrogate,
  reasons: string[],
  warnings: string[],
): Ctx {
  const { server, table, input } = facts;
  const ai = sk.ai;
  const clustered = table.clusteredKey;
  const clusteredIsSurrogate = sk.preAssign && clustered !== undefined && clustered.columns.length === 1 && sameName(clustered.columns[0]!, ai!.column);
  const fileKey = clustered ? clusteredKeyInFile(table, sk.columns) : undefined;
  // Byte order of a key the server compares otherwise (a collation) is not its order: MyRocks' bulk load needs the real one.
  const sortedExactly = input.keyOrder === 'sorted' && fileKey?.exact !== false;
  const keyOrderWhy = clusteredIsSurrogate
    ? `key order: ${ai!.column} is the clustered key and is pre-assigned in file order, so rows arrive in key order`
    : input.keyOrder === 'sorted' && !sortedExactly
      ? `key order: the sampled records are in ${clustered?.name ?? 'key'}'s byte order, which is not the server's (${fileKey?.inexact ?? 'a collation'})`
    : input.keyOrder === 'sorted'
      ? `key order: the sampled records (${input.sampleRecords}) are in ${clustered?.name ?? 'key'} order`
      : input.keyOrder === 'unsorted'
        ? `key order: the sampled records are not in ${clustered?.name ?? 'key'} order`
        : `key order: unknown (${clustered ? 'the key is not in the file or not comparable' : 'no clustered key'})`;
  const secondary = table.indexes.filter((i) => !i.primary && !(clustered && sameName(i.name, clustered.name)));
  const fkColumns = table.foreignKeys.map((f) => f.columns.map((c) => c.toLowerCase()));
  const droppable = secondary.filter((i) => {
    if (i.unique || i.type.toUpperCase() !== 'BTREE') return false;
    const cols = i.columns.map((c) => c.toLowerCase());
    if (ai && cols[0] === ai.column.toLowerCase()) return false;
    return !fkColumns.some((fk) => fk.every((c, k) => cols[k] === c));
  });
  const emptyHow: EmptyHow = mode.emptyHow;
  const wanted = options.jobs ?? defaultConcurrency(server, options.clientCpus);
  const fit = streamsThatFit(wanted, server, options.connectionsBudgeted);
  if (fit.warning) warnings.push(fit.warning);
  return {
    server,
    table,
    input,
    options,
    engine,
    transport: strategy === 'insert' ? 'insert' : 'load-data',
    strategy,
    loadTarget: mode.loadTarget,
    emptyHow,
    emptyAtStart: emptyHow === 'already' || emptyHow === 'truncate' || emptyHow === 'shadow',
    parallel: fit.streams,
    jobsForced: options.jobs !== undefined,
    autoInc: ai,
    preAssign: sk.preAssign,
    columns: sk.columns,
    columnsInFile: (sk.columns ?? loadableColumns(table).map((c) => ({ name: c.name, isVariable: false }))).filter((c) => !c.isVariable).map((c) => c.name),
    surrogateDefer: false,
    keyOrdered: clusteredIsSurrogate || (sortedExactly && clustered !== undefined),
    keyOrderWhy,
    order: { kind: 'file' },
    secondary,
    droppable,
    insertTriggers: table.triggers.filter((t) => t.event.toUpperCase() === 'INSERT').length,
    bulkInsert: false,
    reasons,
    warnings,
  };
}

/**
 * --allow-ddl on InnoDB: take the surrogate key out of the load and re-create
 * it afterwards (docs/rules.md#measured-allow-ddl). Returns the
 * steps around the load; updates the context and the surrogate plan.
 */
function planDeferSurrogate(ctx: Ctx, sk: Surrogate): { before: Step[]; after: Step[]; clusterBy?: IndexFacts } {
  const none = { before: [], after: [] };
  const { server, options, reasons, warnings } = ctx;
  const ai = sk.ai;
  if (!sk.keyAbsent || !ai || ctx.strategy === 'load-data' || ctx.engine !== 'innodb' || server.flavor === 'tidb') return none;
  const possible = deferSurrogatePossible(ctx);
  if (!possible.ok) {
    reasons.push(`${ai.column} stays in the load: ${possible.why}`);
    return none;
  }
  if (!options.allowDdl) {
    reasons.push(`${ai.column} stays in the load: taking it out (DROP COLUMN, then ADD … AUTO_INCREMENT PRIMARY KEY after the load, clustering by ${possible.natural.name} meanwhile) measured faster but needs --allow-ddl [docs/rules.md#measured-allow-ddl]`);
    return none;
  }
  sk.key = { kind: 'defer', column: ai.column };
  sk.preAssign = false;
  ctx.preAssign = false;
  ctx.surrogateDefer = true;
  ctx.keyOrdered = false;
  ctx.keyOrderWhy = `key order: the rows cluster by ${possible.natural.name} while ${ai.column} is out of the table`;
  reasons.push(`${ai.column}: taken out of the load and re-added after it (--allow-ddl); ${possible.natural.name} clusters the rows meanwhile [docs/rules.md#measured-allow-ddl]`);
  warnings.push(`${ai.column} is re-created after the load: its values number the rows in ${possible.natural.name} order, not in file order`);
  return {
    before: [
      step(
        { kind: 'drop-column', table: ctx.loadTarget, column: ai.column },
        `take the AUTO_INCREMENT key out of the load (--allow-ddl): rows cluster by ${possible.natural.name} and chunks load in parallel without the AUTO-INC lock [docs/rules.md#measured-allow-ddl]`,
      ),
    ],
    after: [step(possible.restore, `re-create ${ai.column} as the AUTO_INCREMENT PRIMARY KEY (numbers the rows 1..N; one table rebuild)`)],
    clusterBy: possible.natural,
  };
}

function engineRule(ctx: Ctx): EngineDecision {
  switch (ctx.engine) {
    case 'innodb':
      return ctx.server.flavor === 'tidb' ? planGeneric(ctx) : planInnodb(ctx);
    case 'rocksdb':
      return planMyrocks(ctx);
    case 'tokudb':
      return planTokudb(ctx);
    case 'myisam':
    case 'aria':
      return planMyisamAria(ctx);
    default:
      return planGeneric(ctx);
  }
}

/**
 * Rows in file order over several streams: a later chunk can commit before an
 * earlier one, so of two rows with one unique key the later can win where the
 * server's own load keeps the first (IGNORE, or the one not rejected) or lose
 * where it keeps the last (REPLACE). flatload's key-ordered chunks hold all
 * rows of a key, so only file order needs one stream. Sets ctx.parallel.
 */
function oneStreamForDuplicates(ctx: Ctx): string | undefined {
  const { options, table } = ctx;
  if (ctx.parallel <= 1 || !duplicatesDecide(options) || ctx.order.kind === 'key') return undefined;
  // Keys flatload numbers itself (pre-assigned) never repeat.
  const numbered = (cols: string[]): boolean => ctx.preAssign && cols.length === 1 && ctx.autoInc !== undefined && sameName(cols[0]!, ctx.autoInc.column);
  if (!table.indexes.some((i) => i.unique && !numbered(i.columns))) return undefined;
  const asked = ctx.parallel;
  ctx.parallel = 1;
  return `${ctx.jobsForced ? `--jobs ${asked} ignored: ` : ''}concurrency 1: ${dupWhat(options)} with the rows in file order: over ${asked} streams a later chunk can commit before an earlier one, and which of two rows with the same unique key the table keeps would depend on it (the server's own load of the file keeps the first, or with REPLACE the last)`;
}

/** Reasons and warnings that hold whatever the engine. */
/**
 * Under --on-duplicate ignore every duplicate row raises one warning. A chunk
 * of at most as many records as the server lists warnings has every warning
 * listed unless some row raised two, so duplicates (counted by the server's
 * Skipped) never hide a row the server changed, on engines that cannot roll
 * a chunk back to look again too.
 */
function capIgnoredDuplicates(ctx: Ctx, d: EngineDecision): void {
  if (ctx.options.onDuplicate !== 'ignore') return;
  // Without a unique key nothing is a duplicate.
  if (!ctx.table.primaryKey && !ctx.table.indexes.some((i) => i.unique || i.primary)) return;
  if ((d.chunkMaxRecords ?? Infinity) <= MAX_LISTED_WARNINGS) return;
  d.chunkMaxRecords = MAX_LISTED_WARNINGS;
  ctx.reasons.push(
    `duplicates ignored: a chunk is capped at ${MAX_LISTED_WARNINGS} records, the most warnings the server lists for one statement, so every duplicate's warning is listed and a changed value among them is never hidden [docs/rules.md#ignored-duplicates-and-the-warnings-list]`,
  );
}

/** Merged chunks without --chunk-size: each is built in memory and held until it commits. */
export const MERGED_CHUNK_BYTES = 16 * 1024 * 1024;
/** Chunks sorted one by one (OrderPlan sortedBy): at 16 MiB a 368 MB load peaked at 301 MiB of RSS, at 8 MiB 244 (docs/ordering.md#10-sorting-each-chunk). */
export const SORTED_CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * A key-ordered chunk is the merge's output, held in memory from the merge to
 * its commit, (streams + 1) at a time: cut at 16 MiB, the client's memory
 * stays flat with the input (docs/ordering.md §6). A resume keeps its stored plan's size.
 */
function capMergedChunks(ctx: Ctx, d: EngineDecision): void {
  const merged = ctx.order.kind === 'key';
  const cap = merged ? MERGED_CHUNK_BYTES : SORTED_CHUNK_BYTES;
  if ((ctx.order.kind === 'file' && ctx.order.sortedBy === undefined) || ctx.options.chunkSizeGiven === true || d.chunkSizeBytes <= cap) return;
  const before = d.chunkSizeBytes;
  d.chunkSizeBytes = cap;
  const held = merged
    ? `a key-ordered chunk is built in memory by the merge and held until it commits, ${Math.max(1, d.concurrency) + 1} at a time`
    : 'a chunk is sorted in memory (read whole, then copied in key order) and held until it commits, one per stream';
  ctx.reasons.push(`chunks of ${formatBytes(cap)} (not ${formatBytes(before)}): ${held}, so the client's memory does not grow with the input [docs/ordering.md#${merged ? '6-memory-and-spill-space' : '10-sorting-each-chunk'}]`);
}

/** Standard input read once as it loads: what a broken record late in it, and a rerun after a kill, do. */
function stdinReason(sorted: boolean, concurrency: number): string {
  return sorted
    ? 'standard input: read once, each piece sorted into a run in --tmpdir as it comes (no copy of the whole input); every run is written before the first chunk loads, so a broken record stops the load before any row commits; after a kill, piping the same bytes again resumes (their digest is checked before any chunk loads; other bytes are refused) [docs/sources.md#standard-input]'
    : `standard input: read once as it is loaded, cut into chunks as it comes (at most ${concurrency + 1} chunk files in --tmpdir); it is not read to its end first, so a broken record late in it stops the load after the chunks before it committed; after a kill, piping the same bytes again skips those chunks, checking each one's bytes before any new chunk loads (other bytes are refused) [docs/sources.md#standard-input]`;
}

function sharedFacts(ctx: Ctx, d: EngineDecision): void {
  const { table, options, engine, transport, input, reasons, warnings } = ctx;
  if (ctx.insertTriggers > 0) {
    warnings.push(
      `${plural(ctx.insertTriggers, 'INSERT trigger')} on the table: they fire for every row, and they turn off the MyISAM/Aria/TokuDB bulk paths (the InnoDB bulk insert still applies) [docs/rules.md#triggers-turn-off-bulk-paths; not measured here]`,
    );
  }
  if (table.foreignKeys.length > 0) reasons.push(`${plural(table.foreignKeys.length, 'foreign key')}: foreign_key_checks stays on, every loaded row is checked`);
  if (!table.primaryKey && !table.clusteredKey && (engine === 'innodb' || engine === 'rocksdb')) {
    reasons.push('no PRIMARY KEY and no UNIQUE NOT NULL key: the engine clusters rows by a hidden row id, so inserts append in any input order');
  }
  if (options.onDuplicate === 'error' && transport === 'load-data') {
    reasons.push('duplicates: LOAD DATA LOCAL turns duplicate-key errors into warnings (implicit IGNORE); the executor treats every warning as a rejected row [docs/rules.md#load-data-local-means-ignore]');
  }
  if (input.kind === 'file' && input.compression !== 'none') {
    reasons.push(
      ctx.order.kind === 'key' && !(ctx.order.inMemory ?? false)
        ? `${input.compression}-compressed: decompressed once as it is read, each piece sorted into a run in --tmpdir (no decompressed copy of the whole input); every run is written before the first chunk loads, so a broken record or a corrupt ${input.compression} stream stops the load before any row commits [docs/ordering.md#9-compressed-input-in-one-pass]`
        : ctx.order.kind === 'key'
          ? `${input.compression}-compressed: decompressed into --tmpdir first and sorted in memory from that copy (its decompressed size in --tmpdir)`
          : `${input.compression}-compressed: decompressed once as it is loaded, in file order, cut into chunks as it goes (at most ${d.concurrency + 1} chunk files in --tmpdir at a time); it is not read to its end first, so a broken record or a corrupt ${input.compression} stream late in it stops the load after the chunks before it committed (the error names file, line and byte offset, and the rerun skips those chunks) [docs/ordering.md#9-compressed-input-in-one-pass]`,
    );
  }
  if (input.kind === 'stdin') {
    reasons.push(input.spooled || (ctx.order.kind === 'key' && ctx.order.inMemory === true) ? `standard input: copied into --tmpdir first and loaded from that copy like a file (over ${plural(d.concurrency, 'connection')}); its content identifies the load, so piping the same bytes again resumes it` : stdinReason(ctx.order.kind === 'key', d.concurrency));
  }
}

/** What a resume runs first, as the guarantee promises. */
function resumeSteps(guarantee: Guarantee, loadTarget: TableRef): Step[] {
  if (guarantee.kind === 'restart-required') {
    return [step({ kind: 'truncate', table: loadTarget }, 'this plan cannot resume part-way: a resume empties the table (only when it was empty when the load started) and loads from the first record')];
  }
  if (guarantee.kind === 'exactly-once-by-key-range' && guarantee.keyColumns) {
    return [step({ kind: 'delete-key-range', table: loadTarget, columns: guarantee.keyColumns }, "remove what the interrupted attempt at a chunk left, by the chunk's key range, before loading it again")];
  }
  return [];
}

/** Builds a LoadPlan. Throws FlatloadError (USAGE / UNSUPPORTED) for requests no plan can satisfy. */
export function planLoad(facts: PlanFacts, options: PlanOptions): LoadPlan {
  const { server, table } = facts;
  const reasons: string[] = [];
  const warnings: string[] = [];
  const engine = engineKind(table.engine);

  const mode = planMode(options.mode, table, engine, options.keepOld);
  reasons.push(...mode.reasons);
  warnings.push(...mode.warnings);
  const ai = autoIncInfo(facts, options);
  const { strategy, plannerChoice } = planStrategy(facts, options, ai, engine, reasons, warnings);
  const sk = planSurrogate(facts, options, strategy, engine, mode, reasons, warnings);
  const ctx = ruleContext(facts, options, engine, strategy, mode, sk, reasons, warnings);
  const galera = galeraOf(ctx);
  if (galera) refuseOnGalera(ctx, galera);
  const defer = planDeferSurrogate(ctx, sk);
  ctx.bulkInsert = !ctx.surrogateDefer && choosesBulkInsert(ctx);
  planOrder(ctx, defer.clusterBy ?? table.clusteredKey);
  const d = engineRuleWithStreams(ctx);
  sharedFacts(ctx, d);
  capIgnoredDuplicates(ctx, d);
  const after = afterSteps(d, defer.after, sk, mode);
  if (galera) planGalera(ctx, d, galera, [...mode.before, ...defer.before, ...d.before, ...after], sk.key);
  capMergedChunks(ctx, d);
  const batch = ctx.transport === 'insert' ? planInsertBatches(ctx) : undefined;
  if (engine !== 'other') reasons.unshift(`${versionText(server)}, ENGINE=${table.engine}${table.partitioned ? ' (partitioned)' : ''}`);
  const binlog = planBinlog(server, options.binlog, galera !== undefined);
  reasons.push(binlog.reason);
  warnings.push(...binlog.warnings);

  return {
    version: PLAN_VERSION,
    strategy,
    forced: options.strategy !== undefined,
    plannerChoice,
    mode: options.mode,
    loadTarget: mode.loadTarget,
    target: { db: table.db, table: table.table },
    concurrency: Math.max(1, d.concurrency),
    chunkSizeBytes: d.chunkSizeBytes,
    commitScope: d.commitScope,
    session: [...binlog.session, ...d.session],
    sessionEnd: d.sessionEnd,
    chunkBefore: d.chunkBefore,
    chunkAfter: d.chunkAfter,
    chunkMaxRecords: d.chunkMaxRecords,
    before: [...mode.before, ...defer.before, ...d.before],
    after,
    onResume: resumeSteps(d.guarantee, mode.loadTarget),
    columns: sk.columns,
    surrogateKey: sk.key,
    order: ctx.order,
    insertBatchBytes: batch,
    duplicates: options.onDuplicate,
    guarantee: d.guarantee,
    reasons,
    warnings,
  };
}

/** The engine's rule, its streams cut to one when ignored or replaced duplicates need it. */
function engineRuleWithStreams(ctx: Ctx): EngineDecision {
  const { reasons, warnings } = ctx;
  const oneStream = oneStreamForDuplicates(ctx);
  const before = reasons.length;
  const d = engineRule(ctx);
  if (oneStream) {
    // The engine rule argued for its streams before they were cut to one: its concurrency line no longer holds.
    for (let i = reasons.length - 1; i >= before; i--) if (reasons[i]!.startsWith('concurrency ')) reasons.splice(i, 1);
    (ctx.jobsForced ? warnings : reasons).push(oneStream);
  }
  return d;
}

/** What runs after the last chunk: the engine's steps, the deferred key's, the AUTO_INCREMENT bump, the mode's finish. */
function afterSteps(d: EngineDecision, deferAfter: Step[], sk: Surrogate, mode: ModePlan): Step[] {
  const after = [...d.after, ...deferAfter];
  if (sk.key?.kind === 'pre-assign') {
    after.push(
      step(
        { kind: 'auto-increment-after-input', table: mode.loadTarget, firstValue: sk.key.firstValue },
        `set AUTO_INCREMENT past the last pre-assigned key (${sk.key.firstValue} + records in the input, filled in once the input is read)`,
      ),
    );
  }
  after.push(...mode.finish);
  return after;
}

/** Bytes per multi-row INSERT, with the reasons for the INSERT transport. */
function planInsertBatches(ctx: Ctx): number {
  const { server, options, reasons } = ctx;
  const batch = insertBatchBytes(server);
  reasons.push(`INSERT batches of at most ${batch} bytes of SQL: half of max_allowed_packet=${server.maxAllowedPacketBytes}, capped at 1 MiB (a statement over the limit fails with 1153 and drops the connection) [docs/rules.md#packet-size-and-insert-batches]`);
  if (options.onDuplicate !== 'replace') {
    reasons.push(
      `INSERT IGNORE, as LOAD DATA LOCAL runs (an implicit IGNORE): every value sent in the file's character set and converted as LOAD DATA converts it (an adjusted value is a warning and its row rejected, not a strict-mode error; spaces around a number a note), a row too big for one statement under max_allowed_packet rejected unsent [docs/rules.md#insert-fallback-conversions]`,
    );
  }
  return batch;
}

function firstKey(emptyHow: EmptyHow, next: string | null): { value: string; why: string } | undefined {
  if (emptyHow === 'truncate') return { value: '1', why: 'TRUNCATE resets AUTO_INCREMENT' };
  if (emptyHow === 'shadow') return { value: '1', why: 'a new table created with LIKE starts at 1' };
  if (next !== null && /^\d+$/.test(next) && next !== '0') return { value: next, why: `the table's AUTO_INCREMENT value` };
  if (emptyHow === 'already') return { value: '1', why: 'empty table, AUTO_INCREMENT not reported' };
  return undefined;
}
