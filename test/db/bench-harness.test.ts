import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import mysql from 'mysql2/promise';
import { ddl, generateToFile } from '../../fixtures/generate.js';
import { clientLoad, parallelClients, resolveBaseline, splitByHand } from '../../bench/competitors.js';
import { runExportBench } from '../../bench/exportBench.js';
import { runScaleBench } from '../../bench/scale.js';
import { runCompressedBench } from '../../bench/compressed.js';
import { session } from '../../bench/quiet.js';
import { settle } from '../../bench/settle.js';
import { startThrowawayServer } from '../../src/devserver/server.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';

let dir: string;
let db: TestDatabase;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flatload-benchharness-'));
  db = await createTestDatabase('benchharness');
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

test('split -n l/N by hand: the parts, in order, are the file, each ends at a line end, named after the table', async () => {
  const file = join(dir, 'split.tsv');
  await generateToFile(file, { table: 'user_summary', rows: 10_007, seed: 5 });
  const parts = splitByHand(file, 3, join(dir, 'parts'), 'user_summary');
  assert.equal(parts.length, 3);
  const bytes = parts.map((p) => readFileSync(p));
  assert.deepEqual(Buffer.concat(bytes), readFileSync(file));
  for (const [k, p] of parts.entries()) {
    assert.match(p, new RegExp(`part${k}/user_summary\\.tsv$`));
    assert.equal(bytes[k]!.at(-1), 0x0a, `${p} ends with a newline`);
    assert.ok(bytes[k]!.length > readFileSync(file).length / 4, `${p} holds about a third`);
  }
});

test('naive competitors: N clients on the parts load what one client loads (same count and checksum)', { timeout: 120_000 }, async () => {
  const file = join(dir, 'naive.tsv');
  await generateToFile(file, { table: 'user_summary', rows: 20_000, seed: 6 });
  const parts = splitByHand(file, 2, join(dir, 'naive-parts'), 'user_summary');
  const target = { url: new URL(db.url), db: db.name, table: 'user_summary' };
  const digests = [];
  for (const load of [() => clientLoad(target, file), () => parallelClients(target, parts)]) {
    await db.conn.query(`DROP TABLE IF EXISTS user_summary; ${ddl('user_summary')} ENGINE=InnoDB`);
    const m = await load();
    assert.equal(m.code, 0, m.stderr);
    digests.push(await tableDigest(db.conn, 'user_summary'));
  }
  assert.equal(digests[0]!.count, '20000');
  assert.deepEqual(digests[1], digests[0]);
});

test('settle: the previous load\'s dirty pages are written back and the server\'s settings restored', { timeout: 240_000 }, async () => {
  // A server of its own: settling waits for the whole server's dirty pages and purge, which another test file's open
  // transaction (a held row lock) would hold up for as long as it lasts.
  const server = await startThrowawayServer();
  const conn = await mysql.createConnection({ uri: server.url, multipleStatements: true });
  try {
    const file = join(dir, 'dirty.tsv');
    await generateToFile(file, { table: 'user_summary', rows: 200_000, seed: 7 });
    const vars = 'SELECT @@GLOBAL.innodb_max_dirty_pages_pct AS pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm AS lwm, @@GLOBAL.innodb_io_capacity AS io, @@GLOBAL.innodb_io_capacity_max AS iomax';
    const [before] = await conn.query(vars);
    await conn.query(`CREATE DATABASE settle; USE settle; ${ddl('user_summary').replace('user_summary', 'dirty')} ENGINE=InnoDB`);
    await conn.query('LOAD DATA INFILE ? INTO TABLE dirty', [file]);
    const dirtyPages = async (): Promise<number> => {
      const [r] = await conn.query("SELECT COUNT(*) AS n FROM information_schema.INNODB_BUFFER_PAGE WHERE TABLE_NAME LIKE '%settle%dirty%' AND OLDEST_MODIFICATION > 0");
      return Number((r as Array<{ n: number }>)[0]!.n);
    };
    assert.ok((await dirtyPages()) > 0, 'the load left dirty pages (else this test proves nothing)');
    const s = await settle(conn, undefined, 200);
    assert.ok(s.quiet, `settled within the limit (${s.seconds} s)`);
    assert.ok(s.dirtyPagesBefore > 0);
    assert.equal(await dirtyPages(), 0, 'no page of the table is dirty after settling');
    const [afterVars] = await conn.query(vars);
    assert.deepEqual(afterVars, before, 'innodb_max_dirty_pages_pct(_lwm) and innodb_io_capacity(_max) are as they were');
  } finally {
    await conn.end().catch(() => undefined);
    await server.stop();
  }
});

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');

/** The bench's own throwaway server rather than the tests' shared one: settling waits for the whole server to be at rest. */
async function withoutSharedServer<T>(f: () => Promise<T>): Promise<T> {
  const saved = process.env['DATABASE_URL'];
  delete process.env['DATABASE_URL'];
  try {
    return await f();
  } finally {
    if (saved !== undefined) process.env['DATABASE_URL'] = saved;
  }
}

test('--baseline: another checkout\'s flatload runs as one more competitor in the same rounds, with the new/old ratio', { timeout: 300_000 }, async () => {
  assert.ok(readFileSync(cli).length > 0, 'the build (npm run build) is there');
  // This checkout against itself: the wiring is what is checked, not a difference.
  const baseline = resolveBaseline(root);
  const text = await withoutSharedServer(() => runExportBench({ rows: 4000, repeat: 1, jobs: 2, write: false, root, cli, bufferPool: '128M', baseline }));
  const row = text.split('\n').find((l) => l.startsWith(`| ${baseline.name} load DIR --jobs 2 |`));
  assert.ok(row, `a row for ${baseline.name}:\n${text}`);
  assert.match(row, /^\| \S+ load DIR --jobs 2 \| \d+\.\d\d \(\d+\.\d\) \| [\d,]+ \|/, 'it loaded every table (a time and a rate, not "failed")');
  assert.match(text, new RegExp(`flatload against ${baseline.name.replace('+', '\\+')} \\(another checkout.*new/old time \\d\\.\\d\\d`));
  assert.match(text, /median s \[min–max\] \(1 round, in order\)/);
});

test('--scale, tiny: flatload with its peak RSS, --tmpdir, CPU and size, the sorted copy, the naive client stopped with the rows it reached', { timeout: 300_000 }, async () => {
  assert.ok(readFileSync(cli).length > 0, 'the build (npm run build) is there');
  const rows = 1_000_000;
  // One second is far less than a plain LOAD DATA of a million rows takes, so the naive client is stopped part-way.
  const text = await runScaleBench({ rows, repeat: 1, naiveSeconds: 1, cacheDir: join(dir, 'scale-cache'), write: false, root, cli });
  const line = (start: string): string => {
    const l = text.split('\n').find((x) => x.startsWith(`| ${start}`));
    assert.ok(l, `a row starting "${start}":\n${text}`);
    return l;
  };
  const cells = (l: string): string[] => l.split('|').slice(1, -1).map((c) => c.trim());
  const fl = cells(line('flatload load FILE --table T --jobs 2'));
  assert.match(fl[1]!, /^\d+\.\d\d \(\d+\.\d\)$/, 'a time');
  assert.match(fl[3]!, /^\d+ MB$/, 'peak RSS');
  assert.match(fl[4]!, /^\d+ MB \(\d+\.\d\d× input\)$/, 'peak --tmpdir');
  assert.match(fl[5]!, /^\d+\.\d \(\d+\.\d\)$/, 'client CPU and per GB');
  assert.match(fl[6]!, /^\d+\.\d$/, 'server CPU');
  assert.match(fl[7]!, /^\d+ MB$/, 'on disk');
  assert.match(fl[8]!, /^\d+\.\d\d$/, 'input/on-disk');
  assert.match(cells(line('mariadb client on a copy sorted'))[1]!, /^\d+\.\d\d \(\d+\.\d\)$/);
  const naive = cells(line('mariadb client, one LOAD DATA LOCAL of the random-order file, stopped after 1 s'));
  assert.equal(naive[1], 'stopped at 1 s');
  const reached = Number(/^([\d,]+) rows reached/.exec(naive[2]!)?.[1]?.replace(/,/g, ''));
  assert.ok(reached > 0 && reached < rows, `part of the file reached: ${naive[2]}`);
  assert.match(text, /the published experiment this project answers: one LOAD DATA into TokuDB.*\| 348 \(5 min 48 s\) \| 574,000 \|/);
  assert.match(text, /Sorting the copy beforehand \(GNU `sort.*\): \d+\.\d s/);
});

test('--compressed, tiny: flatload on the .gz beside the plain file (ratio, peak --tmpdir against the decompressed size), the zcat pipe once', { timeout: 300_000 }, async () => {
  assert.ok(readFileSync(cli).length > 0, 'the build (npm run build) is there');
  const rows = 20_000;
  const read = session.read;
  // An injected load average: the figure printed at each run's start is the one read.
  session.read = () => 0.37;
  let text: string;
  try {
    text = await runCompressedBench({ rows, repeat: 2, naiveSeconds: 1, cacheDir: join(dir, 'gz-cache'), write: false, root, cli });
  } finally {
    session.read = read;
  }
  const cells = (start: string): string[] => {
    const l = text.split('\n').find((x) => x.startsWith(`| ${start}`));
    assert.ok(l, `a row starting "${start}":\n${text}`);
    // An escaped pipe (\|) is inside a cell, not between two.
    return l.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
  };
  assert.match(text, /median s \[min–max\] \(2 rounds, in order\)/);
  for (const name of ['flatload load FILE --table T --jobs 2 (plain)', 'flatload load FILE.gz --table T --jobs 2']) {
    const c = cells(name);
    assert.match(c[1]!, /^\d+\.\d\d \[\d+\.\d–\d+\.\d\] \(\d+\.\d, \d+\.\d\)$/, `${name}: median, min–max and both runs`);
    assert.match(c[2]!, /^[\d,]+$/, 'rows/s');
    assert.match(c[3]!, /^\d+ MB$/, 'peak RSS');
    assert.match(c[4]!, /^\d+ MB \(\d+\.\d\d×\)$/, 'peak --tmpdir and its fraction of the decompressed size');
    assert.match(c[5]!, /^\d+\.\d$/, 'client CPU');
    assert.equal(c[6], '0.37, 0.37', 'the load average at each run\'s start');
  }
  const naive = cells("zcat FILE.gz \\| mariadb … LOAD DATA LOCAL INFILE '/dev/stdin', stopped after 1 s");
  assert.equal(naive[6], '0.37', 'run once');
  // 20,000 rows may finish within the second: either way, rows are counted.
  assert.match(naive[2]!, /^[\d,]+( rows reached)?$/);
  assert.match(text, /- gz\/plain time: \d+\.\d\d \(medians; per round \d+\.\d\d, \d+\.\d\d\)\./);
  assert.match(text, /\d+\.\d MB gzipped \(\d\.\d\d×, `gzip -6`\)/);
  assert.ok(readFileSync(join(dir, 'gz-cache', `user_summary-${rows}-seed1.tsv.gz`)).length > 0, 'the .gz is cached beside the file');
});
