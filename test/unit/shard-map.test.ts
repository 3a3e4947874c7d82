import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  buildShardMap,
  describeShardMapChange,
  distinctBackends,
  expressionColumns,
  parseCreateTable,
  parseListDescription,
  parseRangeDescription,
  parseSpiderParams,
  shardMapFingerprint,
  type ColumnRow,
  type PartitionRow,
  type ServerRow,
  type ShardMap,
} from '../../src/shard/map.js';
import { partitionIndex } from '../../src/shard/partition.js';

/**
 * Fixture: what a Spider front (MariaDB 10.11, two backends b1 and b2) reported
 * for several tables, recorded by
 * `node --import tsx bench/research/spiderFacts.ts --fixture test/unit/fixtures/spider-front.json`.
 */
interface Recorded {
  tables: Record<
    string,
    {
      showCreateTable: string;
      partitions: Array<Record<string, string | number | null>> | string;
      columns: Array<{ COLUMN_NAME: string; DATA_TYPE: string; COLUMN_TYPE: string; COLLATION_NAME: string | null; CHARACTER_MAXIMUM_LENGTH: number | null }>;
    }
  >;
  servers: Array<{ Server_name: string; Host: string; Db: string; Username: string; Port: number; Socket: string; Wrapper: string }>;
}

const rec = JSON.parse(readFileSync(new URL('./fixtures/spider-front.json', import.meta.url), 'utf8')) as Recorded;
const servers: ServerRow[] = rec.servers.map((s) => ({ name: s.Server_name, host: s.Host, port: s.Port, socket: s.Socket, db: s.Db, username: s.Username, wrapper: s.Wrapper }));
const port = (name: string): number => servers.find((s) => s.name === name)!.port;

function input(table: string, fromView: boolean): Parameters<typeof buildShardMap>[0] {
  const t = rec.tables[table]!;
  const columns: ColumnRow[] = t.columns.map((c) => ({ name: c.COLUMN_NAME, dataType: c.DATA_TYPE, columnType: c.COLUMN_TYPE, collation: c.COLLATION_NAME, maxChars: c.CHARACTER_MAXIMUM_LENGTH }));
  const partitions: PartitionRow[] | undefined =
    fromView && typeof t.partitions !== 'string'
      ? t.partitions.map((p) => ({
          name: String(p['PARTITION_NAME']),
          ordinal: Number(p['PARTITION_ORDINAL_POSITION']),
          method: p['PARTITION_METHOD'] as string | null,
          expression: p['PARTITION_EXPRESSION'] as string | null,
          description: p['PARTITION_DESCRIPTION'] as string | null,
          comment: p['PARTITION_COMMENT'] as string | null,
          subpartitionMethod: p['SUBPARTITION_METHOD'] as string | null,
        }))
      : undefined;
  return { db: 'f', table, engine: 'SPIDER', showCreateTable: t.showCreateTable, columns, partitions, servers };
}

function map(table: string): ShardMap {
  const a = buildShardMap(input(table, true));
  // The same map from SHOW CREATE TABLE alone (what readShardMap uses when a backend is down).
  const b = buildShardMap(input(table, false));
  assert.equal(shardMapFingerprint(b), shardMapFingerprint(a), `${table}: SHOW CREATE TABLE and information_schema.PARTITIONS agree`);
  return a;
}

const where = (m: ShardMap): string[] => m.partitions.map((p) => `${p.name}->${p.backend.server}:${p.backend.port}/${p.backend.database}/${p.backend.table}`);

test('every recorded table maps to the backends its DDL names', () => {
  const b1 = port('b1');
  const b2 = port('b2');
  const expected: Record<string, { method: string; routable: boolean; where: string[] }> = {
    us_hash: { method: 'HASH', routable: true, where: [`p0->b1:${b1}/f/us_hash`, `p1->b2:${b2}/f/us_hash`] },
    us_range: { method: 'RANGE', routable: true, where: [`lo->b1:${b1}/f/us_range`, `hi->b2:${b2}/f/us_range`] },
    us_key: { method: 'KEY', routable: true, where: [`k0->b1:${b1}/f/us_key`, `k1->b2:${b2}/f/us_key`, `k2->b1:${b1}/f/us_key`] },
    lst: { method: 'LIST', routable: true, where: [`eu->b1:${b1}/f/lst`, `us->b2:${b2}/f/lst`] },
    rc: { method: 'RANGE COLUMNS', routable: true, where: [`r0->b1:${b1}/f/rc`, `r1->b2:${b2}/f/rc`] },
    lh: { method: 'LINEAR HASH', routable: true, where: [`p0->b1:${b1}/f/lh`, `p1->b2:${b2}/f/lh`, `p2->b1:${b1}/f/lh`] },
    ka1: { method: 'LINEAR KEY', routable: true, where: [`p0->b1:${b1}/f/ka1`, `p1->b2:${b2}/f/ka1`] },
    kpk: { method: 'KEY', routable: true, where: [`p0->b1:${b1}/f/kpk`, `p1->b2:${b2}/f/kpk`] },
    hx: { method: 'HASH', routable: false, where: [`p0->b1:${b1}/f/hx`, `p1->b2:${b2}/f/hx`] },
    // Only `srv` given: the server's Db and the partition's own name (the front looked for 'mysql.nodb#P#p0').
    nodb: { method: 'HASH', routable: true, where: [`p0->b1:${b1}/mysql/nodb#P#p0`, `p1->b2:${b2}/mysql/nodb#P#p1`] },
  };
  for (const [table, want] of Object.entries(expected)) {
    const m = map(table);
    assert.equal(m.rule.method, want.method, table);
    assert.equal(m.unevaluable === undefined, want.routable, `${table}: ${m.unevaluable}`);
    assert.deepEqual(where(m), want.where, table);
    for (const p of m.partitions) assert.equal(p.backend.host, '127.0.0.1');
  }
});

test('bounds, lists, algorithm and key columns come through', () => {
  assert.deepEqual(map('us_range').rule.rangeBounds, [[1600000000n], ['MAXVALUE']]);
  assert.deepEqual(map('rc').rule.rangeBounds, [
    [10n, 20n],
    ['MAXVALUE', 'MAXVALUE'],
  ]);
  assert.deepEqual(map('lst').rule.listValues, [[[1n], [2n], [3n]], [[4n], [5n]]]);
  assert.equal(map('ka1').rule.keyAlgorithm, 1);
  assert.equal(map('us_key').rule.keyAlgorithm, 2);
  const kpk = map('kpk');
  assert.deepEqual(
    kpk.rule.columns?.map((c) => [c.name, c.type.kind]),
    [
      ['a', 'int'],
      ['b', 'string'],
    ],
  );
  assert.deepEqual(map('us_hash').rule.columns?.[0]?.type, { kind: 'int', bytes: 8, unsigned: true });
  assert.match(map('hx').unevaluable!, /not a plain column/);
  // The map feeds the evaluator directly.
  assert.equal(partitionIndex(map('us_hash').rule, [Buffer.from('7')]), 1);
  assert.equal(partitionIndex(map('lst').rule, [Buffer.from('4')]), 1);
  assert.deepEqual(
    distinctBackends(map('us_key')).map((b) => b.partitions),
    [[0, 2], [1]],
  );
});

test('a changed map is described, an unchanged one is not', () => {
  const a = map('us_hash');
  assert.deepEqual(describeShardMapChange(a, map('us_hash')), []);
  const moved: ShardMap = { ...a, partitions: a.partitions.map((p) => (p.index === 1 ? { ...p, backend: { ...p.backend, port: 9999 } } : p)) };
  assert.equal(describeShardMapChange(a, moved).length, 1);
  assert.match(describeShardMapChange(a, moved)[0]!, /partition p1 moved from 127\.0\.0\.1:\d+\/f\/us_hash to 127\.0\.0\.1:9999\/f\/us_hash/);
  assert.notEqual(shardMapFingerprint(a), shardMapFingerprint(moved));
  const fewer: ShardMap = { ...a, partitions: a.partitions.slice(0, 1), rule: { ...a.rule, partitionCount: 1 } };
  assert.match(describeShardMapChange(a, fewer).join('; '), /2 partitions became 1/);
  const rehashed = buildShardMap({ ...input('us_hash', true), showCreateTable: rec.tables['us_hash']!.showCreateTable });
  assert.deepEqual(describeShardMapChange(a, { ...rehashed, rule: { ...rehashed.rule, method: 'KEY', keyAlgorithm: 2 } }).length, 1);
  assert.ok(!shardMapFingerprint(a).toLowerCase().includes('password'));
});

test('text parsers: tables of cases', () => {
  const params: Array<[string, Record<string, string>]> = [
    ['srv "b1"', { srv: 'b1' }],
    ['wrapper "mysql", srv "b1", table "t1"', { wrapper: 'mysql', srv: 'b1', table: 't1' }],
    ["host '10.0.0.1', port '3307', user 'u'", { host: '10.0.0.1', port: '3307', user: 'u' }],
    ['table "a\\"b"', { table: 'a"b' }],
    ['', {}],
  ];
  for (const [text, want] of params) assert.deepEqual(parseSpiderParams(text), want, text);
  const ranges: Array<[string, unknown]> = [
    ['100', [100n]],
    ['MAXVALUE', ['MAXVALUE']],
    ['-5,MAXVALUE', [-5n, 'MAXVALUE']],
    ["'2024-01-01'", undefined],
    ['TO_DAYS(x)', undefined],
  ];
  for (const [d, want] of ranges) assert.deepEqual(parseRangeDescription(d), want, d);
  const lists: Array<[string, number, unknown]> = [
    ['1,2,3', 1, [[1n], [2n], [3n]]],
    ['NULL,0', 1, [[null], [0n]]],
    ['(0,0),(1,NULL)', 2, [[0n, 0n], [1n, null]]],
    ['DEFAULT', 1, 'default'],
    ["'a','b'", 1, undefined],
    ['(0,0)', 1, undefined],
  ];
  for (const [d, n, want] of lists) assert.deepEqual(parseListDescription(d, n), want, d);
  const exprs: Array<[string, string[] | undefined]> = [
    ['`id`', ['id']],
    ['`a`,`b`', ['a', 'b']],
    ['`we``ird`', ['we`ird']],
    ['`id` DIV 10', undefined],
    ['year(`d`)', undefined],
  ];
  for (const [e, want] of exprs) assert.deepEqual(expressionColumns(e), want, e);
});

test('SHOW CREATE TABLE without a partition list, and refusals', () => {
  const ddl = 'CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=SPIDER COMMENT=\'srv "b1", table "remote_t"\'\n PARTITION BY HASH (`id`)\nPARTITIONS 3';
  const parts = parseCreateTable(ddl);
  assert.deepEqual(
    parts.partitionRows.map((p) => p.name),
    ['p0', 'p1', 'p2'],
  );
  const m = buildShardMap({ db: 'd', table: 't', engine: 'SPIDER', showCreateTable: ddl, columns: [{ name: 'id', dataType: 'int', columnType: 'int(11)', collation: null, maxChars: null }], partitions: undefined, servers });
  assert.deepEqual(
    m.partitions.map((p) => `${p.backend.server}/${p.backend.database}/${p.backend.table}`),
    ['b1/mysql/remote_t', 'b1/mysql/remote_t', 'b1/mysql/remote_t'],
  );
  const base = { db: 'd', table: 't', engine: 'SPIDER', columns: [], servers };
  assert.throws(() => buildShardMap({ ...base, showCreateTable: 'CREATE TABLE `t` (\n  `id` int\n) ENGINE=InnoDB', partitions: undefined }), /not partitioned/);
  assert.throws(
    () => buildShardMap({ ...base, showCreateTable: ddl.replace('"b1"', '"b9"'), partitions: undefined }),
    (e: Error & { code?: string }) => e.code === 'UNSUPPORTED' && /server "b9"/.test(e.message),
  );
  assert.throws(() => buildShardMap({ ...base, showCreateTable: `${ddl}\n SUBPARTITION BY HASH (\`id\`)`, partitions: undefined }), /subpartitioned/);
});
