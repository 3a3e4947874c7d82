/**
 * Planner table tests: fact set + options → expected plan properties.
 * Recorded MariaDB 10.11 facts and hand-written MySQL 8 / Percona (TokuDB,
 * MyRocks) / MariaDB 10.5-10.6 facts: test/unit/facts/index.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveFormat } from '../../src/config/format.js';
import { planLoad } from '../../src/plan/planner.js';
import { chunkSqlContext, planJson, renderPlan } from '../../src/plan/explain.js';
import { sessionVariable, sqlOf, type Step } from '../../src/plan/ops.js';
import type { CommitScope, Guarantee, LoadPlan, PlanFacts, PlanOptions } from '../../src/plan/types.js';
import * as F from './facts/index.js';

const opts = F.planOptions;

const sqlCtx = (facts: PlanFacts) => chunkSqlContext(facts, resolveFormat({}));

const cols = (...names: string[]) => names.map((name) => ({ name, isVariable: false }));
const US_COLS = cols('user_id', 'weight', 'level', 'beat_rate', 'level_num');

interface Expect {
  strategy?: LoadPlan['strategy'];
  forced?: boolean;
  plannerChoice?: LoadPlan['strategy'];
  concurrency?: number;
  commitScope?: CommitScope;
  guarantee?: Guarantee['kind'];
  /** Exact session settings, name=value. */
  session?: string[];
  sessionEnd?: RegExp[];
  chunkBefore?: RegExp[];
  chunkAfter?: RegExp[];
  surrogate?: 'pre-assign' | 'defer' | 'server' | 'none';
  firstValue?: string;
  /** Every regex must match some before statement; [] means no before statements. */
  before?: RegExp[];
  after?: RegExp[];
  /** Regexes that must NOT match any before/after statement. */
  notStatements?: RegExp[];
  warnings?: RegExp[];
  reasons?: RegExp[];
  columns?: string[] | 'file';
  /** chunk: file order, each chunk sorted by the clustered key (OrderPlan sortedBy). */
  order?: 'key' | 'file' | 'chunk';
  /** Where a key-order sort happens. */
  sortIn?: 'memory' | 'tmpdir';
  chunkMaxRecords?: number | 'none';
  insertBatchBytes?: number | 'none';
  loadTarget?: string;
}

interface Case {
  name: string;
  facts: () => PlanFacts;
  options?: Partial<PlanOptions>;
  expect: Expect;
}

function check(plan: LoadPlan, e: Expect): void {
  if (e.strategy !== undefined) assert.equal(plan.strategy, e.strategy, 'strategy');
  if (e.forced !== undefined) assert.equal(plan.forced, e.forced, 'forced');
  if (e.plannerChoice !== undefined) assert.equal(plan.plannerChoice, e.plannerChoice, 'plannerChoice');
  if (e.concurrency !== undefined) assert.equal(plan.concurrency, e.concurrency, 'concurrency');
  if (e.commitScope !== undefined) assert.equal(plan.commitScope, e.commitScope, 'commitScope');
  if (e.guarantee !== undefined) assert.equal(plan.guarantee.kind, e.guarantee, 'guarantee');
  const settingOrSql = (s: Step): string => {
    const v = sessionVariable(s.op);
    return v ? `${v.name}=${v.value}` : sqlOf(s.op);
  };
  if (e.session !== undefined) assert.deepEqual(plan.session.map(settingOrSql), e.session, 'session settings');
  const matchAll = (list: readonly Step[], res: RegExp[] | undefined, what: string) => {
    if (res === undefined) return;
    const sqls = list.map((s) => sqlOf(s.op));
    if (res.length === 0) assert.deepEqual(sqls, [], `${what} should be empty`);
    for (const re of res) assert.ok(sqls.some((s) => re.test(s)), `${what}: no statement matches ${re}; have ${JSON.stringify(sqls)}`);
  };
  matchAll(plan.sessionEnd, e.sessionEnd, 'sessionEnd');
  matchAll(plan.chunkBefore, e.chunkBefore, 'chunkBefore');
  matchAll(plan.chunkAfter, e.chunkAfter, 'chunkAfter');
  matchAll(plan.before, e.before, 'before');
  matchAll(plan.after, e.after, 'after');
  for (const re of e.notStatements ?? []) {
    const all = [...plan.before, ...plan.after].map((s) => sqlOf(s.op));
    assert.ok(!all.some((s) => re.test(s)), `unexpected statement matching ${re}: ${JSON.stringify(all)}`);
  }
  if (e.surrogate !== undefined) assert.equal(plan.surrogateKey?.kind ?? 'none', e.surrogate, 'surrogate');
  if (e.firstValue !== undefined) {
    assert.equal(plan.surrogateKey?.kind, 'pre-assign');
    if (plan.surrogateKey?.kind === 'pre-assign') assert.equal(plan.surrogateKey.firstValue, e.firstValue, 'firstValue');
  }
  for (const re of e.warnings ?? []) assert.ok(plan.warnings.some((w) => re.test(w)), `no warning matches ${re}; have ${JSON.stringify(plan.warnings, null, 1)}`);
  for (const re of e.reasons ?? []) assert.ok(plan.reasons.some((w) => re.test(w)), `no reason matches ${re}; have ${JSON.stringify(plan.reasons, null, 1)}`);
  if (e.columns !== undefined) assert.deepEqual(plan.columns === undefined ? 'file' : plan.columns.map((c) => c.name), e.columns, 'columns');
  if (e.order !== undefined) assert.equal(plan.order.kind === 'file' && plan.order.sortedBy ? 'chunk' : plan.order.kind, e.order, 'order');
  if (e.sortIn !== undefined) {
    assert.equal(plan.order.kind, 'key', 'order');
    if (plan.order.kind === 'key') {
      assert.equal(plan.order.inMemory ? 'memory' : 'tmpdir', e.sortIn, 'where the sort happens');
      assert.equal(plan.order.spillBytes > 0, e.sortIn === 'tmpdir', 'spill estimate');
    }
  }
  if (e.chunkMaxRecords !== undefined) assert.equal(plan.chunkMaxRecords ?? 'none', e.chunkMaxRecords, 'chunkMaxRecords');
  if (e.insertBatchBytes !== undefined) assert.equal(plan.insertBatchBytes ?? 'none', e.insertBatchBytes, 'insertBatchBytes');
  if (e.loadTarget !== undefined) assert.equal(`${plan.loadTarget.db}.${plan.loadTarget.table}`, e.loadTarget, 'loadTarget');
}

const maria = (t: string, engine: string, inputName: string, variant?: string): PlanFacts => ({
  server: F.mariadb1011(),
  table: F.table(t, engine, variant),
  input: F.input(inputName),
});

const ordersInput = (): PlanFacts['input'] => ({ ...F.input('u3.tsv (no id)'), path: 'orders.tsv', sampleFieldCount: 3, avgRecordBytes: 30, estimatedRecords: 1_000_000, keyOrder: 'unknown' });
const mysqlFacts = (server: PlanFacts['server'], t: string, inputName: string, engine: 'InnoDB' | 'TokuDB' | 'RocksDB' | 'MyISAM' = 'InnoDB', variant?: string): PlanFacts => ({
  server,
  table: F.tableOn(t, engine, server, variant),
  input: F.input(inputName),
});
const localOn = (s: PlanFacts['server']) => F.withVars(s, { local_infile: 'ON' }, { localInfile: true });

/** user_summary with its key column u_user_id changed (a collation, a type), and maybe more indexes or a trigger. */
function usKeyAs(engine: string, inputName: string, column: Record<string, unknown>, table: Record<string, unknown> = {}): PlanFacts {
  const f = maria('user_summary', engine, inputName);
  const t = f.table;
  t.columns = t.columns.map((c) => (c.name === 'user_id' ? { ...c, ...column } : c));
  return { ...f, table: { ...t, ...table } };
}
const CI_KEY = { dataType: 'varchar', columnType: 'varchar(20)', characterSet: 'utf8mb4', collation: 'utf8mb4_general_ci' };
const DATE_KEY = { dataType: 'date', columnType: 'date', characterSet: null, collation: null };

const CASES: Case[] = [
  // ---------------- MariaDB 10.11 InnoDB (recorded facts) ----------------
  {
    name: 'MariaDB 10.11 InnoDB user_summary empty, random (74 MB, 4 GiB pool): the input sorted by the key first, parallel LOAD DATA (and what the second stream costs there), per-chunk transactions',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    expect: { strategy: 'load-data', forced: false, concurrency: 2, commitScope: 'chunk', guarantee: 'exactly-once', session: [], before: [], after: [], surrogate: 'none', columns: 'file', order: 'key', reasons: [/the empty-table bulk insert is not used: the clustered key is not one flatload numbers/, /the input is sorted by u_user_id before loading/, /concurrency 2: the chunks arrive in key order into an empty table with no secondary index that fits the buffer pool \(about 140 MiB once loaded, innodb_buffer_pool_size 4\.0 GiB\), so every row goes to the same end of one B-tree: there a second stream saves little time for much more server CPU; --jobs 1 spares/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary empty, random, 128 MiB pool (the table outgrows it): parallel streams, and what the second costs past the pool',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), server: F.withVars(F.mariadb1011(), { innodb_buffer_pool_size: '134217728' }) }),
    expect: { concurrency: 2, order: 'key', reasons: [/concurrency 2: the chunks arrive in key order into an empty table with no secondary index, past the buffer pool \(about 1\d\d MiB once loaded, innodb_buffer_pool_size 128 MiB\): a second stream overlaps the page reads and writes but saves little time for much more server CPU; --jobs 1 spares/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary empty, random, 256 MiB pool (the table between half the pool and all of it, not measured): parallel streams, the usual reason',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), server: F.withVars(F.mariadb1011(), { innodb_buffer_pool_size: '268435456' }) }),
    expect: { concurrency: 2, order: 'key', reasons: [/concurrency 2: InnoDB row locks let chunks load in parallel/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary empty, random, --jobs 1: one stream, as asked, and the reason says so',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { jobs: 1 },
    expect: { concurrency: 1, order: 'key', reasons: [/concurrency 1: --jobs 1; InnoDB row locks would let chunks load in parallel/] },
  },
  {
    name: "MariaDB 10.11 InnoDB user_summary empty, one of an export's tables given one stream: the reason says the export allotted it",
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { jobs: 1, connectionsBudgeted: true },
    expect: { concurrency: 1, reasons: [/concurrency 1: the export's share for this table \(its --jobs budget, at most one stream per 8 MiB of the table's input\); InnoDB row locks would/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary with rows, random, all of it within the pool: parallel streams, and what the second costs in an append',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), table: { ...F.table('user_summary', 'InnoDB'), empty: false, approxRows: 1_000_000 } }),
    expect: { concurrency: 2, order: 'key', reasons: [/concurrency 2: the chunks arrive in key order into a table with rows and no secondary index that fits the buffer pool \(about 2\d\d MiB once loaded, innodb_buffer_pool_size 4\.0 GiB\): appending there, a second stream saves little time for much more server CPU/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary with rows, random, the table already past half the pool but within it: parallel streams, the usual reason',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), table: { ...F.table('user_summary', 'InnoDB'), empty: false, approxRows: 40_000_000 } }),
    expect: { concurrency: 2, order: 'key', reasons: [/concurrency 2: InnoDB row locks/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary with rows, random, the table past the pool: parallel streams, and what the second costs there',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), table: { ...F.table('user_summary', 'InnoDB'), empty: false, approxRows: 100_000_000 } }),
    expect: { concurrency: 2, order: 'key', reasons: [/concurrency 2: the chunks arrive in key order into a table with rows and no secondary index, past the buffer pool \(about \d+\.\d GiB once loaded, innodb_buffer_pool_size 4\.0 GiB\): a second stream overlaps/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary with rows, no record size from the sample: the size once loaded is unknown, the usual reason',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), table: { ...F.table('user_summary', 'InnoDB'), empty: false, approxRows: 1_000 }, input: { ...F.input('us.tsv'), avgRecordBytes: undefined } }),
    expect: { concurrency: 2, reasons: [/concurrency 2: InnoDB row locks/] },
  },
  {
    name: 'MySQL 8.0 InnoDB user_summary empty, random: what the second stream costs was not measured there, the usual reason',
    facts: () => mysqlFacts(F.mysql80(), 'user_summary', 'us.tsv'),
    expect: { concurrency: 2, order: 'key', reasons: [/concurrency 2: InnoDB row locks/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary, --order file: file order, and the plan says so',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { order: 'file' },
    expect: { order: 'file', reasons: [/--order file: the rows go in file order/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary random (74 MB), within --sort-memory 128MiB: sorted in memory, nothing in --tmpdir',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { sortMemoryBytes: 128 << 20 },
    expect: { order: 'key', sortIn: 'memory', reasons: [/in memory: its 74 MB and the sort's arrays, about 121 MB, are within --sort-memory 128 MiB/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary random (74 MB), the default --sort-memory: sorted in memory',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    expect: { order: 'key', sortIn: 'memory' },
  },
  {
    name: 'an export\'s table of 74 MB: its sort worker moves the input into a second copy, over the default --sort-memory: sorted in runs',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { sortsAside: true },
    expect: { order: 'key', sortIn: 'tmpdir' },
  },
  {
    name: 'the same within --sort-memory 256MiB: sorted in memory, the copy counted',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { sortsAside: true, sortMemoryBytes: 256 << 20 },
    expect: { order: 'key', sortIn: 'memory', reasons: [/in memory: its 74 MB twice over and the sort's arrays, about 195 MB, are within --sort-memory 256 MiB/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary random (74 MB), within --sort-memory 96MiB but not with the sort\'s arrays: sorted in runs in --tmpdir',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { sortMemoryBytes: 96 << 20 },
    expect: { order: 'key', sortIn: 'tmpdir', reasons: [/out of core: about \d+ MB of runs, counted uncompressed: no sample to measure how the rows compress, in --tmpdir/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary random, within --sort-memory and no room in --tmpdir: still sorted (in memory)',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), spillFreeBytes: 1000 } }),
    options: { sortMemoryBytes: 128 << 20 },
    expect: { order: 'key', sortIn: 'memory' },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary random, --sort-memory 0 and too little room in --tmpdir to sort: each chunk sorted instead, with a warning',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), spillFreeBytes: 1000 } }),
    options: { sortMemoryBytes: 0 },
    expect: { order: 'chunk', warnings: [/sorting it needs about .* in --tmpdir, where 0 MB are free: each chunk is sorted by u_user_id in memory instead, the chunks in file order \(point --tmpdir at a larger file system to sort it whole\); the table is left larger on disk than a whole sort leaves it \(1\.7-1\.8x measured; OPTIMIZE TABLE rebuilds it\)/], reasons: [/chunks of 8\.0 MiB \(not 64\.0 MiB\): a chunk is sorted in memory/] },
  },
  {
    name: 'the same with --max-errors over 2 streams: file order (equal keys in two chunks would decide the duplicate), one stream, with a warning',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), spillFreeBytes: 1000 } }),
    options: { sortMemoryBytes: 0, maxErrors: 10 },
    expect: { order: 'file', concurrency: 1, warnings: [/where 0 MB are free: it goes in file order \(point --tmpdir at a larger file system to sort it whole\)/] },
  },
  {
    name: 'the same for a .gz: file order (a stream is not read back by chunk), with a warning',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), compression: 'gzip' as const, spillFreeBytes: 1000 } }),
    options: { sortMemoryBytes: 0 },
    expect: { order: 'file', warnings: [/it goes in file order/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary random, --order chunk: each chunk sorted by the key, said as asked',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { order: 'chunk' },
    expect: { order: 'chunk', warnings: [], reasons: [/--order chunk: each chunk is sorted by u_user_id in memory before it is sent, the chunks in file order; the table is left larger on disk/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary .gz, --order chunk: ignored (a streamed input is not read back by chunk), file order with a warning',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), compression: 'gzip' as const } }),
    options: { order: 'chunk' },
    expect: { order: 'file', warnings: [/--order chunk ignored: each chunk is sorted in memory as it is read back from the file, and a compressed file or standard input is read once as it streams/] },
  },
  {
    name: 'MariaDB 10.11 MyRocks user_summary, --order chunk: ignored with a warning, sorted whole for the bulk load',
    facts: () => maria('user_summary', 'RocksDB', 'us.tsv'),
    options: { order: 'chunk' },
    expect: { order: 'key', warnings: [/--order chunk ignored: MyRocks' bulk load takes rows in the whole input's key order/] },
  },
  {
    name: 'MariaDB 10.11 Aria user_summary, --order chunk: ignored with a warning, file order',
    facts: () => maria('user_summary', 'Aria', 'us.tsv'),
    options: { order: 'chunk' },
    expect: { order: 'file', warnings: [/--order chunk ignored: ENGINE=ARIA does not store rows by key/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary empty, sorted input: parallel, per-chunk, no sorting needed',
    facts: () => maria('user_summary', 'InnoDB', 'us_sorted.tsv'),
    expect: { strategy: 'load-data', concurrency: 2, commitScope: 'chunk', session: [], order: 'file', reasons: [/key order: the sampled records \(\d+\) are in u_user_id order/, /concurrency 2: the chunks arrive in key order/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 empty, id absent: the bulk insert — file order, id numbered in it, one transaction on one stream, the whole input one statement, restart on resume',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    expect: {
      strategy: 'surrogate-key',
      concurrency: 1,
      commitScope: 'load',
      guarantee: 'restart-required',
      session: ['unique_checks=0', 'foreign_key_checks=0', 'START TRANSACTION'],
      sessionEnd: [/^COMMIT$/],
      surrogate: 'pre-assign',
      firstValue: '1',
      columns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'],
      before: [],
      after: [/^ALTER TABLE `flatload_test`\.`user3` AUTO_INCREMENT = \{\{nextAutoIncrement\}\}$/],
      order: 'file',
      reasons: [/file order: id, the clustered key, is numbered in file order/, /the empty-table bulk insert: id, the clustered key, is numbered by flatload in file order/, /concurrency 1: the bulk insert is one transaction/],
    },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 empty, id absent, --bulk-insert off: sorted by the unique key, surrogate pre-assigned in that order, per-chunk, AUTO_INCREMENT restored',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { bulkInsert: 'off' },
    expect: {
      strategy: 'surrogate-key',
      plannerChoice: 'surrogate-key',
      concurrency: 2,
      commitScope: 'chunk',
      guarantee: 'exactly-once',
      session: [],
      surrogate: 'pre-assign',
      firstValue: '1',
      columns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'],
      before: [],
      after: [/^ALTER TABLE `flatload_test`\.`user3` AUTO_INCREMENT = \{\{nextAutoIncrement\}\}$/],
      order: 'key',
      warnings: [/id numbers the rows in u_user_id order, not in file order/],
      reasons: [/the empty-table bulk insert is not used: --bulk-insert off/, /innodb_autoinc_lock_mode=1/, /taking it out .* needs --allow-ddl/],
    },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 empty, id absent, --allow-ddl: the id is taken out of the load and re-created after it',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { allowDdl: true },
    expect: {
      strategy: 'surrogate-key',
      surrogate: 'defer',
      concurrency: 2,
      commitScope: 'chunk',
      before: [/^ALTER TABLE `flatload_test`\.`user3` DROP COLUMN `id`$/],
      after: [/^ALTER TABLE `flatload_test`\.`user3` ADD COLUMN `id` bigint\(20\) NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST$/],
      notStatements: [/AUTO_INCREMENT = /],
      columns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'],
      warnings: [/number the rows in u_user_id order, not in file order/],
    },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 with rows, --allow-ddl: the id stays (existing rows would be renumbered)',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)', 'nonempty'),
    options: { allowDdl: true },
    expect: { surrogate: 'pre-assign', reasons: [/id stays in the load: the table has rows/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 empty, --columns without id: same surrogate plan, user column list kept',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { columns: US_COLS },
    expect: { strategy: 'surrogate-key', surrogate: 'pre-assign', columns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'], reasons: [/--columns does not name it/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 empty, ids in the file: plain load-data, parallel, no DDL for the unique key',
    facts: () => maria('user3', 'InnoDB', 'u3_ids.tsv'),
    options: { allowDdl: true },
    expect: { strategy: 'load-data', surrogate: 'none', concurrency: 2, commitScope: 'chunk', session: [], before: [], after: [], columns: 'file', order: 'file' },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3 with rows, id absent: pre-assign from AUTO_INCREMENT, per-chunk',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)', 'nonempty'),
    expect: {
      strategy: 'surrogate-key',
      surrogate: 'pre-assign',
      firstValue: '1024',
      concurrency: 2,
      commitScope: 'chunk',
      guarantee: 'exactly-once',
      session: [],
      reasons: [/mode append: the table has rows/],
      warnings: [/no other session inserts/],
      after: [/AUTO_INCREMENT = \{\{nextAutoIncrement\}\}/],
    },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3, --jobs 4: ignored by the bulk insert (one stream), kept without it',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { jobs: 4 },
    expect: { concurrency: 1, commitScope: 'load', warnings: [/--jobs 4 ignored: concurrency 1: the bulk insert is one transaction on one connection/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB purchases_index empty, id absent: the bulk insert builds its 3 secondary indexes at COMMIT',
    facts: () => maria('purchases_index', 'InnoDB', 'pi.tsv (no id)'),
    expect: { commitScope: 'load', concurrency: 1, order: 'file', guarantee: 'restart-required' },
  },
  ...(
    [
      ['binary logging on: the replicas would get the whole load as one transaction', () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.withVars(F.mariadb1011(), { log_bin: 'ON' }) }), {}, /binary logging is on: the whole load would reach the replicas as one transaction/],
      ['--on-duplicate ignore', () => maria('user3', 'InnoDB', 'u3.tsv (no id)'), { onDuplicate: 'ignore' }, /--on-duplicate ignore: a duplicate fails the bulk insert's index build/],
      ['--order key', () => maria('user3', 'InnoDB', 'u3.tsv (no id)'), { order: 'key' }, /bulk insert is not used: --order key/],
      ['--chunk-size given', () => maria('user3', 'InnoDB', 'u3.tsv (no id)'), { chunkSizeGiven: true }, /--chunk-size: the bulk insert gains only as one statement/],
      ['a throttle', () => maria('user3', 'InnoDB', 'u3.tsv (no id)'), { throttled: true }, /a throttle paces the load by chunks/],
      ['an input read once as it streams', () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), input: { ...F.input('u3.tsv (no id)'), seekable: false, compression: 'gzip' as const } }), {}, /the input is read once as it streams/],
      ['ids in the file (the clustered key is not numbered by flatload)', () => maria('user3', 'InnoDB', 'u3_ids.tsv'), {}, /the clustered key is not one flatload numbers: under LOAD DATA LOCAL a duplicate of it would make the rows before it vanish/],
      ['no secondary index', () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), table: { ...F.table('user3', 'InnoDB'), indexes: F.table('user3', 'InnoDB').indexes.filter((i) => i.primary) } }), {}, /the table has no secondary index: without one it was slower/],
      ['foreign keys of its own', () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), table: { ...F.table('user3', 'InnoDB'), foreignKeys: F.table('orders', 'InnoDB').foreignKeys } }), {}, /foreign keys, which foreign_key_checks=0 would leave unchecked/],
      ['INSERT triggers', () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), table: { ...F.table('user3', 'InnoDB'), triggers: F.table('user_summary', 'InnoDB', 'trigger').triggers } }), {}, /INSERT triggers, whose failure would roll back the whole load/],
      ['the table past the buffer pool', () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.withVars(F.mariadb1011(), { innodb_buffer_pool_size: '134217728' }) }), {}, /about 1\d\d MiB once loaded, outgrows innodb_buffer_pool_size 128 MiB: past the pool it was not faster/],
      ['the table has rows', () => maria('user3', 'InnoDB', 'u3.tsv (no id)', 'nonempty'), {}, undefined],
    ] as Array<[string, () => PlanFacts, Partial<PlanOptions>, RegExp | undefined]>
  ).map(([why, facts, options, reason]): Case => ({
    name: `MariaDB 10.11 InnoDB user3, no bulk insert: ${why}; per-chunk transactions`,
    facts,
    options,
    expect: { commitScope: 'chunk', guarantee: 'exactly-once', ...(reason ? { reasons: [reason] } : {}) },
  })),
  {
    name: 'MariaDB 10.11 InnoDB user3, binary logging on, --bulk-insert on: the bulk insert all the same',
    facts: () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.withVars(F.mariadb1011(), { log_bin: 'ON' }) }),
    options: { bulkInsert: 'on' },
    expect: { commitScope: 'load', concurrency: 1, reasons: [/binary log: on, replicas receive the rows/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3, binary logging on, --binlog off: the bulk insert (the rows stay out of the log)',
    facts: () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.withVars(F.mariadb1011(), { log_bin: 'ON' }) }),
    options: { binlog: 'off' },
    expect: { commitScope: 'load', session: ['sql_log_bin=0', 'unique_checks=0', 'foreign_key_checks=0', 'START TRANSACTION'] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3, --jobs 4 --bulk-insert off: 4 streams',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { jobs: 4, bulkInsert: 'off' },
    expect: { concurrency: 4, commitScope: 'chunk', session: [] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user3, --on-duplicate ignore / replace: same per-chunk plan',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { onDuplicate: 'ignore' },
    expect: { commitScope: 'chunk', session: [], guarantee: 'exactly-once' },
  },
  {
    name: 'MariaDB 10.11 InnoDB sbtest empty, ids in file, 1 secondary index, no --allow-ddl: index kept, the plan says what --allow-ddl would do',
    facts: () => maria('sbtest', 'InnoDB', 'sb_ids.tsv'),
    expect: { strategy: 'load-data', concurrency: 2, commitScope: 'chunk', session: [], before: [], reasons: [/k_1 are kept: dropping .* needs --allow-ddl/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB sbtest empty, --allow-ddl: k_1 dropped and re-added',
    facts: () => maria('sbtest', 'InnoDB', 'sb_ids.tsv'),
    options: { allowDdl: true },
    expect: { before: [/^ALTER TABLE `flatload_test`\.`sbtest` DROP INDEX `k_1`$/], after: [/^ALTER TABLE `flatload_test`\.`sbtest` ADD INDEX `k_1` \(`k`\)$/], warnings: [/lacks 1 index k_1/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB purchases_index empty, id absent, --allow-ddl: 3 secondary indexes dropped and re-added in one ALTER; id pre-assigned (no natural key)',
    facts: () => maria('purchases_index', 'InnoDB', 'pi.tsv (no id)'),
    options: { allowDdl: true },
    expect: {
      strategy: 'surrogate-key',
      surrogate: 'pre-assign',
      concurrency: 2,
      commitScope: 'chunk',
      before: [/^ALTER TABLE `flatload_test`\.`purchases_index` DROP INDEX `marketsegment`, DROP INDEX `pdc`, DROP INDEX `registersegment`$/],
      after: [/^ALTER TABLE `flatload_test`\.`purchases_index` ADD INDEX `marketsegment` \(`price`, `customerid`\), ADD INDEX `pdc` .*ADD INDEX `registersegment`/, /AUTO_INCREMENT = \{\{nextAutoIncrement\}\}/],
      reasons: [/transactionid stays in the load: no UNIQUE NOT NULL key/],
    },
  },
  {
    name: 'InnoDB purchases_index with as many rows as the file, --allow-ddl: indexes still dropped (rebuild over both measured faster)',
    facts: () => {
      const f = maria('purchases_index', 'InnoDB', 'pi.tsv (no id)');
      f.table.empty = false;
      f.table.approxRows = 1_000_000;
      f.table.autoIncrementNext = '1000001';
      return f;
    },
    options: { allowDdl: true },
    expect: { before: [/DROP INDEX `marketsegment`/], firstValue: '1000001', reasons: [/at least as large as the table/] },
  },
  {
    name: 'InnoDB purchases_index much larger than the file, --allow-ddl: indexes kept',
    facts: () => {
      const f = maria('purchases_index', 'InnoDB', 'pi.tsv (no id)');
      f.table.empty = false;
      f.table.approxRows = 50_000_000;
      f.table.autoIncrementNext = '50000001';
      return f;
    },
    options: { allowDdl: true },
    expect: { before: [], reasons: [/the table holds more rows/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB partitioned user_summary: parallel per-chunk',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv', 'partitioned'),
    expect: { concurrency: 2, commitScope: 'chunk', reasons: [/\(partitioned\)/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB user_summary with an INSERT trigger: trigger warning; swap refused (see explain tests)',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv', 'trigger'),
    expect: { concurrency: 2, warnings: [/1 INSERT trigger/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB orders with a foreign key, id absent: FK checks stay on; the FK index is never dropped',
    facts: () => ({ server: F.mariadb1011(), table: F.table('orders', 'InnoDB'), input: ordersInput() }),
    options: { allowDdl: true },
    expect: { strategy: 'surrogate-key', commitScope: 'chunk', concurrency: 2, session: [], reasons: [/foreign_key_checks stays on/], before: [/DROP INDEX `placed`$/], notStatements: [/DROP INDEX `customer_id`/, /orders_customer/] },
  },
  {
    name: 'MariaDB 10.11 InnoDB events without any key: hidden row id, parallel',
    facts: () => ({ server: F.mariadb1011(), table: F.table('events', 'InnoDB', 'nopk'), input: { ...F.input('us.tsv'), sampleFieldCount: 3, keyOrder: 'unknown' } }),
    expect: { strategy: 'load-data', commitScope: 'chunk', concurrency: 2, order: 'file', reasons: [/hidden row id/] },
  },
  {
    name: 'MariaDB 10.11 local_infile OFF: insert strategy with byte-sized batches',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), server: F.withVars(F.mariadb1011(), { local_infile: 'OFF' }, { localInfile: false }) }),
    expect: { strategy: 'insert', plannerChoice: 'insert', forced: false, insertBatchBytes: 1 << 20, concurrency: 2, commitScope: 'chunk', reasons: [/local_infile=OFF/, /INSERT batches of at most 1048576 bytes/] },
  },
  {
    name: 'MariaDB 10.11 local_infile OFF, user3 id absent: insert with pre-assigned keys',
    facts: () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.withVars(F.mariadb1011(), { local_infile: 'OFF' }, { localInfile: false }) }),
    expect: { strategy: 'insert', surrogate: 'pre-assign', commitScope: 'chunk', concurrency: 2, after: [/AUTO_INCREMENT/] },
  },
  {
    name: 'forced --strategy insert on MariaDB: forced, the planner would have chosen load-data',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { strategy: 'insert' },
    expect: { strategy: 'insert', forced: true, plannerChoice: 'load-data', insertBatchBytes: 1 << 20, reasons: [/forced by --strategy; the planner would have chosen load-data/] },
  },
  {
    name: 'forced --strategy load-data on user3 without id: the server numbers the rows',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { strategy: 'load-data', allowDdl: true },
    expect: { strategy: 'load-data', forced: true, plannerChoice: 'surrogate-key', surrogate: 'server', before: [], after: [], columns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'] },
  },
  {
    name: 'forced --strategy surrogate-key, same as the planner: forced but not different',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { strategy: 'surrogate-key' },
    expect: { strategy: 'surrogate-key', forced: true, plannerChoice: 'surrogate-key', reasons: [/planner would have chosen it too/] },
  },
  {
    name: 'forced --strategy load-data with local_infile OFF: kept, with a warning',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), server: F.withVars(F.mariadb1011(), { local_infile: 'OFF' }, { localInfile: false }) }),
    options: { strategy: 'load-data' },
    expect: { strategy: 'load-data', forced: true, plannerChoice: 'insert', warnings: [/local_infile=OFF: the load will be refused/] },
  },
  // ---------------- modes ----------------
  {
    name: 'replace: TRUNCATE first, then the empty-table plan; keys restart at 1',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)', 'nonempty'),
    options: { mode: 'replace' },
    expect: { before: [/^TRUNCATE TABLE `flatload_test`\.`user3`$/], commitScope: 'load', firstValue: '1', warnings: [/--mode swap keeps the old rows/] },
  },
  {
    name: 'replace with --allow-ddl on user3: TRUNCATE, then the id taken out of the load',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)', 'nonempty'),
    options: { mode: 'replace', allowDdl: true },
    expect: { before: [/^TRUNCATE TABLE/, /DROP COLUMN `id`$/], surrogate: 'defer' },
  },
  {
    name: 'replace on a table referenced by a foreign key: DELETE, not TRUNCATE',
    facts: () => ({ server: F.mariadb1011(), table: F.table('customers', 'InnoDB'), input: { ...F.input('us.tsv'), sampleFieldCount: 1, keyOrder: 'unknown' } }),
    options: { mode: 'replace' },
    expect: { before: [/^DELETE FROM `flatload_test`\.`customers`$/], notStatements: [/TRUNCATE/], commitScope: 'chunk', warnings: [/DELETE fails if child rows reference it/, /delete-marked/] },
  },
  {
    name: 'swap: load the shadow, then one atomic RENAME and DROP of the old copy',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)', 'nonempty'),
    options: { mode: 'swap' },
    expect: {
      loadTarget: 'flatload_test.user3__flatload_new',
      before: [/^DROP TABLE IF EXISTS `flatload_test`\.`user3__flatload_new`$/, /^CREATE TABLE `flatload_test`\.`user3__flatload_new` LIKE `flatload_test`\.`user3`$/],
      after: [
        /^ALTER TABLE `flatload_test`\.`user3__flatload_new` AUTO_INCREMENT = \{\{nextAutoIncrement\}\}$/,
        /^RENAME TABLE `flatload_test`\.`user3` TO `flatload_test`\.`user3__flatload_old`, `flatload_test`\.`user3__flatload_new` TO `flatload_test`\.`user3`$/,
        /^DROP TABLE `flatload_test`\.`user3__flatload_old`$/,
      ],
      commitScope: 'load',
      firstValue: '1',
    },
  },
  {
    name: 'swap with --allow-ddl on purchases_index: the shadow loses its indexes for the load, gets them back before the RENAME',
    facts: () => maria('purchases_index', 'InnoDB', 'pi.tsv (no id)'),
    options: { mode: 'swap', allowDdl: true },
    expect: { before: [/CREATE TABLE .*__flatload_new` LIKE/, /^ALTER TABLE `flatload_test`\.`purchases_index__flatload_new` DROP INDEX/], after: [/^ALTER TABLE `flatload_test`\.`purchases_index__flatload_new` ADD INDEX/, /^RENAME TABLE/] },
  },
  {
    name: 'swap --keep-old: no DROP of the old copy',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { mode: 'swap', keepOld: true },
    expect: { after: [/^RENAME TABLE/], notStatements: [/^DROP TABLE `flatload_test`\.`user_summary__flatload_old`/], warnings: [/--keep-old/] },
  },
  // ---------------- MySQL 8.0 / 8.4 (hand-written facts) ----------------
  {
    name: 'MySQL 8.0 InnoDB (local_infile OFF by default): insert, parallel, pre-assigned key',
    facts: () => ({ ...mysqlFacts(F.mysql80(), 'purchases_index', 'pi.tsv (no id)') }),
    expect: { strategy: 'insert', plannerChoice: 'insert', concurrency: 2, commitScope: 'chunk', session: [], surrogate: 'pre-assign', insertBatchBytes: 1 << 20, reasons: [/no empty-table bulk path in community MySQL/] },
  },
  {
    name: 'MySQL 8.0 InnoDB with local_infile ON, 3 secondary indexes, --allow-ddl: drop and re-add them in one ALTER',
    facts: () => ({ ...mysqlFacts(localOn(F.mysql80()), 'purchases_index', 'pi.tsv (no id)') }),
    options: { allowDdl: true },
    expect: {
      strategy: 'surrogate-key',
      concurrency: 2,
      commitScope: 'chunk',
      before: [/^ALTER TABLE `flatload_test`\.`purchases_index` DROP INDEX `marketsegment`, DROP INDEX `pdc`, DROP INDEX `registersegment`$/],
      after: [/ADD INDEX `marketsegment` \(`price`, `customerid`\), ADD INDEX `pdc` .*ADD INDEX `registersegment`/, /AUTO_INCREMENT = \{\{nextAutoIncrement\}\}/],
    },
  },
  {
    name: 'MySQL 8.0 user3, --allow-ddl: id taken out of the load (bigint, no display width on MySQL 8)',
    facts: () => ({ ...mysqlFacts(localOn(F.mysql80()), 'user3', 'u3.tsv (no id)') }),
    options: { allowDdl: true },
    expect: { surrogate: 'defer', after: [/ADD COLUMN `id` bigint NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST$/] },
  },
  {
    name: 'MySQL 8.0 InnoDB, secondary indexes without --allow-ddl: kept, and the plan says --allow-ddl would drop them',
    facts: () => ({ ...mysqlFacts(localOn(F.mysql80()), 'sbtest', 'sb_ids.tsv') }),
    expect: { strategy: 'load-data', before: [], reasons: [/needs --allow-ddl/] },
  },
  {
    name: 'MySQL 8.4 InnoDB user_summary sorted: load-data parallel, no session tricks',
    facts: () => ({ ...mysqlFacts(localOn(F.mysql84()), 'user_summary', 'us_sorted.tsv') }),
    expect: { strategy: 'load-data', concurrency: 2, commitScope: 'chunk', session: [], guarantee: 'exactly-once', order: 'file' },
  },
  {
    name: 'MySQL 8.0 user3 with rows, id absent: pre-assign from AUTO_INCREMENT with the stats-cache warning',
    facts: () => ({ ...mysqlFacts(localOn(F.mysql80()), 'user3', 'u3.tsv (no id)', 'InnoDB', 'nonempty') }),
    expect: { firstValue: '1024', concurrency: 2, warnings: [/information_schema_stats_expiry/] },
  },
  {
    name: 'MySQL 8.0 with innodb_autoinc_lock_mode=1: parallel anyway, the reason names the lock mode',
    facts: () => ({ ...mysqlFacts(F.withVars(localOn(F.mysql80()), { innodb_autoinc_lock_mode: '1' }), 'sbtest', 'sb_ids.tsv') }),
    expect: { concurrency: 2, reasons: [/innodb_autoinc_lock_mode=1/] },
  },
  {
    name: 'MySQL 8.0 without a thread pool: concurrency from the client cores, at most 8',
    facts: () => ({ ...mysqlFacts(localOn(F.mysql80()), 'user_summary', 'us.tsv') }),
    options: { clientCpus: 32 },
    expect: { concurrency: 8 },
  },
  // ---------------- TokuDB (Percona, hand-written facts) ----------------
  {
    name: 'Percona 5.7 TokuDB user_summary empty: parallel per-chunk transactions, tokudb_prelock_empty off',
    facts: () => mysqlFacts(F.percona57Tokudb(), 'user_summary', 'us.tsv', 'TokuDB'),
    expect: { strategy: 'load-data', concurrency: 2, commitScope: 'chunk', guarantee: 'exactly-once', session: ['tokudb_prelock_empty=0'], before: [], order: 'file', reasons: [/LOCAL implies IGNORE/, /unique_checks stays on/] },
  },
  {
    name: 'Percona 5.7 TokuDB user3 id absent: surrogate pre-assigned, no DDL even with --allow-ddl',
    facts: () => mysqlFacts(F.percona57Tokudb(), 'user3', 'u3.tsv (no id)', 'TokuDB'),
    options: { allowDdl: true },
    expect: { strategy: 'surrogate-key', surrogate: 'pre-assign', commitScope: 'chunk', concurrency: 2, before: [], reasons: [/cost TokuDB nothing/] },
  },
  {
    name: 'Percona 8.0.25 TokuDB (local_infile OFF): insert, 1 MiB batches',
    facts: () => mysqlFacts(F.percona80Tokudb(), 'sbtest', 'sb_ids.tsv', 'TokuDB'),
    expect: { strategy: 'insert', insertBatchBytes: 1 << 20, commitScope: 'chunk', reasons: [/first multi-row INSERT/] },
  },
  {
    name: 'Percona 8.0.26 TokuDB: removal warning',
    facts: () => {
      const s = F.percona80Tokudb();
      s.versionNumber = [8, 0, 26];
      s.version = '8.0.26-16';
      return mysqlFacts(s, 'sbtest', 'sb_ids.tsv', 'TokuDB');
    },
    expect: { warnings: [/removed in 8\.0\.28/] },
  },
  {
    name: 'TokuDB with --jobs 1: no prelock setting needed',
    facts: () => mysqlFacts(F.percona57Tokudb(), 'user_summary', 'us.tsv', 'TokuDB'),
    options: { jobs: 1 },
    expect: { concurrency: 1, session: [] },
  },
  {
    name: 'TokuDB table with rows: no prelock setting (it only matters for an empty table)',
    facts: () => mysqlFacts(F.percona57Tokudb(), 'user3', 'u3.tsv (no id)', 'TokuDB', 'nonempty'),
    expect: { session: [], firstValue: '1024' },
  },
  // ---------------- MyRocks ----------------
  {
    name: 'Percona MyRocks user_summary empty, random: the input sorted by the key first, a bulk load per chunk, key-range resume',
    facts: () => mysqlFacts(F.percona80Myrocks(), 'user_summary', 'us.tsv', 'RocksDB'),
    expect: {
      strategy: 'load-data',
      order: 'key',
      commitScope: 'none',
      guarantee: 'exactly-once-by-key-range',
      session: [],
      chunkBefore: [/^SET SESSION rocksdb_bulk_load = 1$/],
      chunkAfter: [/^SET SESSION rocksdb_bulk_load = 0$/],
      reasons: [/the input is sorted by u_user_id before loading/],
    },
  },
  {
    name: 'Percona MyRocks user_summary empty, random, --order file: one bulk load with allow_unsorted, checked finalisation, one stream',
    facts: () => mysqlFacts(F.percona80Myrocks(), 'user_summary', 'us.tsv', 'RocksDB'),
    options: { order: 'file' },
    expect: {
      strategy: 'load-data',
      concurrency: 1,
      commitScope: 'none',
      guarantee: 'restart-required',
      session: ['rocksdb_bulk_load_allow_unsorted=1', 'rocksdb_bulk_load=1'],
      sessionEnd: [/^SET SESSION rocksdb_bulk_load = 0$/],
      chunkBefore: [],
      order: 'file',
      warnings: [/skips unique checks/, /sql_log_bin/],
      reasons: [/concurrency 1: two sessions bulk-loading one table fail /],
    },
  },
  {
    name: 'MyRocks with --jobs 2: still one stream, and a warning says why',
    facts: () => maria('user_summary', 'RocksDB', 'us.tsv'),
    options: { jobs: 2 },
    expect: { concurrency: 1, warnings: [/--jobs 2 ignored/] },
  },
  {
    name: 'MariaDB MyRocks user_summary sorted: a bulk load per chunk, one stream, key-range resume',
    facts: () => maria('user_summary', 'RocksDB', 'us_sorted.tsv'),
    expect: { commitScope: 'none', guarantee: 'exactly-once-by-key-range', concurrency: 1, session: [], chunkBefore: [/rocksdb_bulk_load = 1/], chunkAfter: [/rocksdb_bulk_load = 0/], sessionEnd: [] },
  },
  {
    name: 'MariaDB MyRocks user3 id absent: pre-assigned ids are in PK order, so a bulk load per chunk; no DDL even with --allow-ddl',
    facts: () => maria('user3', 'RocksDB', 'u3.tsv (no id)'),
    options: { allowDdl: true },
    expect: { strategy: 'surrogate-key', surrogate: 'pre-assign', commitScope: 'none', guarantee: 'exactly-once-by-key-range', chunkBefore: [/rocksdb_bulk_load = 1/], before: [], after: [/AUTO_INCREMENT/] },
  },
  {
    name: 'MariaDB MyRocks sbtest with rows, ids in file: no bulk (overlap), parallel transactions capped under rocksdb_max_row_locks',
    facts: () => maria('sbtest', 'RocksDB', 'sb_ids.tsv', 'nonempty'),
    expect: { commitScope: 'chunk', concurrency: 2, guarantee: 'exactly-once', session: [], chunkMaxRecords: 262144, reasons: [/may overlap them/, /capped at 262144 records \(a quarter of rocksdb_max_row_locks=1048576/], warnings: [/slow/] },
  },
  {
    name: 'MariaDB MyRocks sbtest with rows, id absent: pre-assigned keys above AUTO_INCREMENT are disjoint, so bulk load still applies',
    facts: () => maria('sbtest', 'RocksDB', 'sb.tsv (no id)', 'nonempty'),
    expect: { commitScope: 'none', guarantee: 'exactly-once-by-key-range', chunkBefore: [/rocksdb_bulk_load = 1/] },
  },
  {
    name: 'MyRocks with --on-duplicate ignore: no bulk load',
    facts: () => maria('user_summary', 'RocksDB', 'us.tsv'),
    options: { onDuplicate: 'ignore' },
    expect: { commitScope: 'chunk', session: [], reasons: [/--on-duplicate ignore/] },
  },
  {
    name: 'MyRocks with rocksdb_enable_bulk_load_api=OFF: transactions',
    facts: () => ({ ...maria('user_summary', 'RocksDB', 'us.tsv'), server: F.withVars(F.mariadb1011(), { rocksdb_enable_bulk_load_api: 'OFF' }) }),
    expect: { commitScope: 'chunk', reasons: [/rocksdb_enable_bulk_load_api=OFF/] },
  },
  // ---------------- MyISAM / Aria ----------------
  {
    name: 'MariaDB MyISAM purchases_index empty, id absent: one stream, the server numbers the ids in file order, DISABLE/ENABLE KEYS, row-count resume',
    facts: () => maria('purchases_index', 'MyISAM', 'pi.tsv (no id)'),
    expect: {
      strategy: 'load-data',
      surrogate: 'server',
      concurrency: 1,
      commitScope: 'none',
      guarantee: 'exactly-once-by-row-count',
      before: [/^ALTER TABLE `flatload_test`\.`purchases_index` DISABLE KEYS$/],
      after: [/ENABLE KEYS$/],
      reasons: [/numbered by the server: one stream under the table lock/],
      warnings: [/not transactional/],
    },
  },
  {
    name: 'MariaDB Aria purchases_index empty, id absent, --jobs 2: pre-assigned keys, key-range resume',
    facts: () => maria('purchases_index', 'Aria', 'pi.tsv (no id)'),
    options: { jobs: 2 },
    expect: { strategy: 'surrogate-key', surrogate: 'pre-assign', concurrency: 2, commitScope: 'none', guarantee: 'exactly-once-by-key-range', after: [/ENABLE KEYS$/, /AUTO_INCREMENT/] },
  },
  {
    name: 'MariaDB MyISAM user_summary (unique key only): one stream, no DISABLE KEYS, row-count resume',
    facts: () => maria('user_summary', 'MyISAM', 'us.tsv'),
    expect: { concurrency: 1, commitScope: 'none', guarantee: 'exactly-once-by-row-count', before: [], after: [], order: 'file' },
  },
  {
    name: 'MariaDB Aria user_summary, --jobs 2: two streams with a warning; restart-required',
    facts: () => maria('user_summary', 'Aria', 'us.tsv'),
    options: { jobs: 2 },
    expect: { concurrency: 2, commitScope: 'none', guarantee: 'restart-required', warnings: [/take turns/] },
  },
  {
    name: 'MariaDB Aria purchases_index with --on-duplicate ignore and the id in the file: restart-required',
    facts: () => maria('purchases_index', 'Aria', 'pi_ids.tsv'),
    options: { onDuplicate: 'ignore' },
    expect: { concurrency: 1, guarantee: 'restart-required', surrogate: 'none', before: [/DISABLE KEYS/] },
  },
  // ---------------- older / newer MariaDB ----------------
  {
    name: 'MariaDB 10.5 InnoDB user3: per-chunk, parallel, pre-assigned',
    facts: () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.mariadb105() }),
    expect: { commitScope: 'chunk', concurrency: 2, session: [], surrogate: 'pre-assign' },
  },
  {
    name: 'MariaDB 10.6 InnoDB user3: the bulk insert exists, not used (no sorted index build at COMMIT before 10.7)',
    facts: () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), server: F.mariadb106() }),
    expect: { commitScope: 'chunk', session: [], reasons: [/MariaDB 10\.6\.16: the empty-table bulk insert is not used: before MariaDB 10\.7 it does not build the indexes by sorting/] },
  },
  {
    name: 'MariaDB 11.4 InnoDB sbtest: same per-chunk plan',
    facts: () => ({ ...maria('sbtest', 'InnoDB', 'sb_ids.tsv'), server: F.mariadb114() }),
    expect: { commitScope: 'chunk', concurrency: 2 },
  },
  // ---------------- other engines and inputs ----------------
  {
    name: 'unknown engine (MEMORY): the safe default, restart-required',
    facts: () => {
      const t = F.table('user_summary', 'InnoDB');
      t.engine = 'MEMORY';
      return { server: F.mariadb1011(), table: t, input: F.input('us.tsv') };
    },
    options: { allowDdl: true },
    expect: { strategy: 'load-data', commitScope: 'chunk', concurrency: 2, guarantee: 'restart-required', session: [], before: [], after: [], order: 'file', warnings: [/no rule for ENGINE=MEMORY/] },
  },
  {
    name: 'TiDB: generic per-chunk plan, exactly once, hotspot warning for pre-assigned keys',
    facts: () => ({ server: { ...F.mysql80(), flavor: 'tidb', version: '8.0.11-TiDB-v7.5.1', versionNumber: [8, 0, 11], localInfile: true }, table: F.tableOn('user3', 'InnoDB', F.mysql80()), input: F.input('u3.tsv (no id)') }),
    options: { allowDdl: true },
    expect: { commitScope: 'chunk', guarantee: 'exactly-once', surrogate: 'pre-assign', before: [], warnings: [/Region/] },
  },
  {
    name: 'standard input without a sample: the AUTO_INCREMENT column is assumed in the file',
    facts: () => ({
      ...maria('user3', 'InnoDB', 'u3.tsv (no id)'),
      input: { path: '-', kind: 'stdin', compression: 'none', sizeBytes: undefined, seekable: false, sampleFieldCount: undefined, sampleRecords: 0, avgRecordBytes: undefined, estimatedRecords: undefined, keyOrder: 'unknown', headerColumns: undefined, spillFreeBytes: undefined, uniqueKeyOrder: {} },
    }),
    expect: { strategy: 'load-data', surrogate: 'none', columns: 'file', reasons: [/assumed to be in the file/, /standard input: read once as it is loaded, cut into chunks as it comes/] },
  },
  {
    name: 'a gzip file sorted by key is decompressed once into the runs, with no copy',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), compression: 'gzip', seekable: false, sizeBytes: undefined, estimatedRecords: undefined } }),
    expect: { order: 'key', reasons: [/gzip-compressed: decompressed once as it is read, each piece sorted into a run/] },
  },
  {
    name: 'a gzip file loaded in file order is cut as it is decompressed, and says a late broken record stops it after earlier chunks',
    facts: () => ({ ...maria('user_summary', 'InnoDB', 'us.tsv'), input: { ...F.input('us.tsv'), compression: 'gzip', seekable: false, sizeBytes: undefined, estimatedRecords: undefined } }),
    options: { order: 'file' },
    expect: { order: 'file', reasons: [/gzip-compressed: decompressed once as it is loaded, in file order.*at most \d+ chunk files.*stops the load after the chunks before it committed/] },
  },
  {
    name: 'header line without the id column: surrogate from the header',
    facts: () => ({ ...maria('user3', 'InnoDB', 'u3.tsv (no id)'), input: { ...F.input('u3.tsv (no id)'), headerColumns: ['user_id', 'weight', 'level', 'beat_rate', 'level_num'] } }),
    expect: { strategy: 'surrogate-key', reasons: [/the header line does not name it/] },
  },
  // ---------------- Keys the server calls equal ----------------
  {
    name: 'a case-insensitive key with --on-duplicate ignore: file order and one stream, because the sort cannot tell which keys the collation calls equal',
    facts: () => usKeyAs('InnoDB', 'us.tsv', CI_KEY),
    options: { onDuplicate: 'ignore' },
    expect: {
      order: 'file',
      concurrency: 1,
      reasons: [/^file order: --on-duplicate ignore keeps the row the server's own load of the file would keep only in file order: user_id is text in utf8mb4_general_ci/, /^concurrency 1: --on-duplicate ignore with the rows in file order: over 2 streams/],
    },
  },
  {
    name: 'a case-insensitive key, the default and no --max-errors: still sorted (a duplicate stops the load whatever the order)',
    facts: () => usKeyAs('InnoDB', 'us.tsv', CI_KEY),
    expect: { order: 'key', concurrency: 2 },
  },
  {
    name: 'a case-insensitive key with --max-errors and --jobs 2: file order, --jobs 2 ignored with a warning',
    facts: () => usKeyAs('InnoDB', 'us.tsv', CI_KEY),
    options: { maxErrors: 10, jobs: 2 },
    expect: { order: 'file', concurrency: 1, warnings: [/^--jobs 2 ignored: concurrency 1: --max-errors 10 with the rows in file order/] },
  },
  {
    name: 'a DATE key with --on-duplicate replace: sorted (dates are read as the server reads them), two streams',
    facts: () => usKeyAs('InnoDB', 'us.tsv', DATE_KEY),
    options: { onDuplicate: 'replace' },
    expect: { order: 'key', concurrency: 2 },
  },
  {
    name: 'an integer key in key order already, --on-duplicate replace over two streams: sorted anyway, so equal keys are never in two chunks',
    facts: () => maria('user_summary', 'InnoDB', 'us_sorted.tsv'),
    options: { onDuplicate: 'replace' },
    expect: { order: 'key', concurrency: 2 },
  },
  {
    name: 'another UNIQUE key with --on-duplicate ignore: file order, the plan names the key',
    facts: () => {
      const f = maria('user_summary', 'InnoDB', 'us.tsv');
      f.table.indexes.push({ name: 'u_level', unique: true, primary: false, columns: ['level'], type: 'BTREE' });
      return f;
    },
    options: { onDuplicate: 'ignore', jobs: 1 },
    expect: { order: 'file', concurrency: 1, reasons: [/^file order: --on-duplicate ignore with another UNIQUE key u_level \(level\): sorting by u_user_id would change which of two rows/] },
  },
  {
    name: '--allow-truncation with --on-duplicate ignore: file order (a key the server changes is sorted as the file has it), one stream',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { onDuplicate: 'ignore', allowTruncation: true },
    expect: { order: 'file', concurrency: 1, reasons: [/^file order: --on-duplicate ignore with --allow-truncation keeps the row the server's own load of the file would keep only in file order/] },
  },
  {
    name: '--allow-truncation with --order key and --max-errors: the sort is refused with a warning',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { maxErrors: 5, allowTruncation: true, order: 'key' },
    expect: { order: 'file', warnings: [/^--order key ignored: --max-errors 5 with --allow-truncation/] },
  },
  {
    name: '--allow-truncation where duplicates decide nothing: sorted as usual',
    facts: () => maria('user_summary', 'InnoDB', 'us.tsv'),
    options: { allowTruncation: true },
    expect: { order: 'key', concurrency: 2 },
  },
  {
    name: 'an INSERT trigger with --max-errors: file order, the trigger sees the order',
    facts: () => usKeyAs('InnoDB', 'us.tsv', {}, { triggers: [{ name: 'tr', event: 'INSERT', timing: 'BEFORE' }] }),
    options: { maxErrors: 5 },
    expect: { order: 'file', reasons: [/^file order: --max-errors 5 with an INSERT trigger on the table/] },
  },
  {
    name: 'MyRocks, a case-insensitive key sampled in byte order: not taken for key order (one unsorted bulk load, not one per chunk)',
    facts: () => usKeyAs('RocksDB', 'us_sorted.tsv', CI_KEY),
    expect: {
      order: 'file',
      guarantee: 'restart-required',
      session: ['rocksdb_bulk_load_allow_unsorted=1', 'rocksdb_bulk_load=1'],
      chunkBefore: [],
      reasons: [/MyRocks, rows not in u_user_id order \(the sampled records are in u_user_id's byte order, which is not the server's \(user_id is text in utf8mb4_general_ci/],
    },
  },
  {
    name: 'pre-assigned ids with --on-duplicate ignore: sorted by the other UNIQUE key, which the ids cannot repeat; two streams',
    facts: () => maria('user3', 'InnoDB', 'u3.tsv (no id)'),
    options: { onDuplicate: 'ignore' },
    expect: { surrogate: 'pre-assign', order: 'key', concurrency: 2 },
  },
  {
    name: 'pre-assigned ids the only unique key, --order file, --on-duplicate ignore: no duplicate can occur, two streams stay',
    facts: () => {
      const f = maria('user3', 'InnoDB', 'u3.tsv (no id)');
      f.table.indexes = f.table.indexes.filter((i) => i.primary);
      return f;
    },
    options: { onDuplicate: 'ignore', order: 'file' },
    expect: { surrogate: 'pre-assign', order: 'file', concurrency: 2 },
  },
  {
    name: 'MyRocks, a utf8mb4_bin key: sorted with PAD SPACE read as the server compares, a bulk load per chunk',
    facts: () => usKeyAs('RocksDB', 'us.tsv', { ...CI_KEY, collation: 'utf8mb4_bin' }),
    expect: { order: 'key', guarantee: 'exactly-once-by-key-range', chunkBefore: [/rocksdb_bulk_load = 1/] },
  },
];


describe('planLoad', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const facts = c.facts();
      const plan = planLoad(facts, opts(c.options));
      check(plan, c.expect);
      // Every plan renders, serialises, and explains every decision.
      assert.ok(plan.reasons.length > 0);
      const text = renderPlan(plan, facts, sqlCtx(facts));
      assert.match(text, new RegExp(`strategy: +${plan.strategy}`));
      const json = planJson(plan, facts, sqlCtx(facts)) as Record<string, unknown>;
      for (const k of ['strategy', 'concurrency', 'sessionSettings', 'statements', 'reasons', 'warnings']) assert.ok(k in json, `planJson lacks ${k}`);
    });
  }
});

describe('streams within the account\'s connection limit', () => {
  // [limit, open, --jobs, budgeted by an export, streams planned, warned]
  const cases: Array<[number | undefined, number, number, boolean, number, boolean]> = [
    [undefined, 1, 4, false, 4, false],
    [10, 1, 4, false, 4, false],
    [5, 1, 4, false, 4, false],
    [4, 1, 4, false, 3, true],
    [3, 2, 4, false, 1, true],
    [2, 2, 4, false, 1, true],
    [2, 1, 4, true, 4, false],
  ];
  for (const [limit, open, jobs, budgeted, streams, warned] of cases) {
    test(`max_user_connections ${limit ?? 'none'}, ${open} open, --jobs ${jobs}${budgeted ? ', an export\'s' : ''}: ${streams} stream(s)`, () => {
      const base = maria('user_summary', 'InnoDB', 'us.tsv');
      const server = limit === undefined ? base.server : { ...base.server, accountConnections: { limit, open } };
      const plan = planLoad({ ...base, server }, opts({ jobs, connectionsBudgeted: budgeted }));
      assert.equal(plan.concurrency, streams);
      assert.equal(plan.warnings.some((w) => /max_user_connections/.test(w)), warned);
    });
  }
});

describe('--on-duplicate ignore caps a chunk at the warnings the server lists', () => {
  // [engine, --on-duplicate, chunkMaxRecords]
  const cases: Array<[string, 'error' | 'ignore' | 'replace', number | undefined]> = [
    ['InnoDB', 'ignore', 65535],
    ['MyISAM', 'ignore', 65535],
    ['InnoDB', 'error', undefined],
    ['InnoDB', 'replace', undefined],
    ['MyISAM', 'replace', undefined],
  ];
  for (const [engine, onDuplicate, max] of cases) {
    test(`${engine}, --on-duplicate ${onDuplicate}: ${max ?? 'no'} records at most`, () => {
      const plan = planLoad(maria('user_summary', engine, 'us.tsv'), opts({ onDuplicate }));
      assert.equal(plan.chunkMaxRecords, max);
      assert.equal(plan.reasons.some((r) => r.includes('#ignored-duplicates-and-the-warnings-list')), max !== undefined);
    });
  }
  test('a table without a unique key has no duplicates: no cap', () => {
    const facts = maria('user_summary', 'InnoDB', 'us.tsv');
    facts.table = { ...facts.table, primaryKey: undefined, clusteredKey: undefined, indexes: facts.table.indexes.filter((i) => !i.unique && !i.primary) };
    assert.equal(planLoad(facts, opts({ onDuplicate: 'ignore' })).chunkMaxRecords, undefined);
  });
});

describe('key-ordered chunks are cut at 16 MiB unless --chunk-size says otherwise', () => {
  // [order asked, --chunk-size given, automatic size, chunk size planned, order planned]
  const cases: Array<['key' | 'file', boolean, number, number, 'key' | 'file']> = [
    ['key', false, 64 * 1024 * 1024, 16 * 1024 * 1024, 'key'],
    ['key', false, 8 * 1024 * 1024, 8 * 1024 * 1024, 'key'],
    ['key', true, 64 * 1024 * 1024, 64 * 1024 * 1024, 'key'],
    ['file', false, 64 * 1024 * 1024, 64 * 1024 * 1024, 'file'],
  ];
  for (const [order, given, size, planned, kind] of cases) {
    test(`--order ${order}, ${given ? '--chunk-size' : 'automatic'} ${size >> 20} MiB: ${planned >> 20} MiB`, () => {
      const plan = planLoad(maria('user_summary', 'InnoDB', 'us.tsv'), opts({ order, chunkSizeBytes: size, chunkSizeGiven: given }));
      assert.equal(plan.order.kind, kind);
      assert.equal(plan.chunkSizeBytes, planned);
      assert.equal(plan.reasons.some((r) => /^chunks of 16\.0 MiB \(not 64\.0 MiB\): a key-ordered chunk is built in memory/.test(r)), planned !== size);
    });
  }
});
