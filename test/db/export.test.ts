import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { adminConnection, createTestDatabase, serverUrl, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil } from '../support/poll.js';
import { prng, spawnCli } from '../support/spawn.js';

/**
 * A directory written by the real `mariadb-dump --tab` (t.sql + t.txt per
 * table) of tables in several engines — InnoDB with an AUTO_INCREMENT key and
 * secondary indexes, InnoDB split over three files, Aria, MyISAM — loaded
 * into empty databases as one export.
 */
const TABLES = ['orders', 'items', 'events', 'legacy'];

const SOURCE_SQL = [
  `CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer INT NOT NULL, note VARCHAR(200) NULL,
     amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL, KEY by_customer (customer), KEY by_created (created, customer)) ENGINE=InnoDB`,
  // Values the dump must escape: NULL (\\N), tabs, newlines and backslashes inside fields.
  `INSERT INTO orders (customer, note, amount, created)
     SELECT seq % 997, CASE WHEN seq % 13 = 0 THEN NULL WHEN seq % 7 = 0 THEN CONCAT('tab\\there ', seq)
                            WHEN seq % 11 = 0 THEN CONCAT('line\\nbreak\\\\', seq) ELSE REPEAT(CHAR(65 + seq % 26), seq % 40) END,
            seq * 1.25, '2024-01-01' + INTERVAL seq MINUTE FROM seq_1_to_40000`,
  `CREATE TABLE items (sku VARCHAR(20) NOT NULL PRIMARY KEY, title VARCHAR(100) NOT NULL, qty INT NULL, UNIQUE KEY by_title (title), KEY by_qty (qty)) ENGINE=InnoDB`,
  `INSERT INTO items SELECT CONCAT('SKU-', seq), CONCAT('item number ', seq, ' ', REPEAT('x', seq % 30)), IF(seq % 17 = 0, NULL, seq % 500) FROM seq_1_to_30000`,
  `CREATE TABLE events (ts BIGINT NOT NULL, kind CHAR(3) NOT NULL, payload TEXT NULL) ENGINE=Aria`,
  `INSERT INTO events SELECT 1700000000 + seq, ELT(1 + seq % 3, 'get', 'put', 'del'), IF(seq % 5 = 0, NULL, REPEAT(CONCAT(seq, ','), seq % 20)) FROM seq_1_to_20000`,
  `CREATE TABLE legacy (k INT NOT NULL PRIMARY KEY, v VARCHAR(30) NULL) ENGINE=MyISAM`,
  `INSERT INTO legacy SELECT seq, IF(seq % 9 = 0, NULL, CONCAT('v', seq)) FROM seq_1_to_15000`,
];

let source: TestDatabase;
let root: string;
let dump: string;

function dumpTab(db: string, dir: string): void {
  const u = new URL(serverUrl());
  const args = [`--host=${u.hostname}`, `--port=${u.port || '3306'}`, `--user=${decodeURIComponent(u.username || 'root')}`, `--tab=${dir}`, db];
  if (u.password) args.unshift(`--password=${decodeURIComponent(u.password)}`);
  execFileSync('mariadb-dump', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** items.txt → items.000.txt … items.002.txt (the dump's records here hold no escaped line breaks, so lines are records). */
function splitFile(dir: string, table: string, parts: number): void {
  const lines = readFileSync(join(dir, `${table}.txt`), 'utf8').split('\n').slice(0, -1);
  const per = Math.ceil(lines.length / parts);
  for (let p = 0; p < parts; p++) writeFileSync(join(dir, `${table}.${String(p).padStart(3, '0')}.txt`), lines.slice(p * per, (p + 1) * per).map((l) => `${l}\n`).join(''));
  unlinkSync(join(dir, `${table}.txt`));
}

let hasDump = true;
try {
  execFileSync('mariadb-dump', ['--version'], { stdio: 'ignore' });
} catch {
  hasDump = false;
}

before(async () => {
  if (!hasDump) return;
  source = await createTestDatabase('xsrc');
  for (const sql of SOURCE_SQL) await source.conn.query(sql);
  root = mkdtempSync(join(tmpdir(), 'flatload-export-'));
  dump = join(root, 'dump');
  execFileSync('mkdir', [dump]);
  dumpTab(source.name, dump);
  splitFile(dump, 'items', 3);
});
after(async () => {
  if (!hasDump) return;
  await source?.drop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Chunks the database's bookkeeping holds committed (0 before the first load made the table). */
async function committedChunks(db: TestDatabase): Promise<number> {
  const [t] = await db.conn.query("SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'flatload_chunks'");
  if (Number((t as Array<{ n: unknown }>)[0]!.n) === 0) return 0;
  const [c] = await db.conn.query('SELECT COUNT(*) AS n FROM flatload_chunks');
  return Number((c as Array<{ n: unknown }>)[0]!.n);
}

/** Loads the bookkeeping holds started but not done: a table a kill left part-way. */
async function partWay(db: TestDatabase): Promise<number> {
  if ((await committedChunks(db)) === 0) return 0;
  const [r] = await db.conn.query(
    "SELECT COUNT(DISTINCT c.job_id) AS n FROM flatload_chunks c JOIN flatload_jobs j ON j.job_id = c.job_id WHERE j.state <> 'done'",
  );
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

async function assertSameAsSource(db: TestDatabase): Promise<void> {
  for (const t of TABLES) {
    assert.deepEqual(await tableDigest(db.conn, `\`${db.name}\`.\`${t}\``), await tableDigest(source.conn, `\`${source.name}\`.\`${t}\``), t);
  }
}

interface ExportJson {
  status: string;
  tables: Array<{ table: string; status: string; rows: number; rejected: number; onDiskBytes: number | null; engine: string; resumedChunks: number }>;
  totals: { rows: number; rejected: number };
}

const skip = hasDump ? false : 'no mariadb-dump on this machine';

describe('a mariadb-dump --tab directory loaded as one export', { skip }, () => {
  test('--create-tables into an empty database: every table equals the source, one report, the plan of every table', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase('xdst');
    try {
      const env = { DATABASE_URL: db.url };
      const missing = await runCli(['load', dump, '--progress', 'none'], { env });
      assert.equal(missing.code, 7, missing.stderr);
      assert.match(missing.stderr, /does not exist \(for .*\.txt\)[\s\S]*--create-tables/);

      const r = await runCli(['load', dump, '--create-tables', '--jobs', '3', '--progress', 'lines', '--json'], { env });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as ExportJson;
      assert.equal(report.status, 'ok');
      assert.deepEqual(report.tables.map((t) => t.table).sort(), TABLES.map((t) => `${db.name}.${t}`).sort());
      assert.equal(report.totals.rows, 40_000 + 30_000 + 20_000 + 15_000);
      for (const t of report.tables) assert.ok(t.onDiskBytes !== null && t.onDiskBytes > 0, `${t.table} on-disk size`);
      assert.deepEqual(Object.fromEntries(report.tables.map((t) => [t.table.split('.')[1], t.engine.toUpperCase()])), { orders: 'INNODB', items: 'INNODB', events: 'ARIA', legacy: 'MYISAM' });
      assert.match(r.stderr, /total +ok +105,000/);
      await assertSameAsSource(db);
      const [ai] = await db.conn.query("SELECT AUTO_INCREMENT AS a FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'");
      assert.ok(Number((ai as Array<{ a: unknown }>)[0]!.a) > 40_000, 'the AUTO_INCREMENT counter is past the loaded keys');
      const [idx] = await db.conn.query("SELECT COUNT(DISTINCT INDEX_NAME) AS n FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'");
      assert.equal(Number((idx as Array<{ n: unknown }>)[0]!.n), 3, 'primary key and both secondary indexes');

      const again = await runCli(['load', dump, '--create-tables', '--progress', 'none', '--json'], { env });
      assert.equal(again.code, 0, again.stderr);
      assert.equal((JSON.parse(again.stdout) as ExportJson).status, 'already-loaded');
      await assertSameAsSource(db);

      const plan = await runCli(['plan', dump], { env });
      assert.equal(plan.code, 0, plan.stderr);
      for (const t of TABLES) assert.match(plan.stdout, new RegExp(`== ${db.name}\\.${t}`));
      assert.match(plan.stdout, /3 files, loaded one after another in this order: .*items\.000\.txt, .*items\.001\.txt, .*items\.002\.txt/);

      const status = await runCli(['status'], { env });
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, new RegExp(`export x[0-9a-f]+ +done +${dump.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +mode append +tables 4/4 done`));
      assert.match(status.stdout, new RegExp(`${db.name}\\.items +done +3/3`));
    } finally {
      await db.drop();
    }
  });

  test('killed three times at random moments and resumed with the same command: exact', { timeout: 180_000 }, async () => {
    const db = await createTestDatabase('xkill');
    try {
      const args = ['load', dump, '--create-tables', '--jobs', '3', '--chunk-size', '64KiB', '--keep-history', '--progress', 'none', '--json'];
      const rnd = prng(4242);
      let killed = 0;
      let last = '';
      // A kill can land between two files, leaving no table part-way; the
      // last run must resume part-way exactly when the last kill left one.
      let leftPartWay = 0;
      let killsPartWay = 0;
      for (let run = 1; run <= 12; run++) {
        const s = spawnCli(args, { DATABASE_URL: db.url });
        let exited = false;
        void s.done.then(() => (exited = true));
        if (killed < 3) {
          const target = (await committedChunks(db)) + 2 + Math.floor(rnd() * 8);
          const deadline = Date.now() + 60_000;
          while (!exited && Date.now() < deadline && ((await committedChunks(db)) < target || (await partWay(db)) === 0)) {
            await new Promise((r) => setTimeout(r, 3));
          }
          await new Promise((r) => setTimeout(r, Math.floor(rnd() * 20)));
          if (!exited) s.child.kill('SIGKILL');
        }
        const r = await s.done;
        if (r.signal === 'SIGKILL') {
          killed++;
          leftPartWay = await partWay(db);
          if (leftPartWay > 0) killsPartWay++;
          if (killed === 2) {
            // Killed mid-export: status shows it as one job, stopped, with its tables.
            const st = await runCli(['status'], { env: { DATABASE_URL: db.url } });
            assert.match(st.stdout, /export x[0-9a-f]+ +stopped \(prepared\): no process holds it/);
          }
          continue;
        }
        assert.equal(r.code, 0, `run ${run}: ${r.stderr}`);
        last = r.stdout;
        break;
      }
      assert.equal(killed, 3, 'three runs were killed mid-load');
      const report = JSON.parse(last) as ExportJson;
      assert.equal(report.status, 'ok');
      assert.ok(killsPartWay > 0, 'a kill left a table part-way');
      if (leftPartWay > 0) assert.ok(report.tables.some((t) => t.resumedChunks > 0), 'the last run resumed a table part-way');
      await assertSameAsSource(db);
      const [jobs] = await db.conn.query("SELECT COUNT(*) AS n FROM flatload_jobs WHERE state = 'done'");
      assert.equal(Number((jobs as Array<{ n: unknown }>)[0]!.n), 6, 'one finished load per file');
      const [ex] = await db.conn.query('SELECT state, phase FROM flatload_exports');
      assert.deepEqual(ex, [{ state: 'done', phase: 'finished' }]);
    } finally {
      await db.drop();
    }
  });

  test('a manifest (CSV, header lines, a bad row within --max-errors, --reject-dir), a glob with db.table names, --mode replace', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase('xman');
    try {
      const env = { DATABASE_URL: db.url };
      const dir = join(root, `csv-${db.name}`);
      execFileSync('mkdir', ['-p', join(dir, 'out'), join(dir, 'rej')]);
      await db.conn.query('CREATE TABLE people (id INT NOT NULL PRIMARY KEY, name VARCHAR(40) NULL, age INT NULL) ENGINE=InnoDB');
      const csv = (from: number, to: number, bad?: number): string =>
        'id,name,age\r\n' + Array.from({ length: to - from + 1 }, (_, k) => from + k).map((i) => `${i},"Name, ${i}",${i === bad ? 'old' : i % 90}\r\n`).join('');
      writeFileSync(join(dir, 'out', 'part-a.dat'), csv(1, 5000));
      writeFileSync(join(dir, 'out', 'part-b.dat'), csv(5001, 9000, 7777));
      writeFileSync(join(dir, 'export.json'), JSON.stringify({ tables: [{ table: 'people', files: ['out/part-a.dat', 'out/part-b.dat'], options: { dialect: 'csv', 'ignore-lines': 1 } }] }));
      const r = await runCli(['load', '--manifest', join(dir, 'export.json'), '--max-errors', '5', '--reject-dir', join(dir, 'rej'), '--progress', 'none', '--json'], { env });
      assert.equal(r.code, 3, r.stderr);
      const report = JSON.parse(r.stdout) as ExportJson & { tables: Array<{ rejectFiles: string[] }> };
      assert.equal(report.status, 'rejected-within-budget');
      assert.deepEqual([report.totals.rows, report.totals.rejected], [8999, 1]);
      assert.deepEqual(report.tables[0]!.rejectFiles, [join(dir, 'rej', `${db.name}.people.1.rejects.txt`)]);
      assert.equal(readFileSync(report.tables[0]!.rejectFiles[0]!, 'utf8'), 'id,name,age\r\n7777,"Name, 7777",old\r\n', 'the header, then the rejected record, as in the input');
      const [people] = await db.conn.query('SELECT COUNT(*) AS n, SUM(id) AS s FROM people');
      assert.deepEqual(people, [{ n: '8999', s: String((9000 * 9001) / 2 - 7777) }]);

      // A glob: db.table names, a table split over two parts; then --mode replace empties the table once.
      await db.conn.query('CREATE TABLE things (k INT NOT NULL, v VARCHAR(10) NULL) ENGINE=InnoDB');
      const tsv = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, k) => `${from + k}\tv${from + k}\n`).join('');
      writeFileSync(join(dir, `${db.name}.things.000.tsv`), tsv(1, 3000));
      writeFileSync(join(dir, `${db.name}.things.001.tsv`), tsv(3001, 4000));
      const glob = join(dir, '*.tsv');
      const g = await runCli(['load', glob, '--progress', 'none', '--json'], { env: { DATABASE_URL: serverUrl() } });
      assert.equal(g.code, 0, g.stderr);
      const rep = await runCli(['load', glob, '--mode', 'replace', '--progress', 'none', '--json'], { env: { DATABASE_URL: serverUrl() } });
      assert.equal(rep.code, 0, rep.stderr);
      assert.equal((JSON.parse(rep.stdout) as ExportJson).totals.rows, 4000);
      const [things] = await db.conn.query('SELECT COUNT(*) AS n, COUNT(DISTINCT k) AS d FROM things');
      assert.deepEqual(things, [{ n: '4000', d: '4000' }], 'replaced, not doubled');
    } finally {
      await db.drop();
    }
  });

  test('--mode swap killed and resumed: the shadows survive, one RENAME at the end, exact', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase('xswapk');
    try {
      for (const t of TABLES) await db.conn.query(`CREATE TABLE \`${t}\` LIKE \`${source.name}\`.\`${t}\``);
      await db.conn.query('INSERT INTO legacy VALUES (-1, \'yesterday\')');
      const args = ['load', dump, '--mode', 'swap', '--jobs', '2', '--chunk-size', '64KiB', '--keep-history', '--progress', 'none', '--json'];
      let killed = 0;
      for (let run = 1; run <= 8; run++) {
        const s = spawnCli(args, { DATABASE_URL: db.url });
        let exited = false;
        void s.done.then(() => (exited = true));
        if (killed < 2) {
          const target = (await committedChunks(db)) + 3 + killed * 5;
          while (!exited && (await committedChunks(db)) < target) await new Promise((r) => setTimeout(r, 3));
          if (!exited) s.child.kill('SIGKILL');
        }
        const r = await s.done;
        if (r.signal === 'SIGKILL') {
          killed++;
          const [legacy] = await db.conn.query('SELECT COUNT(*) AS n FROM legacy');
          assert.deepEqual(legacy, [{ n: '1' }], 'readers still see yesterday\'s tables');
          continue;
        }
        assert.equal(r.code, 0, `run ${run}: ${r.stderr}`);
        break;
      }
      assert.equal(killed, 2);
      await assertSameAsSource(db);
      const [left] = await db.conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '%\\_\\_flatload%'");
      assert.deepEqual(left, [], 'no shadow or old table is left');
    } finally {
      await db.drop();
    }
  });

  test('SIGTERM stops the export resumably (exit 4, the command that resumes); a second run meanwhile stops at once (exit 8); a crash right after the RENAME', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase('xint');
    try {
      for (const t of TABLES) await db.conn.query(`CREATE TABLE \`${t}\` LIKE \`${source.name}\`.\`${t}\``);
      const args = ['load', dump, '--mode', 'swap', '--jobs', '2', '--chunk-size', '32KiB', '--progress', 'none'];
      const first = spawnCli(args, { DATABASE_URL: db.url });
      await pollUntil('3 chunks committed', async () => (await committedChunks(db)) >= 3, { process: first, everyMs: 3 });
      const second = await runCli(args, { env: { DATABASE_URL: db.url } });
      assert.equal(second.code, 8, second.stderr);
      assert.match(second.stderr, /export x[0-9a-f]+ is held by /);
      first.child.kill('SIGTERM');
      const stopped = await first.done;
      assert.equal(stopped.code, 4, stopped.stderr);
      assert.match(stopped.stderr, /resume with: cd .* && flatload load .* --mode swap/);
      const [ex] = await db.conn.query('SELECT state FROM flatload_exports');
      assert.deepEqual(ex, [{ state: 'interrupted' }]);

      const done = await runCli(args, { env: { DATABASE_URL: db.url } });
      assert.equal(done.code, 0, done.stderr);
      await assertSameAsSource(db);
      // A crash between the RENAME and the bookkeeping: the rerun finds every shadow gone, drops the old copies, and is done.
      await db.conn.query("UPDATE flatload_exports SET state = 'running', phase = 'loaded'");
      await db.conn.query('CREATE TABLE orders__flatload_old LIKE orders');
      const after = await runCli([...args, '--json'], { env: { DATABASE_URL: db.url } });
      assert.equal(after.code, 0, after.stderr);
      assert.match(after.stdout, /the tables had been swapped by the interrupted run/);
      await assertSameAsSource(db);
      const [left] = await db.conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '%\\_\\_flatload%'");
      assert.deepEqual(left, []);
    } finally {
      await db.drop();
    }
  });

  test('--mode swap: a reader querying throughout sees yesterday\'s set or today\'s, never a mix', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase('xswap');
    const reader = await adminConnection(db.name);
    try {
      // Yesterday's tables: the same definitions, a few rows each.
      for (const t of TABLES) {
        await db.conn.query(`CREATE TABLE \`${t}\` LIKE \`${source.name}\`.\`${t}\``);
        await db.conn.query(`INSERT INTO \`${t}\` SELECT * FROM \`${source.name}\`.\`${t}\` LIMIT 100`);
      }
      const countsSql = `SELECT ${TABLES.map((t) => `(SELECT COUNT(*) FROM \`${t}\`)`).join(', ')}`;
      const read = async (): Promise<string> => {
        const [rows] = await reader.query({ sql: countsSql, rowsAsArray: true });
        return (rows as unknown[][])[0]!.map(Number).join(',');
      };
      const yesterday = await read();
      assert.equal(yesterday, '100,100,100,100');
      const s = spawnCli(['load', dump, '--mode', 'swap', '--jobs', '3', '--chunk-size', '128KiB', '--progress', 'none', '--json'], { DATABASE_URL: db.url });
      let exited = false;
      void s.done.then(() => (exited = true));
      const seen = new Map<string, number>();
      while (!exited) {
        const c = await read();
        seen.set(c, (seen.get(c) ?? 0) + 1);
      }
      const r = await s.done;
      assert.equal(r.code, 0, r.stderr);
      const today = await read();
      assert.equal(today, '40000,30000,20000,15000');
      const reads = [...seen.values()].reduce((a, b) => a + b, 0);
      assert.ok(reads > 20, `the reader ran throughout (${reads} reads)`);
      assert.deepEqual([...seen.keys()].filter((k) => k !== yesterday && k !== today), [], 'only complete sets');
      assert.ok((seen.get(yesterday) ?? 0) > 0, 'yesterday\'s set was visible while the export loaded');
      await assertSameAsSource(db);
      const [left] = await db.conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '%\\_\\_flatload%'");
      assert.deepEqual(left, [], 'no shadow or old table is left');
      assert.ok(existsSync(dump));
    } finally {
      await reader.end();
      await db.drop();
    }
  });
});
