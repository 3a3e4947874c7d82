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
 * output; `npm run bench -- --cluster` writes it into docs/benchmarks.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ddl, generateToFile } from '../fixtures/generate.js';
import { FlatloadError } from '../src/errors/index.js';
import { startSpiderCluster } from '../dev/spider.js';
import { checksumOf, loadLocal, median, scalar } from './clusterSupport.js';
import { writeDocSection } from './doc.js';
import { session } from './quiet.js';
import { machineDescription } from './report.js';

/** Runs the three routes `rounds` times over `rows` rows; prints each run and writes the medians' table into docs/benchmarks.md. */
export async function runClusterBench(rows: number, rounds: number, root: string, write: boolean, cli: string): Promise<void> {
  const lines: string[] = [];
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
    const version = String(await scalar(backends[0]!, 'SELECT VERSION()'));
    const routes = ['direct', 'front', 'LOAD DATA'] as const;
    const loads: number[] = [];
    const ms: Record<string, number[]> = { direct: [], front: [], 'LOAD DATA': [] };
    const sums: Record<string, string> = {};
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < routes.length; k++) {
        const route = routes[(k + round) % routes.length]!;
        for (const b of backends) await b.query('TRUNCATE TABLE f.us');
        // Each run is a new load: its bookkeeping (on the front and the backends) is dropped with the rows.
        const load1 = await session.quietStart(`cluster: ${route}`);
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
        for (const b of backends) counts.push(`${await scalar(b, 'SELECT COUNT(*) FROM f.us')}/${await checksumOf(b, 'f.us')}`);
        if (sums[route] === undefined) sums[route] = counts.join(' ');
        if (counts.join(' ') !== sums['direct'] && sums['direct'] !== undefined) throw new FlatloadError('INTERNAL', `--route ${route} left ${counts.join(' ')} (COUNT/CHECKSUM per backend), direct left ${sums['direct']}`);
        ms[route]!.push(elapsed);
        loads.push(load1);
        process.stdout.write(`round ${round + 1}: ${route === 'LOAD DATA' ? "front's own LOAD DATA" : `flatload --route ${route}`}: ${(elapsed / 1000).toFixed(2)} s, per backend COUNT/CHECKSUM ${counts.join(' ')} [load ${load1.toFixed(2)} at start]\n`);
      }
    }
    for (const b of backends) await b.end();
    const d = median(ms['direct']!);
    for (const route of routes) {
      const m = median(ms[route]!);
      const runs = `[${(Math.min(...ms[route]!) / 1000).toFixed(2)}–${(Math.max(...ms[route]!) / 1000).toFixed(2)}] (${ms[route]!.map((x) => (x / 1000).toFixed(2)).join(', ')})`;
      process.stdout.write(`median ${route}: ${(m / 1000).toFixed(2)} s ${runs}, ${Math.round(rows / (m / 1000)).toLocaleString('en-US')} rows/s, ${(m / d).toFixed(1)}x direct's time\n`);
      lines.push(`| ${route === 'LOAD DATA' ? "the front's own LOAD DATA LOCAL (one statement)" : `flatload --route ${route}`} | ${(m / 1000).toFixed(2)} ${runs} | ${Math.round(rows / (m / 1000)).toLocaleString('en-US')} | ${(m / d).toFixed(1)}× |`);
    }
    const text = `## Spider: direct routing against the front

Produced by \`npm run bench -- --cluster --rows ${rows} --repeat ${rounds}\` (${new Date().toISOString().slice(0, 10)}). Machine: ${machineDescription(version)}.

A throwaway Spider front and 2 backend servers on loopback (dev/spider.ts), \`user_summary\` as a Spider table
HASH(user_id) over 2 partitions, one per backend; ${rows.toLocaleString('en-US')} generated rows in random order. Each run starts with
the backend tables emptied; ${rounds} rounds in rotating order, medians; after every run each backend's COUNT(*) and CHECKSUM TABLE
must equal what direct routing left. The front's own LOAD DATA is what the \`mariadb\` client does given the front table.

Load average at each run's start: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}.

| route | median s [min–max] (${rounds} rounds, in order) | rows/s | × direct's time |
|---|---:|---:|---:|
${lines.join('\n')}

Rows per backend (COUNT(*)/CHECKSUM TABLE, the same after every run): ${(sums['direct'] ?? '').split(' ').map((c, i) => `backend ${i + 1} ${c}`).join(', ')}.
`;
    process.stdout.write(`\n${text}\n`);
    if (write) writeDocSection(join(root, 'docs/benchmarks.md'), 'cluster', text);
  } finally {
    await spider.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
