import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { FlatloadError } from '../../src/errors/index.js';
import { shareRejectPath } from '../../src/load/spider.js';
import { partitionFields, planRoute, renderRoute, type RouteFacts } from '../../src/plan/route.js';
import { buildShardMap, type ShardMap } from '../../src/shard/map.js';

/** The recorded front of test/unit/fixtures/spider-front.json (see shard-map.test.ts), maps built from SHOW CREATE TABLE. */
interface Recorded {
  tables: Record<string, { showCreateTable: string; columns: Array<{ COLUMN_NAME: string; DATA_TYPE: string; COLUMN_TYPE: string; COLLATION_NAME: string | null; CHARACTER_MAXIMUM_LENGTH: number | null }> }>;
  servers: Array<{ Server_name: string; Host: string; Db: string; Username: string; Port: number; Socket: string; Wrapper: string }>;
}
const rec = JSON.parse(readFileSync(new URL('./fixtures/spider-front.json', import.meta.url), 'utf8')) as Recorded;

function map(table: string): ShardMap {
  const t = rec.tables[table]!;
  return buildShardMap({
    db: 'f',
    table,
    engine: 'SPIDER',
    showCreateTable: t.showCreateTable,
    columns: t.columns.map((c) => ({ name: c.COLUMN_NAME, dataType: c.DATA_TYPE, columnType: c.COLUMN_TYPE, collation: c.COLLATION_NAME, maxChars: c.CHARACTER_MAXIMUM_LENGTH })),
    partitions: undefined,
    servers: rec.servers.map((s) => ({ name: s.Server_name, host: s.Host, port: s.Port, socket: s.Socket, db: s.Db, username: s.Username, wrapper: s.Wrapper })),
  });
}
const columnsOf = (table: string): string[] => rec.tables[table]!.columns.map((c) => c.COLUMN_NAME);

function facts(table: string, over: Partial<RouteFacts> = {}): RouteFacts {
  const m = map(table);
  return { map: m, unreachable: new Map(), fields: partitionFields(m, undefined, columnsOf(table)), inputReason: undefined, frontFilled: undefined, mode: 'append', strategy: undefined, ...over };
}

test('partitionFields: the partitioning columns by position in --columns or the table', () => {
  const cases: Array<[string, string | undefined, number[] | RegExp]> = [
    ['us_hash', undefined, [0]],
    ['lst', undefined, [1]],
    ['rc', undefined, [0, 1]],
    ['kpk', undefined, [0, 1]],
    ['lst', 'v,region,id', [1]],
    ['rc', 'b,@x,a', [2, 0]],
    ['lst', 'id,v', /region is not a field of the input/],
    ['lst', 'id,@region,v', /region is not a field of the input/],
    ['hx', undefined, /not a plain column list/],
  ];
  for (const [table, cols, want] of cases) {
    const columns = cols?.split(',').map((c) => (c.startsWith('@') ? { name: c.slice(1), isVariable: true } : { name: c, isVariable: false }));
    const got = partitionFields(map(table), columns, columnsOf(table));
    if (want instanceof RegExp) assert.match(String(got), want, `${table} ${cols}`);
    else assert.deepEqual(got, want, `${table} ${cols}`);
  }
});

test('planRoute: direct when the rule is evaluable and every backend answers, else front with the reason', () => {
  const down = new Map([['127.0.0.1:34441/f/us_hash', 'connect ECONNREFUSED']]);
  const cases: Array<[string, Partial<RouteFacts>, 'front' | 'direct', RegExp]> = [
    ['us_hash', {}, 'direct', /route direct/],
    ['us_range', {}, 'direct', /route direct/],
    ['us_key', {}, 'direct', /route direct/],
    ['lst', {}, 'direct', /route direct/],
    ['lh', {}, 'direct', /route direct/],
    ['hx', {}, 'front', /cannot evaluate the partition rule: the partitioning expression .*DIV.* is not a plain column list/],
    ['us_hash', { unreachable: down }, 'front', /backend b2 \(connect ECONNREFUSED\) could not be reached/],
    ['us_hash', { mode: 'replace' }, 'front', /--mode replace empties the table first/],
    ['us_hash', { inputReason: 'no line terminator' }, 'front', /no line terminator/],
    ['lst', { frontFilled: 'id' }, 'front', /the front generates id \(AUTO_INCREMENT\) and the input does not carry it/],
    ['lst', { fields: 'the partitioning column region is not a field of the input' }, 'front', /region is not a field/],
  ];
  for (const [table, over, route, reason] of cases) {
    const r = planRoute(facts(table, over), undefined);
    assert.equal(r.route, route, table);
    assert.equal(r.forced, false);
    assert.match(r.reasons.join('\n'), reason, table);
  }
});

test('planRoute: the backends and which partition goes to which', () => {
  const r = planRoute(facts('us_key'), undefined);
  assert.deepEqual(
    r.backends.map((b) => [b.server, b.port, b.database, b.table, b.partitions]),
    [
      ['b1', 34501, 'f', 'us_key', ['k0', 'k2']],
      ['b2', 34441, 'f', 'us_key', ['k1']],
    ],
  );
  assert.deepEqual(r.partitionBackend, [0, 1, 0]);
  assert.deepEqual(r.fields, [0]);
  assert.match(renderRoute(r, map('us_key')), /k1 -> b2 127\.0\.0\.1:34441\/f\/us_key/);
  assert.match(renderRoute(planRoute(facts('us_range'), undefined), map('us_range')), /lo < \(1600000000\) -> b1/);
});

test('planRoute: --route overrides, but direct only where it is exact', () => {
  const front = planRoute(facts('us_hash'), 'front');
  assert.deepEqual([front.route, front.forced, front.plannerChoice], ['front', true, 'direct']);
  assert.match(front.reasons.join('\n'), /through the front with LOAD DATA LOCAL/);
  assert.doesNotMatch(planRoute(facts('us_hash', { strategy: 'load-data' }), 'front').reasons.join('\n'), /through the front with/);
  assert.match(front.reasons.join('\n'), /--route front/);
  const direct = planRoute(facts('us_hash'), 'direct');
  assert.deepEqual([direct.route, direct.forced], ['direct', false]);
  assert.throws(
    () => planRoute(facts('hx'), 'direct'),
    (e: unknown) => e instanceof FlatloadError && e.code === 'UNSUPPORTED' && /--route direct: flatload cannot evaluate/.test(e.message),
  );
  assert.throws(() => planRoute(facts('us_hash', { unreachable: new Map([['127.0.0.1:34501/f/us_hash', 'timeout']]) }), 'direct'), /b1 \(timeout\)/);
});

test('shareRejectPath: one reject file per backend, named before the extension', () => {
  const cases: Array<[string, string, string]> = [
    ['/data/rows.rejects.csv', 'b1', '/data/rows.rejects.b1.csv'],
    ['t.rejects.txt', 'b2', 't.rejects.b2.txt'],
    ['/tmp/bad', 'b1', '/tmp/bad.b1'],
    ['x.csv', '127.0.0.1:3307/f/t', 'x.127.0.0.1_3307_f_t.csv'],
  ];
  for (const [path, backend, want] of cases) assert.equal(shareRejectPath(path, backend), want);
});
