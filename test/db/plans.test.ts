/**
 * The planner's plans, run for real on each engine the server has: the data
 * is exactly what the server's own LOAD DATA INFILE makes of the file, the
 * statements the plan names really ran (indexes back, keys enabled,
 * AUTO_INCREMENT past the last key), and the engine's fast path was taken
 * where the server shows it (MyRocks bulk load writes SST files straight
 * away; a transactional MyRocks load leaves its rows in the memtable).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ddl, fileColumns, generateToFile, type FixtureTable, type GenerateOptions } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, freshUserSummary, hasRocksdb, tableDigest, type TestDatabase } from '../support/db.js';
import { spillBytesEstimate } from '../../src/order/spillDir.js';

let db: TestDatabase;
let dir: string;
const ROWS = 20_000;

before(async () => {
  db = await createTestDatabase('plans');
  dir = mkdtempSync(join(tmpdir(), 'flatload-plans-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface Report {
  rows: number;
  rejected: number;
  strategy: string;
  jobs: number;
  plan: {
    strategy: string;
    concurrency: number;
    commitScope: string;
    guarantee: { kind: string };
    order: { kind: string };
    surrogateKey: { kind: string } | null;
    sessionSettings: Array<{ name: string; value: string }>;
    statements: { before: Array<{ sql: string }>; after: Array<{ sql: string }>; perChunk: { before: Array<{ sql: string }> } };
  };
}

const files = new Map<string, { file: string; gen: GenerateOptions }>();
async function fixtureFile(table: FixtureTable, sorted = false): Promise<{ file: string; gen: GenerateOptions }> {
  const key = `${table}-${sorted}`;
  let f = files.get(key);
  if (!f) {
    const gen: GenerateOptions = { table, rows: ROWS, seed: 21, sorted };
    const file = join(dir, `${key}.tsv`);
    await generateToFile(file, gen);
    f = { file, gen };
    files.set(key, f);
  }
  return f;
}

/**
 * Creates `name` and `name_ref` with the engine, loads the reference with the
 * server's LOAD DATA INFILE, and `name` with flatload. `refSorted` loads the
 * reference from the generator's sorted file (the same rows sorted by
 * user_id), for plans that number the ids in that order.
 */
async function loadPair(name: string, table: FixtureTable, engine: string, extra: string[], sorted = false, refSorted = sorted): Promise<Report> {
  const { file, gen } = await fixtureFile(table, sorted);
  const ref = (await fixtureFile(table, refSorted)).file;
  const create = `${ddl(table)} ENGINE=${engine}`;
  for (const t of [name, `${name}_ref`]) {
    await db.conn.query(`DROP TABLE IF EXISTS \`${t}\``);
    await db.conn.query(create.replace(/CREATE TABLE \S+/, `CREATE TABLE \`${t}\``));
  }
  const columns = fileColumns(gen);
  const idAbsent = table !== 'user_summary';
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE \`${name}_ref\`${idAbsent ? ` (${columns.map((c) => `\`${c}\``).join(',')})` : ''}`, [ref]);
  const args = ['load', file, '--table', name, '--chunk-size', '64KiB', '--progress', 'none', '--json', '--skip-size-report', ...extra];
  if (idAbsent) args.push('--columns', columns.join(','));
  const r = await runCli(args, { env: { DATABASE_URL: db.url } });
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as Report;
  assert.equal(report.rows, ROWS);
  assert.equal(report.rejected, 0);
  return report;
}

async function assertSameAsServer(name: string): Promise<void> {
  assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
}

async function indexNames(name: string): Promise<string[]> {
  const [rows] = await db.conn.query(`SHOW INDEX FROM \`${name}\``);
  return [...new Set((rows as Array<{ Key_name: string }>).map((r) => r.Key_name))].sort();
}

/** The table's next AUTO_INCREMENT value (MariaDB's SHOW TABLE STATUS reads it from the engine, not a cache). */
async function nextAutoIncrement(name: string): Promise<number> {
  const [r] = await db.conn.query('SHOW TABLE STATUS LIKE ?', [name]);
  return Number((r as Array<{ Auto_increment: unknown }>)[0]!.Auto_increment);
}

/** SST files the table's indexes have in RocksDB right now (without a memtable flush). */
async function sstFiles(name: string): Promise<number> {
  const [r] = await db.conn.query(
    `SELECT COUNT(DISTINCT m.SST_NAME) AS n
       FROM information_schema.ROCKSDB_INDEX_FILE_MAP m
       JOIN information_schema.ROCKSDB_DDL d ON d.COLUMN_FAMILY = m.COLUMN_FAMILY AND d.INDEX_NUMBER = m.INDEX_NUMBER
      WHERE d.TABLE_SCHEMA = ? AND d.TABLE_NAME = ?`,
    [db.name, name],
  );
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

describe('InnoDB plans', () => {
  test('user_summary, random order: the input sorted by the key, parallel chunks, exact', async () => {
    const rep = await loadPair('i_us', 'user_summary', 'InnoDB', []);
    assert.equal(rep.plan.commitScope, 'chunk');
    assert.equal(rep.plan.guarantee.kind, 'exactly-once');
    assert.ok(rep.plan.concurrency >= 1);
    assert.equal(rep.plan.order.kind, 'key', 'unsorted sample: the input is sorted by the key first');
    await assertSameAsServer('i_us');
  });

  test('user3, id absent: the input sorted by user_id and the ids pre-assigned in that order, as the server numbers the sorted file; AUTO_INCREMENT past them', async () => {
    const rep = await loadPair('i_u3', 'user3', 'InnoDB', [], false, true);
    assert.equal(rep.strategy, 'surrogate-key');
    assert.equal(rep.plan.surrogateKey?.kind, 'pre-assign');
    assert.equal(rep.plan.order.kind, 'key');
    await assertSameAsServer('i_u3');
    assert.equal(await nextAutoIncrement('i_u3'), ROWS + 1);
  });

  test('user3, id absent, --allow-ddl: the id is taken out and re-created as a dense AUTO_INCREMENT PRIMARY KEY', async () => {
    const rep = await loadPair('i_u3d', 'user3', 'InnoDB', ['--allow-ddl']);
    assert.equal(rep.plan.surrogateKey?.kind, 'defer');
    assert.ok(rep.plan.statements.before.some((s) => /DROP COLUMN `id`/.test(s.sql)));
    const cols = 'user_id, weight, level, beat_rate, level_num';
    for (const suffix of ['', '_ref']) await db.conn.query(`CREATE TABLE \`i_u3d_p${suffix}\` ENGINE=InnoDB SELECT ${cols} FROM \`i_u3d${suffix}\``);
    await assertSameAsServer('i_u3d_p');
    const [r] = await db.conn.query('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d, MIN(id) AS lo, MAX(id) AS hi FROM `i_u3d`');
    assert.deepEqual(
      Object.values((r as Array<Record<string, unknown>>)[0]!).map(Number),
      [ROWS, ROWS, 1, ROWS],
    );
    const [pk] = await db.conn.query("SHOW INDEX FROM `i_u3d` WHERE Key_name = 'PRIMARY'");
    assert.deepEqual((pk as Array<{ Column_name: string }>).map((x) => x.Column_name), ['id']);
    assert.equal(await nextAutoIncrement('i_u3d'), ROWS + 1);
  });

  test('purchases_index, --allow-ddl: secondary indexes dropped for the load and all back after it, exact', async () => {
    const rep = await loadPair('i_pi', 'purchases_index', 'InnoDB', ['--allow-ddl']);
    assert.ok(rep.plan.statements.before.some((s) => /DROP INDEX/.test(s.sql)), 'the plan drops the indexes');
    assert.ok(rep.plan.statements.after.some((s) => /ADD INDEX/.test(s.sql)), 'and re-adds them');
    assert.deepEqual(await indexNames('i_pi'), await indexNames('i_pi_ref'));
    await assertSameAsServer('i_pi');
  });

  test('--mode swap: the shadow is loaded and swapped in; no shadow or old table remains', async () => {
    await loadPair('i_sw', 'user_summary', 'InnoDB', []);
    const rep = await loadPair('i_sw', 'user_summary', 'InnoDB', ['--mode', 'swap']);
    assert.ok(rep.plan.statements.after.some((s) => /^RENAME TABLE/.test(s.sql)));
    await assertSameAsServer('i_sw');
    const [left] = await db.conn.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ?', [db.name, 'i\\_sw\\_\\_flatload%']);
    assert.deepEqual(left, []);
  });
});

describe('MyISAM and Aria plans', () => {
  for (const engine of ['MyISAM', 'Aria']) {
    test(`${engine} purchases_index: one stream, DISABLE KEYS before and ENABLE KEYS after, keys enabled and exact`, async () => {
      const name = `${engine.toLowerCase()}_pi`;
      const rep = await loadPair(name, 'purchases_index', engine, []);
      assert.equal(rep.plan.concurrency, 1);
      assert.equal(rep.plan.commitScope, 'none');
      assert.ok(rep.plan.statements.before.some((s) => /DISABLE KEYS/.test(s.sql)));
      assert.ok(rep.plan.statements.after.some((s) => /ENABLE KEYS/.test(s.sql)));
      const [ix] = await db.conn.query(`SHOW INDEX FROM \`${name}\``);
      const disabled = (ix as Array<{ Key_name: string; Comment: string }>).filter((x) => /disabled/i.test(x.Comment));
      assert.deepEqual(disabled, [], 'every index is enabled again');
      await assertSameAsServer(name);
      assert.equal(await nextAutoIncrement(name), ROWS + 1);
    });
  }
});

describe('MyRocks plans', { skip: hasRocksdb() ? false : 'no MyRocks plugin' }, () => {
  test('user_summary, random order, --order file: one unsorted bulk load; its SST files exist at once, exact', async () => {
    const rep = await loadPair('r_us', 'user_summary', 'ROCKSDB', ['--order', 'file']);
    assert.equal(rep.plan.concurrency, 1);
    assert.deepEqual(
      rep.plan.sessionSettings.map((s) => `${s.name}=${s.value}`),
      ['rocksdb_bulk_load_allow_unsorted=1', 'rocksdb_bulk_load=1'],
    );
    assert.ok((await sstFiles('r_us')) > 0, 'bulk load writes SST files, not the memtable');
    await assertSameAsServer('r_us');
  });

  test('user_summary, random order: sorted by the key first, a bulk load per chunk (key-range resume), SST files at once, exact', async () => {
    const rep = await loadPair('r_uso', 'user_summary', 'ROCKSDB', []);
    assert.equal(rep.plan.order.kind, 'key');
    assert.equal(rep.plan.guarantee.kind, 'exactly-once-by-key-range');
    assert.ok(rep.plan.statements.perChunk.before.some((s) => /rocksdb_bulk_load = 1/.test(s.sql)));
    assert.ok((await sstFiles('r_uso')) > 0);
    await assertSameAsServer('r_uso');
  });

  test('user_summary, sorted file: a bulk load per chunk (key-range resume), SST files at once, exact', async () => {
    const rep = await loadPair('r_uss', 'user_summary', 'ROCKSDB', [], true);
    assert.equal(rep.plan.guarantee.kind, 'exactly-once-by-key-range');
    assert.ok(rep.plan.statements.perChunk.before.some((s) => /rocksdb_bulk_load = 1/.test(s.sql)));
    assert.ok((await sstFiles('r_uss')) > 0);
    await assertSameAsServer('r_uss');
  });

  test('user3, id absent: pre-assigned keys are in key order, so each chunk bulk-loads; AUTO_INCREMENT past them', async () => {
    const rep = await loadPair('r_u3', 'user3', 'ROCKSDB', [], false, true);
    assert.equal(rep.plan.surrogateKey?.kind, 'pre-assign');
    assert.equal(rep.plan.guarantee.kind, 'exactly-once-by-key-range');
    assert.ok((await sstFiles('r_u3')) > 0);
    await assertSameAsServer('r_u3');
    assert.equal(await nextAutoIncrement('r_u3'), ROWS + 1);
  });

  test('the check can tell: without bulk load (--on-duplicate ignore) the rows are still in the memtable', async () => {
    const rep = await loadPair('r_tx', 'user_summary', 'ROCKSDB', ['--on-duplicate', 'ignore']);
    assert.equal(rep.plan.commitScope, 'chunk');
    assert.deepEqual(rep.plan.sessionSettings, []);
    assert.equal(await sstFiles('r_tx'), 0);
    await assertSameAsServer('r_tx');
  });
});

/** A tmpfs of `bytes` mounted at a new directory; undefined where this process cannot mount (not root). */
function mountTmpfs(bytes: number): string | undefined {
  const at = mkdtempSync(join(tmpdir(), 'flatload-tmpfs-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${Math.ceil(bytes / 4096) * 4}k`, 'tmpfs', at], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(at, { recursive: true, force: true });
    return undefined;
  }
  return at;
}

describe('a --tmpdir with room for the compressed runs only', () => {
  const RUN_ROWS = 200_000;
  let small: string | undefined;
  let file = '';
  let bound = 0;
  before(async () => {
    file = join(dir, 'us-runs.tsv');
    await generateToFile(file, { table: 'user_summary', rows: RUN_ROWS, seed: 5 });
    // The runs uncompressed would not fit; compressed (about 0.45 of that for these rows) they do.
    bound = spillBytesEstimate(statSync(file).size, RUN_ROWS);
    small = mountTmpfs(0.8 * bound);
  });
  after(() => {
    if (!small) return;
    spawnSync('umount', [small]);
    if (existsSync(small)) rmSync(small, { recursive: true, force: true });
  });

  test('--order key is accepted and the plan says what it assumed; the rows are the server\'s own', async (t) => {
    if (!small) {
      t.skip('mounting a tmpfs needs root (CAP_SYS_ADMIN)');
      return;
    }
    const name = 'i_us_small_tmp';
    for (const tbl of [name, `${name}_ref`]) await freshUserSummary(db.conn, `\`${tbl}\``, 'InnoDB');
    await db.conn.query(`LOAD DATA INFILE ? INTO TABLE \`${name}_ref\``, [file]);
    const args = [file, '--table', name, '--order', 'key', '--sort-memory', '0', '--tmpdir', small];
    const plan = await runCli(['plan', ...args], { env: { DATABASE_URL: db.url } });
    assert.equal(plan.code, 0, plan.stderr);
    const said = /about (\d+) MB of runs, compressed \(sample ratio (0\.\d+)x\), in --tmpdir/.exec(plan.stdout);
    assert.ok(said, plan.stdout);
    assert.ok(Number(said[1]) * 1e6 < 0.8 * bound && Number(said[2]) < 0.6, `${said[0]} for an uncompressed bound of ${bound} bytes`);
    const r = await runCli(['load', ...args, '--progress', 'none', '--json', '--skip-size-report'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.equal(report.plan.order.kind, 'key');
    assert.equal(report.rows, RUN_ROWS);
    assert.deepEqual(await tableDigest(db.conn, `\`${name}\``), await tableDigest(db.conn, `\`${name}_ref\``));
  });
});
