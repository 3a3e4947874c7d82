/**
 * renderPlan / planJson, the helpers (defaultConcurrency, insertBatchBytes),
 * purity, and the requests no plan can satisfy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveFormat } from '../../src/config/format.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { chunkSqlContext, planJson, renderPlan } from '../../src/plan/explain.js';
import { sessionVariable, sqlOf } from '../../src/plan/ops.js';
import { defaultConcurrency, insertBatchBytes, planLoad } from '../../src/plan/planner.js';
import type { PlanFacts } from '../../src/plan/types.js';
import * as F from './facts/index.js';

const opts = F.planOptions;

const ctx = (facts: PlanFacts) => chunkSqlContext(facts, resolveFormat({}));

const user3 = (): PlanFacts => ({ server: F.mariadb1011(), table: F.table('user3', 'InnoDB'), input: F.input('u3.tsv (no id)') });

test('defaultConcurrency: server cores, else client cores, 1..8', () => {
  const s = F.mariadb1011();
  assert.equal(defaultConcurrency(s, 16), 2, 'thread_pool_size wins over the client');
  assert.equal(defaultConcurrency({ ...s, serverCpus: undefined }, 4), 4);
  assert.equal(defaultConcurrency({ ...s, serverCpus: 64 }, 4), 8);
  assert.equal(defaultConcurrency({ ...s, serverCpus: undefined }, 0), 1);
  assert.equal(defaultConcurrency({ ...s, serverCpus: undefined }, Number.NaN), 1);
});

test('insertBatchBytes: half of max_allowed_packet, at most 1 MiB, at least 16 KiB when the packet allows', () => {
  const s = F.mariadb1011();
  assert.equal(insertBatchBytes({ ...s, maxAllowedPacketBytes: 256 << 20 }), 1 << 20);
  assert.equal(insertBatchBytes({ ...s, maxAllowedPacketBytes: 4 << 20 }), 1 << 20);
  assert.equal(insertBatchBytes({ ...s, maxAllowedPacketBytes: 1 << 20 }), 512 << 10);
  assert.equal(insertBatchBytes({ ...s, maxAllowedPacketBytes: 16 << 10 }), 8 << 10);
  assert.equal(insertBatchBytes({ ...s, maxAllowedPacketBytes: 0 }), 1 << 20);
});

test('planLoad is pure: same output twice, facts untouched', () => {
  const facts = user3();
  const copy = JSON.parse(JSON.stringify(facts)) as typeof facts;
  const a = planLoad(facts, opts());
  const b = planLoad(facts, opts());
  assert.deepEqual(a, b);
  assert.deepEqual(JSON.parse(JSON.stringify(facts)), copy);
});

test('renderPlan names strategy, concurrency, scope, guarantee, settings, SQL, reasons and warnings', () => {
  const facts = user3();
  const text = renderPlan(planLoad(facts, opts({ bulkInsert: 'off' })), facts, ctx(facts));
  for (const re of [
    /strategy: +surrogate-key/,
    /concurrency: +2 connections\b/,
    /commit scope: chunk/,
    /guarantee: +exactly-once/,
    /Session settings \(every loading connection, before its first chunk\):\n {2}\(none\)/,
    /Each chunk:\n {2}START TRANSACTION;\n {2}SET @flatload_key = \{\{chunkFirstKey\}\} - 1;/,
    /-- bookkeeping row for chunk N \(resume: the chunk and its row commit together\)\n {2}COMMIT;/,
    /LOAD DATA LOCAL INFILE 'flatload-chunk-N' INTO TABLE `flatload_test`\.`user3` .* SET `id` = \(@flatload_key := @flatload_key \+ 1\);/,
    /ALTER TABLE `flatload_test`\.`user3` AUTO_INCREMENT = \{\{nextAutoIncrement\}\};/,
    /Why:\n {2}- /,
  ]) {
    assert.match(text, re);
  }
  assert.match(text, /Warnings:\n {2}! id numbers the rows in u_user_id order/);
  const ddl = renderPlan(planLoad(facts, opts({ allowDdl: true })), facts, ctx(facts));
  assert.match(ddl, /surrogate key: id — left out of the load and added afterwards/);
  assert.match(ddl, /Before the first chunk:\n {2}ALTER TABLE `flatload_test`\.`user3` DROP COLUMN `id`;\n {6}-- .*\[runs once per load\]/);
  assert.match(ddl, /Warnings:\n {2}! id is re-created after the load/);
});

test('renderPlan and planJson of the MariaDB bulk insert: one transaction opened by the session, committed at its end, no per-chunk transaction', () => {
  const facts = user3();
  const plan = planLoad(facts, opts());
  const text = renderPlan(plan, facts, ctx(facts));
  for (const re of [
    /concurrency: +1 connection\n/,
    /chunks: +the whole input in one, one LOAD DATA statement/,
    /order: +as in the file/,
    /commit scope: load — the whole load is one transaction, committed after the last chunk/,
    /guarantee: +restart-required/,
    /Session settings \(every loading connection, before its first chunk\):\n {2}SET SESSION unique_checks = 0;\n.*\n {2}SET SESSION foreign_key_checks = 0;\n.*\n {2}START TRANSACTION;/,
    /Each chunk:\n {2}SET @flatload_key = \{\{chunkFirstKey\}\} - 1;/,
    /-- bookkeeping row for chunk N, on the control connection/,
    /Every connection after its last chunk \(checked\):\n {2}COMMIT;/,
    /On resume, before loading again:\n {2}TRUNCATE TABLE `flatload_test`\.`user3`;/,
  ]) {
    assert.match(text, re);
  }
  assert.doesNotMatch(text, /Each chunk:\n {2}START TRANSACTION/);
  assert.doesNotMatch(text, /Warnings:/);
  const j = planJson(plan, facts, ctx(facts)) as { commitScope: string; statements: { session: Array<{ sql: string }>; sessionEnd: Array<{ sql: string }> } };
  assert.equal(j.commitScope, 'load');
  assert.deepEqual(j.statements.session.map((s) => s.sql), ['SET SESSION unique_checks = 0', 'SET SESSION foreign_key_checks = 0', 'START TRANSACTION']);
  assert.deepEqual(j.statements.sessionEnd.map((s) => s.sql), ['COMMIT']);
});

test('renderPlan says when the strategy was forced and what the planner would have chosen', () => {
  const facts = user3();
  const text = renderPlan(planLoad(facts, opts({ strategy: 'insert' })), facts, ctx(facts));
  assert.match(text, /strategy: +insert — multi-row INSERT \(forced by --strategy; the planner would have chosen surrogate-key\)/);
  assert.match(text, /INSERT batch: at most 1 MiB/);
  assert.match(text, /INSERT IGNORE INTO `flatload_test`\.`user3` \(`user_id`, `weight`, `level`, `beat_rate`, `level_num`, `id`\) VALUES/);
});

test('planJson lists session settings with their reasons (MyRocks unsorted, --order file)', () => {
  const facts: PlanFacts = { server: F.mariadb1011(), table: F.table('user_summary', 'RocksDB'), input: F.input('us.tsv') };
  const j = planJson(planLoad(facts, opts({ order: 'file' })), facts, ctx(facts)) as { sessionSettings: Array<{ name: string; value: string; reason: string }>; statements: { sessionEnd: Array<{ sql: string }> } };
  assert.deepEqual(j.sessionSettings.map((s) => `${s.name}=${s.value}`), ['rocksdb_bulk_load_allow_unsorted=1', 'rocksdb_bulk_load=1']);
  assert.ok(j.sessionSettings.every((s) => s.reason.length > 20));
  assert.deepEqual(j.statements.sessionEnd.map((s) => s.sql), ['SET SESSION rocksdb_bulk_load = 0']);
});

test('renderPlan shows per-chunk and session-end statements for MyRocks', () => {
  const sorted: PlanFacts = { server: F.mariadb1011(), table: F.table('user_summary', 'RocksDB'), input: F.input('us_sorted.tsv') };
  const text = renderPlan(planLoad(sorted, opts()), sorted, ctx(sorted));
  assert.match(text, /Each chunk:\n {2}SET SESSION rocksdb_bulk_load = 1;\n {2}LOAD DATA LOCAL INFILE[^\n]*;\n {2}SET SESSION rocksdb_bulk_load = 0;\n {2}-- bookkeeping/);
  const random: PlanFacts = { ...sorted, input: F.input('us.tsv') };
  const t2 = renderPlan(planLoad(random, opts({ order: 'file' })), random, ctx(random));
  assert.match(t2, /Every connection after its last chunk \(checked\):\n {2}SET SESSION rocksdb_bulk_load = 0;/);
});

test('planJson: strategy, concurrency, sessionSettings, statements (before, per-chunk template, after), reasons, warnings', () => {
  const facts = user3();
  const j = planJson(planLoad(facts, opts({ mode: 'swap', bulkInsert: 'off' })), facts, ctx(facts)) as {
    strategy: string;
    concurrency: number;
    sessionSettings: Array<{ name: string; value: string }>;
    statements: { before: Array<{ sql: string; idempotent: boolean }>; perChunk: { template: string[] }; after: Array<{ sql: string; idempotent: boolean }> };
    reasons: string[];
    warnings: string[];
  };
  assert.equal(j.strategy, 'surrogate-key');
  assert.equal(j.concurrency, 2);
  assert.deepEqual(j.sessionSettings, []);
  assert.match(j.statements.before[1]!.sql, /^CREATE TABLE .* LIKE /);
  assert.equal(j.statements.before[1]!.idempotent, false);
  assert.ok(j.statements.perChunk.template.some((s) => s.startsWith('LOAD DATA LOCAL INFILE')));
  assert.ok(j.statements.after.some((s) => s.sql.startsWith('RENAME TABLE') && !s.idempotent));
  assert.ok(j.statements.after.some((s) => /AUTO_INCREMENT/.test(s.sql) && s.idempotent));
  assert.ok(j.reasons.length > 3);
  assert.ok(Array.isArray(j.warnings));
  // JSON round trip: plain data only.
  assert.deepEqual(JSON.parse(JSON.stringify(j)), j);
});

test('--strategy surrogate-key without an absent AUTO_INCREMENT column is a usage error', () => {
  const facts: PlanFacts = { server: F.mariadb1011(), table: F.table('user_summary', 'InnoDB'), input: F.input('us.tsv') };
  assert.throws(() => planLoad(facts, opts({ strategy: 'surrogate-key' })), (e: unknown) => isFlatloadError(e) && e.code === 'USAGE' && /no AUTO_INCREMENT column/.test(e.message));
  const ids: PlanFacts = { server: F.mariadb1011(), table: F.table('user3', 'InnoDB'), input: F.input('u3_ids.tsv') };
  assert.throws(() => planLoad(ids, opts({ strategy: 'surrogate-key' })), (e: unknown) => isFlatloadError(e) && e.code === 'USAGE' && /is in the file/.test(e.message));
});

test('--mode swap refuses tables with foreign keys (either direction) or triggers', () => {
  const orders: PlanFacts = { server: F.mariadb1011(), table: F.table('orders', 'InnoDB'), input: F.input('us.tsv') };
  assert.throws(() => planLoad(orders, opts({ mode: 'swap' })), (e: unknown) => isFlatloadError(e) && e.code === 'UNSUPPORTED' && /does not copy its 1 foreign key/.test(e.message));
  const customers: PlanFacts = { server: F.mariadb1011(), table: F.table('customers', 'InnoDB'), input: F.input('us.tsv') };
  assert.throws(() => planLoad(customers, opts({ mode: 'swap' })), /reference it and would follow the old table/);
  const trig: PlanFacts = { server: F.mariadb1011(), table: F.table('user_summary', 'InnoDB', 'trigger'), input: F.input('us.tsv') };
  assert.throws(() => planLoad(trig, opts({ mode: 'swap' })), /1 trigger stay with the old table/);
});

test('swap names fit in 64 characters', () => {
  const facts = user3();
  facts.table.table = 'x'.repeat(64);
  const plan = planLoad(facts, opts({ mode: 'swap' }));
  assert.equal(plan.loadTarget.table.length, 64);
  assert.ok(plan.loadTarget.table.endsWith('__flatload_new'));
});

test('every reason and warning is a sentence with content; every statement has a reason', () => {
  const all: PlanFacts[] = [
    user3(),
    { server: F.mysql80(), table: F.tableOn('purchases_index', 'InnoDB', F.mysql80()), input: F.input('pi.tsv (no id)') },
    { server: F.percona80Myrocks(), table: F.tableOn('user_summary', 'RocksDB', F.percona80Myrocks()), input: F.input('us.tsv') },
    { server: F.mariadb1011(), table: F.table('purchases_index', 'Aria'), input: F.input('pi.tsv (no id)') },
  ];
  for (const facts of all) {
    for (const mode of ['append', 'replace', 'swap'] as const) {
      const plan = planLoad(facts, opts({ mode, allowDdl: true }));
      for (const r of [...plan.reasons, ...plan.warnings]) assert.ok(r.length > 10 && !/undefined|NaN|\[object/.test(r), r);
      for (const s of [...plan.before, ...plan.after, ...plan.sessionEnd, ...plan.chunkBefore, ...plan.chunkAfter, ...plan.onResume]) {
        assert.ok(s.reason.length > 10, sqlOf(s.op));
        assert.ok(!/undefined|NaN/.test(sqlOf(s.op)), sqlOf(s.op));
      }
      for (const s of plan.session) {
        const v = sessionVariable(s.op)!;
        assert.ok(s.reason.length > 10 && /^[a-z_]+$/.test(v.name) && /^[0-9A-Za-z_]+$/.test(v.value));
      }
    }
  }
});
