/**
 * The strategy planner: a pure function from facts (server, table, input
 * sample) and options to a LoadPlan. No I/O, no clock, no os. Every decision
 * adds a reason naming the fact behind it; rules and the measurements behind
 * them are in docs/strategies.md.
 */
import type { StrategyName } from '../config/loadOptions.js';
import { quoteId, quoteQualified } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';
import type { ServerFacts } from '../introspect/types.js';
import { loadDataSql, type ColumnTarget } from './sql.js';
import type { LoadPlan, PlanFacts, PlannedStatement, PlanOptions, SurrogateKeyPlan } from './types.js';
import {
  engineKind,
  loadableColumns,
  plural,
  sameName,
  stmt,
  versionAtLeast,
  versionText,
  type AutoIncInfo,
  type Ctx,
  type EngineDecision,
} from './rules/context.js';
import { planGeneric } from './rules/generic.js';
import { deferSurrogatePossible, planInnodb } from './rules/innodb.js';
import { planMode } from './rules/modes.js';
import { planMyisamAria } from './rules/myisam.js';
import { planMyrocks } from './rules/myrocks.js';
import { planTokudb } from './rules/tokudb.js';

/** The user variable the executor numbers pre-assigned keys with (src/load/apply.ts). */
export const KEY_VARIABLE = '@flatload_key';
/** Placeholder in `after` statements: first key after the last pre-assigned one (firstValue + records in the input). */
export const NEXT_AUTO_INCREMENT = '{{nextAutoIncrement}}';
/** Placeholder in chunkTemplate: the first pre-assigned key of a chunk (firstValue + the chunk's 0-based first record). */
export const CHUNK_FIRST_KEY = '{{chunkFirstKey}}';

const MAX_DEFAULT_STREAMS = 8;
/** Taking the AUTO_INCREMENT key out of an InnoDB load (--allow-ddl) beat every plan that keeps it (docs/strategies.md, u3-defer-2s-chunk). */
const DEFER_SURROGATE_PAYS = true;
const INSERT_BATCH_MAX = 1 << 20;
const INSERT_BATCH_MIN = 16 * 1024;

/**
 * Connections to use when neither --jobs nor an engine rule decides: the
 * server's cores (thread_pool_size on MariaDB), else the client's, at most 8.
 * Measured on the 2-core box: 2 streams ≈ 1.7x one stream, 4 no better than 2
 * (docs/strategies.md, us-1s/2s/4s-chunk).
 */
export function defaultConcurrency(server: ServerFacts, clientCpus: number): number {
  const cpus = server.serverCpus ?? clientCpus;
  return Math.max(1, Math.min(MAX_DEFAULT_STREAMS, Math.floor(Number.isFinite(cpus) ? cpus : 1)));
}

/** Bytes of SQL per multi-row INSERT: half of max_allowed_packet, at most 1 MiB, at least 16 KiB (engines.md S6, §5.3). */
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

/** Builds a LoadPlan. Throws FlatloadError (USAGE / UNSUPPORTED) for requests no plan can satisfy. */
export function planLoad(facts: PlanFacts, options: PlanOptions): LoadPlan {
  const { server, table, input } = facts;
  const reasons: string[] = [];
  const warnings: string[] = [];
  const engine = engineKind(table.engine);

  // --- Mode: which table the chunks go into, and whether it is empty --------------------------
  const mode = planMode(options.mode, table, engine, options.keepOld);
  reasons.push(...mode.reasons);
  warnings.push(...mode.warnings);
  const emptyAtStart = mode.emptyHow === 'already' || mode.emptyHow === 'truncate' || mode.emptyHow === 'shadow';

  // --- Surrogate key ------------------------------------------------------------------------
  const ai = autoIncInfo(facts, options);
  const keyAbsent = ai?.inFile === 'no';
  if (ai?.inFile === 'unknown') {
    reasons.push(`AUTO_INCREMENT ${ai.column}: assumed to be in the file (${ai.how}); give --columns to say otherwise`);
  }

  // --- Strategy (transport) -----------------------------------------------------------------
  // MyISAM and Aria load through one stream under a table lock: the server's AUTO_INCREMENT then takes the values in
  // file order, exactly as pre-assigned keys would, without a per-row expression to evaluate.
  const serverNumbersInOrder = (engine === 'myisam' || engine === 'aria') && !(options.jobs !== undefined && options.jobs > 1);
  const plannerChoice = naturalChoice(server.localInfile, keyAbsent && !serverNumbersInOrder);
  if (!server.localInfile) {
    reasons.push('local_infile=OFF on the server: LOAD DATA LOCAL would be refused (ER 1148/3948/4166), so rows go as multi-row INSERT statements [engines.md §5.1]');
  }
  let strategy = plannerChoice;
  if (options.strategy !== undefined) {
    strategy = options.strategy;
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
  } else {
    reasons.push(`strategy ${strategy}: ${strategy === 'insert' ? 'LOAD DATA LOCAL is not available' : strategy === 'surrogate-key' ? `LOAD DATA LOCAL with the AUTO_INCREMENT key ${ai!.column} assigned by flatload (${ai!.how})` : 'LOAD DATA LOCAL, the fastest path the server offers [baseline §9: multi-row INSERT was 1.6-2x slower]'}`);
  }
  const transport: Ctx['transport'] = strategy === 'insert' ? 'insert' : 'load-data';

  // Surrogate handling: pre-assign by default; the server numbers rows when load-data is forced.
  let surrogateKey: SurrogateKeyPlan | undefined;
  let preAssign = false;
  let columns: ColumnTarget[] | undefined = options.columns;
  if (keyAbsent && ai) {
    if (columns === undefined) {
      columns = loadableColumns(table)
        .filter((c) => !sameName(c.name, ai.column))
        .map((c) => ({ name: c.name, isVariable: false }));
      reasons.push(`column list ${columns.map((c) => c.name).join(', ')}: every loadable column except ${ai.column}, which the file does not carry (${ai.how})`);
    }
    if (strategy === 'load-data') {
      surrogateKey = { kind: 'server', column: ai.column };
      reasons.push(
        options.strategy === undefined && serverNumbersInOrder
          ? `${ai.column}: numbered by the server: one stream under the table lock takes the AUTO_INCREMENT values in file order, as pre-assigned keys would, and skips a per-row expression; an interrupted load resumes by row count, so the numbering is the same [measured: npm run bench -- --strategies, MyISAM purchases_index 1.16x and Aria 1.02x faster than pre-assigned keys]`
          : `${ai.column}: numbered by the server (--strategy load-data); with innodb_autoinc_lock_mode<2 parallel LOAD DATA statements serialize on the AUTO-INC lock [engines.md Y2, S8]`,
      );
    } else {
      const first = firstKey(mode.emptyHow, table.autoIncrementNext);
      if (first === undefined) {
        surrogateKey = { kind: 'server', column: ai.column };
        warnings.push(`${ai.column}: the table has rows and its AUTO_INCREMENT value is unknown, so the server numbers the rows (no pre-assigned keys)`);
      } else {
        preAssign = true;
        surrogateKey = { kind: 'pre-assign', column: ai.column, firstValue: first.value };
        reasons.push(
          `${ai.column}: pre-assigned in file order from ${first.value} (${first.why}); each chunk starts at ${first.value} + its first record number, so the engine sees explicit ascending keys, replays are idempotent and chunk key ranges are disjoint [issue #4; engines.md S8, R7]`,
        );
        if (mode.emptyHow === 'no') {
          warnings.push(`pre-assigned ${ai.column} values assume no other session inserts into the table during the load (they would take the same ids)`);
          if ((server.flavor === 'mysql' || server.flavor === 'percona') && versionAtLeast(server, [8, 0, 0])) {
            warnings.push('MySQL 8 caches information_schema.TABLES.AUTO_INCREMENT (information_schema_stats_expiry): the executor must confirm the first key with SELECT MAX(key)+1 before loading [engines.md S7]');
          }
        }
      }
    }
  }

  // --- Context for the engine rule --------------------------------------------------------------
  const parallel = options.jobs ?? defaultConcurrency(server, options.clientCpus);
  const clustered = table.clusteredKey;
  const clusteredIsSurrogate = preAssign && clustered !== undefined && clustered.columns.length === 1 && sameName(clustered.columns[0]!, ai!.column);
  const keyOrdered = clusteredIsSurrogate || (input.keyOrder === 'sorted' && clustered !== undefined);
  const keyOrderWhy = clusteredIsSurrogate
    ? `key order: ${ai!.column} is the clustered key and is pre-assigned in file order, so rows arrive in key order`
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
  const columnsInFile = (columns ?? loadableColumns(table).map((c) => ({ name: c.name, isVariable: false }))).filter((c) => !c.isVariable).map((c) => c.name);
  const ctx: Ctx = {
    server,
    table,
    input,
    options,
    engine,
    transport,
    strategy,
    loadTarget: mode.loadTarget,
    emptyHow: mode.emptyHow,
    emptyAtStart,
    parallel,
    jobsForced: options.jobs !== undefined,
    autoInc: ai,
    preAssign,
    columns,
    columnsInFile,
    surrogateDefer: false,
    keyOrdered,
    keyOrderWhy,
    secondary,
    droppable,
    insertTriggers: table.triggers.filter((t) => t.event.toUpperCase() === 'INSERT').length,
    reasons,
    warnings,
  };

  // --- Surrogate key out of the load (--allow-ddl, InnoDB) -----------------------------------
  const deferBefore: PlannedStatement[] = [];
  if (keyAbsent && ai && strategy !== 'load-data' && engine === 'innodb' && server.flavor !== 'tidb') {
    const possible = deferSurrogatePossible(ctx);
    if (!DEFER_SURROGATE_PAYS) {
      // Measured not to pay: nothing to say beyond the pre-assign reason.
    } else if (!options.allowDdl) {
      if (possible.ok) reasons.push(`${ai.column} stays in the load: taking it out (DROP COLUMN, then ADD … AUTO_INCREMENT PRIMARY KEY after the load, clustering by ${possible.natural.name} meanwhile) measured faster but needs --allow-ddl [measured: u3-defer-2s-chunk]`);
    } else if (possible.ok) {
      const t = quoteQualified(mode.loadTarget.db, mode.loadTarget.table);
      surrogateKey = { kind: 'defer', column: ai.column, restoreSql: possible.restoreSql };
      preAssign = false;
      ctx.preAssign = false;
      ctx.surrogateDefer = true;
      ctx.keyOrdered = false;
      ctx.keyOrderWhy = `key order: the rows cluster by ${possible.natural.name} while ${ai.column} is out of the table`;
      deferBefore.push(stmt(`ALTER TABLE ${t} DROP COLUMN ${quoteId(ai.column)}`, `take the AUTO_INCREMENT key out of the load (--allow-ddl): rows cluster by ${possible.natural.name} and chunks load in parallel without the AUTO-INC lock [measured: u3-defer-2s-chunk]`));
      reasons.push(`${ai.column}: taken out of the load and re-added after it (--allow-ddl); ${possible.natural.name} clusters the rows meanwhile [measured: u3-defer-2s-chunk]`);
      warnings.push(`${ai.column} is re-created after the load: its values number the rows in ${possible.natural.name} order, not in file order`);
    } else {
      reasons.push(`${ai.column} stays in the load: ${possible.why}`);
    }
  }

  // --- Engine rule --------------------------------------------------------------------------
  let d: EngineDecision;
  switch (engine) {
    case 'innodb':
      d = server.flavor === 'tidb' ? planGeneric(ctx) : planInnodb(ctx);
      break;
    case 'rocksdb':
      d = planMyrocks(ctx);
      break;
    case 'tokudb':
      d = planTokudb(ctx);
      break;
    case 'myisam':
    case 'aria':
      d = planMyisamAria(ctx);
      break;
    default:
      d = planGeneric(ctx);
  }

  // --- Facts every engine shares ------------------------------------------------------------
  if (ctx.insertTriggers > 0) {
    warnings.push(
      `${plural(ctx.insertTriggers, 'INSERT trigger')} on the table: they fire for every row, and they turn off the MyISAM/Aria/TokuDB bulk paths (the InnoDB bulk insert still applies) [engines.md S1; measured: probe trigger]`,
    );
  }
  if (table.foreignKeys.length > 0) reasons.push(`${plural(table.foreignKeys.length, 'foreign key')}: foreign_key_checks stays on, every loaded row is checked`);
  if (!table.primaryKey && !table.clusteredKey && (engine === 'innodb' || engine === 'rocksdb')) {
    reasons.push('no PRIMARY KEY and no UNIQUE NOT NULL key: the engine clusters rows by a hidden row id, so inserts append in any input order');
  }
  if (options.onDuplicate === 'error' && transport === 'load-data') {
    reasons.push('duplicates: LOAD DATA LOCAL turns duplicate-key errors into warnings (implicit IGNORE); the executor treats every warning as a rejected row [engines.md S3]');
  }
  if (transport === 'insert' && d.commitScope === 'load') {
    // The bulk insert works for INSERT too (engines.md M3).
    reasons.push('multi-row INSERT statements in the one transaction keep the bulk insert [engines.md M3]');
  }
  if (input.kind === 'stdin') {
    reasons.push(`standard input: copied into --tmpdir first and loaded from that copy like a file (over ${plural(d.concurrency, 'connection')}); its content identifies the load, so piping the same bytes again resumes it`);
  }

  // --- Surrogate after-statement ---------------------------------------------------------------
  const before = [...mode.before, ...deferBefore, ...d.before];
  const after = [...d.after];
  if (surrogateKey?.kind === 'defer') {
    for (const sql of surrogateKey.restoreSql) after.push(stmt(sql, `re-create ${surrogateKey.column} as the AUTO_INCREMENT PRIMARY KEY (numbers the rows 1..N; one table rebuild)`));
  }
  if (surrogateKey?.kind === 'pre-assign') {
    after.push(
      stmt(
        `ALTER TABLE ${quoteQualified(mode.loadTarget.db, mode.loadTarget.table)} AUTO_INCREMENT = ${NEXT_AUTO_INCREMENT}`,
        `set AUTO_INCREMENT past the last pre-assigned key (${NEXT_AUTO_INCREMENT} = ${surrogateKey.firstValue} + records in the input, filled in by the executor)`,
        true,
      ),
    );
  }
  after.push(...mode.finish);

  // --- Insert batches -----------------------------------------------------------------------
  let batch: number | undefined;
  if (transport === 'insert') {
    batch = insertBatchBytes(server);
    reasons.push(`INSERT batches of at most ${batch} bytes of SQL: half of max_allowed_packet=${server.maxAllowedPacketBytes}, capped at 1 MiB (a statement over the limit fails with 1153 and drops the connection) [engines.md S6]`);
  }

  const plan: LoadPlan = {
    strategy,
    forced: options.strategy !== undefined,
    plannerChoice,
    mode: options.mode,
    loadTarget: mode.loadTarget,
    target: { db: table.db, table: table.table },
    concurrency: Math.max(1, d.concurrency),
    chunkSizeBytes: d.chunkSizeBytes,
    commitScope: d.commitScope,
    sessionSettings: d.sessionSettings,
    sessionEnd: d.sessionEnd,
    chunkBefore: d.chunkBefore,
    chunkAfter: d.chunkAfter,
    chunkTemplate: [],
    chunkMaxRecords: d.chunkMaxRecords,
    before,
    after,
    columns,
    surrogateKey,
    sortChunks: d.sortChunks,
    insertBatchBytes: batch,
    duplicates: options.onDuplicate,
    guarantee: d.guarantee,
    reasons,
    warnings,
  };
  plan.chunkTemplate = chunkTemplate(plan, facts, options);
  if (engine !== 'other') reasons.unshift(`${versionText(server)}, ENGINE=${table.engine}${table.partitioned ? ' (partitioned)' : ''}`);
  return plan;
}

function firstKey(emptyHow: Ctx['emptyHow'], next: string | null): { value: string; why: string } | undefined {
  if (emptyHow === 'truncate') return { value: '1', why: 'TRUNCATE resets AUTO_INCREMENT' };
  if (emptyHow === 'shadow') return { value: '1', why: 'a new table created with LIKE starts at 1' };
  if (next !== null && /^\d+$/.test(next) && next !== '0') return { value: next, why: `the table's AUTO_INCREMENT value` };
  if (emptyHow === 'already') return { value: '1', why: 'empty table, AUTO_INCREMENT not reported' };
  return undefined;
}

/** The SQL one chunk runs, for display. */
function chunkTemplate(plan: LoadPlan, facts: PlanFacts, options: PlanOptions): string[] {
  const out: string[] = [];
  const t = quoteQualified(plan.loadTarget.db, plan.loadTarget.table);
  if (plan.commitScope === 'chunk') out.push('START TRANSACTION');
  for (const s of plan.chunkBefore ?? []) out.push(s.sql);
  const key = plan.surrogateKey?.kind === 'pre-assign' ? plan.surrogateKey : undefined;
  if (plan.strategy === 'insert') {
    const cols = plan.columns ? ` (${plan.columns.filter((c) => !c.isVariable).map((c) => quoteId(c.name)).join(', ')}${key ? `, ${quoteId(key.column)}` : ''})` : '';
    const dup = plan.duplicates === 'ignore' ? 'INSERT IGNORE' : plan.duplicates === 'replace' ? 'REPLACE' : 'INSERT';
    out.push(`${dup} INTO ${t}${cols} VALUES (…), (…), …  -- repeated, each statement at most ${plan.insertBatchBytes} bytes${key ? `; ${key.column} = ${CHUNK_FIRST_KEY} + row number in the chunk` : ''}`);
  } else {
    if (key) out.push(`SET ${KEY_VARIABLE} = ${CHUNK_FIRST_KEY} - 1`);
    const characterSet = options.format.characterSet ?? facts.server.variables['character_set_database'] ?? 'utf8mb4';
    out.push(
      loadDataSql({
        fileToken: 'flatload-chunk-N',
        db: plan.loadTarget.db,
        table: plan.loadTarget.table,
        format: options.format,
        characterSet,
        columns: plan.columns,
        duplicates: plan.duplicates,
        setClause: key ? `${quoteId(key.column)} = (${KEY_VARIABLE} := ${KEY_VARIABLE} + 1)` : undefined,
      }),
    );
  }
  for (const s of plan.chunkAfter ?? []) out.push(s.sql);
  out.push('-- bookkeeping row for chunk N (resume, issue #5)');
  if (plan.commitScope === 'chunk') out.push('COMMIT');
  if (plan.commitScope === 'load') out.push('-- no COMMIT here: the one transaction commits after the last chunk');
  return out;
}

