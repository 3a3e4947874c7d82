import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

interface BadCase {
  file: string;
  ddl: string;
  options: string[];
  note: string;
  rejectLines?: number[];
  loaded?: number;
  codes?: number[];
  error?: string;
  exit?: number;
  line?: number;
  message?: string;
  synthesize?: string;
}

const root = new URL('../../fixtures/bad/', import.meta.url).pathname;
const cases = JSON.parse(readFileSync(join(root, 'cases.json'), 'utf8')) as BadCase[];

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('bad');
  dir = mkdtempSync(join(tmpdir(), 'flatload-bad-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** The input's records by line number (physical lines a record starts on), for checking reject bytes. */
function recordAt(bytes: Buffer, line: number, lt: string): Buffer {
  const text = bytes.toString('latin1');
  let start = 0;
  for (let l = 1; l < line; l++) start = text.indexOf('\n', start) + 1;
  const end = text.indexOf(lt, start);
  return Buffer.from(text.slice(start, end === -1 ? text.length : end + lt.length), 'latin1');
}

for (const strategy of ['load-data', 'insert'] as const)
describe(`fixtures/bad (--strategy ${strategy}): every bad input gives its exact rejects or its error`, () => {
  for (const [i, c] of cases.entries()) {
    test(`${c.file}: ${c.note}`, async () => {
      const file = join(dir, c.file);
      if (c.synthesize) writeFileSync(file, Buffer.concat([Buffer.from('1,"'), Buffer.alloc(3 << 20, 'x'), Buffer.from('",1,\\N\r\n')]));
      else copyFileSync(join(root, c.file), file);
      const table = `b${i}_${strategy.replace('-', '_')}`;
      await db.conn.query(c.ddl.replace('CREATE TABLE t ', `CREATE TABLE ${table} `));
      const rejectFile = join(dir, `${table}.rejects`);
      const args = ['load', file, '--table', table, '--chunk-size', '64', '--jobs', '2', '--progress', 'none', '--json', '--max-errors', '1000', '--reject-file', rejectFile, '--strategy', strategy, ...c.options];
      const r = await runCli(args, { env: { DATABASE_URL: db.url } });
      const [cnt] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${table}`);
      const inTable = Number((cnt as Array<{ n: number }>)[0]!.n);
      if (c.error) {
        assert.equal(r.code, c.exit, r.stderr);
        assert.match(r.stderr, new RegExp(c.message!));
        assert.match(r.stderr, new RegExp(`file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line ${c.line}, byte offset \\d+`));
        assert.equal(inTable, 0, 'nothing is committed');
        return;
      }
      assert.equal(r.code, 3, `exit 3 = loaded with rejects within the budget\n${r.stderr}`);
      const report = JSON.parse(r.stdout) as { rows: number; rejected: number; rowsInInput: number; rejectFile: string };
      assert.equal(report.rows, c.loaded);
      assert.equal(report.rejected, c.rejectLines!.length);
      assert.equal(report.rows + report.rejected, report.rowsInInput, 'loaded + rejected = input');
      assert.equal(inTable, c.loaded);
      assert.equal(report.rejectFile, rejectFile);
      const log = readFileSync(`${rejectFile}.log`, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
      assert.deepEqual(log.map((l) => Number(l[0])), c.rejectLines, 'reject lines');
      // INSERT reports some problems under their strict-mode error codes (1406 for 1265, say); LOAD DATA's codes are exact.
      if (strategy === 'load-data') for (const l of log) assert.ok(c.codes!.some((code) => l[3]!.split(',').includes(String(code))), `codes ${l[3]} in ${JSON.stringify(c.codes)}`);
      const input = readFileSync(file);
      const lt = c.options.includes('csv') ? '\r\n' : '\n';
      const header = c.options.includes('--ignore-lines') ? recordAt(input, 1, lt) : Buffer.alloc(0);
      const expected = Buffer.concat([header, ...c.rejectLines!.map((line) => recordAt(input, line, lt))]);
      assert.deepEqual(readFileSync(rejectFile), expected, 'the reject file holds the original bytes');
    });
  }
});

describe('the error budget and reloading rejects', () => {
  test('--max-errors 0 (the default) stops at the first bad row with nothing half-committed', async () => {
    const file = join(dir, 'many-bad-0.csv');
    copyFileSync(join(root, 'many-bad.csv'), file);
    await db.conn.query("CREATE TABLE z0 (id int NOT NULL, name varchar(10) NOT NULL DEFAULT '', qty tinyint unsigned NULL, born date NULL, PRIMARY KEY (id))");
    const r = await runCli(['load', file, '--table', 'z0', '--dialect', 'csv', '--chunk-size', '200', '--jobs', '1', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /line 7 \(byte offset \d+\): \[1264\]/);
    assert.match(r.stderr, /resume with: cd \S+ && flatload load/);
    const [c] = await db.conn.query('SELECT COUNT(*) AS n, MAX(id) AS m FROM z0');
    const row = (c as Array<{ n: number; m: number | null }>)[0]!;
    assert.ok(Number(row.m ?? 0) < 7, 'no row at or after the bad one is committed');
    assert.equal(existsSync(file.replace('.csv', '.rejects.csv')), false, 'no reject file: nothing was rejected');
  });

  test('over the budget: stops, and the chunk that went over is not committed', async () => {
    const file = join(dir, 'many-bad-3.csv');
    copyFileSync(join(root, 'many-bad.csv'), file);
    await db.conn.query("CREATE TABLE z3 (id int NOT NULL, name varchar(10) NOT NULL DEFAULT '', qty tinyint unsigned NULL, born date NULL, PRIMARY KEY (id))");
    const r = await runCli(['load', file, '--table', 'z3', '--dialect', 'csv', '--chunk-size', '200', '--jobs', '1', '--max-errors', '3', '--progress', 'none', '--json'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /exceed --max-errors 3/);
    const report = JSON.parse(r.stdout) as { rows: number; rejected: number };
    assert.ok(report.rejected >= 1 && report.rejected <= 3, `rejected ${report.rejected}`);
    const [c] = await db.conn.query('SELECT COUNT(*) AS n, MAX(id) AS m FROM z3');
    const row = (c as Array<{ n: number; m: number }>)[0]!;
    assert.equal(Number(row.n), report.rows);
    // Committed chunks are whole: every id up to the highest loaded one is either loaded or rejected.
    assert.equal(Number(row.n) + report.rejected, Number(row.m));
    const log = readFileSync(`${file.replace('.csv', '.rejects.csv')}.log`, 'utf8').trim().split('\n').slice(1);
    assert.deepEqual(log.map((l) => Number(l.split('\t')[0])), [7, 14, 21].slice(0, report.rejected));
  });

  test('the fixed reject file loads with the same command', async () => {
    const file = join(dir, 'header-bad.csv');
    copyFileSync(join(root, 'header-bad.csv'), file);
    await db.conn.query("CREATE TABLE rl (id int NOT NULL, name varchar(10) NOT NULL DEFAULT '', qty tinyint unsigned NULL, born date NULL, PRIMARY KEY (id))");
    const args = (f: string): string[] => ['load', f, '--table', 'rl', '--dialect', 'csv', '--ignore-lines', '1', '--max-errors', '10', '--progress', 'none'];
    const first = await runCli(args(file), { env: { DATABASE_URL: db.url } });
    assert.equal(first.code, 3, first.stderr);
    const rejects = file.replace('.csv', '.rejects.csv');
    writeFileSync(rejects, readFileSync(rejects, 'latin1').replace('-5', '5'), 'latin1');
    const second = await runCli(args(rejects), { env: { DATABASE_URL: db.url } });
    assert.equal(second.code, 0, second.stderr);
    const [c] = await db.conn.query('SELECT COUNT(*) AS n FROM rl');
    assert.equal(Number((c as Array<{ n: number }>)[0]!.n), 3);
  });
});

describe('--on-duplicate replace: the server stops at a bad row instead of warning', () => {
  // Ids scrambled; every id divisible by 13 has an out-of-range qty, id 50 an extra field, and id 7 a second copy (replace keeps it).
  const ids = Array.from({ length: 300 }, (_, i) => ((i * 7919) % 300) + 1);
  const lines = ids.map((id) => `${id}\tn${id}\t${id % 13 === 0 ? 999 : id % 200}${id === 50 ? '\textra' : ''}\n`);
  lines.push('7\tlast7\t1\n');
  const offsets = lines.map((_, i) => lines.slice(0, i).join('').length);
  const bad = lines.map((l, i) => (/\t999\n|\textra/.test(l) ? i : -1)).filter((i) => i >= 0);

  test('the bad rows go to the reject file, in file order and sorted by the key, and the rest loads as LOAD DATA REPLACE would', async () => {
    const file = join(dir, 'replace-bad.tsv');
    writeFileSync(file, lines.join(''));
    for (const [t, order] of [['rp_file', 'file'], ['rp_key', 'key']] as const) {
      await db.conn.query(`CREATE TABLE ${t} (id int NOT NULL PRIMARY KEY, name varchar(10) NOT NULL, qty tinyint unsigned NULL)`);
      const r = await runCli(['load', file, '--table', t, '--order', order, '--on-duplicate', 'replace', '--chunk-size', '700', '--jobs', '2', '--max-errors', '100', '--progress', 'none', '--reject-file', join(dir, `${t}.rej`)], {
        env: { DATABASE_URL: db.url },
      });
      assert.equal(r.code, 3, r.stderr);
      const log = readFileSync(join(dir, `${t}.rej.log`), 'utf8').trim().split('\n').slice(1);
      const got = log.map((l) => l.split('\t').slice(0, 2).map(Number)).sort((a, b) => a[0]! - b[0]!);
      assert.deepEqual(got, bad.map((i) => [i + 1, offsets[i]]), t);
      assert.deepEqual(readFileSync(join(dir, `${t}.rej`), 'utf8').split('\n').sort(), bad.map((i) => lines[i]!.slice(0, -1)).concat('').sort(), t);
      const [c] = await db.conn.query(`SELECT COUNT(*) AS n, MAX(name = 'last7' AND id = 7) AS replaced FROM ${t}`);
      const row = (c as Array<{ n: unknown; replaced: unknown }>)[0]!;
      assert.equal(Number(row.n), 300 - bad.length, t);
      assert.equal(Number(row.replaced), 1, `${t}: the later copy of id 7 replaced the first`);
    }
  });

  test('with --max-errors 0 the load stops naming the bad row\'s file line and byte offset', async () => {
    const file = join(dir, 'replace-bad-0.tsv');
    writeFileSync(file, lines.join(''));
    await db.conn.query('CREATE TABLE rp_stop (id int NOT NULL PRIMARY KEY, name varchar(10) NOT NULL, qty tinyint unsigned NULL)');
    const r = await runCli(['load', file, '--table', 'rp_stop', '--order', 'file', '--on-duplicate', 'replace', '--chunk-size', '100000', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 4, r.stderr);
    const first = bad[0]!;
    assert.match(r.stderr, new RegExp(`line ${first + 1}, byte offset ${offsets[first]}`));
  });
});

describe('the input sorted by the key (--order key, --order chunk)', () => {
  test('rows are sent in key order, yet rejects name their original lines and offsets, and the table equals a file-order load', async () => {
    // Ids in a scrambled order; every id divisible by 11 has an out-of-range qty.
    const ids = Array.from({ length: 300 }, (_, i) => ((i * 7919) % 300) + 1);
    const lines = ids.map((id) => `${id}\tn${id}\t${id % 11 === 0 ? 999 : id % 200}\t\\N\n`);
    const file = join(dir, 'scrambled.tsv');
    writeFileSync(file, lines.join(''));
    const offsets = lines.map((_, i) => lines.slice(0, i).join('').length);
    const bad = ids.map((id, i) => (id % 11 === 0 ? i : -1)).filter((i) => i >= 0);
    // srt_runs: sorted out of core, each chunk merged into a buffer the next chunk reuses once it committed; the reject file must keep the rows' own bytes.
    const orders = { srt_key: 'key', srt_runs: 'key', srt_chunk: 'chunk', srt_file: 'file' };
    for (const t of Object.keys(orders)) {
      await db.conn.query(`CREATE TABLE ${t} (id int NOT NULL, name varchar(10) NOT NULL DEFAULT '', qty tinyint unsigned NULL, born date NULL, PRIMARY KEY (id))`);
    }
    const run = (t: string, order: string): Promise<{ code: number | null; stderr: string; stdout: string }> =>
      runCli(['load', file, '--table', t, '--order', order, ...(t === 'srt_runs' ? ['--sort-memory', '0'] : []), '--chunk-size', '700', '--jobs', '2', '--max-errors', '100', '--progress', 'none', '--reject-file', join(dir, `${t}.rej`)], {
        env: { DATABASE_URL: db.url },
      });
    for (const [t, order] of Object.entries(orders)) {
      const r = await run(t, order);
      assert.equal(r.code, 3, r.stderr);
      if (order === 'key') assert.match(r.stderr, /sorted 300 records by PRIMARY/);
      const log = readFileSync(join(dir, `${t}.rej.log`), 'utf8').trim().split('\n').slice(1);
      // Line and byte offset of each rejected row, in the order the rows were rejected: file order for every order.
      const got = log.map((l) => l.split('\t').slice(0, 2).map(Number)).sort((a, b) => a[0]! - b[0]!);
      assert.deepEqual(got, bad.map((i) => [i + 1, offsets[i]]), t);
      assert.deepEqual(readFileSync(join(dir, `${t}.rej`), 'utf8'), bad.map((i) => lines[i]).join(''), t);
    }
    const sums = await Promise.all(Object.keys(orders).map(async (t) => ((await db.conn.query(`CHECKSUM TABLE ${t}`))[0] as Array<{ Checksum: unknown }>)[0]!.Checksum));
    assert.equal(new Set(sums).size, 1, JSON.stringify(sums));
  });

  test('--allow-truncation with --on-duplicate ignore: a key the server converts keeps the row its own LOAD DATA keeps', async () => {
    // The server stores 0x0C as 0 and 12abc as 12 (with a warning --allow-truncation accepts): b and d win, as in file order.
    const file = join(dir, 'converted-keys.tsv');
    writeFileSync(file, '5\ta\n0x0C\tb\n0\tc\n12abc\td\n12\te\n');
    for (const t of ['ck', 'ck_ref']) await db.conn.query(`CREATE TABLE ${t} (id bigint NOT NULL PRIMARY KEY, a varchar(20) NOT NULL)`);
    await db.conn.query(`LOAD DATA INFILE ? IGNORE INTO TABLE ck_ref`, [file]);
    const r = await runCli(['load', file, '--table', 'ck', '--on-duplicate', 'ignore', '--allow-truncation', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    const rows = async (t: string): Promise<string> => JSON.stringify((await db.conn.query(`SELECT id, a FROM ${t} ORDER BY id`))[0]);
    assert.equal(await rows('ck'), await rows('ck_ref'));
    assert.match(await rows('ck'), /"a":"b".*"a":"d"/);
  });

  test('--order chunk: the chunks arrive in file order, the rows of each in key order', async () => {
    const ids = Array.from({ length: 400 }, (_, i) => ((i * 7919) % 400) + 1);
    const file = join(dir, 'chunked.tsv');
    writeFileSync(file, ids.map((id) => `${id}\tn${id}\n`).join(''));
    await db.conn.query('CREATE TABLE arrivals (seq int AUTO_INCREMENT PRIMARY KEY, id int NOT NULL)');
    await db.conn.query('CREATE TABLE chunked (id int NOT NULL PRIMARY KEY, name varchar(10) NOT NULL)');
    // The server fires an INSERT trigger for every row LOAD DATA inserts, in the order the rows arrive.
    await db.conn.query('CREATE TRIGGER chunked_arrival BEFORE INSERT ON chunked FOR EACH ROW INSERT INTO arrivals (id) VALUES (NEW.id)');
    const r = await runCli(['load', file, '--table', 'chunked', '--order', 'chunk', '--chunk-size', '600', '--jobs', '1', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    const [rows] = await db.conn.query('SELECT id FROM arrivals ORDER BY seq');
    const arrived = (rows as Array<{ id: number }>).map((x) => x.id);
    assert.equal(arrived.length, ids.length);
    // Cut the arrivals where the key goes down: each run must be the next stretch of the file, sorted.
    const runs: number[][] = [[]];
    for (const [i, id] of arrived.entries()) {
      if (i > 0 && id < arrived[i - 1]!) runs.push([]);
      runs[runs.length - 1]!.push(id);
    }
    // One run per chunk at most (about 3.5 KB in chunks of 600 bytes), and more than one: the file itself descends at
    // every other record, and the whole input sorted would arrive as one run.
    const bytes = statSync(file).size;
    assert.ok(runs.length > 1 && runs.length <= Math.ceil(bytes / 600) + 1, `${runs.length} runs in ${bytes} bytes: the chunks were not each sorted`);
    let at = 0;
    for (const run of runs) {
      assert.deepEqual(run, ids.slice(at, at + run.length).sort((a, b) => a - b));
      at += run.length;
    }
  });
});
