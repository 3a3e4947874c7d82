/**
 * Checks, on a real Spider front with 2 backends on loopback, the facts the
 * loader's Spider support relies on, and measures LOAD DATA through the front
 * against loading each backend's share straight into the backend. Prints
 * what it observed (docs/scale-out.md quotes the output); with --fixture FILE
 * it also writes what the front reports about several Spider tables
 * (SHOW CREATE TABLE, information_schema.PARTITIONS, mysql.servers) for the
 * shard-map unit tests.
 *
 * Run: `node --import tsx bench/research/spiderFacts.ts [--fixture test/unit/fixtures/spider-front.json]`
 */
import { FlatloadError } from '../../src/errors/index.js';
import { writeFileSync } from 'node:fs';
import type { Connection } from 'mysql2/promise';
import { ddl, generateLines } from '../../fixtures/generate.js';
import { quoteBytes } from '../../src/db/quote.js';
import { roundRobinPartitions, startSpiderCluster, type SpiderCluster, type SpiderTableSpec } from '../../dev/spider.js';
import { partitionIndex, type PartitionRule } from '../../src/shard/partition.js';
import { checksumOf, globalStatus, loadLocal, median, outcome, scalar } from '../clusterSupport.js';

const facts: Record<string, unknown> = {};
function note(key: string, value: unknown): void {
  facts[key] = value;
  process.stdout.write(`${key}: ${JSON.stringify(value)}\n`);
}

const USER_SUMMARY_COLUMNS = ddl('user_summary').replace(/^[^(]*\(/, '').replace(/\)\s*$/, '');

function tsv(rows: number, seed = 1): Buffer {
  return Buffer.concat([...generateLines({ table: 'user_summary', rows, seed })]);
}

/** Splits a user_summary TSV by the HASH(user_id) rule, using the same evaluator the loader will. */
function splitByRule(buf: Buffer, rule: PartitionRule, backendOf: number[]): Buffer[][] {
  const out: Buffer[][] = backendOf.map(() => []);
  let start = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    const end = nl === -1 ? buf.length : nl + 1;
    const tab = buf.indexOf(0x09, start);
    const p = partitionIndex(rule, [buf.subarray(start, tab)]);
    if (p === undefined) throw new FlatloadError('INTERNAL', `cannot route line at byte ${start}`);
    out[backendOf[p]!]!.push(buf.subarray(start, end));
    start = end;
  }
  return out;
}

/** Multi-row INSERT statements of `per` rows each for a user_summary TSV buffer (\\N is NULL). */
function insertBatches(buf: Buffer, table: string, per: number): string[] {
  const lines = buf.toString('latin1').split('\n').filter((l) => l.length > 0);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += per) {
    const rows = lines.slice(i, i + per).map((l) => `(${l.split('\t').map((f) => (f === '\\N' ? 'NULL' : quoteBytes(Buffer.from(f, 'latin1')))).join(', ')})`);
    out.push(`INSERT INTO ${table} VALUES ${rows.join(', ')}`);
  }
  return out;
}

async function backendCounts(s: SpiderCluster, table: string): Promise<string[]> {
  const out: string[] = [];
  for (const b of s.backends) {
    const c = await s.connectBackend(b.index, { database: 'f' });
    out.push(String(await scalar(c, `SELECT COUNT(*) FROM ${table}`)));
    await c.end();
  }
  return out;
}

async function truncateBackends(s: SpiderCluster, table: string): Promise<void> {
  for (const b of s.backends) {
    const c = await s.connectBackend(b.index, { database: 'f' });
    await c.query(`TRUNCATE TABLE ${table}`);
    await c.end();
  }
}

async function comInsert(s: SpiderCluster): Promise<number[]> {
  const out: number[] = [];
  for (const b of s.backends) {
    const c = await s.connectBackend(b.index);
    out.push(Number((await globalStatus(c, ['Com_insert']))['Com_insert']));
    await c.end();
  }
  return out;
}

const TABLES: SpiderTableSpec[] = [
  { db: 'f', table: 'us_hash', definition: USER_SUMMARY_COLUMNS, method: 'HASH', expression: 'user_id', partitions: roundRobinPartitions(2, 2) },
  {
    db: 'f',
    table: 'us_range',
    definition: USER_SUMMARY_COLUMNS,
    method: 'RANGE',
    expression: 'user_id',
    style: 'options',
    partitions: [
      { name: 'lo', backend: 0, values: '1600000000' },
      { name: 'hi', backend: 1, values: 'MAXVALUE' },
    ],
  },
  {
    db: 'f',
    table: 'us_key',
    definition: USER_SUMMARY_COLUMNS,
    method: 'KEY',
    expression: 'user_id',
    partitions: roundRobinPartitions(3, 2, 'k'),
  },
  {
    db: 'f',
    table: 'lst',
    definition: 'id INT NOT NULL, region TINYINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id, region)',
    method: 'LIST',
    expression: 'region',
    partitions: [
      { name: 'eu', backend: 0, values: '1, 2, 3' },
      { name: 'us', backend: 1, values: '4, 5' },
    ],
  },
  {
    db: 'f',
    table: 'rc',
    definition: 'a INT NOT NULL, b INT NOT NULL, PRIMARY KEY (a, b)',
    method: 'RANGE COLUMNS',
    expression: 'a, b',
    style: 'options',
    partitions: [
      { name: 'r0', backend: 0, values: '10, 20' },
      { name: 'r1', backend: 1, values: 'MAXVALUE, MAXVALUE' },
    ],
  },
  {
    db: 'f',
    table: 'lh',
    definition: 'id BIGINT UNSIGNED NOT NULL PRIMARY KEY, v INT',
    method: 'LINEAR HASH',
    expression: 'id',
    partitions: roundRobinPartitions(3, 2),
  },
  {
    db: 'f',
    table: 'ka1',
    definition: 'id INT NOT NULL PRIMARY KEY, name VARCHAR(20) CHARACTER SET latin1',
    method: 'LINEAR KEY',
    keyAlgorithm: 1,
    expression: 'id',
    partitions: roundRobinPartitions(2, 2),
  },
  {
    db: 'f',
    table: 'kpk',
    definition: 'a INT NOT NULL, b VARCHAR(10) NOT NULL, c INT, PRIMARY KEY (a, b)',
    method: 'KEY',
    expression: '',
    partitions: roundRobinPartitions(2, 2),
  },
  {
    db: 'f',
    table: 'hx',
    definition: 'id INT NOT NULL PRIMARY KEY',
    method: 'HASH',
    expression: 'id DIV 10',
    style: 'options',
    partitions: roundRobinPartitions(2, 2),
  },
];

async function frontReport(front: Connection): Promise<Record<string, unknown>> {
  const tables: Record<string, unknown> = {};
  for (const t of [...TABLES.map((x) => x.table), 'nodb']) {
    const [sc] = await front.query(`SHOW CREATE TABLE f.${t}`);
    const [parts] = await front.query(
      `SELECT PARTITION_NAME, PARTITION_ORDINAL_POSITION, PARTITION_METHOD, PARTITION_EXPRESSION, PARTITION_DESCRIPTION, PARTITION_COMMENT,
              SUBPARTITION_NAME, SUBPARTITION_METHOD
         FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'f' AND TABLE_NAME = ? ORDER BY PARTITION_ORDINAL_POSITION`,
      [t],
    ).catch((err: unknown) => [`${(err as { errno?: number }).errno}: ${(err as Error).message}`]);
    const [cols] = await front.query(
      "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COLLATION_NAME, CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'f' AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
      [t],
    );
    tables[t] = { columns: cols, showCreateTable: (sc as Array<Record<string, string>>)[0]!['Create Table'], partitions: parts };
  }
  const [servers] = await front.query('SELECT Server_name, Host, Db, Username, Port, Socket, Wrapper, Owner FROM mysql.servers ORDER BY Server_name');
  const [cols] = await front.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME = 'servers' ORDER BY ORDINAL_POSITION");
  return { tables, servers, serversColumns: (cols as Array<{ COLUMN_NAME: string }>).map((c) => c.COLUMN_NAME) };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fixture = args.includes('--fixture') ? args[args.indexOf('--fixture') + 1] : undefined;
  const t0 = Date.now();
  const s = await startSpiderCluster({ backends: 2 });
  note('start_ms', { total: Date.now() - t0, ...s.timings });
  try {
    for (const t of TABLES) await s.createSpiderTable(t);
    const front = await s.connectFront({ database: 'f', multipleStatements: true });
    front.on('error', () => undefined);
    await front.query(`CREATE TABLE f.nodb (id INT PRIMARY KEY) ENGINE=SPIDER PARTITION BY HASH (id) (PARTITION p0 COMMENT = 'srv "b1"', PARTITION p1 COMMENT = 'srv "b2"')`);
    const report = await frontReport(front);
    note('mysql.servers columns', report['serversColumns']);
    note('front_report', report);
    if (fixture) {
      writeFileSync(fixture, `${JSON.stringify({ recordedFrom: String(await scalar(front, 'SELECT VERSION()')), ...report }, null, 1)}\n`);
      process.stdout.write(`wrote ${fixture}\n`);
    }
    note('spider_variables', Object.fromEntries(((await front.query("SHOW VARIABLES WHERE Variable_name IN ('spider_bulk_size', 'spider_bulk_update_size', 'spider_direct_dup_insert', 'spider_internal_xa', 'spider_auto_increment_mode')"))[0] as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, r.Value])));

    // --- where a partition that names only its server points: which database and table on the backend
    note('insert_into_spider_table_naming_only_srv (no backend table anywhere)', await outcome(front.query('INSERT INTO f.nodb VALUES (2)')));
    const b1c = await s.connectBackend(0);
    await b1c.query('CREATE TABLE mysql.nodb (id INT PRIMARY KEY)');
    note('same_after_creating_mysql.nodb_on_b1 (the server Db is mysql)', await outcome(front.query('INSERT INTO f.nodb VALUES (2)')));
    note('rows_in_b1_mysql.nodb', await scalar(b1c, 'SELECT COUNT(*) FROM mysql.nodb'));
    await b1c.query('DROP TABLE mysql.nodb');
    await b1c.end();

    // --- rows land where the partition rule says (Spider evaluates the same partition functions)
    const small = tsv(20_000, 7);
    for (const t of ['us_hash', 'us_range', 'us_key']) {
      await loadLocal(front, small, t);
      const rule: PartitionRule =
        t === 'us_hash'
          ? { method: 'HASH', expression: '`user_id`', columns: [{ name: 'user_id', type: { kind: 'int', bytes: 8, unsigned: true } }], partitionCount: 2 }
          : t === 'us_range'
            ? { method: 'RANGE', expression: '`user_id`', columns: [{ name: 'user_id', type: { kind: 'int', bytes: 8, unsigned: true } }], partitionCount: 2, rangeBounds: [[1600000000n], ['MAXVALUE']] }
            : { method: 'KEY', expression: '`user_id`', columns: [{ name: 'user_id', type: { kind: 'int', bytes: 8, unsigned: true } }], partitionCount: 3, keyAlgorithm: 2 };
      const backendOf = t === 'us_key' ? [0, 1, 0] : [0, 1];
      let wrong = 0;
      let checked = 0;
      for (const b of s.backends) {
        const c = await s.connectBackend(b.index, { database: 'f' });
        const [rows] = await c.query(`SELECT user_id FROM ${t}`);
        for (const r of rows as Array<{ user_id: string | number }>) {
          const p = partitionIndex(rule, [Buffer.from(String(r.user_id))]);
          checked++;
          if (p === undefined || backendOf[p] !== b.index) wrong++;
        }
        await c.end();
      }
      note(`rows_on_the_backend_the_rule_names (${t})`, { checked, wrong, perBackend: await backendCounts(s, t) });
    }

    // --- one INSERT per row from the front?
    await truncateBackends(s, 'us_hash');
    const thousand = tsv(1000, 3);
    for (const bulk of ['default', '16000000']) {
      if (bulk !== 'default') await front.query(`SET SESSION spider_bulk_size = ${bulk}`);
      const before = await comInsert(s);
      await loadLocal(front, thousand, 'us_hash');
      const after = await comInsert(s);
      note(`backend_Com_insert_for_a_1000_row_front_LOAD_DATA (spider_bulk_size ${bulk})`, after.map((a, i) => a - before[i]!));
      await truncateBackends(s, 'us_hash');
    }
    await front.query('SET SESSION spider_bulk_size = DEFAULT');
    const beforeIns = await comInsert(s);
    await front.query(`INSERT INTO us_hash VALUES ${Array.from({ length: 1000 }, (_, i) => `(${i + 1}, 'w', 'l', 'b', ${i})`).join(', ')}`);
    const afterIns = await comInsert(s);
    note('backend_Com_insert_for_a_1000_row_multi_row_INSERT_on_the_front', afterIns.map((a, i) => a - beforeIns[i]!));
    await truncateBackends(s, 'us_hash');

    // --- speed: front LOAD DATA, front multi-row INSERTs, and each backend's share loaded straight into it
    const rule: PartitionRule = { method: 'HASH', expression: '`user_id`', columns: [{ name: 'user_id', type: { kind: 'int', bytes: 8, unsigned: true } }], partitionCount: 2 };
    for (const rows of args.includes('--skip-speed') ? [] : [100_000, 300_000]) {
      const data = tsv(rows, 11);
      const shares = splitByRule(data, rule, [0, 1]).map((parts) => Buffer.concat(parts));
      const inserts = insertBatches(data, 'us_hash', 1000);
      const methods: Record<string, () => Promise<void>> = {
        'front LOAD DATA': async () => void (await loadLocal(front, data, 'us_hash')),
        'front INSERT x1000, 2 conns': async () => {
          const conns = await Promise.all([0, 1].map(() => s.connectFront({ database: 'f' })));
          let next = 0;
          await Promise.all(conns.map(async (c) => { for (let i = next++; i < inserts.length; i = next++) await c.query(inserts[i]!); }));
          await Promise.all(conns.map((c) => c.end()));
        },
        'backends direct LOAD DATA, in parallel': async () => {
          const conns = await Promise.all(s.backends.map((b) => s.connectBackend(b.index, { database: 'f' })));
          await Promise.all(conns.map((c, i) => loadLocal(c, shares[i]!, 'us_hash')));
          await Promise.all(conns.map((c) => c.end()));
        },
      };
      const names = Object.keys(methods);
      const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let rep = 0; rep < 3; rep++) {
        for (let k = 0; k < names.length; k++) {
          const name = names[(k + rep) % names.length]!;
          await truncateBackends(s, 'us_hash');
          const t = process.hrtime.bigint();
          await methods[name]!();
          ms[name]!.push(Number(process.hrtime.bigint() - t) / 1e6);
          const counts = await backendCounts(s, 'us_hash');
          if (counts.reduce((a, b) => a + Number(b), 0) !== rows) throw new FlatloadError('INTERNAL', `${name}: ${counts.join('+')} rows, expected ${rows}`);
        }
      }
      const direct = median(ms['backends direct LOAD DATA, in parallel']!);
      note(`load_${rows}_rows`, {
        tsvBytes: data.length,
        shareRows: shares.map((x) => x.toString('latin1').split('\n').length - 1),
        ...Object.fromEntries(
          names.map((n) => [n, { runsMs: ms[n]!.map(Math.round), medianMs: Math.round(median(ms[n]!)), rowsPerS: Math.round(rows / (median(ms[n]!) / 1000)), vsDirect: Number((median(ms[n]!) / direct).toFixed(1)) }]),
        ),
      });
    }

    // --- CHECKSUM TABLE on the front
    const [ck] = await front.query('CHECKSUM TABLE us_hash');
    const [cke] = await front.query('CHECKSUM TABLE us_hash EXTENDED');
    note('checksum_table_on_front', { quick: ck, extended: cke });
    const backendSums: unknown[] = [];
    for (const b of s.backends) {
      const c = await s.connectBackend(b.index, { database: 'f' });
      backendSums.push(await checksumOf(c, 'us_hash', true));
      await c.end();
    }
    note('checksum_table_on_backends', backendSums);

    // --- one backend down
    await s.killBackend(1);
    note('front_count_with_b2_down', await outcome(front.query('SELECT COUNT(*) FROM us_hash')));
    note('front_insert_row_for_b1_with_b2_down', await outcome(front.query("INSERT INTO us_hash VALUES (2, 'w', 'l', 'b', 1)")));
    note('front_select_b1_partition_with_b2_down', await outcome(front.query('SELECT COUNT(*) FROM us_hash PARTITION (p0)')));
    note('front_select_where_b1_key_with_b2_down', await outcome(front.query('SELECT * FROM us_hash WHERE user_id = 4')));
    note('show_create_table_with_b2_down', await outcome(front.query('SHOW CREATE TABLE us_hash')));
    note('information_schema.PARTITIONS_with_b2_down', await outcome(front.query("SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'f' AND TABLE_NAME = 'us_hash'")));
    note('information_schema.PARTITIONS_names_only_with_b2_down', await outcome(front.query("SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'f' AND TABLE_NAME = 'us_range'")));
    note('front_load_data_with_b2_down', await outcome(loadLocal(front, tsv(10, 5), 'us_hash')));
    note('front_range_table_row_for_b1_with_b2_down', await outcome(front.query("INSERT INTO us_range VALUES (5, 'w', 'l', 'b', 1)")));
    const evenOnly = Buffer.from(Array.from({ length: 10 }, (_, i) => `${1000 + 2 * i}\tw\tl\tb\t1\n`).join(''));
    note('front_load_data_only_b1_rows_with_b2_down', await outcome(loadLocal(front, evenOnly, 'us_hash')));
    // b1 rows first, then one b2 row, then more b1 rows: what stays on b1 when the statement fails?
    const mixed = Buffer.from([2000, 2002, 2004, 2001, 2006, 2008].map((id) => `${id}\tw\tl\tb\t1\n`).join(''));
    note('front_load_data_mixed_rows_with_b2_down', await outcome(loadLocal(front, mixed, 'us_hash')));
    const b1 = await s.connectBackend(0, { database: 'f' });
    note('b1_rows_left_by_the_failed_mixed_load', await scalar(b1, 'SELECT GROUP_CONCAT(user_id ORDER BY user_id) FROM us_hash WHERE user_id BETWEEN 2000 AND 2010'));
    await front.query('BEGIN');
    const mixed2 = Buffer.from([3000, 3002, 3001, 3004].map((id) => `${id}\tw\tl\tb\t1\n`).join(''));
    note('front_load_data_mixed_in_a_transaction_with_b2_down', await outcome(loadLocal(front, mixed2, 'us_hash')));
    note('front_rollback_after_it', await outcome(front.query('ROLLBACK')));
    note('b1_rows_left_after_rollback', await scalar(b1, 'SELECT GROUP_CONCAT(user_id ORDER BY user_id) FROM us_hash WHERE user_id BETWEEN 3000 AND 3010'));
    await b1.end();
    await s.restartBackend(1);
    note('front_count_after_b2_restart', await outcome(front.query('SELECT COUNT(*) FROM us_hash')));
    note('front_count_after_b2_restart_value', await scalar(front, 'SELECT COUNT(*) FROM us_hash'));
    await front.end();
  } finally {
    await s.stop();
  }
}

await main();
