/**
 * Loading Spider tables (a throwaway front and 2 backends, started by this
 * file): direct routing gives each backend exactly the rows the front's own
 * routing gives it; a load killed mid-way resumes exactly; a rerun after the
 * shard map changed is refused, saying what changed. Skipped, saying why,
 * where mariadb-plugin-spider is missing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { roundRobinPartitions, spiderUnavailable, startSpiderCluster, type SpiderCluster, type SpiderTableSpec } from '../../dev/spider.js';
import { prng } from '../../fixtures/prng.js';
import { runCli } from '../support/cli.js';
import { spawnCli } from '../support/spawn.js';

const noSpider = spiderUnavailable();
if (noSpider) process.stderr.write(`spider.test.ts: skipped: ${noSpider}\n`);

const ROWS = 60_000;
const DEFINITION = 'id BIGINT NOT NULL PRIMARY KEY, a INT, s VARCHAR(60)';

/**
 * CSV whose text fields hold the field separator, quotes and line breaks
 * inside quotes, so a record routed by a naive split would go wrong; ids are
 * shuffled so every chunk holds rows of every partition, and a few are
 * negative or above 2^32.
 */
function csv(rows: number, seed: number): string {
  const rnd = prng(seed);
  const ids = Array.from({ length: rows }, (_, i) => (i % 97 === 0 ? -i - 1 : i % 89 === 0 ? 4_294_967_296 + i : i));
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const pieces = ['plain', 'with, comma', 'say ""hi""', 'two\nlines', 'tab\there', 'x'];
  const lines = ['id,a,s'];
  for (const id of ids) {
    const s = `${pieces[Math.floor(rnd() * pieces.length)]!} ${Math.floor(rnd() * 1e6)}`;
    lines.push(`${id},${rnd() < 0.05 ? '\\N' : Math.floor(rnd() * 1e9) - 5e8},"${s}"`);
  }
  return `${lines.join('\n')}\n`;
}

describe('Spider tables: direct routing against the front', { skip: noSpider ? `mariadb-plugin-spider missing: ${noSpider}` : false }, () => {
  let spider: SpiderCluster;
  let front: Connection;
  const backends: Connection[] = [];
  let dir: string;
  let file: string;
  const url = (): string => `${spider.front.url}s`;
  const load = (table: string, ...extra: string[]): string[] => ['load', file, '--table', `s.${table}`, '--dialect', 'csv-unix', '--ignore-lines', '1', '--progress', 'none', '--json', '--tmpdir', dir, ...extra];
  /** The share directories left in the test's --tmpdir. */
  const leftovers = (): string[] => readdirSync(dir).filter((n) => n.startsWith('flatload-route-'));

  const hashSpec = (table: string): SpiderTableSpec => ({
    db: 's',
    table,
    definition: DEFINITION,
    method: 'HASH',
    expression: 'id',
    partitions: [
      { name: 'p0', backend: 0 },
      { name: 'p1', backend: 1 },
    ],
  });
  const rangeSpec = (table: string, bound = 20_000): SpiderTableSpec => ({
    db: 's',
    table,
    definition: DEFINITION,
    method: 'RANGE',
    expression: 'id',
    style: 'options',
    partitions: [
      { name: 'lo', backend: 0, values: String(bound) },
      { name: 'hi', backend: 1, values: 'MAXVALUE' },
    ],
  });

  /** Per backend, [COUNT(*), CHECKSUM TABLE] of s.<table>. */
  async function perBackend(table: string): Promise<Array<[number, string]>> {
    const out: Array<[number, string]> = [];
    for (const b of backends) {
      const [n] = await b.query(`SELECT COUNT(*) AS n FROM s.\`${table}\``);
      const [c] = await b.query(`CHECKSUM TABLE s.\`${table}\``);
      out.push([Number((n as Array<{ n: unknown }>)[0]!.n), String((c as Array<{ Checksum: unknown }>)[0]!.Checksum)]);
    }
    return out;
  }
  const total = async (table: string): Promise<number> => (await perBackend(table)).reduce((a, [n]) => a + n, 0);

  /** Creates the table, starts a load of it in small chunks and SIGKILLs it once `rows` are in; returns the load's arguments. */
  async function killMidLoad(spec: SpiderTableSpec, rows: number): Promise<string[]> {
    await spider.createSpiderTable(spec);
    const args = load(spec.table, '--chunk-size', '16KiB', '--jobs', '1');
    const s = await startLoad(spec.table, args, rows);
    s.child.kill('SIGKILL');
    await s.done;
    return args;
  }

  /** Starts a load in a child process and returns once the backends hold at least `rows` of it (or after 8 s). */
  async function startLoad(table: string, args: string[], rows: number): Promise<ReturnType<typeof spawnCli>> {
    const s = spawnCli(args, { DATABASE_URL: url() });
    for (let i = 0; i < 400 && (await total(table)) < rows; i++) await new Promise((res) => setTimeout(res, 20));
    return s;
  }

  before(async () => {
    const t = Date.now();
    spider = await startSpiderCluster({ backends: 2 });
    front = await spider.connectFront();
    for (const b of spider.backends) backends.push(await spider.connectBackend(b.index));
    process.stderr.write(`spider.test.ts: front + 2 backends up in ${Date.now() - t} ms\n`);
    dir = mkdtempSync(join(tmpdir(), 'flatload-spider-'));
    file = join(dir, 'rows.csv');
    writeFileSync(file, csv(ROWS, 14));
  });
  after(async () => {
    for (const c of [front, ...backends]) await c?.end().catch(() => undefined);
    await spider?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [kind, spec] of [
    ['HASH', hashSpec],
    ['RANGE', rangeSpec],
  ] as const) {
    test(`${kind}: direct and front loads put the same rows on each backend`, async () => {
      const name = kind.toLowerCase();
      await spider.createSpiderTable(spec(`${name}_direct`));
      await spider.createSpiderTable(spec(`${name}_front`));
      const plan = await runCli(['plan', file, '--table', `s.${name}_direct`, '--dialect', 'csv-unix', '--ignore-lines', '1'], { env: { DATABASE_URL: url() } });
      assert.equal(plan.code, 0, plan.stderr);
      assert.match(plan.stdout, /route: direct/);
      assert.match(plan.stdout, kind === 'HASH' ? /p1 -> b2 127\.0\.0\.1:\d+\/s\/hash_direct/ : /lo < \(20000\) -> b1/);

      const t0 = Date.now();
      const direct = await runCli(load(`${name}_direct`, '--verify'), { env: { DATABASE_URL: url() } });
      const directMs = Date.now() - t0;
      assert.equal(direct.code, 0, direct.stderr);
      const r = JSON.parse(direct.stdout) as { rows: number; route: { route: string }; shards: Array<{ backend: string; rows: number }>; verify: { front: number; expectedFront: number; equal: boolean } };
      assert.equal(r.route.route, 'direct');
      assert.equal(r.rows, ROWS);
      assert.deepEqual(
        r.shards.map((s) => s.backend),
        ['b1', 'b2'],
      );
      assert.ok(r.shards.every((s) => s.rows > 0));
      assert.deepEqual([r.verify.front, r.verify.expectedFront, r.verify.equal], [ROWS, ROWS, true]);
      assert.match(direct.stderr, /backend:\s+b1 127\.0\.0\.1:\d+\/s\/\w+: [\d,]+ rows/);

      const t1 = Date.now();
      const viaFront = await runCli(load(`${name}_front`, '--route', 'front', '--verify'), { env: { DATABASE_URL: url() } });
      const frontMs = Date.now() - t1;
      assert.equal(viaFront.code, 0, viaFront.stderr);
      const f = JSON.parse(viaFront.stdout) as { route: { route: string; forced: boolean }; verify: { front: number; equal: boolean } };
      assert.deepEqual([f.route.route, f.route.forced, f.verify.front, f.verify.equal], ['front', true, ROWS, true]);
      process.stderr.write(`spider.test.ts: ${kind} ${ROWS} rows: direct ${directMs} ms, front ${frontMs} ms\n`);

      const want = await perBackend(`${name}_front`);
      assert.deepEqual(await perBackend(`${name}_direct`), want);
      assert.equal(
        want.reduce((a, [n]) => a + n, 0),
        ROWS,
      );
      assert.ok(want.every(([n]) => n > 0 && n < ROWS), 'both backends hold rows');
    });
  }

  test('--verify: the front reads a backend table once per partition that names it', async () => {
    await spider.createSpiderTable({ ...hashSpec('four'), partitions: roundRobinPartitions(4, 2) });
    const r = await runCli(load('four', '--verify'), { env: { DATABASE_URL: url() } });
    assert.equal(r.code, 0, r.stderr);
    const v = (JSON.parse(r.stdout) as { verify: { front: number; expectedFront: number; backends: Array<{ rows: number; partitions: number }>; equal: boolean } }).verify;
    assert.deepEqual(
      v.backends.map((b) => b.partitions),
      [2, 2],
    );
    assert.equal(
      v.backends.reduce((a, b) => a + b.rows, 0),
      ROWS,
    );
    assert.deepEqual([v.front, v.expectedFront, v.equal], [2 * ROWS, 2 * ROWS, true]);
    // Even one partition reads its whole backend table, the other partition's rows included.
    const [p0] = await front.query('SELECT COUNT(*) AS n FROM s.four PARTITION (p0)');
    assert.equal(Number((p0 as Array<{ n: unknown }>)[0]!.n), v.backends[0]!.rows);
  });

  test('bad records: one flatload cannot route stops before loading, naming its line; one a backend refuses names the backend', async () => {
    await spider.createSpiderTable(hashSpec('bad'));
    const small = join(dir, 'bad.csv');
    const args = ['load', small, '--table', 's.bad', '--dialect', 'csv-unix', '--progress', 'none'];
    writeFileSync(small, '1,1,"a"\n2,2,"b, with\na line break"\n3x,3,"c"\n4,4,"d"\n');
    const unroutable = await runCli(args, { env: { DATABASE_URL: url() } });
    assert.equal(unroutable.code, 5, unroutable.stderr);
    assert.match(unroutable.stderr, /cannot tell which partition/);
    assert.match(unroutable.stderr, /bad\.csv.*line 4.*byte offset 35/s);
    assert.equal(await total('bad'), 0);
    writeFileSync(small, '1,1,"a"\n2,2,"b"\n');
    const unwritable = await runCli([...args, '--tmpdir', join(small, 'not-a-directory')], { env: { DATABASE_URL: url() } });
    assert.equal(unwritable.code, 5, unwritable.stderr);
    assert.match(unwritable.stderr, /cannot write the backends' shares into/);
    writeFileSync(small, '1,1,"a"\n2,two,"b"\n3,3,"c"\n4,4,"d"\n');
    const refused = await runCli(args, { env: { DATABASE_URL: url() } });
    assert.equal(refused.code, 4, refused.stderr);
    assert.match(refused.stderr, /backend b1: .*bad\.csv, the records for b1/s);
    assert.deepEqual(
      (await perBackend('bad')).map(([n]) => n),
      [0, 2],
      'b2 loaded its share; b1 rolled back the chunk with the bad row',
    );
    // Within --max-errors the row goes to b1's own reject file.
    await spider.createSpiderTable(hashSpec('bad2'));
    const budget = await runCli(['load', small, '--table', 's.bad2', '--dialect', 'csv-unix', '--progress', 'none', '--max-errors', '5'], { env: { DATABASE_URL: url() } });
    assert.equal(budget.code, 3, budget.stderr);
    assert.match(budget.stdout, /b1: rejected rows in \S*bad\.rejects\.b1\.csv/);
    assert.match(readFileSync(join(dir, 'bad.rejects.b1.csv'), 'utf8'), /^2,two,"b"\n$/);
    const b2 = join(dir, 'bad.rejects.b2.csv');
    assert.equal(existsSync(b2) ? readFileSync(b2, 'utf8') : '', '', "b2's share rejected nothing");
  });

  test('a last record without a line terminator: its share gets one, and the row loads whole', async () => {
    await spider.createSpiderTable(hashSpec('tail'));
    const small = join(dir, 'tail.csv');
    writeFileSync(small, '\ufeffid,a,s\n1,1,"one"\n3,3,"three"\n2,2,"two, last"');
    const r = await runCli(['load', small, '--table', 's.tail', '--dialect', 'csv-unix', '--ignore-lines', '1', '--progress', 'none'], { env: { DATABASE_URL: url() } });
    assert.equal(r.code, 0, r.stderr);
    const [b1] = await backends[0]!.query('SELECT id, a, s FROM s.tail ORDER BY id');
    const [b2] = await backends[1]!.query('SELECT id, a, s FROM s.tail ORDER BY id');
    assert.deepEqual(b1, [{ id: 2, a: 2, s: 'two, last' }]);
    assert.deepEqual(b2, [
      { id: 1, a: 1, s: 'one' },
      { id: 3, a: 3, s: 'three' },
    ]);
  });

  test('--backend NAME=URL: that backend is reached with its own address and credentials, never printed', async () => {
    await spider.createSpiderTable(hashSpec('creds'));
    await backends[1]!.query("CREATE USER IF NOT EXISTS 'ld'@'%' IDENTIFIED BY 'b2-s3cret'");
    await backends[1]!.query("GRANT ALL ON *.* TO 'ld'@'%'");
    const port = spider.backends[1]!.server.port;
    const plan = (...extra: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
      runCli(['plan', file, '--table', 's.creds', '--dialect', 'csv-unix', '--ignore-lines', '1', ...extra], { env: { DATABASE_URL: url() } });
    const ok = await plan('--backend', `b2=mysql://ld:b2-s3cret@127.0.0.1:${port}`);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /route: direct/);
    const wrong = await plan('--backend', `b2=mysql://ld:not-the-s3cret@127.0.0.1:${port}`);
    assert.equal(wrong.code, 0, wrong.stderr);
    assert.match(wrong.stdout, /route: front/);
    assert.match(wrong.stdout, /backend b2 \(.*[Aa]ccess denied.*\) could not be reached/);
    for (const r of [ok, wrong]) assert.doesNotMatch(r.stdout + r.stderr, /s3cret/);
    const typo = await plan('--backend', 'b9=mysql://127.0.0.1');
    assert.equal(typo.code, 2, typo.stderr);
    assert.match(typo.stderr, /--backend b9: the table's partitions name the servers b1, b2/);
    const forced = await plan('--route', 'direct', '--backend', `b2=mysql://ld:not-the-s3cret@127.0.0.1:${port}`);
    assert.equal(forced.code, 7, forced.stderr);
    assert.match(forced.stderr, /--route direct: backend b2/);
  });

  test('a user who may not read mysql.servers loads through the front; --route direct says what to grant', async () => {
    await spider.createSpiderTable(hashSpec('nopriv'));
    await front.query("CREATE USER IF NOT EXISTS 'lim'@'%'");
    await front.query("GRANT ALL ON s.* TO 'lim'@'%'");
    const limited = { DATABASE_URL: `mysql://lim@127.0.0.1:${spider.front.port}/s` };
    const args = ['load', file, '--table', 's.nopriv', '--dialect', 'csv-unix', '--ignore-lines', '1', '--progress', 'lines'];
    const direct = await runCli([...args, '--route', 'direct'], { env: limited });
    assert.equal(direct.code, 7, direct.stderr);
    assert.match(direct.stderr, /needs SELECT on mysql\.servers/);
    const plan = await runCli(['plan', ...args.slice(1)], { env: limited });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stderr, /needs SELECT on mysql\.servers.*: loading through the Spider front/);
    assert.doesNotMatch(plan.stdout, /route:/);
  });

  test('killed mid-load, then rerun: every backend ends with exactly the front-routed rows', async () => {
    const args = await killMidLoad(hashSpec('killed'), 4_000);
    const mid = await total('killed');
    assert.ok(mid > 0 && mid < ROWS, `killed mid-load (${mid} rows on the backends)`);

    const rerun = await runCli(args, { env: { DATABASE_URL: url() } });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual(leftovers(), [], 'the rerun removed the shares the killed run left');
    const r = JSON.parse(rerun.stdout) as { rows: number; resumedChunks: number };
    assert.equal(r.rows, ROWS);
    assert.ok(r.resumedChunks > 0, 'the rerun skipped the committed chunks');
    assert.deepEqual(await perBackend('killed'), await perBackend('hash_front'));
    const again = await runCli(args, { env: { DATABASE_URL: url() } });
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { status: string }).status, 'already-loaded');
    assert.equal(await total('killed'), ROWS);
  });

  test('a backend killed mid-load: the other backend finishes its share, the rerun finishes the rest exactly', async () => {
    await spider.createSpiderTable(hashSpec('dead'));
    const args = load('dead', '--chunk-size', '16KiB', '--jobs', '1');
    const s = await startLoad('dead', args, 4_000);
    await spider.killBackend(1);
    const tk = Date.now();
    const stopped = await s.done;
    process.stderr.write(`spider.test.ts: the load stopped ${Date.now() - tk} ms after the backend was killed\n`);
    await spider.restartBackend(1);
    backends[1] = await spider.connectBackend(1);
    const want = await perBackend('hash_front');
    const [b1] = await perBackend('dead');
    assert.equal(stopped.code, 4, stopped.stderr);
    assert.match(stopped.stderr, /backend b2: [^]*resume with: cd \S+ && flatload load/);
    const r = JSON.parse(stopped.stdout) as { status: string; shards: Array<{ backend: string; status: string }> };
    assert.deepEqual(
      r.shards.map((x) => [x.backend, x.status]),
      [
        ['b1', 'ok'],
        ['b2', 'stopped'],
      ],
    );
    assert.deepEqual(b1, want[0], 'the live backend finished its share');
    const rerun = await runCli(args, { env: { DATABASE_URL: url() } });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual(await perBackend('dead'), want);
  });

  test('a rerun after the shard map changed is refused, naming the change', async () => {
    const args = await killMidLoad(rangeSpec('moved'), 2_000);
    assert.ok((await total('moved')) < ROWS, 'killed mid-load');
    // The same backend tables, another bound: rows would now go elsewhere.
    await front.query('DROP TABLE s.moved');
    const spec = rangeSpec('moved', 30_000);
    for (const b of backends) await b.query('DROP TABLE s.moved');
    await spider.createSpiderTable(spec);
    const refused = await runCli(args, { env: { DATABASE_URL: url() } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /unfinished load .* differs/);
    assert.match(refused.stderr, /shard map: partition lo's values changed from 20000 to 30000/);
    assert.deepEqual(leftovers(), [], "the killed run's shares are removed, as no run can use them");
  });
});
