#!/usr/bin/env node
/**
 * MariaDB's bulk path for an empty InnoDB table against what flatload does.
 * From 10.6 the first insert of a transaction into an empty table, with
 * unique_checks=0 and foreign_key_checks=0, takes a table lock and writes one
 * undo record; from 10.7 it builds the indexes by sorting at COMMIT
 * (docs/rules.md#mariadb-empty-table-bulk-insert). flatload uses it for a
 * table like `user3` (its planner's rules/innodb.ts says when). This measures
 * it: the `mariadb` client's one LOAD DATA LOCAL with and without the bulk
 * path, of the random-order file and of a copy sorted by its first column,
 * and flatload `--jobs 2` with its defaults and with `--bulk-insert off`
 * (per-chunk transactions), into `user_summary` or `user3` (whose AUTO_INCREMENT id the
 * file lacks), in rotating rounds on a settled server, each run started with
 * the load average under 1.0 (waited for up to --wait-quiet seconds).
 * Innodb_bulk_operations, read before and after each run, tells whether the
 * run took the bulk path.
 *
 *   node --import tsx fixtures/generate.ts --table user_summary --rows 3M --out /tmp/us3m.tsv
 *   npm run build:dev && node dist/bench/research/bulkInsert.js /tmp/us3m.tsv [--table user3] [--pool 2G] [--repeat 5]
 *   node dist/bench/research/bulkInsert.js /tmp/us3m.tsv --pool 128M --without-naive
 *   node --import tsx fixtures/generate.ts --table purchases_index --rows 1M --out /tmp/pi1m.tsv
 *   node dist/bench/research/bulkInsert.js /tmp/pi1m.tsv --table purchases_index
 *
 * `--without-naive` leaves out the client's plain load of the random-order
 * file (past a small pool it takes ten times the others; benchmarks.md has it).
 * `--parts N` adds the file cut into N parts at line ends, loaded as N LOAD
 * DATA LOCAL statements in one bulk transaction (why flatload sends the whole
 * input as one statement).
 * `--duplicates` instead loads the file's first 1,000 records with the 10th
 * again after them and 5 more, once each way into each table, and prints
 * what the client said and how many rows stayed (1,005 are distinct).
 *
 *   node dist/bench/research/bulkInsert.js /tmp/us3m.tsv --duplicates
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Connection } from 'mysql2/promise';
import { ddl, fileColumns } from '../../fixtures/generate.js';
import { FlatloadError } from '../../src/errors/index.js';
import { globalStatus } from '../clusterSupport.js';
import { USER3_COLUMNS } from '../comparison.js';
import { clientLoad, flatloadLoad, loadStatement, type Session, type Target } from '../competitors.js';
import type { Measured } from '../measure.js';
import { formatSpread, session } from '../quiet.js';
import { inRounds, loadRange, settledRun, type Series } from '../rounds.js';
import { countRows, onSmallPoolServer } from '../scale.js';

const DB = 'flatload_bulk';
/** The session the bulk path needs, and its one transaction. */
const BULK: Session = { pre: ['SET SESSION unique_checks = 0', 'SET SESSION foreign_key_checks = 0', 'START TRANSACTION'], post: ['COMMIT'] };

interface Item {
  name: string;
  run: (t: Target) => Promise<Measured>;
}

function items(file: string, sorted: string, naive: boolean, parts: string[]): Item[] {
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const [last, ...first] = [...parts].reverse();
  return [
    ...(naive ? [{ name: 'mariadb client, one LOAD DATA LOCAL of the file', run: (t: Target) => clientLoad(t, file) }] : []),
    { name: 'mariadb client, the same in the bulk path (unique_checks=0, foreign_key_checks=0, one transaction)', run: (t) => clientLoad(t, file, BULK) },
    ...(last
      ? [{ name: `mariadb client, the file as ${parts.length} LOAD DATA LOCAL statements in one bulk transaction`, run: (t: Target) => clientLoad(t, last, { pre: [...BULK.pre!, ...first.reverse().map((p) => loadStatement(t, p))], post: BULK.post! }) }]
      : []),
    { name: 'mariadb client, one LOAD DATA LOCAL of a copy sorted by user_id', run: (t) => clientLoad(t, sorted) },
    { name: 'mariadb client, the sorted copy in the bulk path', run: (t) => clientLoad(t, sorted, BULK) },
    { name: 'flatload load FILE --jobs 2', run: (t) => flatloadLoad(cli, t, file, ['--jobs', '2']) },
    { name: 'flatload load FILE --jobs 2 --bulk-insert off', run: (t) => flatloadLoad(cli, t, file, ['--jobs', '2', '--bulk-insert', 'off']) },
  ];
}

async function bulkOperations(admin: Connection): Promise<number> {
  return Number((await globalStatus(admin, ['Innodb_bulk_operations']))['Innodb_bulk_operations']);
}

type Table = 'user_summary' | 'user3' | 'purchases_index';

/** The target that loads `table` (user3's and purchases_index's list the file's columns: the AUTO_INCREMENT key is not one). */
function targetOf(server: Target, table: Table): Target {
  const columns = table === 'user3' ? USER3_COLUMNS : table === 'purchases_index' ? fileColumns({ table, rows: 0 }) : undefined;
  return { ...server, table, ...(columns ? { columns } : {}) };
}

/** purchases_index (iibench: three secondary indexes, none UNIQUE, no key in user_id order): the client's plain load and flatload both ways. */
function purchasesItems(file: string): Item[] {
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  return [
    { name: 'mariadb client, one LOAD DATA LOCAL of the file (the server numbers rows)', run: (t) => clientLoad(t, file) },
    { name: 'flatload load FILE --jobs 2', run: (t) => flatloadLoad(cli, t, file, ['--jobs', '2']) },
    { name: 'flatload load FILE --jobs 2 --bulk-insert off', run: (t) => flatloadLoad(cli, t, file, ['--jobs', '2', '--bulk-insert', 'off']) },
  ];
}

/** An empty `table` in a new database: every run starts from the same state. */
async function freshTable(admin: Connection, table: Table): Promise<void> {
  await admin.query(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}; USE ${DB}; ${ddl(table)} ENGINE=InnoDB`);
}

/** GNU sort by the first (numeric) field, as a DBA would make the sorted copy; not timed. */
function sortedCopy(file: string, dir: string): string {
  const out = join(dir, 'sorted.tsv');
  const r = spawnSync('sort', ['-t', '\t', '-k1,1n', '-S', '25%', '-o', out, file], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
  if (r.status !== 0) throw new FlatloadError('INTERNAL', `sort failed: ${r.stderr}`);
  return out;
}

function row(s: Series<Item>, bulk: number[]): string {
  const num = (xs: Array<number | null>): number[] => xs.filter((x): x is number => x !== null);
  const failed = s.runs.find((r) => !r.ok);
  if (failed) return `| ${s.item.name} | failed: ${failed.note} | | | | |`;
  const took = bulk.every((b) => b > 0) ? 'yes' : bulk.every((b) => b === 0) ? 'no' : `${bulk.filter((b) => b > 0).length} of ${bulk.length} runs`;
  return `| ${s.item.name} | ${formatSpread(s.runs.map((r) => r.seconds))} | ${formatSpread(num(s.runs.map((r) => r.measured.serverCpuSeconds)))} | ${formatSpread(num(s.runs.map((r) => r.measured.clientCpuSeconds)))} | ${took} | ${loadRange(s.runs)} |`;
}

/** The file cut into n parts at line ends (GNU split), for n statements. */
function partsOf(file: string, dir: string, n: number): string[] {
  if (n < 2) return [];
  const prefix = join(dir, 'part.');
  const r = spawnSync('split', ['-n', `l/${n}`, '-d', '-a', '3', file, prefix], { encoding: 'utf8' });
  if (r.status !== 0) throw new FlatloadError('INTERNAL', `split failed: ${r.stderr}`);
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
}

/** The file's first 1,000 records, its 10th again, and 5 more: one duplicate key at record 1,001. */
function withDuplicate(file: string, dir: string): string {
  const lines = spawnSync('head', ['-n', '1005', file], { encoding: 'utf8', maxBuffer: 1 << 24 }).stdout.split('\n');
  const out = join(dir, 'duplicate.tsv');
  writeFileSync(out, [...lines.slice(0, 1000), lines[9], ...lines.slice(1000, 1005), ''].join('\n'));
  return out;
}

async function duplicates(admin: Connection, target: Target, file: string): Promise<void> {
  console.log('| table | load | client exit and message | rows that stayed (of 1,005 distinct) |');
  console.log('|---|---|---|---:|');
  for (const table of ['user_summary', 'user3'] as const) {
    for (const bulk of [false, true]) {
      await freshTable(admin, table);
      const t = targetOf(target, table);
      const m = await clientLoad(t, file, bulk ? { pre: BULK.pre, post: ['SHOW WARNINGS LIMIT 3', ...BULK.post!] } : { post: ['SHOW WARNINGS LIMIT 3'] });
      const said = `${m.code}: ${(m.stdout + m.stderr).replace(/\s+/g, ' ').replace(/-{3,}/g, '').trim()}`;
      console.log(`| ${table} | ${bulk ? 'bulk path' : 'plain'} | ${said.replace(/\|/g, '\\|')} | ${await countRows(admin, t)} |`);
    }
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { table: { type: 'string', default: 'user_summary' }, repeat: { type: 'string', default: '5' }, pool: { type: 'string', default: '2G' }, 'wait-quiet': { type: 'string', default: '300' }, 'without-naive': { type: 'boolean', default: false }, duplicates: { type: 'boolean', default: false }, parts: { type: 'string', default: '0' } } });
  session.waitSeconds = Number(values['wait-quiet']);
  const file = positionals[0];
  const table = values.table;
  if (!file || (table !== 'user_summary' && table !== 'user3' && table !== 'purchases_index')) throw new FlatloadError('USAGE', 'usage: bulkInsert.js FILE [--table user_summary|user3|purchases_index] [--repeat 5] [--pool 2G] [--without-naive] [--parts N] [--wait-quiet 300] | FILE --duplicates');
  const tmp = mkdtempSync(join(tmpdir(), 'flatload-bulk-'));
  if (values.duplicates) {
    await onSmallPoolServer(DB, values.pool, tmp, ({ admin, target }) => duplicates(admin, target, withDuplicate(file, tmp)));
    return;
  }
  const records = spawnSync('wc', ['-l', file], { encoding: 'utf8' }).stdout.trim().split(' ')[0];
  const list = table === 'purchases_index' ? purchasesItems(file) : items(file, sortedCopy(file, tmp), !values['without-naive'], partsOf(file, tmp, Number(values.parts)));
  await onSmallPoolServer(DB, values.pool, tmp, async ({ server, admin, target }) => {
    const t = targetOf(target, table);
    const bulk = new Map<Item, number[]>(list.map((i) => [i, []]));
    const series = await inRounds(list, Number(values.repeat), (item) =>
      settledRun({
        label: item.name,
        admin,
        serverPid: server.pid,
        prepare: () => freshTable(admin, table),
        async run() {
          const before = await bulkOperations(admin);
          const m = await item.run(t);
          bulk.get(item)!.push((await bulkOperations(admin)) - before);
          return m;
        },
        async check() {
          const n = await countRows(admin, t);
          return String(n) === records ? '' : `${n} rows where the file has ${records}`;
        },
      }).then((r) => {
        process.stderr.write(`${item.name}: ${r.ok ? `${r.seconds.toFixed(2)} s, server CPU ${r.measured.serverCpuSeconds?.toFixed(2)} s` : r.note} [load ${r.load1.toFixed(2)} at start]\n`);
        return r;
      }),
    );
    console.log(`${file}: ${(statSync(file).size / 1e6).toFixed(1)} MB, ${records} records, into ${table}, ${values.pool} buffer pool, ${values.repeat} rounds\n`);
    console.log('| load | wall | server CPU | client CPU | bulk path taken | load average at the starts |');
    console.log('|---|---:|---:|---:|---|---:|');
    for (const s of series) console.log(row(s, bulk.get(s.item)!));
    if (session.busyNote()) console.log(session.busyNote());
  });
}

await main();
