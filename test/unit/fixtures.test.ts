/**
 * fixtures/generate without a server: determinism, shapes, encoders, DDL and
 * the generator's command line (these write temporary files and run the CLI;
 * test/db/fixtures.test.ts loads what it generates into the server).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  FIXTURE_TABLES,
  ddl,
  encodeCsvField,
  encodeTsvField,
  fileColumns,
  generateLines,
  generateRows,
  generateToFile,
  type GenerateOptions,
} from '../../fixtures/generate.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'flatload-fx-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sha256OfLines(opts: GenerateOptions): string {
  const h = createHash('sha256');
  for (const b of generateLines(opts)) h.update(b);
  return h.digest('hex');
}

function sha256OfFile(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

const MOBILE = /^1(3\d|47|5[0-35-9]|66|77|8\d)\d{8}$/;

test('same options give identical bytes; a different seed gives different bytes', async () => {
  for (const table of FIXTURE_TABLES) {
    for (const format of ['tsv', 'csv'] as const) {
      const opts: GenerateOptions = { table, rows: 20_000, format, awkward: format === 'csv' };
      const a = sha256OfLines(opts);
      assert.equal(sha256OfLines(opts), a, `${table} ${format}: not deterministic`);
      assert.notEqual(sha256OfLines({ ...opts, seed: 2 }), a, `${table} ${format}: seed ignored`);
      const file = join(dir, `det-${table}.${format}`);
      const res = await generateToFile(file, opts);
      assert.equal(sha256OfFile(file), a, `${table} ${format}: file differs from generateLines`);
      assert.equal(res.rows, 20_000);
      assert.equal(res.bytes, readFileSync(file).length);
    }
  }
  // Pinned: an accidental change to the generator changes every benchmark input.
  const first = readFileSync(join(dir, 'det-user_summary.tsv'), 'utf8').split('\n', 1)[0];
  assert.match(first ?? '', /^1\d{10}\t\d\d\.\d\t[A-Za-z]+ [IV]+\t(\d{1,2}\.\d\d%|\\N)\t\d{1,3}$/);
});

test('row counts: TSV has exactly one line per row, also with awkward values; 0 rows is an empty file', async () => {
  for (const table of FIXTURE_TABLES) {
    const file = join(dir, `count-${table}.tsv`);
    const res = await generateToFile(file, { table, rows: 12_345, awkward: true });
    const bytes = readFileSync(file);
    let lines = 0;
    for (const b of bytes) if (b === 0x0a) lines++;
    assert.equal(lines, 12_345, table);
    assert.equal(res.rows, 12_345);
    assert.equal(bytes.includes(0x0d), false, `${table}: raw CR in TSV`);
    assert.deepEqual(res.columns, fileColumns({ table, rows: 1 }));
  }
  const empty = join(dir, 'empty.tsv');
  assert.deepEqual(await generateToFile(empty, { table: 'sbtest', rows: 0 }), { rows: 0, bytes: 0, columns: ['k', 'c', 'pad'] });
  assert.equal(readFileSync(empty).length, 0);
});

test('user_id is unique, mobile-shaped and in random order for 200k rows', () => {
  const seen = new Set<string>();
  let ascending = 0;
  let prev = -1;
  for (const row of generateRows({ table: 'user_summary', rows: 200_000 })) {
    const id = row[0]!;
    assert.match(id, MOBILE);
    seen.add(id);
    if (Number(id) > prev) ascending++;
    prev = Number(id);
  }
  assert.equal(seen.size, 200_000);
  // Random order: about half the steps go up.
  assert.ok(ascending > 90_000 && ascending < 110_000, `ascending steps: ${ascending}`);
});

test('sorted mode is strictly ascending and is the unsorted file sorted by user_id', () => {
  const sorted = [...generateRows({ table: 'user_summary', rows: 200_000, sorted: true })];
  for (let i = 1; i < sorted.length; i++) assert.ok(Number(sorted[i]![0]) > Number(sorted[i - 1]![0]), `row ${i}`);
  const unsorted = [...generateRows({ table: 'user_summary', rows: 200_000 })].sort((a, b) => Number(a[0]) - Number(b[0]));
  assert.deepEqual(unsorted, sorted);
});

test('withId numbers rows 1..N in file order; user_summary has no id', () => {
  const rows = [...generateRows({ table: 'user3', rows: 1000, withId: true, sorted: true })];
  assert.deepEqual(rows.map((r) => r[0]), rows.map((_, i) => String(i + 1)));
  assert.deepEqual(fileColumns({ table: 'user3', rows: 1, withId: true }), ['id', 'user_id', 'weight', 'level', 'beat_rate', 'level_num']);
  assert.deepEqual(fileColumns({ table: 'purchases_index', rows: 1, withId: true })[0], 'transactionid');
  assert.throws(() => fileColumns({ table: 'user_summary', rows: 1, withId: true }), /no AUTO_INCREMENT/);
  // user3 holds the same rows as user_summary for the same seed, ids aside.
  const user3 = [...generateRows({ table: 'user3', rows: 5000, withId: true, awkward: true })].map((r) => r.slice(1));
  assert.deepEqual(user3, [...generateRows({ table: 'user_summary', rows: 5000, awkward: true })]);
});

test('field encoders', () => {
  assert.equal(encodeTsvField(null), '\\N');
  assert.equal(encodeTsvField('a\\b\tc\nd\re\0'), 'a\\\\b\\tc\\nd\\re\\0');
  assert.equal(encodeTsvField('NULL'), 'NULL');
  assert.equal(encodeTsvField(''), '');
  assert.equal(encodeCsvField(null), '\\N');
  assert.equal(encodeCsvField(''), '""');
  assert.equal(encodeCsvField('NULL'), '"NULL"');
  assert.equal(encodeCsvField('\\N'), '\\\\N');
  assert.equal(encodeCsvField('say "hi"'), '"say ""hi"""');
  assert.equal(encodeCsvField('a,b\\'), '"a,b\\\\"');
  assert.equal(encodeCsvField('a\r\nb'), '"a\r\nb"');
  assert.equal(encodeCsvField('a\tb'), 'a\tb');
  assert.equal(encodeCsvField('Zoë'), 'Zoë');
});

test('ddl: one CREATE TABLE, no database, no ENGINE, no semicolon', () => {
  for (const table of FIXTURE_TABLES) {
    const sql = ddl(table);
    assert.ok(sql.startsWith(`CREATE TABLE ${table} (`), table);
    assert.ok(sql.endsWith(')'), table);
    assert.doesNotMatch(sql, /ENGINE|;/i);
  }
});

test('CLI writes the same file and prints one summary line', () => {
  const out = join(dir, 'cli.tsv');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'fixtures/generate.ts'), '--table', 'sbtest', '--rows', '1_000', '--with-id', '--seed', '7', '--out', out],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^wrote 1000 rows, \d+ bytes to .*cli\.tsv \(columns: id,k,c,pad\)\n$/);
  assert.equal(sha256OfFile(out), sha256OfLines({ table: 'sbtest', rows: 1000, withId: true, seed: 7 }));
  const bad = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'fixtures/generate.ts'), '--table', 'nope', '--rows', '1', '--out', out], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown fixture table "nope"/);
});
