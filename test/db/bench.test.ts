import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { generateToFile } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { adminConnection, hasRocksdb, serverUrl } from '../support/db.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'flatload-benchcmd-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('flatload bench: every variant loads every row, sizes are reported, nothing is left behind, the chart has bars per variant and the timeline a line per variant', { timeout: 300_000 }, async () => {
  const file = join(dir, 'us.tsv');
  await generateToFile(file, { table: 'user_summary', rows: 1_000_000, seed: 9 });
  const chart = join(dir, 'bench.svg');
  const r = await runCli(['bench', file, '--fixture', 'user_summary', '--rows', '40000', '--json', '--chart', chart], {
    env: { DATABASE_URL: serverUrl() },
    timeoutMs: 280_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { scratchDatabase: string; results: Array<{ variant: string; engine: string; ok: boolean; rows: number; onDiskBytes: number | null; ratio: number | null }> };
  const engines = new Set(out.results.map((x) => x.engine));
  for (const e of ['InnoDB', 'Aria', 'MyISAM', ...(hasRocksdb() ? ['ROCKSDB'] : [])]) assert.ok(engines.has(e), `${e} variant ran`);
  assert.ok(out.results.some((x) => x.variant === 'InnoDB PAGE_COMPRESSED=1'));
  assert.ok(out.results.some((x) => x.variant === 'InnoDB ROW_FORMAT=COMPRESSED'));
  for (const x of out.results) {
    assert.ok(x.ok, `${x.variant} failed`);
    assert.equal(x.rows, 40_000, x.variant);
    assert.ok(x.onDiskBytes !== null && x.onDiskBytes > 0, `${x.variant} has an on-disk size`);
  }
  const svg = readFileSync(chart, 'utf8');
  assert.match(svg, /^<svg/);
  // Three panels (rows/s, on-disk MB, ratio), one bar per variant in each.
  assert.equal((svg.match(/class="panel"/g) ?? []).length, 3);
  assert.equal((svg.match(/class="bar"/g) ?? []).length, 3 * out.results.length);
  const timeline = readFileSync(join(dir, 'bench.timeline.svg'), 'utf8');
  assert.equal((timeline.match(/class="series"/g) ?? []).length, out.results.length);
  const admin = await adminConnection();
  const [dbs] = await admin.query("SHOW DATABASES LIKE 'flatload\\_bench\\_%'");
  await admin.end();
  assert.equal((dbs as unknown[]).length, 0, 'the scratch database is dropped');
});
