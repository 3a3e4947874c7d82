import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { ddl, fileColumns, generateToFile, type FixtureTable } from '../../fixtures/generate.js';
import { startThrowawayServer, type ThrowawayServer } from '../devserver/server.js';
import { writeDocSection } from './doc.js';
import { measure } from './measure.js';

interface Scenario {
  name: string;
  table: FixtureTable;
  engine: string;
  /** Rows already in the table before the measured load (a non-empty table). */
  preload?: boolean;
  sorted?: boolean;
  /** Flag sets to compare; the first is the planner's own choice (no forcing flags). */
  variants: string[][];
}

const SCENARIOS: Scenario[] = [
  { name: 'user_summary, empty InnoDB', table: 'user_summary', engine: 'InnoDB', variants: [[], ['--strategy', 'insert'], ['--sort-chunks', 'on'], ['--jobs', '1']] },
  { name: 'user3, id absent, empty InnoDB', table: 'user3', engine: 'InnoDB', variants: [[], ['--strategy', 'load-data'], ['--strategy', 'insert'], ['--allow-ddl']] },
  { name: 'sbtest, id absent, secondary index', table: 'sbtest', engine: 'InnoDB', variants: [[], ['--strategy', 'load-data'], ['--allow-ddl'], ['--strategy', 'insert']] },
  { name: 'purchases_index, 3 secondary indexes', table: 'purchases_index', engine: 'InnoDB', variants: [[], ['--strategy', 'load-data'], ['--allow-ddl'], ['--strategy', 'insert']] },
  { name: 'user_summary, non-empty InnoDB (append)', table: 'user_summary', engine: 'InnoDB', preload: true, variants: [[], ['--strategy', 'insert'], ['--jobs', '1']] },
  { name: 'user_summary, empty MyRocks', table: 'user_summary', engine: 'ROCKSDB', variants: [[], ['--strategy', 'insert']] },
  { name: 'user_summary sorted, empty MyRocks', table: 'user_summary', engine: 'ROCKSDB', sorted: true, variants: [[], ['--jobs', '1'], ['--strategy', 'insert']] },
  { name: 'user_summary, empty Aria', table: 'user_summary', engine: 'Aria', variants: [[], ['--strategy', 'insert']] },
];

/**
 * `npm run bench -- --strategies`: per scenario, flatload's own plan and the
 * strategies it did not choose, each on a fresh table, side by side. The
 * planner's choice should be the fastest or within 10% of it.
 */
export async function runStrategiesBench(rows: number, root: string, write: boolean, cli: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flatload-strat-'));
  let server: ThrowawayServer | undefined;
  try {
    let url = process.env['DATABASE_URL'];
    if (!url) {
      server = await startThrowawayServer({ innodbBufferPoolSize: '4G', innodbLogFileSize: '1G' });
      url = server.url;
    }
    const admin = await mysql.createConnection({ uri: url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    await admin.query('CREATE DATABASE IF NOT EXISTS flatload_strat');
    const lines: string[] = [];
    for (const sc of SCENARIOS) {
      const [eng] = await admin.query('SHOW ENGINES');
      if (!(eng as Array<{ Engine: string; Support: string }>).some((e) => e.Engine.toUpperCase() === sc.engine.toUpperCase() && e.Support !== 'NO')) continue;
      const gen = { table: sc.table, rows, seed: 4, sorted: sc.sorted ?? false };
      const file = join(dir, `${sc.table}${sc.sorted ? '-sorted' : ''}.tsv`);
      await generateToFile(file, gen);
      const preFile = sc.preload ? join(dir, `${sc.table}-pre.tsv`) : undefined;
      if (preFile) await generateToFile(preFile, { table: sc.table, rows, seed: 99 });
      const columns = sc.table === 'user_summary' ? [] : ['--columns', fileColumns(gen).join(',')];
      process.stderr.write(`${sc.name} (${rows.toLocaleString('en-US')} rows):\n`);
      const results: Array<{ flags: string[]; seconds: number; ok: boolean; strategy: string; note: string }> = [];
      for (const flags of sc.variants) {
        await admin.query(`DROP TABLE IF EXISTS flatload_strat.t; DROP TABLE IF EXISTS flatload_strat.flatload_jobs; USE flatload_strat; ${ddl(sc.table).replace(/CREATE TABLE \S+/, 'CREATE TABLE t')} ENGINE=${sc.engine}`);
        for (const t of ['flatload_chunks', 'flatload_chunks_rocksdb']) await admin.query(`DROP TABLE IF EXISTS flatload_strat.${t}`);
        if (preFile) await admin.query(`LOAD DATA INFILE ? INTO TABLE flatload_strat.t${columns.length ? ` (${fileColumns(gen).join(',')})` : ''}`, [preFile]);
        await new Promise((r) => setTimeout(r, 1000));
        const m = await measure(process.execPath, [cli, 'load', file, '--table', 'flatload_strat.t', '--progress', 'none', '--json', '--skip-size-report', ...columns, ...flags], {
          env: { ...process.env, DATABASE_URL: url },
        });
        let strategy = '?';
        let note = '';
        try {
          const rep = JSON.parse(m.stdout) as { strategy: string; rows: number; jobs: number };
          strategy = `${rep.strategy}, ${rep.jobs} conn`;
          if (rep.rows !== rows) note = `${rep.rows} rows`;
        } catch {
          note = (m.stderr.trim().split('\n').pop() ?? '').slice(0, 80);
        }
        const ok = m.code === 0 && note === '';
        results.push({ flags, seconds: m.wallSeconds, ok, strategy, note });
        process.stderr.write(`  ${flags.length ? flags.join(' ') : '(planner)'}: ${ok ? `${m.wallSeconds.toFixed(2)} s` : `FAILED ${note}`}\n`);
      }
      const best = Math.min(...results.filter((r) => r.ok).map((r) => r.seconds));
      const planned = results[0]!;
      lines.push(`### ${sc.name}`, '', '| flags | plan | seconds | rows/s | vs fastest |', '|---|---|---:|---:|---:|');
      for (const r of results) {
        const mark = r === planned ? ' **(planner)**' : '';
        lines.push(
          `| ${r.flags.length ? `\`${r.flags.join(' ')}\`` : '(none)'}${mark} | ${r.strategy} | ${r.ok ? r.seconds.toFixed(2) : 'failed'} | ${r.ok ? Math.round(rows / r.seconds).toLocaleString('en-US') : ''} | ${r.ok ? `${(r.seconds / best).toFixed(2)}×` : r.note} |`,
        );
      }
      const verdict = planned.ok && planned.seconds <= best * 1.1 ? 'the planner\'s choice is the fastest or within 10% of it' : 'the planner\'s choice is NOT within 10% of the fastest';
      lines.push('', `${verdict}.`, '');
    }
    await admin.query('DROP DATABASE flatload_strat');
    await admin.end();
    const text = `## Strategies side by side (flatload itself)

Produced by \`npm run bench -- --strategies --rows ${rows}\` (${new Date().toISOString().slice(0, 10)}): for each scenario a fresh
table, flatload with no forcing flags (the planner's choice) and then with flags that force the
alternatives, on one throwaway MariaDB 10.11. Times include flatload's start-up and the final
commit (and, for plans that defer work to the end, the index builds).

${lines.join('\n')}`;
    process.stdout.write(`\n${text}\n`);
    if (write) writeDocSection(join(root, 'docs/strategies.md'), 'strategies', text);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (server) await server.stop();
  }
}
