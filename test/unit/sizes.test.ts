/**
 * report/sizes without a server: sizeRatio, and measureTableSizes on the paths
 * this machine's server cannot take (TokuDB, MySQL 8's INNODB_TABLESPACES, a
 * lost connection, flush: false), and which statements freshen an InnoDB
 * table first, against a scripted connection.
 * test/db/sizes.test.ts measures real tables.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { isFlatloadError } from '../../src/errors/index.js';
import { measureTableSizes, sizeRatio } from '../../src/introspect/sizes.js';

test('sizeRatio', () => {
  assert.equal(sizeRatio(100, 50), 2);
  assert.equal(sizeRatio(100, 400), 0.25);
  assert.equal(sizeRatio(100, null), null);
  assert.equal(sizeRatio(100, 0), null);
  assert.equal(sizeRatio(Number.NaN, 10), null);
});

/**
 * Paths this server cannot run (TokuDB, MySQL 8's INNODB_TABLESPACES, a lost
 * connection), against a scripted connection that answers by SQL pattern.
 */
type Answer = unknown[] | { error: Record<string, unknown> };
function scripted(script: Array<[RegExp, (values: unknown[]) => Answer]>): { conn: Connection; log: Array<{ sql: string; values: unknown[] }> } {
  const log: Array<{ sql: string; values: unknown[] }> = [];
  const query = async (sql: string, values: unknown[] = []): Promise<[unknown[], unknown[]]> => {
    log.push({ sql, values });
    const hit = script.find(([re]) => re.test(sql));
    if (!hit) throw new Error(`unexpected SQL: ${sql}`);
    const a = hit[1](values);
    if (!Array.isArray(a)) throw Object.assign(new Error(String(a.error['sqlMessage'] ?? a.error['code'])), a.error);
    return [a, []];
  };
  return { conn: { query } as unknown as Connection, log };
}

const tablesRow = (engine: string, name: string) => (): unknown[] => [
  { table_schema: 'd', table_name: name, table_type: 'BASE TABLE', engine, row_format: 'Dynamic', create_options: '', data_length: '1000', index_length: '200' },
];
const ok = (): unknown[] => [];
const unknownIs = (view: string) => (): Answer => ({ error: { errno: 1109, code: 'ER_UNKNOWN_TABLE', sqlMessage: `Unknown table '${view}' in information_schema` } });

test('TokuDB by rule: bt_size_allocated / bt_size_in_use, partitions summed, encoded names matched', async () => {
  const { conn, log } = scripted([
    [/FROM information_schema\.TABLES/, tablesRow('TokuDB', 't-1')],
    [/^FLUSH TABLES `d`\.`t-1`$/, ok],
    [
      /TokuDB_fractal_tree_info/,
      () => [
        { s: 'd', t: 't@002d1', allocated: '5000', in_use: '4000', dictionaries: '3' },
        { s: 'd', t: 't@002d1#P#p1', allocated: '100', in_use: '50', dictionaries: '2' },
        { s: 'd', t: 't@002d12', allocated: '7777', in_use: '7777', dictionaries: '1' },
      ],
    ],
  ]);
  const s = await measureTableSizes(conn, 'd', 't-1');
  assert.equal(s.fileBytes.bytes, 5100);
  assert.equal(s.fileBytes.source, 'TokuDB_fractal_tree_info.bt_size_allocated');
  assert.equal(s.allocatedBytes.bytes, 4050);
  assert.equal(s.allocatedBytes.source, 'TokuDB_fractal_tree_info.bt_size_in_use');
  assert.equal(s.onDiskBytes, 4050);
  assert.match(s.fileBytes.note ?? '', /5 dictionaries/);
  const toku = log.find((l) => /TokuDB_fractal_tree_info/.test(l.sql))!;
  assert.deepEqual(toku.values, ['d', 'd']);
});

test('TokuDB_fractal_tree_info absent: null with a note, on-disk falls back to DATA_LENGTH+INDEX_LENGTH', async () => {
  const { conn } = scripted([
    [/FROM information_schema\.TABLES/, tablesRow('TokuDB', 't')],
    [/^FLUSH TABLES/, ok],
    [/TokuDB_fractal_tree_info/, unknownIs('TokuDB_fractal_tree_info')],
  ]);
  const s = await measureTableSizes(conn, 'd', 't');
  assert.equal(s.fileBytes.bytes, null);
  assert.match(s.fileBytes.note ?? '', /absent/);
  assert.equal(s.allocatedBytes.bytes, null);
  assert.ok(s.allocatedBytes.note);
  assert.equal(s.onDiskBytes, 1200);
  assert.equal(s.onDiskSource, 'information_schema.TABLES.DATA_LENGTH+INDEX_LENGTH');
});

test('MySQL 8: INNODB_TABLESPACES with lower-case #p# partitions; other tables are not summed', async () => {
  const { conn, log } = scripted([
    [/FROM information_schema\.TABLES/, tablesRow('InnoDB', 't')],
    [/^FLUSH TABLES `d`\.`t` FOR EXPORT$/, ok],
    [/^UNLOCK TABLES$/, ok],
    [/^ANALYZE TABLE `d`\.`t`$/, () => [{ Table: 'd.t', Op: 'analyze', Msg_type: 'status', Msg_text: 'OK' }]],
    [/INNODB_SYS_TABLESPACES/, unknownIs('INNODB_SYS_TABLESPACES')],
    [
      /INNODB_TABLESPACES/,
      () => [
        { name: 'd/t#p#p0', file_size: '114688', allocated_size: '98304' },
        { name: 'd/t#p#p1', file_size: '114688', allocated_size: '98304' },
        { name: 'd/t#x', file_size: '1', allocated_size: '1' },
      ],
    ],
  ]);
  const s = await measureTableSizes(conn, 'd', 't');
  assert.equal(s.fileBytes.bytes, 229376);
  assert.equal(s.allocatedBytes.bytes, 196608);
  assert.equal(s.allocatedBytes.source, 'INNODB_TABLESPACES.ALLOCATED_SIZE');
  assert.match(s.fileBytes.note ?? '', /sum of 2 partition/);
  assert.deepEqual(log.find((l) => /INNODB_TABLESPACES/.test(l.sql) && !/SYS/.test(l.sql))!.values, ['d/t', 'd/t#', 'd/t#']);
});

test('a lost connection is thrown, not turned into a note', async () => {
  const { conn } = scripted([
    [/FROM information_schema\.TABLES/, tablesRow('InnoDB', 't')],
    [/^(FLUSH|UNLOCK|ANALYZE)/, ok],
    [/INNODB_SYS_TABLESPACES/, () => ({ error: { code: 'PROTOCOL_CONNECTION_LOST', message: 'Connection lost: The server closed the connection.' } })],
  ]);
  await assert.rejects(measureTableSizes(conn, 'd', 't'), (err: unknown) => isFlatloadError(err) && err.code === 'CONNECTION_LOST');
});

test('flush: false runs no statement that changes server state', async () => {
  const { conn, log } = scripted([
    [/FROM information_schema\.TABLES/, tablesRow('InnoDB', 't')],
    [/INNODB_SYS_TABLESPACES/, () => [{ name: 'd/t', file_size: '65536', allocated_size: '0' }]],
  ]);
  const s = await measureTableSizes(conn, 'd', 't', { flush: false });
  assert.ok(log.every((l) => /^SELECT/.test(l.sql)), log.map((l) => l.sql).join('\n'));
  assert.equal(s.flushMs, undefined);
  assert.match(s.allocatedBytes.note ?? '', /flush: false/);
  assert.match(s.dataBytes.note ?? '', /flush: false/);
});

test('InnoDB: only a page-compressed table has its pages written before it is measured; every table is analyzed', async () => {
  const cases: Array<{ createOptions: string; flushed: boolean }> = [
    { createOptions: '', flushed: false },
    { createOptions: '`page_compressed`=\'1\'', flushed: true },
    { createOptions: '`PAGE_COMPRESSED`=\'ON\'', flushed: true },
    { createOptions: 'COMPRESSION="zlib"', flushed: true },
    { createOptions: 'row_format=COMPRESSED KEY_BLOCK_SIZE=8', flushed: false },
  ];
  for (const c of cases) {
    const { conn, log } = scripted([
      [/FROM information_schema\.TABLES/, () => tablesRow('InnoDB', 't')().map((r) => ({ ...(r as object), create_options: c.createOptions }))],
      [/^(FLUSH|UNLOCK|ANALYZE)/, ok],
      [/INNODB_SYS_TABLESPACES/, () => [{ name: 'd/t', file_size: '65536', allocated_size: '65536' }]],
    ]);
    await measureTableSizes(conn, 'd', 't');
    const changes = log.map((l) => l.sql).filter((sql) => !/^SELECT/.test(sql));
    const want = [...(c.flushed ? ['FLUSH TABLES `d`.`t` FOR EXPORT', 'UNLOCK TABLES'] : []), 'ANALYZE TABLE `d`.`t`'];
    assert.deepEqual(changes, want, c.createOptions || 'no create options');
  }
});
