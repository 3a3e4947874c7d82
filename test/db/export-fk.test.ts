import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, type CliResult } from '../support/cli.js';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/db.js';
import { prng } from '../support/spawn.js';

/**
 * Whole exports whose tables are linked by foreign keys: parents load before
 * their children, --mode swap refuses what the single swap refuses, --mode
 * replace empties as the single replace does, and --create-tables makes a
 * child whose file comes before its parent's.
 */
let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'flatload-export-fk-'));
});
after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function dir(name: string, files: Record<string, string>): string {
  const d = join(root, name);
  mkdirSync(d);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

const lines = (n: number, line: (i: number) => string): string => Array.from({ length: n }, (_, i) => `${line(i + 1)}\n`).join('');

/** 1..n in a random order: the parent's file is bigger than the child's, so size order alone would start the child first. */
function shuffled(n: number, seed: number): number[] {
  const rnd = prng(seed);
  const a = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

async function count(db: TestDatabase, sql: string): Promise<number> {
  const [r] = await db.conn.query(sql);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

/** A fresh database for one test, dropped after it; `load` runs the CLI against it. */
async function withDb(prefix: string, fn: (db: TestDatabase, load: (args: string[]) => Promise<CliResult>) => Promise<void>): Promise<void> {
  const db = await createTestDatabase(prefix);
  try {
    await fn(db, (args) => runCli(args, { env: { DATABASE_URL: db.url } }));
  } finally {
    await db.drop();
  }
}

/** Runs each statement in order. */
async function schema(db: TestDatabase, statements: string[]): Promise<void> {
  for (const sql of statements) await db.conn.query(sql);
}

const PARENT_CHILD = [
  'CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20))',
  'CREATE TABLE child (id INT PRIMARY KEY, parent_id INT NOT NULL, KEY (parent_id), CONSTRAINT fk_c FOREIGN KEY (parent_id) REFERENCES parent (id))',
];

describe('an export whose tables are linked by foreign keys', () => {
  for (const jobs of ['1', '2']) {
    test(`the parent loads before the child (--jobs ${jobs}): every child row kept`, { timeout: 120_000 }, () =>
      withDb('xfk', async (db, load) => {
        await schema(db, PARENT_CHILD);
        const d = dir(`order-${jobs}`, {
          'parent.txt': shuffled(20_000, 7).map((i) => `${i}\tp${i}\n`).join(''),
          'child.txt': lines(1000, (i) => `${i}\t${i * 19}`),
        });
        const r = await load(['load', d, '--jobs', jobs, '--max-errors', '1000', '--progress', 'none']);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`${db.name}\\.child starts after ${db.name}\\.parent has loaded`));
        assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM parent'), 20_000);
        assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM child'), 1000);
        assert.equal(existsSync(join(d, 'child.rejects.txt')), false);

        const plan = await load(['plan', d]);
        assert.equal(plan.code, 0, plan.stderr);
        assert.ok(plan.stdout.indexOf(`== ${db.name}.parent`) < plan.stdout.indexOf(`== ${db.name}.child`), plan.stdout);
      }),
    );
  }

  test('--mode swap of a table with a foreign key and a trigger: refused before anything changes, as the single swap', { timeout: 60_000 }, () =>
    withDb('xfks', async (db, load) => {
      await schema(db, [
        'CREATE TABLE parent (id INT PRIMARY KEY)',
        'INSERT INTO parent SELECT seq FROM seq_1_to_100',
        PARENT_CHILD[1]!,
        'CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, id INT)',
        'CREATE TRIGGER child_ai AFTER INSERT ON child FOR EACH ROW INSERT INTO audit (id) VALUES (NEW.id)',
      ]);
      const r = await load(['load', dir('swap-child', { 'child.txt': lines(100, (i) => `${i}\t${i}`) }), '--mode', 'swap', '--progress', 'none']);
      assert.equal(r.code, 7, r.stderr);
      assert.match(r.stderr, /--mode swap cannot replace .*child: CREATE TABLE … LIKE does not copy its 1 foreign key; its 1 trigger stay/);
      assert.equal(await count(db, "SELECT COUNT(*) AS n FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = 'child'"), 1);
      assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()'), 1);
      assert.equal(await count(db, "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '%flatload%'"), 0);
    }),
  );

  test('--mode swap of a table another table references: refused before anything changes, every run', { timeout: 60_000 }, () =>
    withDb('xfkp', async (db, load) => {
      await schema(db, [...PARENT_CHILD, "INSERT INTO parent SELECT seq, 'x' FROM seq_1_to_3000", 'INSERT INTO child SELECT seq, 2500 + seq FROM seq_1_to_100']);
      const d = dir('swap-parent', { 'parent.txt': lines(2000, (i) => `${i}\tn`) });
      for (let run = 0; run < 2; run++) {
        const r = await load(['load', d, '--mode', 'swap', '--progress', 'none']);
        assert.equal(r.code, 7, r.stderr);
        assert.match(r.stderr, /1 foreign key in other tables reference it/);
      }
      assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM parent'), 3000);
      assert.equal(await count(db, "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'parent\\_\\_%'"), 0);
    }),
  );

  test('--mode swap whose target is a view: exit 7, as the single swap', { timeout: 60_000 }, () =>
    withDb('xfkv', async (db, load) => {
      await schema(db, ['CREATE TABLE base (id INT PRIMARY KEY)', 'CREATE VIEW vv AS SELECT id FROM base']);
      const r = await load(['load', dir('swap-view', { 'vv.txt': lines(10, (i) => `${i}`) }), '--mode', 'swap', '--progress', 'none']);
      assert.equal(r.code, 7, r.stderr);
      assert.match(r.stderr, /is a view, not a table/);
    }),
  );

  test('--mode replace of a parent and its child: the child emptied first, the parent with DELETE (TRUNCATE is refused)', { timeout: 60_000 }, () =>
    withDb('xfkr', async (db, load) => {
      await schema(db, [...PARENT_CHILD, "INSERT INTO parent SELECT seq, 'old' FROM seq_1_to_3000", 'INSERT INTO child SELECT seq, seq FROM seq_1_to_3000']);
      const d = dir('replace', { 'parent.txt': lines(3000, (i) => `${i}\tnew`), 'child.txt': lines(3000, (i) => `${i}\t${3001 - i}`) });
      const r = await load(['load', d, '--mode', 'replace', '--progress', 'none']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await count(db, "SELECT COUNT(*) AS n FROM parent WHERE name = 'new'"), 3000);
      assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM child WHERE parent_id = 3001 - id'), 3000);
    }),
  );

  test('--mode replace of a parent whose child is outside the export and holds rows: exit 7 (no rerun can empty it), rows kept', { timeout: 60_000 }, () =>
    withDb('xfko', async (db, load) => {
      await schema(db, [...PARENT_CHILD, "INSERT INTO parent SELECT seq, 'old' FROM seq_1_to_300", 'INSERT INTO child SELECT seq, seq FROM seq_1_to_300']);
      const r = await load(['load', dir('replace-parent', { 'parent.txt': lines(300, (i) => `${i}\tnew`) }), '--mode', 'replace', '--progress', 'none']);
      assert.equal(r.code, 7, r.stderr);
      assert.match(r.stderr, /DELETE FROM .*parent.*the server refuses it \(1451/);
      assert.equal(await count(db, "SELECT COUNT(*) AS n FROM parent WHERE name = 'old'"), 300);
    }),
  );

  test('--create-tables of a mariadb-dump --tab directory whose child sorts before its parent', { timeout: 60_000 }, async (t) => {
    try {
      execFileSync('mariadb-dump', ['--version'], { stdio: 'ignore' });
    } catch {
      t.skip('no mariadb-dump on this machine');
      return;
    }
    await withDb('xfkc', (src) =>
      withDb('xfkd', async (db, load) => {
        await schema(src, [
          'CREATE TABLE parent (id INT PRIMARY KEY)',
          'INSERT INTO parent SELECT seq FROM seq_1_to_50',
          'CREATE TABLE child (id INT PRIMARY KEY, parent_id INT NOT NULL, CONSTRAINT fk_c FOREIGN KEY (parent_id) REFERENCES parent (id))',
          'INSERT INTO child SELECT seq, 51 - seq FROM seq_1_to_50',
        ]);
        const d = join(root, 'dump');
        mkdirSync(d);
        const u = new URL(serverUrl());
        const args = [`--host=${u.hostname}`, `--port=${u.port || '3306'}`, `--user=${decodeURIComponent(u.username || 'root')}`, `--tab=${d}`, src.name];
        if (u.password) args.unshift(`--password=${decodeURIComponent(u.password)}`);
        execFileSync('mariadb-dump', args, { stdio: ['ignore', 'ignore', 'pipe'] });
        const r = await load(['load', d, '--create-tables', '--progress', 'none']);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM child JOIN parent ON parent.id = child.parent_id'), 50);
        assert.equal(await count(db, "SELECT COUNT(*) AS n FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = 'child'"), 1);
      }),
    );
  });

  test('tables whose foreign keys form a cycle: loaded in size order, and the report says so', { timeout: 60_000 }, () =>
    withDb('xfky', async (db, load) => {
      await schema(db, [
        'CREATE TABLE a (id INT PRIMARY KEY, b_id INT NULL, KEY (b_id))',
        'CREATE TABLE b (id INT PRIMARY KEY, a_id INT NULL, KEY (a_id), FOREIGN KEY (a_id) REFERENCES a (id))',
        'ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b (id)',
      ]);
      const r = await load(['load', dir('cycle', { 'a.txt': lines(10, (i) => `${i}\t\\N`), 'b.txt': lines(100, (i) => `${i}\t${(i % 10) + 1}`) }), '--progress', 'none']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`${db.name}\\.a, ${db.name}\\.b reference each other through foreign keys`));
      assert.equal(await count(db, 'SELECT COUNT(*) AS n FROM b'), 100);
    }),
  );
});
