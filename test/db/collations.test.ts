/**
 * Keys the server calls equal while their bytes differ ('a'/'A', 'e'/'é',
 * 'x'/'x ' under PAD SPACE, a DATE written two ways, '7.5'/'8' in a BIGINT),
 * and other unique keys that make the load's order visible: whatever flatload
 * sorts and however many streams load, the table must equal the server's own
 * LOAD DATA INFILE of the same file (IGNORE keeps the first, REPLACE the
 * last, the default rejects the later ones). And a MyRocks table whose case-insensitive key
 * the file holds in byte order loads, instead of stopping with 4054.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, hasRocksdb, tableDigest, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('coll');
  dir = mkdtempSync(join(tmpdir(), 'flatload-coll-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ DATABASE_URL: db.url });
const base = ['--progress', 'none', '--skip-size-report', '--chunk-size', '8KiB'];

/** A deterministic shuffle (the sample must see the file out of key order, so flatload sorts it). */
function shuffled<T>(xs: T[], seed: number): T[] {
  const out = xs.slice();
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Rows whose key is `keys[i]`, each followed later in the file by the rows of
 * `twins(i)`: keys the server calls equal to it in other bytes. Half the twins
 * sort before the original by bytes, half after, so a byte sort moves the
 * first occurrence either way. v numbers the rows, so the winner shows.
 */
function withTwins(n: number, key: (i: number) => string[], twin: (i: number) => string[] | undefined, seed: number): string {
  const lines: string[] = [];
  const later: string[][] = [];
  let v = 0;
  for (const i of shuffled(Array.from({ length: n }, (_, k) => k), seed)) {
    lines.push([...key(i), String(v++)].join('\t'));
    const t = twin(i);
    if (t) later.push(t);
    // The twin comes a few hundred records later, mostly in another chunk.
    if (lines.length % 300 === 0) for (const tw of later.splice(0)) lines.push([...tw, String(v++)].join('\t'));
  }
  for (const tw of later) lines.push([...tw, String(v++)].join('\t'));
  return `${lines.join('\n')}\n`;
}

interface Case {
  name: string;
  ddl: string;
  content: string;
  columns?: string[];
  setup?: string[];
  /** Rows the server refuses besides duplicates (a foreign key): only the modes that reject them, with --max-errors. */
  rejects?: boolean;
  /** Statements after the table is created (CREATE TABLE … LIKE copies neither triggers nor foreign keys). */
  after?: (table: string) => string[];
}

const ciTwin = (i: number): string[] | undefined => {
  if (i % 40 === 0) return [`K${i}`]; // 'K' sorts before 'k'
  if (i % 40 === 10) return [`k${i} `]; // PAD SPACE: 'k1 ' = 'k1'
  if (i % 40 === 20) return [`é${i}`];
  return undefined;
};
const ciKey = (i: number): string[] => [i % 40 === 20 ? `e${i}` : i % 80 === 30 ? `Q${i}` : `k${i}`];

function isoDate(day: number): { y: number; m: number; d: number } {
  const t = new Date(Date.UTC(7300, 0, 1) + day * 86_400_000);
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}
const pad2 = (x: number): string => String(x).padStart(2, '0');

const CASES: Case[] = [
  {
    name: 'varchar utf8mb4_general_ci key',
    ddl: '(k VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v INT NOT NULL)',
    content: withTwins(2400, ciKey, (i) => (i % 80 === 30 ? [`q${i}`] : ciTwin(i)), 7),
  },
  {
    name: 'varchar utf8mb4_bin key, trailing spaces',
    ddl: '(k VARCHAR(20) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, v INT NOT NULL)',
    content: withTwins(2400, (i) => [i % 30 === 5 ? `x${i}  ` : `x${i}`], (i) => (i % 30 === 0 ? [`x${i}   `] : i % 30 === 5 ? [`x${i}`] : undefined), 11),
  },
  {
    name: 'composite (int, varchar ci) key',
    ddl: '(a INT NOT NULL, b VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL, v INT NOT NULL, PRIMARY KEY (a, b))',
    content: withTwins(2400, (i) => [String(i % 7), `zz${i}`], (i) => (i % 30 === 0 ? [String(i % 7), `ZZ${i}`] : undefined), 13),
  },
  {
    name: 'DATE key written two ways',
    ddl: '(d DATE NOT NULL PRIMARY KEY, v INT NOT NULL)',
    content: withTwins(
      2400,
      (i) => {
        const { y, m, d } = isoDate(i);
        return [i % 60 === 30 ? `${y}${pad2(m)}${pad2(d)}` : `${y}-${pad2(m)}-${pad2(d)}`];
      },
      (i) => {
        const { y, m, d } = isoDate(i);
        if (i % 60 === 0) return [`${y}-${m}-${d}`];
        if (i % 60 === 30) return [`${y}-${pad2(m)}-${pad2(d)}`];
        return undefined;
      },
      17,
    ),
  },
  {
    name: 'secondary UNIQUE key (utf8mb4_bin) repeated every few hundred rows',
    ddl: '(id INT NOT NULL PRIMARY KEY, e VARCHAR(50) COLLATE utf8mb4_bin NOT NULL UNIQUE, v INT NOT NULL)',
    content: (() => {
      const ids = shuffled(Array.from({ length: 3000 }, (_, k) => k), 19);
      return `${ids.map((id, j) => `${id}\te${j % 250 === 249 ? j - 200 : j}\t${j}`).join('\n')}\n`;
    })(),
  },
  {
    name: 'a foreign key, a trigger, a generated column and a UNIQUE key',
    setup: [
      'DROP TABLE IF EXISTS c_fk_ref, c_fk, parent',
      'CREATE TABLE parent (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB',
      'INSERT INTO parent SELECT seq FROM seq_0_to_2999 WHERE seq % 97 <> 3',
    ],
    ddl: '(id INT NOT NULL PRIMARY KEY, pid INT NOT NULL, e VARCHAR(50) NOT NULL UNIQUE, v INT NOT NULL, g INT AS (v * 2) PERSISTENT, FOREIGN KEY (pid) REFERENCES parent (id))',
    columns: ['id', 'pid', 'e', 'v'],
    rejects: true,
    after: (t) => [`CREATE TRIGGER ${t}_tr BEFORE INSERT ON ${t} FOR EACH ROW SET NEW.v = NEW.v + 1`],
    content: (() => {
      const ids = shuffled(Array.from({ length: 3000 }, (_, k) => k), 23);
      return `${ids.map((id, j) => `${id}\t${(j * 7) % 3000}\tE${j % 300 === 299 ? j - 250 : j}\t${j}`).join('\n')}\n`;
    })(),
  },
  {
    // The server rounds to the column's scale, half away from zero, with only a Note: '-2.5' is -3, '4.995' is 5.00.
    name: 'composite (BIGINT, DECIMAL(8,2)) key with values the server rounds',
    ddl: '(a BIGINT NOT NULL, d DECIMAL(8,2) NOT NULL, v INT NOT NULL, PRIMARY KEY (a, d))',
    content: withTwins(
      2400,
      (i) => [String((i % 7) - 3), String(i - 1200)],
      (i) => {
        const a = (i % 7) - 3;
        const d = i - 1200;
        const below = (x: number): string => (x > 0 ? `${x - 1}.` : `-${-x - 1}.`); // x ≠ 0: |x| - 1 and the point, toward zero
        if (i % 30 === 0) return [`${a}.4`, `${d}.004`];
        if (i % 30 === 10) return [a === 0 ? '-0.4' : `${below(a)}5`, `${d}0e-1`];
        if (i % 30 === 20) return [`${a}e0`, d === 0 ? '-0.004' : `${below(d)}995`];
        return undefined;
      },
      29,
    ),
  },
];

async function createTable(name: string, ddl: string, engine = 'InnoDB', after: (t: string) => string[] = () => []): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS ${name}`);
  await db.conn.query(`CREATE TABLE ${name} ${ddl} ENGINE=${engine}`);
  for (const s of after(name)) await db.conn.query(s);
}

/**
 * Every row, in key order (the first column, or the first two, is the key).
 * Not CHECKSUM TABLE: with a generated column it differed between two tables
 * holding the same rows.
 */
async function contents(table: string): Promise<unknown[]> {
  const [rows] = await db.conn.query(`SELECT * FROM ${table} ORDER BY 1, 2`);
  return rows as unknown[];
}

/** The server's own LOAD DATA INFILE of the file, IGNORE or REPLACE, into a table made as the case's is. */
async function reference(c: Case, like: string, file: string, keyword: 'IGNORE' | 'REPLACE'): Promise<unknown[]> {
  const ref = `${like}_ref`;
  await createTable(ref, c.ddl, 'InnoDB', c.after);
  await db.conn.query(`LOAD DATA INFILE ? ${keyword} INTO TABLE ${ref}${c.columns ? ` (${c.columns.join(', ')})` : ''}`, [file]);
  return contents(ref);
}

const MODES = [
  { mode: 'ignore', args: ['--on-duplicate', 'ignore'], keyword: 'IGNORE', exit: 0 },
  { mode: 'replace', args: ['--on-duplicate', 'replace'], keyword: 'REPLACE', exit: 0 },
  // The default: the first occurrence loads, the later ones are rejected (within --max-errors: exit 3).
  { mode: 'default with --max-errors', args: ['--max-errors', '1000'], keyword: 'IGNORE', exit: 3 },
] as const;

const SORTS = [
  { name: 'sorted in memory', args: [] as string[] },
  { name: 'sorted in runs', args: ['--sort-memory', '0'] },
] as const;

CASES.forEach((c, n) => {
  describe(c.name, () => {
    const t = `c${n}`;
    let file = '';
    const refs = new Map<string, unknown[]>();
    before(async () => {
      file = join(dir, `${t}.tsv`);
      writeFileSync(file, c.content);
      if (c.setup) for (const s of c.setup) await db.conn.query(s);
      await createTable(t, c.ddl, 'InnoDB', c.after);
      for (const m of MODES) if (!refs.has(m.keyword) && !(c.rejects && m.mode === 'replace')) refs.set(m.keyword, await reference(c, t, file, m.keyword));
    });
    for (const m of MODES) {
      // REPLACE stops at a foreign key error where IGNORE skips the row: no reference to compare with.
      if (c.rejects && m.mode === 'replace') continue;
      for (const jobs of ['1', '2']) {
        for (const s of SORTS) {
          test(`${m.mode}, --jobs ${jobs}, ${s.name}: the table equals the server's LOAD DATA ${m.keyword}`, async () => {
            await db.conn.query(`DELETE FROM ${t}`);
            const args = ['load', file, '--table', t, '--jobs', jobs, '--reject-file', join(dir, `${t}.rejects`), ...m.args, ...s.args, ...base];
            if (c.columns) args.push('--columns', c.columns.join(','));
            if (c.rejects && m.mode === 'ignore') args.push('--max-errors', '1000');
            const r = await runCli(args, { env: env() });
            assert.equal(r.code, c.rejects ? 3 : m.exit, r.stderr);
            const got = await contents(t);
            const want = refs.get(m.keyword)!;
            assert.equal(got.length, want.length, 'rows');
            assert.deepEqual(got, want);
          });
        }
      }
    }
  });
});

describe('the plan says when it keeps file order and why', () => {
  test('a case-insensitive key with --on-duplicate ignore: file order, one stream, because of the collation', async () => {
    const t = 'plan_ci';
    const file = join(dir, `${t}.tsv`);
    writeFileSync(file, CASES[0]!.content);
    await createTable(t, CASES[0]!.ddl);
    const r = await runCli(['plan', file, '--table', t, '--on-duplicate', 'ignore', '--jobs', '2', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /order: +as in the file/);
    assert.match(r.stdout, /utf8mb4_general_ci/);
    assert.match(r.stdout, /concurrency 1/);
  });

  test('a DATE key with --on-duplicate ignore is sorted: flatload reads dates as the server does', async () => {
    const t = 'plan_date';
    const file = join(dir, `${t}.tsv`);
    writeFileSync(file, CASES[3]!.content);
    await createTable(t, CASES[3]!.ddl);
    const r = await runCli(['plan', file, '--table', t, '--on-duplicate', 'ignore', '--jobs', '2', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /order: +by PRIMARY/);
  });

  test('a secondary UNIQUE key with --on-duplicate ignore: file order, and the plan names the key', async () => {
    const t = 'plan_uq';
    const file = join(dir, `${t}.tsv`);
    writeFileSync(file, CASES[4]!.content);
    await createTable(t, CASES[4]!.ddl);
    const r = await runCli(['plan', file, '--table', t, '--on-duplicate', 'ignore', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /order: +as in the file/);
    assert.match(r.stdout, /UNIQUE key e\b/);
  });
});

describe('MyRocks: keys in the file in byte order', { skip: !hasRocksdb() && 'the test server has no MyRocks' }, () => {
  const byBytes = (keys: string[]): string[] => keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const N = 200_000;
  for (const [n, what, ddl, keys] of [
    // Byte order puts 'B…' before 'a…'; utf8mb4_general_ci puts 'a…' first.
    [0, 'a case-insensitive key', '(k VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v INT NOT NULL)', () => byBytes(Array.from({ length: N }, (_, i) => `${i % 2 ? 'a' : 'B'}${String(i).padStart(7, '0')}`))],
    // PAD SPACE: 'k1\x01' sorts before 'k1' (0x01 < the space it is padded with); byte order puts it after.
    [1, 'a utf8mb4_bin key with a byte below the space', '(k VARCHAR(20) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, v INT NOT NULL)', () => byBytes(Array.from({ length: N }, (_, i) => `k${String(Math.floor(i / 2)).padStart(7, '0')}${i % 2 ? '\x01' : ''}`))],
    // The sample (the head) is in order, the tail is not: a sample is not the whole file.
    [2, 'an integer key in order but for the last records', '(k INT NOT NULL PRIMARY KEY, v INT NOT NULL)', () => Array.from({ length: N }, (_, i) => String(i < N - 10 ? i + 10 : i - (N - 10)))],
  ] as const) {
    test(`${what}: loads as the server's own LOAD DATA does, and the report counts what the table holds`, async () => {
      const t = `rocks${n}`;
      const file = join(dir, `${t}.tsv`);
      writeFileSync(file, keys().map((k, i) => `${k}\t${i}\n`).join(''));
      await createTable(t, ddl, 'ROCKSDB');
      const r = await runCli(['load', file, '--table', t, '--json', '--progress', 'none', '--skip-size-report', '--chunk-size', '256KiB'], { env: env() });
      assert.equal(r.code, 0, r.stderr);
      const rows = (JSON.parse(r.stdout) as { rows: number }).rows;
      const ref = `${t}_r`;
      await db.conn.query(`DROP TABLE IF EXISTS ${ref}`);
      await db.conn.query(`CREATE TABLE ${ref} ${ddl} ENGINE=ROCKSDB`);
      await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${ref}`, [file]);
      const got = await tableDigest(db.conn, t);
      assert.deepEqual(got, await tableDigest(db.conn, ref));
      assert.equal(String(rows), got.count, 'the report counts the rows the table holds');
    });
  }
});

describe('MyRocks: a bulk chunk that stops part-way', { skip: !hasRocksdb() && 'the test server has no MyRocks' }, () => {
  test('a duplicate key: the stop says rows of the chunk may be in the table, and the rerun removes exactly those', async () => {
    const t = 'rocks_dup';
    const N = 200_000;
    const keys = Array.from({ length: N }, (_, i) => (i * 7919) % N);
    keys.push(150_000);
    const file = join(dir, `${t}.tsv`);
    writeFileSync(file, keys.map((k, i) => `${k}\t${i}\n`).join(''));
    await createTable(t, '(k INT NOT NULL PRIMARY KEY, v INT NOT NULL)', 'ROCKSDB');
    const args = ['load', file, '--table', t, '--json', '--progress', 'none', '--skip-size-report', '--chunk-size', '256KiB'];
    const r1 = await runCli(args, { env: env() });
    assert.equal(r1.code, 4, r1.stderr);
    assert.match(r1.stderr, /hint: .*chunk \d+ could not be rolled back: rows of it the server had taken may be in the table, not counted as loaded; rerunning the same command deletes them by the chunk's key range/);
    const loaded = (JSON.parse(r1.stdout) as { rows: number }).rows;
    const held = Number((await tableDigest(db.conn, t)).count);
    const r2 = await runCli(args, { env: env() });
    const removed = /removed the (\d+) row\(s\) an interrupted attempt had loaded/.exec(r2.stderr);
    assert.ok(removed, r2.stderr);
    assert.equal(Number(removed[1]), held - loaded, 'the rerun removes the rows the stopped chunk left, no more, no fewer');
  });
});
