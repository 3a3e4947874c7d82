#!/usr/bin/env node
/**
 * The client's CPU in a key-ordered load, this build against other built
 * checkouts, or one build's flag sets against each other (`--flags`, e.g.
 * `--flags='--jobs 1' --flags='--jobs 2'`: what a second stream costs the
 * server): each loads the same user_summary file (random key order) into a
 * throwaway server with a 128 MiB buffer pool, with `--jobs 2` unless flag
 * sets are given, in rotating rounds, dirty pages settled and a quiet
 * machine waited for (up to --wait-quiet seconds for a load average under
 * 1.0) before each run. Prints per build and flag set the medians and
 * spreads of client CPU (GNU time, user + system; per GB of input), peak
 * RSS, wall time, the server's CPU, InnoDB's page writes and the table's
 * .ibd file on disk (blocks allocated). `--pool 2G`: a
 * buffer pool the table fits in instead.
 *
 *   node --import tsx fixtures/generate.ts --table user_summary --rows 10M --out /tmp/us10m.tsv
 *   git worktree add --detach /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build:dev)
 *   npm run build:dev && node dist/bench/research/clientCpu.js /tmp/us10m.tsv --baseline /tmp/before [--repeat 5]
 *   node dist/bench/research/clientCpu.js /tmp/us10m.tsv --flags='--jobs 1' --flags='--jobs 2'
 *   node dist/bench/research/clientCpu.js /tmp/us10m.tsv --pool 2G --flags='--jobs 2 --order chunk' --flags='--jobs 2 --order key'
 */
import { createReadStream, existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Connection } from 'mysql2/promise';
import { FlatloadError } from '../../src/errors/index.js';
import { globalStatus } from '../clusterSupport.js';
import { flatloadLoad } from '../competitors.js';
import { formatSpread, session } from '../quiet.js';
import { inRounds, loadRange, settledRun, type Series } from '../rounds.js';
import { freshRun, onDisk, onSmallPoolServer } from '../scale.js';

const DB = 'flatload_cpu';

interface Build {
  name: string;
  cli: string;
  /** flatload's flags besides the table and --tmpdir. */
  flags: string[];
}

async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const piece of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let at = piece.indexOf(10); at !== -1; at = piece.indexOf(10, at + 1)) n++;
  }
  return n;
}

/** Every build with every flag set (one flag set when none is given: `--jobs N`). */
function builds(baselines: string[], flagSets: string[], jobs: string): Build[] {
  const clis = [{ name: 'this build', cli: fileURLToPath(new URL('../../src/cli/main.js', import.meta.url)) }];
  for (const dir of baselines) {
    const cli = join(resolve(dir), 'dist/src/cli/main.js');
    if (!existsSync(cli)) throw new FlatloadError('USAGE', `${cli} does not exist: build that checkout first (npm run build:dev)`);
    clis.push({ name: resolve(dir), cli });
  }
  const sets = flagSets.length > 0 ? flagSets.map((f) => f.split(' ').filter((w) => w !== '')) : [['--jobs', jobs]];
  return clis.flatMap((c) => sets.map((flags) => ({ name: flagSets.length > 0 ? `${c.name} ${flags.join(' ')}` : c.name, cli: c.cli, flags })));
}

/** InnoDB's page writes so far: the server's I/O work, which CPU spent waiting on its latches does not add to. */
async function pagesFlushed(admin: Connection): Promise<number> {
  return Number((await globalStatus(admin, ['Innodb_buffer_pool_pages_flushed']))['Innodb_buffer_pool_pages_flushed']);
}

function row(s: Series<Build>, gb: number, flushed: number[], disk: number[]): string {
  const num = (xs: Array<number | null>): number[] => xs.filter((x): x is number => x !== null);
  const cpu = num(s.runs.map((r) => r.measured.clientCpuSeconds));
  const rss = num(s.runs.map((r) => r.measured.clientPeakRssBytes)).map((b) => b / 2 ** 20);
  const server = num(s.runs.map((r) => r.measured.serverCpuSeconds));
  const failed = s.runs.find((r) => !r.ok);
  if (failed) return `| ${s.item.name} | failed: ${failed.note} | | | | | | | |`;
  return `| ${s.item.name} | ${formatSpread(cpu)} | ${formatSpread(cpu.map((c) => c / gb), 's/GB')} | ${formatSpread(rss, 'MiB')} | ${formatSpread(s.runs.map((r) => r.seconds))} | ${formatSpread(server)} | ${formatSpread(flushed.map((p) => p / 1000), 'k pages')} | ${formatSpread(disk.map((b) => b / 1e6), 'MB')} | ${loadRange(s.runs)} |`;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { baseline: { type: 'string', multiple: true, default: [] }, flags: { type: 'string', multiple: true, default: [] }, repeat: { type: 'string', default: '5' }, jobs: { type: 'string', default: '2' }, pool: { type: 'string', default: '128M' }, 'wait-quiet': { type: 'string', default: '300' } } });
  session.waitSeconds = Number(values['wait-quiet']);
  const file = positionals[0];
  if (!file) throw new FlatloadError('USAGE', 'usage: clientCpu.js FILE [--baseline DIR]... [--flags FLAGS]... [--repeat 5] [--jobs 2] [--pool 128M] [--wait-quiet 300]');
  const gb = statSync(file).size / 1e9;
  const records = await countLines(file);
  const list = builds(values.baseline, values.flags, values.jobs);
  const tmp = mkdtempSync(join(tmpdir(), 'flatload-cpu-'));
  const flushed = new Map<Build, number[]>(list.map((b) => [b, []]));
  const disk = new Map<Build, number[]>(list.map((b) => [b, []]));
  await onSmallPoolServer(DB, values.pool, tmp, async ({ server, admin, target }) => {
    const series = await inRounds(list, Number(values.repeat), (b) =>
      settledRun({
        label: b.name,
        admin,
        serverPid: server.pid,
        prepare: () => freshRun(admin, DB, join(tmp, 'spill')),
        async run() {
          const before = await pagesFlushed(admin);
          const m = await flatloadLoad(b.cli, target, file, [...b.flags, '--tmpdir', join(tmp, 'spill')]);
          flushed.get(b)!.push((await pagesFlushed(admin)) - before);
          disk.get(b)!.push((await onDisk(admin, DB, 'user_summary')).fileBytes ?? Number.NaN);
          return m;
        },
        async check() {
          const [r] = await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.user_summary`);
          const n = Number((r as Array<{ n: unknown }>)[0]!.n);
          return n === records ? '' : `${n} rows where the file has ${records}`;
        },
      }).then((r) => {
        process.stderr.write(`${b.name}: ${r.ok ? `${r.seconds.toFixed(2)} s, ${r.measured.clientCpuSeconds?.toFixed(2)} s of client CPU` : r.note} [load ${r.load1.toFixed(2)} at start]\n`);
        return r;
      }),
    );
    console.log(`${file}: ${(gb * 1000).toFixed(1)} MB, ${records} records, ${values.flags.length > 0 ? 'flags as named' : `--jobs ${values.jobs}`}, ${values.pool} buffer pool, ${values.repeat} rounds\n`);
    console.log('| build | client CPU | per GB | peak RSS | wall | server CPU | pages written during the load | on disk | load average at the starts |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const s of series) console.log(row(s, gb, flushed.get(s.item)!, disk.get(s.item)!));
    if (session.busyNote()) console.log(session.busyNote());
  });
}

await main();
