/**
 * The Galera rule: a fact set of a cluster node + options → what the plan
 * refuses, how it sizes chunks and what it says. Pure; the real cluster is
 * test/db/galera.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FlatloadError } from '../../src/errors/index.js';
import type { GaleraFacts } from '../../src/introspect/cluster.js';
import { sqlOf } from '../../src/plan/ops.js';
import { planLoad } from '../../src/plan/planner.js';
import { writeSetBounds } from '../../src/plan/rules/galera.js';
import type { PlanFacts, PlanOptions } from '../../src/plan/types.js';
import * as F from './facts/index.js';

const MiB = 1 << 20;

const on = (t: string, engine: string, inputName: string, g: Partial<GaleraFacts> = {}, variant?: string): PlanFacts => ({
  server: F.mariadbGalera(g),
  table: F.table(t, engine, variant),
  input: F.input(inputName),
});

describe('writeSetBounds: half of what the measured 1.2x write-set ratio allows', () => {
  const cases: Array<[number, number, number, number | undefined]> = [
    // wsrep_max_ws_size, wsrep_max_ws_rows, chunk bytes, chunk records
    [2147483647, 0, 894784852, undefined],
    [1048576, 0, 436906, undefined],
    [4 * MiB, 0, 1747626, undefined],
    [1048576, 1000, 436906, 499],
    [1048576, 1, 436906, 1],
    [1024, 0, 426, undefined],
  ];
  for (const [size, rows, bytes, records] of cases) {
    test(`max_ws_size=${size}, max_ws_rows=${rows}: ${bytes} bytes, ${records ?? 'no'} record limit`, () => {
      assert.deepEqual(writeSetBounds(size, rows), { maxBytes: bytes, maxRecords: records });
      // The planned chunk's write-set stays under half the limit.
      assert.ok(bytes * 1.2 <= size / 2 + 1);
    });
  }
});

interface RefusalCase {
  name: string;
  facts: () => PlanFacts;
  options?: Partial<PlanOptions>;
  message: RegExp;
  hint: RegExp;
}

const REFUSALS: RefusalCase[] = [
  { name: 'MyISAM: not replicated', facts: () => on('user3', 'MyISAM', 'u3_ids.tsv'), message: /ENGINE=MYISAM on a Galera node node1 \(cluster flatload, 3 nodes\): only InnoDB is replicated/, hint: /ENGINE=InnoDB/ },
  { name: 'Aria: not replicated', facts: () => on('user_summary', 'Aria', 'us.tsv'), message: /ENGINE=ARIA .*only InnoDB is replicated/, hint: /ENGINE=InnoDB/ },
  { name: 'MyRocks: not replicated', facts: () => on('sbtest', 'RocksDB', 'sb_ids.tsv'), message: /ENGINE=ROCKSDB .*only InnoDB/, hint: /MyRocks is not replicated/ },
  { name: 'InnoDB without any key', facts: () => on('events', 'InnoDB', 'us.tsv', {}, 'nopk'), message: /no PRIMARY KEY and no UNIQUE NOT NULL key.*Galera certifies/, hint: /add a PRIMARY KEY/ },
];

describe('Galera: what no plan loads', () => {
  for (const c of REFUSALS) {
    test(c.name, () => {
      assert.throws(
        () => planLoad(c.facts(), F.planOptions(c.options)),
        (err: unknown) => {
          assert.ok(err instanceof FlatloadError);
          assert.equal(err.code, 'UNSUPPORTED');
          assert.match(err.message, c.message);
          assert.match(String(err.context.hint), c.hint);
          return true;
        },
      );
    });
  }
  test('the same tables load on a plain server (the refusals are about the cluster)', () => {
    for (const c of REFUSALS) {
      const f = c.facts();
      delete f.server.galera;
      assert.doesNotThrow(() => planLoad(f, F.planOptions(c.options)), c.name);
    }
  });
});

interface PlanCase {
  name: string;
  facts: () => PlanFacts;
  options?: Partial<PlanOptions>;
  /** The order rows go in (key: sorted by the clustered key first). */
  order?: 'key' | 'file';
  chunkSizeBytes: number;
  chunkMaxRecords: number | 'none';
  reasons?: RegExp[];
  warnings?: RegExp[];
  noWarning?: RegExp[];
  after?: RegExp[];
}

const PLANS: PlanCase[] = [
  {
    name: 'default 2 GiB write-set limit: the merged chunks stay at 16 MiB, the plan still says why they fit',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv'),
    order: 'key',
    chunkSizeBytes: 16 * MiB,
    chunkMaxRecords: 'none',
    reasons: [/^Galera node node1 of cluster flatload: 3 nodes, Primary, Synced/, /chunks are cut at 67108864 bytes, at most half of the 1789569705 input bytes that fit \(wsrep_max_ws_rows=0: no row limit\)/, /no empty-table bulk insert/, /one node, the others are failover targets/, /1213.*1047.*wsrep_sync_wait=1/],
    noWarning: [/Total Order Isolation/],
  },
  {
    name: '1 MiB write-set limit: chunks of 436906 bytes, cut in file order (exact), not sorted by key',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv', { maxWsSize: MiB }),
    order: 'file',
    chunkSizeBytes: 436906,
    chunkMaxRecords: 'none',
    reasons: [/wsrep_max_ws_size=1048576 bytes .*cut at 436906 bytes \(not 67108864\)/, /loaded in file order, not sorted by key/],
  },
  {
    name: 'a row limit caps the records, and the bytes by the sampled record size',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv', { maxWsRows: 10000 }),
    order: 'file',
    chunkSizeBytes: Math.floor(4999 * 36.8325 * 0.5),
    chunkMaxRecords: 4999,
    reasons: [/at most 4999 records \(half of wsrep_max_ws_rows=10000, less the bookkeeping row\)/],
  },
  {
    name: 'both limits: the tighter byte bound wins',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv', { maxWsSize: MiB, maxWsRows: 1_000_000 }),
    chunkSizeBytes: 436906,
    chunkMaxRecords: 499999,
  },
  {
    name: 'wsrep_load_data_splitting=ON: not relied on, said so (10.4+ streams it and commits once)',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv', { loadDataSplitting: true, maxWsSize: MiB }),
    chunkSizeBytes: 436906,
    chunkMaxRecords: 'none',
    reasons: [/wsrep_load_data_splitting=ON \(deprecated, removed in 11.5\).*commits it once.*does not rely on it/],
  },
  {
    name: 'a smaller --chunk-size is kept',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv', { maxWsSize: 4 * MiB }),
    options: { chunkSizeBytes: MiB },
    chunkSizeBytes: MiB,
    chunkMaxRecords: 'none',
  },
  {
    name: 'pre-assigned keys: explicit values, the nodes’ increment/offset does not apply to them',
    facts: () => on('user3', 'InnoDB', 'u3.tsv (no id)', { autoIncrementOffset: 2 }),
    chunkSizeBytes: 16 * MiB,
    chunkMaxRecords: 'none',
    reasons: [/id is pre-assigned by flatload .*auto_increment_increment=3, auto_increment_offset=2 \(set per node by wsrep_auto_increment_control\) only shapes values a node generates/],
    after: [/ALTER TABLE `flatload_test`.`user3` AUTO_INCREMENT = /],
  },
  {
    name: '--allow-ddl index deferral: allowed, with the TOI warning',
    facts: () => on('purchases_index', 'InnoDB', 'pi_ids.tsv'),
    options: { allowDdl: true },
    chunkSizeBytes: 64 * MiB,
    chunkMaxRecords: 'none',
    warnings: [/deferred DDL \(drop-indexes, add-indexes\) runs as Total Order Isolation .*blocks the table on every node/],
  },
  {
    name: 'mode replace: TRUNCATE is DDL too, said as a reason, not a warning',
    facts: () => on('user_summary', 'InnoDB', 'us.tsv'),
    options: { mode: 'replace' },
    chunkSizeBytes: 16 * MiB,
    chunkMaxRecords: 'none',
    reasons: [/the plan's DDL \(truncate\) runs as Total Order Isolation/],
    noWarning: [/Total Order Isolation/],
  },
];

describe('Galera: InnoDB plans on a cluster node', () => {
  for (const c of PLANS) {
    test(c.name, () => {
      const plan = planLoad(c.facts(), F.planOptions(c.options));
      assert.equal(plan.chunkSizeBytes, c.chunkSizeBytes, 'chunkSizeBytes');
      assert.equal(plan.chunkMaxRecords ?? 'none', c.chunkMaxRecords, 'chunkMaxRecords');
      if (c.order !== undefined) assert.equal(plan.order.kind, c.order, 'order');
      assert.equal(plan.guarantee.kind, 'exactly-once');
      assert.equal(plan.commitScope, 'chunk');
      // Never the empty-table bulk insert: no session turns unique or foreign-key checks off.
      assert.deepEqual(plan.session.map((s) => sqlOf(s.op)).filter((s) => /unique_checks|foreign_key_checks/.test(s)), []);
      for (const re of c.reasons ?? []) assert.ok(plan.reasons.some((r) => re.test(r)), `no reason matches ${re}: ${JSON.stringify(plan.reasons, null, 1)}`);
      for (const re of c.warnings ?? []) assert.ok(plan.warnings.some((w) => re.test(w)), `no warning matches ${re}: ${JSON.stringify(plan.warnings, null, 1)}`);
      for (const re of c.noWarning ?? []) assert.ok(!plan.warnings.some((w) => re.test(w)), `unexpected warning ${re}`);
      const after = plan.after.map((s) => sqlOf(s.op));
      for (const re of c.after ?? []) assert.ok(after.some((s) => re.test(s)), `no after statement matches ${re}: ${JSON.stringify(after)}`);
    });
  }
  test('--order key with a binding limit: file order all the same, and a warning says why', () => {
    const plan = planLoad(on('user_summary', 'InnoDB', 'us.tsv', { maxWsSize: MiB }), F.planOptions({ order: 'key' }));
    assert.equal(plan.order.kind, 'file');
    assert.ok(plan.warnings.some((w) => /loaded in file order, not sorted by key/.test(w)));
  });
  test('a plain server (no galera facts) gets none of it', () => {
    const plan = planLoad({ server: F.mariadb1011(), table: F.table('user_summary', 'InnoDB'), input: F.input('us.tsv') }, F.planOptions());
    assert.ok(!plan.reasons.some((r) => /Galera/.test(r)));
  });
  test('wsrep_on=OFF on a server with the provider loaded is a plain server', () => {
    const plan = planLoad(on('user3', 'MyISAM', 'u3_ids.tsv', { wsrepOn: false }), F.planOptions());
    assert.ok(!plan.reasons.some((r) => /Galera/.test(r)));
  });
});
