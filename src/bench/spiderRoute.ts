/**
 * flatload's two routes into a Spider table, timed end to end: `flatload
 * load --route direct` (the input split by the partition rule, each share
 * loaded straight into its backend) against `--route front` (LOAD DATA
 * LOCAL through the Spider front), on a throwaway front with 2 backends on
 * loopback, and against the front's own LOAD DATA LOCAL of the whole file
 * (one statement, as the mariadb client would send it). The same
 * user_summary TSV each time, HASH(user_id) over 2
 * partitions, rounds in rotating order, backends emptied before each run and
 * their COUNT and CHECKSUM compared after it. docs/scale-out.md quotes the
 * output.
 *
 * Run: `npm run build && node dist/src/bench/spiderRoute.js [--rows 300000] [--rounds 3]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ddl, generateToFile } from '../../fixtures/generate.js';
import { FlatloadError } from '../errors/index.js';
import { startSpiderCluster } from '../devserver/spider.js';
import { loadLocal, median, scalar } from './clusterSupport.js';

const argv = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(argv[i + 1]);
};
const rows = arg('rows', 300_000);
const rounds = arg('rounds', 3);
const cli = fileURLToPath(new URL('../cli/main.js', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'flatload-spider-route-'));
const file = join(dir, 'user_summary.tsv');
const spider = await startSpiderCluster({ backends: 2 });
try {
  const gen = await generateToFile(file, { table: 'user_summary', rows, seed: 11 });
  process.stdout.write(`input: ${rows.toLocaleString('en-US')} user_summary rows, ${(gen.bytes / 1e6).toFixed(1)} MB TSV\n`);
  await spider.createSpiderTable({
    db: 'f',
    table: 'us',
    definition: ddl('user_summary').replace(/^[^(]*\(/, '').replace(/\)\s*$/, ''),
    method: 'HASH',
    expression: 'user_id',
    partitions: [
      { name: 'p0', backend: 0 },
      { name: 'p1', backend: 1 },
    ],
  });
  const backends = await Promise.all(spider.backends.map((b) => spider.connectBackend(b.index)));
  const routes = ['direct', 'front', 'LOAD DATA'] as const;
  const ms: Record<string, number[]> = { direct: [], front: [], 'LOAD DATA': [] };
  const sums: Record<string, string> = {};
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < routes.length; k++) {
      const route = routes[(k + round) % routes.length]!;
      for (const b of backends) await b.query('TRUNCATE TABLE f.us');
      // Each run is a new load: its bookkeeping (on the front and the backends) is dropped with the rows.
      const t = process.hrtime.bigint();
      if (route === 'LOAD DATA') {
        const c = await spider.connectFront({ database: 'f' });
        await loadLocal(c, file, 'us');
        await c.end();
      } else {
        const r = spawnSync(process.execPath, [cli, 'load', file, '--table', 'f.us', '--route', route, '--progress', 'none', '--restart', '--json'], {
          env: { ...process.env, DATABASE_URL: `${spider.front.url}f` },
          encoding: 'utf8',
        });
        if (r.status !== 0) throw new FlatloadError('INTERNAL', `--route ${route} failed: ${r.stderr}`);
      }
      const elapsed = Number(process.hrtime.bigint() - t) / 1e6;
      const counts: string[] = [];
      for (const b of backends) counts.push(`${await scalar(b, 'SELECT COUNT(*) FROM f.us')}/${String(((await b.query('CHECKSUM TABLE f.us'))[0] as Array<{ Checksum: unknown }>)[0]!.Checksum)}`);
      if (sums[route] === undefined) sums[route] = counts.join(' ');
      if (counts.join(' ') !== sums['direct'] && sums['direct'] !== undefined) throw new FlatloadError('INTERNAL', `--route ${route} left ${counts.join(' ')} (COUNT/CHECKSUM per backend), direct left ${sums['direct']}`);
      ms[route]!.push(elapsed);
      process.stdout.write(`round ${round + 1}: ${route === 'LOAD DATA' ? "front's own LOAD DATA" : `flatload --route ${route}`}: ${(elapsed / 1000).toFixed(2)} s, per backend COUNT/CHECKSUM ${counts.join(' ')}\n`);
    }
  }
  for (const b of backends) await b.end();
  const d = median(ms['direct']!);
  for (const route of routes) {
    const m = median(ms[route]!);
    const runs = ms[route]!.map((x) => (x / 1000).toFixed(2)).join(', ');
    process.stdout.write(`median ${route}: ${(m / 1000).toFixed(2)} s (runs ${runs}), ${Math.round(rows / (m / 1000)).toLocaleString('en-US')} rows/s, ${(m / d).toFixed(1)}x direct's time\n`);
  }
} finally {
  await spider.stop();
  rmSync(dir, { recursive: true, force: true });
}
