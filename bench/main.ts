#!/usr/bin/env node
/**
 * `npm run bench`: flatload against what a DBA would otherwise do, per
 * scenario (comparison.ts); prints tables of medians and ratios and writes
 * docs/benchmarks.md. Absolute times on a shared machine are noise; the
 * ratios between tools in the same run are the result. Usage: USAGE below (also `--help`).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FlatloadError, formatError } from '../src/errors/index.js';
import { runComparison, SCENARIOS, type ScenarioId } from './comparison.js';
import { runMemoryBench } from './memory.js';
import { runStrategiesBench } from './strategies.js';
import { runEnginesBench } from './engines.js';
import { runClusterBench } from './spiderRoute.js';
import { runExportBench } from './exportBench.js';

const USAGE = `usage:
  npm run bench -- [--rows 3000000] [--repeat 3] [--jobs 2] [--only innodb,innodb-small,myrocks,user3] [--no-write]
  npm run bench -- --memory [--memory-gb 2]   (peak RSS on a multi-GB file)
  npm run bench -- --strategies [--rows 1000000] [--repeat 3]  (every strategy per scenario and the naive loads, median of 3, the planner's marked)
  npm run bench -- --engines [--rows 1000000]     (flatload bench on two fixtures: every engine variant, sizes, charts → docs/engines.md)
  npm run bench -- --cluster [--rows 300000] [--repeat 3]  (a Spider table: direct routing against the front → docs/benchmarks.md)
  npm run bench -- --export [--rows 2000000] [--jobs 2] [--buffer-pool 128M] [--pin]   (a directory of four tables: mariadb-import --use-threads=N against flatload load DIR --jobs N; --pin: the server on the first core, every client on the others)
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
    repeat: { type: 'string', default: '3' },
    'memory-gb': { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function positive(name: string, value: string): number {
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isSafeInteger(n) || n < 1) throw new FlatloadError('USAGE', `--${name}: "${value}" is not a positive whole number`);
  return n;
}

async function main(): Promise<void> {
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  const repeat = positive('repeat', args.repeat);
  if (args.strategies) {
    await runStrategiesBench(positive('rows', args.rows ?? '1000000'), root, !args['no-write'], cli, repeat);
    return;
  }
  if (args.cluster) {
    await runClusterBench(positive('rows', args.rows ?? '300000'), repeat, root, !args['no-write'], cli);
    return;
  }
  if (args.engines) {
    await runEnginesBench(positive('rows', args.rows ?? '1000000'), root, !args['no-write'], cli);
    return;
  }
  if (args.export) {
    await runExportBench({ rows: positive('rows', args.rows ?? '2000000'), repeat, jobs: positive('jobs', args.jobs), write: !args['no-write'], root, cli, bufferPool: args['buffer-pool'], pin: args.pin });
    return;
  }
  if (args.memory) {
    await runMemoryBench(Number(args['memory-gb']), root, !args['no-write']);
    return;
  }
  const only = (args.only ?? SCENARIOS.join(',')).split(',').map((s) => s.trim());
  for (const s of only) if (!(SCENARIOS as readonly string[]).includes(s)) throw new FlatloadError('USAGE', `--only: "${s}" is not one of ${SCENARIOS.join(', ')}`);
  await runComparison({
    rows: positive('rows', args.rows ?? '3000000'),
    repeat,
    jobs: positive('jobs', args.jobs),
    only: only as ScenarioId[],
    write: !args['no-write'],
    root,
    cli,
  });
}

try {
  await main();
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
