import { FlatloadError } from '../src/errors/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileColumns, generateToFile, type FixtureTable } from '../fixtures/generate.js';
import type { BenchResult } from '../src/bench/result.js';
import { writeDocSection } from './doc.js';
import { session } from './quiet.js';
import { measure } from './measure.js';
import { machineDescription } from './report.js';
import { spawnSync } from 'node:child_process';
import { findBinary } from '../src/devserver/server.js';

const FIXTURES: FixtureTable[] = ['user_summary', 'purchases_index'];

function markdown(results: BenchResult[], rows: number, inputBytes: number): string {
  const lines = [
    '| variant | strategy | rows | seconds | rows/s | MB/s | on-disk MB | input/on-disk |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    const ok = r.ok && r.rows === rows;
    lines.push(
      `| ${r.variant} | ${r.strategy}${r.planned ? '' : ' (forced)'} | ${ok ? r.rows.toLocaleString('en-US') : `FAILED: ${r.error ?? `${r.rows} rows`}`} | ${ok ? r.seconds.toFixed(2) : ''} | ${ok ? Math.round(r.rowsPerSec).toLocaleString('en-US') : ''} | ${ok ? r.mbPerSec.toFixed(1) : ''} | ${r.onDiskBytes === null ? 'n/a' : (r.onDiskBytes / 1e6).toFixed(1)} | ${r.ratio === null ? 'n/a' : r.ratio.toFixed(2)} |`,
    );
  }
  lines.push('', `Input: ${(inputBytes / 1e6).toFixed(1)} MB. On-disk: ${[...new Set(results.map((r) => r.onDiskSource).filter(Boolean))].join('; ')}.`);
  return lines.join('\n');
}

function serverVersion(): string {
  const bin = findBinary('mariadbd');
  const out = bin ? spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout : '';
  return /Ver\s+(\S+)/.exec(out)?.[1] ?? 'MariaDB';
}

/**
 * `npm run bench -- --engines`: `flatload bench` on the user_summary and
 * purchases_index fixtures (every engine variant the server offers, the
 * planner's strategy for each), with a chart per fixture, written into
 * docs/engines.md between markers so the prose around them stays.
 */
export async function runEnginesBench(rows: number, root: string, write: boolean, cli: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flatload-engines-'));
  try {
    for (const table of FIXTURES) {
      const gen = { table, rows, seed: 11 };
      const file = join(dir, `${table}.tsv`);
      await generateToFile(file, gen);
      const chart = join(root, 'docs', `engines-${table}.svg`);
      const columns = table === 'user_summary' ? [] : ['--columns', fileColumns(gen).join(',')];
      process.stderr.write(`flatload bench ${table}.tsv (${rows.toLocaleString('en-US')} rows) …\n`);
      const load1 = await session.quietStart(`engines: ${table}`);
      process.stderr.write(`  [load ${load1.toFixed(2)} at start]\n`);
      const m = await measure(process.execPath, [cli, 'bench', file, '--fixture', table, '--json', '--chart', write ? chart : join(dir, 'chart.svg'), ...columns], { env: process.env });
      if (m.code !== 0 && !m.stdout.trim()) throw new FlatloadError('INTERNAL', `flatload bench ${table} failed:\n${m.stderr}`);
      const out = JSON.parse(m.stdout) as { inputBytes: number; results: BenchResult[] };
      const body = `### ${table}, ${rows.toLocaleString('en-US')} rows

Produced by \`npm run bench -- --engines --rows ${rows}\` (${new Date().toISOString().slice(0, 10)}), which runs
\`flatload bench ${table}.tsv --fixture ${table}${columns.length ? ` --columns ${columns[1]}` : ''} --chart docs/engines-${table}.svg\`
on a throwaway MariaDB (2 GiB buffer pool), one run per variant (load average ${load1.toFixed(2)} at its start). Machine: ${machineDescription(serverVersion())}.

${markdown(out.results, rows, out.inputBytes)}

![rows/s, on-disk MB and input/on-disk ratio per variant](engines-${table}.svg)

![rows loaded over time, one line per variant](engines-${table}.timeline.svg)`;
      process.stdout.write(`\n${body}\n`);
      if (write) writeDocSection(join(root, 'docs/engines.md'), `engines:${table}`, body);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
