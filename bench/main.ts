#!/usr/bin/env node
/**
 * `npm run bench`: flatload against what a DBA would otherwise do, per
 * scenario (comparison.ts); prints tables of medians and ratios and writes
 * docs/benchmarks.md. Figures are published only from a quiet machine
 * (quiet.ts): the bench waits for one before it starts and refuses to write
 * docs after a run that started busy. Usage: USAGE below (also `--help`).
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FlatloadError, formatError } from '../src/errors/index.js';
import { runComparison, SCENARIOS, type ScenarioId } from './comparison.js';
import { runMemoryBench } from './memory.js';
import { runStrategiesBench } from './strategies.js';
import { runEnginesBench } from './engines.js';
import { runClusterBench } from './spiderRoute.js';
import { runExportBench } from './exportBench.js';
import { resolveBaseline, type Baseline } from './competitors.js';
import { estimateSeconds, type Mode } from './estimate.js';
import { formatEstimate, session, waitQuiet } from './quiet.js';
import { runScaleBench, scalePreamble } from './scale.js';
import { compressedPreamble, runCompressedBench } from './compressed.js';

const USAGE = `usage: npm run bench -- [MODE] [OPTIONS]

modes (one at a time; the default compares flatload with what a DBA would otherwise do):
  (default)      [--rows 3000000] [--jobs 2] [--only innodb,innodb-small,myrocks,user3] [--baseline DIR]
  --strategies   [--rows 1000000]   every strategy per scenario and the naive loads, the planner's marked (docs/strategies.md)
  --engines      [--rows 1000000]   flatload bench on two fixtures: every engine variant, sizes, charts (docs/engines.md)
  --cluster      [--rows 300000]    a Spider table: direct routing against the front
  --export       [--rows 2000000] [--jobs 2] [--buffer-pool 128M] [--pin] [--baseline DIR]
                                    a directory of four tables: mariadb-import --use-threads=N against flatload load DIR --jobs N
                                    (--pin: the server on the first core, every client on the others)
  --memory       [--memory-gb 2]    peak RSS on a multi-GB file
  --scale        [--rows 200000000] [--naive-seconds 300] [--cache DIR]
                                    the seed's experiment: a random-order user_summary file (generated once, cached under
                                    --cache, default the OS tmp dir) into a 128 MiB buffer pool; flatload --jobs 2 beside
                                    the client on a copy sorted beforehand and the naive client's first --naive-seconds
  --compressed   [--rows 10000000] [--naive-seconds 120] [--jobs 2] [--cache DIR]
                                    the same generated file gzipped (gzip -6, cached beside it): flatload on the .gz
                                    against flatload on the plain file (time ratio, peak --tmpdir, RSS, CPU), and once
                                    zcat FILE | mariadb … LOAD DATA LOCAL INFILE '/dev/stdin' for its first --naive-seconds

options:
  --repeat N         rounds; competitors rotate every round (default 5; --scale 1)
  --baseline DIR     another built checkout (DIR/dist/src/cli/main.js): its flatload runs as one more competitor,
                     "flatload@<short hash>", with the same flags in the same rounds; new/old time printed
  --no-write         print the tables, write no docs
  --force            write docs even after a run that started with the load average at or above 1.0 (the text
                     then says so), and start after --wait-quiet without a quiet machine
  --wait-quiet S     wait up to S seconds (default 120) for the 1-minute load average to drop under 1.0,
                     before the bench and again before each measured run
  -h, --help         this text

The 1-minute load average is printed at each run's start and beside every figure; every table states its
rounds, median and min–max spread. An estimated duration is printed before anything starts.
`;

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string' },
    jobs: { type: 'string', default: '2' },
    only: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    memory: { type: 'boolean', default: false },
    strategies: { type: 'boolean', default: false },
    engines: { type: 'boolean', default: false },
    cluster: { type: 'boolean', default: false },
    'buffer-pool': { type: 'string', default: '2G' },
    export: { type: 'boolean', default: false },
    pin: { type: 'boolean', default: false },
    repeat: { type: 'string' },
    scale: { type: 'boolean', default: false },
    compressed: { type: 'boolean', default: false },
    'naive-seconds': { type: 'string' },
    cache: { type: 'string' },
    baseline: { type: 'string' },
    force: { type: 'boolean', default: false },
    'wait-quiet': { type: 'string', default: '120' },
    'memory-gb': { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function positive(name: string, value: string): number {
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isSafeInteger(n) || n < 1) throw new FlatloadError('USAGE', `--${name}: "${value}" is not a positive whole number`);
  return n;
}

function modeOf(): Mode | 'compressed' {
  const chosen = (['strategies', 'cluster', 'engines', 'export', 'memory', 'scale', 'compressed'] as const).filter((m) => args[m]);
  if (chosen.length > 1) throw new FlatloadError('USAGE', `one mode at a time: ${chosen.map((m) => `--${m}`).join(', ')}`);
  return chosen[0] ?? 'comparison';
}

/** --memory is sized by --memory-gb, not rows. */
const DEFAULT_ROWS: Record<Mode | 'compressed', string> = { comparison: '3000000', strategies: '1000000', cluster: '300000', engines: '1000000', export: '2000000', memory: '1', scale: '200000000', compressed: '10000000' };

/** What a mode prints before it waits for a quiet machine: its estimated duration (--scale and --compressed also what their cache holds and the disk they need). */
function preamble(mode: Mode | 'compressed', p: { rows: number; repeat: number; naiveSeconds: number; cacheDir: string; only: ScenarioId[]; baseline: boolean }): string {
  if (mode === 'compressed') return compressedPreamble(p);
  if (mode === 'scale') return scalePreamble(p);
  const est = estimateSeconds({ mode, rows: p.rows, repeat: p.repeat, only: p.only, baseline: p.baseline, naiveSeconds: p.naiveSeconds, memoryGB: Number(args['memory-gb']) });
  const what = mode === 'memory' ? `${args['memory-gb']} GB, one run per input` : `${p.rows.toLocaleString('en-US')} rows, ${mode === 'engines' ? 'one run per variant' : `${p.repeat} round${p.repeat === 1 ? '' : 's'}`}`;
  return `estimated duration: ${formatEstimate(est)} (${mode}, ${what}; rough, from per-row rates on a 2-core machine)`;
}

async function main(): Promise<void> {
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  const mode = modeOf();
  const repeat = positive('repeat', args.repeat ?? (mode === 'scale' ? '1' : '5'));
  const rows = positive('rows', args.rows ?? DEFAULT_ROWS[mode]);
  let baseline: Baseline | undefined;
  if (args.baseline !== undefined) {
    if (mode !== 'comparison' && mode !== 'export') throw new FlatloadError('USAGE', '--baseline works in the default comparison and with --export');
    baseline = resolveBaseline(resolve(args.baseline));
    process.stderr.write(`baseline: ${baseline.name} (${baseline.cli})\n`);
  }
  const only = (args.only ?? SCENARIOS.join(',')).split(',').map((s) => s.trim());
  for (const s of only) if (!(SCENARIOS as readonly string[]).includes(s)) throw new FlatloadError('USAGE', `--only: "${s}" is not one of ${SCENARIOS.join(', ')}`);
  const naiveSeconds = positive('naive-seconds', args['naive-seconds'] ?? (mode === 'compressed' ? '120' : '300'));
  const cacheDir = args.cache ?? join(tmpdir(), 'flatload-bench-cache');
  process.stderr.write(`${preamble(mode, { rows, repeat, naiveSeconds, cacheDir, only: only as ScenarioId[], baseline: baseline !== undefined })}\n`);
  session.force = args.force;
  session.waitSeconds = Number(args['wait-quiet']);
  const load = await waitQuiet({ waitSeconds: Number(args['wait-quiet']), force: args.force });
  process.stderr.write(`1-minute load average at start: ${load.toFixed(2)}\n`);
  if (mode === 'compressed') {
    await runCompressedBench({ rows, repeat, naiveSeconds, cacheDir, write: !args['no-write'], root, cli, jobs: positive('jobs', args.jobs) });
    return;
  }
  if (mode === 'scale') {
    await runScaleBench({ rows, repeat, naiveSeconds, cacheDir, write: !args['no-write'], root, cli, jobs: positive('jobs', args.jobs) });
    return;
  }
  if (args.strategies) {
    await runStrategiesBench(rows, root, !args['no-write'], cli, repeat);
    return;
  }
  if (args.cluster) {
    await runClusterBench(rows, repeat, root, !args['no-write'], cli);
    return;
  }
  if (args.engines) {
    await runEnginesBench(rows, root, !args['no-write'], cli);
    return;
  }
  if (args.export) {
    await runExportBench({ rows, repeat, jobs: positive('jobs', args.jobs), write: !args['no-write'], root, cli, bufferPool: args['buffer-pool'], pin: args.pin, ...(baseline ? { baseline } : {}) });
    return;
  }
  if (args.memory) {
    await runMemoryBench(Number(args['memory-gb']), root, !args['no-write']);
    return;
  }
  await runComparison({
    rows,
    repeat,
    jobs: positive('jobs', args.jobs),
    only: only as ScenarioId[],
    write: !args['no-write'],
    root,
    cli,
    ...(baseline ? { baseline } : {}),
  });
}

try {
  await main();
  if (session.refused.length) {
    process.stderr.write(`not written (the machine was not quiet): ${session.refused.join(', ')}\n`);
    process.exitCode = 1;
  }
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
