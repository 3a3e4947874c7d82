/**
 * A Spider table inside an export directory (a throwaway front and 2
 * backends, started by this file): it loads by direct routing as a single
 * load of its file does, --route / --verify are honoured, a kill mid-export
 * resumes exactly, and swap mode (whose shadow would point at the same
 * backend tables) is refused before anything changes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { spiderUnavailable, startSpiderCluster, type SpiderCluster, type SpiderTableSpec } from '../../dev/spider.js';
import { runCli } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

const noSpider = spiderUnavailable();
const ROWS = 60_000;
const DEFINITION = 'id BIGINT NOT NULL PRIMARY KEY, a INT, s VARCHAR(60)';

/** Ids shuffled, so every chunk holds rows of both partitions. */
function tsv(rows: number): string {
  const ids = Array.from({ length: rows }, (_, i) => i);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids.map((id) => `${id}\t${id % 1000}\tvalue ${id}\n`).join('');
}

const spec = (table: string): SpiderTableSpec => ({
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

describe('a Spider table inside an export', { skip: noSpider ? `mariadb-plugin-spider missing: ${noSpider}` : false }, () => {
  let spider: SpiderCluster;
  let front: Connection;
  const backends: Connection[] = [];
  let root: string;
  const env = (): Record<string, string> => ({ DATABASE_URL: `${spider.front.url}s` });
  const base = ['--progress', 'none', '--skip-size-report', '--json'];

  async function value(c: Connection, sql: string): Promise<number> {
    const [r] = await c.query(sql);
    return Number(Object.values((r as Array<Record<string, unknown>>)[0]!)[0]);
  }
  /** Per backend, [COUNT(*), CHECKSUM TABLE] of s.<table>. */
  async function perBackend(table: string): Promise<Array<[number, string]>> {
    const out: Array<[number, string]> = [];
    for (const b of backends) {
      const [c] = await b.query(`CHECKSUM TABLE s.\`${table}\``);
      out.push([await value(b, `SELECT COUNT(*) FROM s.\`${table}\``), String((c as Array<{ Checksum: unknown }>)[0]!.Checksum)]);
    }
    return out;
  }
  const total = async (table: string): Promise<number> => (await perBackend(table)).reduce((a, [n]) => a + n, 0);
  /** Whether flatload kept bookkeeping on the backends: only a load routed to them directly does. */
  const backendJobs = async (): Promise<number> => {
    let n = 0;
    for (const b of backends) n += await value(b, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 's' AND TABLE_NAME = 'flatload_jobs'");
    return n;
  };
  /** The backends' jobs for their share of `table` (a load routed to them directly keeps one on each). */
  const sharesOf = async (table: string): Promise<number> => {
    let n = 0;
    for (const b of backends) {
      if ((await value(b, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 's' AND TABLE_NAME = 'flatload_jobs'")) === 0) continue;
      n += await value(b, `SELECT COUNT(*) FROM s.flatload_jobs WHERE target = 's.${table}'`);
    }
    return n;
  };
  /** An export directory with the Spider table's file and a plain table's. */
  function exportDir(name: string, table: string): string {
    const d = join(root, name);
    mkdirSync(d);
    writeFileSync(join(d, `s.${table}.tsv`), tsv(ROWS));
    writeFileSync(join(d, 's.plain.tsv'), tsv(5_000));
    return d;
  }

  before(async () => {
    spider = await startSpiderCluster({ backends: 2 });
    front = await spider.connectFront();
    for (const b of spider.backends) backends.push(await spider.connectBackend(b.index));
    root = mkdtempSync(join(tmpdir(), 'flatload-spider-export-'));
    // The reference: the front's own routing of the same rows.
    await spider.createSpiderTable(spec('reference'));
    const file = join(root, 'reference.tsv');
    writeFileSync(file, tsv(ROWS));
    const r = await runCli(['load', file, '--table', 's.reference', '--route', 'front', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    for (const c of [front, ...backends]) await c?.end().catch(() => undefined);
    await spider?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function plainTable(): Promise<void> {
    await front.query('DROP TABLE IF EXISTS s.plain');
    await front.query(`CREATE TABLE s.plain (${DEFINITION}) ENGINE=InnoDB`);
  }

  test('loads by direct routing, with --verify: each backend holds exactly the front-routed rows', async () => {
    await spider.createSpiderTable(spec('direct'));
    await plainTable();
    const d = exportDir('direct', 'direct');
    const plan = await runCli(['plan', d], { env: env() });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /== s\.direct\n[^=]*route: direct/);
    const r = await runCli(['load', d, '--verify', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /split .* by the partition rule/);
    assert.ok((await backendJobs()) > 0, 'the backends keep the shares\' bookkeeping: the rows went to them directly');
    assert.deepEqual(await perBackend('direct'), await perBackend('reference'));
    assert.equal(await value(front, 'SELECT COUNT(*) FROM s.plain'), 5_000);
    const rep = JSON.parse(r.stdout) as { totals: { rows: number }; tables: Array<{ table: string; rows: number; strategy: string }>; notes: string[] };
    assert.ok(
      rep.notes.some((n) => n.startsWith(`s.direct: --verify: COUNT(*) through the front ${ROWS}, the backends' rows make ${ROWS}`)),
      rep.notes.join('\n'),
    );
    assert.equal(rep.totals.rows, ROWS + 5_000);
    assert.equal(rep.tables.find((t) => t.table === 's.direct')?.strategy, 'direct to the backends');
    const again = await runCli(['load', d, ...base], { env: env() });
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { status: string }).status, 'already-loaded');
    assert.equal(await total('direct'), ROWS);
  });

  test('--route front is honoured: the rows go through the front', async () => {
    await spider.createSpiderTable(spec('viafront'));
    await plainTable();
    for (const b of backends) await b.query('DROP TABLE IF EXISTS s.flatload_jobs');
    const d = exportDir('viafront', 'viafront');
    const r = await runCli(['load', d, '--route', 'front', ...base], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await backendJobs(), 0, 'nothing was routed to the backends directly');
    assert.deepEqual(await perBackend('viafront'), await perBackend('reference'));
  });

  /** Starts the export and SIGKILLs it once `rows` of the table are on the backends (within a deadline, while it runs). */
  async function killMidExport(args: string[], table: string, rows: number): Promise<void> {
    const s = spawnCli(args, env());
    await pollUntil(`${rows} rows of ${table} on the backends`, async () => (await total(table)) >= rows, { process: s, everyMs: 20 }).catch((err: unknown) => {
      s.child.kill('SIGKILL');
      throw err;
    });
    s.child.kill('SIGKILL');
    assert.equal((await s.done).signal, 'SIGKILL');
    const mid = await total(table);
    assert.ok(mid > 0 && mid < ROWS, `killed mid-load (${mid} rows on the backends)`);
  }

  for (const route of ['direct', 'front'] as const) {
    test(`--route ${route}: killed mid-export, then rerun: the Spider table resumes and every backend ends with exactly the front-routed rows`, async () => {
      const table = `killed_${route}`;
      await spider.createSpiderTable(spec(table));
      await plainTable();
      const d = exportDir(table, table);
      const args = ['load', d, '--chunk-size', '16KiB', '--jobs', '1', '--route', route, ...base];
      await killMidExport(args, table, 4_000);
      const rerun = await runCli(args, { env: env() });
      assert.equal(rerun.code, 0, rerun.stderr);
      assert.equal(await sharesOf(table), route === 'direct' ? 2 : 0, `routed ${route}`);
      assert.deepEqual(await perBackend(table), await perBackend('reference'));
      assert.equal(await value(front, 'SELECT COUNT(*) FROM s.plain'), 5_000);
    });
  }

  test('--backend is honoured too: one naming no server of the table stops its load before anything reaches the backends', async () => {
    await spider.createSpiderTable(spec('badbackend'));
    await plainTable();
    const d = exportDir('badbackend', 'badbackend');
    const r = await runCli(['load', d, '--backend', 'nosuch=mysql://root@127.0.0.1:1/s', ...base], { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--backend nosuch: the table's partitions name the servers/);
    assert.equal(await total('badbackend'), 0);
  });

  test('swap mode is refused before anything changes: a Spider shadow would point at the same backend tables', async () => {
    await spider.createSpiderTable(spec('swapped'));
    await plainTable();
    const d = exportDir('swapped', 'swapped');
    const r = await runCli(['load', d, '--mode', 'swap', ...base], { env: env() });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /s\.swapped is a Spider table/);
    assert.equal(await total('swapped'), 0);
    assert.equal(await value(front, 'SELECT COUNT(*) FROM s.plain'), 0);
  });
});
