/**
 * identityDifferences: what a refused resume names as changed between the
 * stored job identity and this run's; jobIdOf: equal identities, equal ids.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { identityDifferences, jobIdOf, routedIdentity, targetName, type JobIdentity } from '../../src/checkpoint/identity.js';
import { CLUSTER_FINGERPRINT, sameTable } from '../../src/introspect/table.js';
import { buildShardMap, type ShardMap } from '../../src/shard/map.js';

function identity(): JobIdentity {
  return {
    input: { path: '/data/orders.csv', kind: 'file', sizeBytes: 1000, mtimeMs: 1700000000000, headTailSha256: 'aa' },
    target: 'shop.orders',
    format: { fieldsTerminatedBy: '2c', fieldsEnclosedBy: '22', fieldsEscapedBy: '5c', linesTerminatedBy: '0a', ignoreLines: 1, characterSet: 'utf8mb4', stripBom: true },
    columns: null,
    chunkSizeBytes: 1 << 20,
    strategy: null,
    order: 'auto',
    mode: 'append',
    onDuplicate: 'error',
    allowTruncation: false,
  };
}

const cases: Array<[name: string, change: (i: JobIdentity) => void, differences: string[]]> = [
  ['nothing changed', () => undefined, []],
  ['the file grew', (i) => (i.input.sizeBytes = 2000), ['input size: 1000 then, 2000 now']],
  ['the file was touched', (i) => (i.input.mtimeMs = 1700000000001), ['input modification time: 1700000000000 then, 1700000000001 now']],
  ['its first or last MiB changed', (i) => (i.input.headTailSha256 = 'bb'), ['input contents (first/last MiB) differ']],
  ['another path', (i) => (i.input.path = '/data/orders-2.csv'), ['input path: "/data/orders.csv" then, "/data/orders-2.csv" now']],
  ['stdin instead of a file', (i) => (i.input = { path: '-', kind: 'stdin', sizeBytes: null, mtimeMs: null, headTailSha256: null }), [
    'input size: 1000 then, null now',
    'input modification time: 1700000000000 then, null now',
    'input contents (first/last MiB) differ',
    'input path: "/data/orders.csv" then, "-" now',
  ]],
  ['another table', (i) => (i.target = 'shop.orders_new'), ['target table: "shop.orders" then, "shop.orders_new" now']],
  ['another field terminator', (i) => (i.format['fieldsTerminatedBy'] = '09'), ['format fieldsTerminatedBy: "2c" then, "09" now']],
  ['another header count', (i) => (i.format['ignoreLines'] = 0), ['format ignoreLines: 1 then, 0 now']],
  ['a format key only one side has', (i) => (i.format['newOption'] = true), ['format newOption: undefined then, true now']],
  ['a format key dropped', (i) => delete i.format['stripBom'], ['format stripBom: true then, undefined now']],
  ['--columns given', (i) => (i.columns = 'id,@skip,name'), ['--columns: null then, "id,@skip,name" now']],
  ['another chunk size', (i) => (i.chunkSizeBytes = 1 << 21), ['chunk size: 1048576 then, 2097152 now']],
  ['--strategy forced', (i) => (i.strategy = 'insert'), ['--strategy: null then, "insert" now']],
  ['--order file', (i) => (i.order = 'file'), ['--order: "auto" then, "file" now']],
  ['--mode', (i) => (i.mode = 'replace'), ['--mode: "append" then, "replace" now']],
  ['--on-duplicate', (i) => (i.onDuplicate = 'ignore'), ['--on-duplicate: "error" then, "ignore" now']],
  ['--allow-truncation', (i) => (i.allowTruncation = true), ['--allow-truncation: false then, true now']],
  ['several at once, in a fixed order', (i) => {
    i.allowTruncation = true;
    i.target = 'x.y';
    i.input.sizeBytes = 1;
  }, ['input size: 1000 then, 1 now', 'target table: "shop.orders" then, "x.y" now', '--allow-truncation: false then, true now']],
];

for (const [name, change, differences] of cases) {
  test(`identityDifferences: ${name}`, () => {
    const now = identity();
    change(now);
    assert.deepEqual(identityDifferences(identity(), now), differences);
    assert.equal(jobIdOf(now) === jobIdOf(identity()), differences.length === 0, 'the job id changes exactly when the identity does');
  });
}

test('jobIdOf: 24 hex digits, stable for equal identities', () => {
  assert.match(jobIdOf(identity()), /^[0-9a-f]{24}$/);
  assert.equal(jobIdOf(identity()), jobIdOf(identity()));
});

/** A RANGE Spider table over servers b1 and b2 (port 3307 and 3308), with the first bound and p1's server as given. */
function rangeMap(bound: number, p1Server = 'b2'): ShardMap {
  return buildShardMap({
    db: 'shop',
    table: 'orders',
    engine: 'SPIDER',
    showCreateTable:
      'CREATE TABLE `orders` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=SPIDER COMMENT=\'wrapper "mysql", table "orders"\'\n' +
      ` PARTITION BY RANGE (\`id\`)\n(PARTITION \`p0\` VALUES LESS THAN (${bound}) COMMENT = 'srv "b1"' ENGINE = SPIDER,\n PARTITION \`p1\` VALUES LESS THAN MAXVALUE COMMENT = 'srv "${p1Server}"' ENGINE = SPIDER)`,
    columns: [{ name: 'id', dataType: 'int', columnType: 'int(11)', collation: null, maxChars: null }],
    partitions: undefined,
    servers: ['b1', 'b2'].map((name, i) => ({ name, host: '127.0.0.1', port: 3307 + i, socket: '', db: 'shop', username: 'root', wrapper: 'mysql' })),
  });
}

test('routedIdentity: the shard map is part of the identity, and a changed map is described', () => {
  const routed = routedIdentity(identity(), rangeMap(100));
  // Stored as JSON in the bookkeeping: no BigInt may be left in it.
  const stored = JSON.parse(JSON.stringify(routed)) as JobIdentity;
  assert.deepEqual(identityDifferences(stored, routedIdentity(identity(), rangeMap(100))), []);
  assert.notEqual(jobIdOf(routed), jobIdOf(identity()));
  assert.deepEqual(identityDifferences(stored, routedIdentity(identity(), rangeMap(200))), ["shard map: partition p0's values changed from 100 to 200"]);
  assert.deepEqual(identityDifferences(stored, routedIdentity(identity(), rangeMap(100, 'b1'))), ['shard map: partition p1 moved from 127.0.0.1:3308/shop/orders to 127.0.0.1:3307/shop/orders']);
  assert.deepEqual(identityDifferences(stored, identity()), ['route: direct to the backends then, through the front now']);
});

test('routedIdentity: a backend share keeps the user input and names its backend', () => {
  const input = identity().input;
  const split = { ...identity(), input: { ...input, path: '/tmp/split/0', sizeBytes: 10, mtimeMs: 5 } };
  const share = routedIdentity(split, rangeMap(100), { input, key: '127.0.0.1:3307/shop/orders' });
  assert.deepEqual(share.input, input);
  assert.deepEqual(identityDifferences(share, routedIdentity(split, rangeMap(100), { input, key: '127.0.0.1:3308/shop/orders' })), ['backend: "127.0.0.1:3307/shop/orders" then, "127.0.0.1:3308/shop/orders" now']);
});

test('targetName: as given where the server is case-sensitive, folded where it folds table names', () => {
  const cases: Array<[db: string, table: string, lctn: number, want: string]> = [
    ['e1', 'users', 0, 'e1.users'],
    ['e1', 'Users', 0, 'e1.Users'],
    ['E1', 'Users', 1, 'e1.users'],
    ['E1', 'Users', 2, 'e1.users'],
  ];
  for (const [db, table, lctn, want] of cases) assert.equal(targetName(db, table, lctn), want, `${db}.${table} with lower_case_table_names=${lctn}`);
});

test('sameTable: a recorded fingerprint must match, except on a Galera cluster, where only a missing table differs', () => {
  const innodb = 'created 2026-01-01 10:00:00, innodb table id 23';
  const cases: Array<[then: string | null, now: string | null, cluster: boolean, same: boolean]> = [
    [null, null, false, true],
    [null, innodb, false, true],
    [innodb, innodb, false, true],
    [innodb, 'created 2026-01-01 10:00:00, innodb table id 24', false, false],
    [innodb, null, false, false],
    // Another node's table id, or a fingerprint recorded before the cluster rule: the row count decides.
    [innodb, CLUSTER_FINGERPRINT, true, true],
    [CLUSTER_FINGERPRINT, CLUSTER_FINGERPRINT, true, true],
    [CLUSTER_FINGERPRINT, null, true, false],
  ];
  for (const [then, now, cluster, same] of cases) assert.equal(sameTable(then, now, cluster), same, `${then} then, ${now} now, cluster ${cluster}`);
});
