#!/usr/bin/env node
import './heap.js';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { errorReport, EXIT, FlatloadError, formatError, isFlatloadError, type ExitCode } from '../errors/index.js';
import { withConnectionOptions } from './connectionArgs.js';
import { withFormatOptions } from './formatArgs.js';
import type { CliIo } from './io.js';
import { hidePasswordsFromProcessList, normalizeMysqlStyleArgs } from './prompt.js';
import { lastGivenWins, PARSER_CONFIGURATION } from './repeated.js';

function withLoadOptions<T>(y: Argv<T>) {
  return withFormatOptions(withConnectionOptions(y))
    .positional('file', { type: 'string', describe: 'input file (.gz and .zst are decompressed; - reads standard input; http(s):// and s3:// URLs), or a directory or quoted glob of a whole export' })
    .positional('more', { type: 'string', array: true, describe: 'more files of the same export (each file\'s table is its name)' })
    .option('table', { alias: 't', type: 'string', describe: '[db.]table to load into', group: 'Load:' })
    .option('jobs', { alias: 'j', type: 'string', describe: 'parallel connections (default: the server\'s cores, at most 8; the planner may use fewer)', group: 'Load:' })
    .option('chunk-size', { type: 'string', describe: 'bytes per chunk, e.g. 64MiB, 1G (default: about 1/16 of the input, between 1 and 64 MiB; at most 16 MiB sorted by key)', group: 'Load:' })
    .option('strategy', { type: 'string', describe: 'force a strategy: load-data | insert | surrogate-key', group: 'Load:' })
    .option('mode', { type: 'string', describe: 'append (default) | replace | swap', group: 'Load:' })
    .option('keep-old', { type: 'boolean', describe: 'with --mode swap: keep the previous table as <table>_old', group: 'Load:' })
    .option('allow-ddl', { type: 'boolean', describe: 'let the plan change the table (drop/re-add indexes, take the surrogate key out)', group: 'Load:' })
    .option('order', { type: 'string', describe: 'the order rows are sent in: auto (the planner decides) | key (sort the input by the clustered key first, in --tmpdir) | chunk (sort each chunk by it in memory, chunks in file order) | file', group: 'Load:' })
    .option('dry-run', { type: 'boolean', describe: 'print the plan and change nothing (same as flatload plan)', group: 'Load:' })
    .option('max-errors', { type: 'string', describe: 'rejected rows allowed before the load stops (default 0)', group: 'Bad rows:' })
    .option('reject-file', { type: 'string', describe: 'where rejected rows go (default: <input>.rejects.tsv beside the input)', group: 'Bad rows:' })
    .option('on-duplicate', { type: 'string', describe: 'error (default) | ignore | replace', group: 'Bad rows:' })
    .option('ignore', { type: 'boolean', describe: 'alias of --on-duplicate ignore (mysqlimport)', group: 'Bad rows:' })
    .option('replace', { type: 'boolean', describe: 'alias of --on-duplicate replace (mysqlimport)', group: 'Bad rows:' })
    .option('allow-truncation', { type: 'boolean', describe: 'accept values the server truncates or converts (counted as warnings)', group: 'Bad rows:' })
    .option('restart', { type: 'boolean', describe: 'discard an unfinished earlier run of this load and start over (or load a finished one again)', group: 'Resume:' })
    .option('keep-history', { type: 'boolean', describe: 'keep the bookkeeping of a finished load', group: 'Resume:' })
    .option('bookkeeping-schema', { type: 'string', describe: 'database for the resume bookkeeping table (default: the target\'s)', group: 'Resume:' })
    .option('bulk-insert', { type: 'string', describe: "auto (default) | on | off: MariaDB's empty-table bulk insert for an InnoDB table with secondary indexes whose key flatload numbers (one transaction, one stream); auto skips it when binary logging is on", group: 'Load:' })
    .option('binlog', { type: 'string', describe: 'on | off: write the load to the binary log or not (off: SET sql_log_bin=0, needs BINLOG ADMIN or SUPER; replicas will not receive the rows). Default: the server\'s own setting', group: 'Load:' })
    .option('analyze', { type: 'string', describe: 'on | off | auto: ANALYZE TABLE after the load, timed in the report (auto, the default: when the load started from an empty table, as with --mode replace or swap)', group: 'Load:' })
    .option('expect-rows', { type: 'string', describe: 'after the load the table must hold exactly N rows (COUNT(*)), as the exporter counted; a difference exits 9', group: 'Load:' })
    .option('expect-checksum', { type: 'string', describe: 'after the load CHECKSUM TABLE must return C, as on the exporting server; a difference exits 9', group: 'Load:' })
    .option('wait', { type: 'boolean', describe: 'if another flatload is running this same load, wait for it to finish (default: stop with exit code 8)', group: 'Resume:' })
    .option('route', { type: 'string', describe: 'Spider table: auto | front | direct (direct: flatload routes each record by the partition rule and loads every backend itself)', group: 'Load:' })
    .option('backend', { type: 'string', array: true, describe: 'Spider backend NAME=URL (mysql://user:pw@host:port): its address and credentials instead of the front\'s mysql.servers entry and flatload\'s own; repeatable', group: 'Load:' })
    .option('verify', { type: 'boolean', describe: 'after the load, check the copies agree: on a Galera cluster every node\'s COUNT(*) and CHECKSUM TABLE (read with wsrep_sync_wait=1); on a Spider table COUNT(*) through the front against the backends; a difference stops with exit code 4', group: 'Load:' })
    .option('max-rate', { type: 'string', describe: 'at most this many rows or input bytes per second across all streams, e.g. 50000rows/s, 50k rows/s, 20MB/s, 16MiB/s', group: 'Throttle:' })
    .option('replica', { type: 'string', array: true, describe: 'a replica of the target server, URL or NAME=URL (mysql://user:pw@host:port; user and password default to flatload\'s own); streams pause between chunks while its lag is over --max-lag or unknown; repeatable (unnamed: r1, r2 …)', group: 'Throttle:' })
    .option('max-lag', { type: 'string', describe: 'seconds a --replica may be behind before the streams pause (default 10)', group: 'Throttle:' })
    .option('lag-heartbeat', { type: 'string', describe: 'db.table: read each --replica\'s lag from this pt-heartbeat table (ts in UTC, as pt-heartbeat --utc writes it, for the primary\'s server_id) instead of Seconds_Behind_Master', group: 'Throttle:' })
    .option('max-threads-running', { type: 'string', describe: 'pause while the server\'s Threads_running, flatload\'s own loading streams excluded, is over this', group: 'Throttle:' })
    .option('max-pause', { type: 'string', describe: 'a pause longer than this stops the load, resumable (exit 4), e.g. 90s, 15m, 2h (default 30m)', group: 'Throttle:' })
    .option('tmpdir', { type: 'string', describe: 'directory for the chunks of a streamed input, the sort\'s runs and a --spool copy (default: the system temporary directory)', group: 'Load:' })
    .option('s3-endpoint', { type: 'string', describe: 's3:// inputs: the endpoint of an S3-compatible server, e.g. http://127.0.0.1:9000 (path-style addressing; default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS)', group: 'Load:' })
    .option('s3-region', { type: 'string', describe: 's3:// inputs: the bucket\'s region (default: AWS_REGION, the profile\'s, or us-east-1 with an endpoint)', group: 'Load:' })
    .option('spool', { type: 'boolean', describe: 'copy standard input or a .gz/.zst file whole (decompressed) into --tmpdir first and scan it to its end before anything loads, instead of reading it once as it loads', group: 'Load:' })
    .option('sort-memory', { type: 'string', describe: 'an input sorted by key whose sort fits this much (the input and about 24 bytes per record) is sorted in memory instead of in runs in --tmpdir; 0: always in runs (default 176MiB; 128MiB for each table of an export)', group: 'Load:' })
    .option('progress', { type: 'string', describe: 'auto | bar | lines | none (auto: a bar on a terminal, lines otherwise)', group: 'Output:' })
    .option('json', { type: 'boolean', describe: 'print one JSON report on stdout', group: 'Output:' })
    .option('chart', { type: 'string', describe: 'write the rows/s timeline as an SVG chart', group: 'Output:' })
    .option('manifest', { type: 'string', describe: 'export: a JSON file mapping files to tables and per-table options', group: 'Export:' })
    .option('create-tables', { type: 'boolean', describe: 'export: create a missing table from its .sql file (mysqldump --tab)', group: 'Export:' })
    .option('include', { type: 'string', array: true, describe: 'export: load only the tables these names or patterns match (table or db.table; * and ?), repeatable', group: 'Export:' })
    .option('exclude', { type: 'string', array: true, describe: 'export: leave out the tables these names or patterns match, repeatable', group: 'Export:' })
    .option('rename', { type: 'string', array: true, describe: 'export: FROM=TO loads table FROM into TO (table or db.table), repeatable', group: 'Export:' })
    .option('run-sql-files', { type: 'boolean', describe: 'export, with --create-tables: run every statement of a missing table\'s .sql file as written (default: only its own CREATE TABLE and the session SETs around it; anything else is refused)', group: 'Export:' })
    .option('reject-dir', { type: 'string', describe: 'export: the directory for the per-table reject files (default: beside each input)', group: 'Export:' })
    .option('skip-size-report', { type: 'boolean', describe: 'do not measure the on-disk size afterwards (that flushes the table, briefly blocking its writers)', group: 'Output:' });
}

function wholeNumber(v: unknown, flag: string): number {
  const last: unknown = Array.isArray(v) ? (v as unknown[])[v.length - 1] : v;
  const text = String(last).trim();
  if (!/^-?\d+$/.test(text)) throw new FlatloadError('USAGE', `--${flag}: "${text}" is not a whole number`);
  return Number(text);
}

export function buildCli(argv: string[], io: CliIo, setExit: (code: ExitCode) => void): Argv {
  const run = (fn: () => Promise<ExitCode>): Promise<void> => fn().then(setExit);
  // yargs turns a lone "-" positional into ""; "-" means standard input. Numeric options arrive as
  // strings (yargs adds up a repeated number option) and are checked here: the last one given wins.
  const fileArg = (a: Record<string, unknown>): object => {
    const out: Record<string, unknown> = { ...lastGivenWins(a), file: a['file'] === '' && argv.includes('-') ? '-' : a['file'] };
    for (const [key, flag] of [['jobs', 'jobs'], ['maxErrors', 'max-errors'], ['ignoreLines', 'ignore-lines'], ['port', 'port'], ['rows', 'rows']] as const) {
      if (out[key] !== undefined) out[key] = wholeNumber(out[key], flag);
    }
    return out;
  };
  const load = async (a: Record<string, unknown>, dryRun: boolean): Promise<ExitCode> => {
    const args = { ...fileArg(a), ...(dryRun ? { dryRun } : {}) };
    const ex = await import('./commands/export.js');
    if (ex.isExportCommand(args)) return ex.exportCommand(args, io);
    return (await import('./commands/load.js')).loadCommand(args, io);
  };
  const cli = yargs(argv)
    .scriptName('flatload')
    .usage('$0 <command> [options]\n\nBulk-load flat files (CSV/TSV) into MySQL/MariaDB: parallel, resumable, exactly once.')
    .command(
      'load [file] [more..]',
      'load a file into a table, or a whole export (a directory, several files, a glob or a --manifest) as one job',
      (y) => withLoadOptions(y),
      (a) => run(() => load(a, false)),
    )
    .command(
      'plan [file] [more..]',
      'show the plan for a load (or every table of an export) without changing anything (= load --dry-run)',
      (y) => withLoadOptions(y),
      (a) => run(() => load(a, true)),
    )
    .command(
      'bench <file>',
      'load the same file into every engine variant (scratch tables, dropped afterwards) and compare speed and on-disk size',
      (y) =>
        withLoadOptions(y)
          .option('fixture', { type: 'string', describe: 'take the table definition from a fixture: user_summary, user3, sbtest, purchases_index', group: 'Bench:' })
          .option('ddl', { type: 'string', describe: 'take the table definition from a CREATE TABLE file', group: 'Bench:' })
          .option('rows', { type: 'string', describe: 'use only the first N records of the input', group: 'Bench:' })
          .option('engines', { type: 'string', describe: 'comma list: innodb, innodb-page-compressed, innodb-compressed, rocksdb[-algo], aria, myisam, tokudb', group: 'Bench:' })
          .option('strategies', { type: 'boolean', describe: 'also run the strategies the planner did not pick', group: 'Bench:' }),
      (a) => run(async () => (await import('./commands/bench.js')).benchCommand(fileArg(a), io)),
    )
    .command(
      'status',
      'list loads known to the resume bookkeeping: state, chunks done, rows, times',
      (y) =>
        withConnectionOptions(y)
          .option('table', { alias: 't', type: 'string', describe: 'only loads into this [db.]table' })
          .option('bookkeeping-schema', { type: 'string', describe: 'database holding the bookkeeping (default: the table\'s, or all)' })
          .option('json', { type: 'boolean', describe: 'one JSON object on stdout' }),
      (a) => run(async () => (await import('./commands/status.js')).statusCommand(fileArg(a), io)),
    )
    .parserConfiguration(PARSER_CONFIGURATION)
    .demandCommand(1, 'name a command: load, plan, status or bench')
    .strict()
    .help()
    .alias('help', '?')
    .version()
    .wrap(Math.min(120, process.stdout.columns || 100))
    .fail((msg, err) => {
      if (err) throw err;
      throw new FlatloadError('USAGE', msg);
    });
  skipHelpCache(cli);
  return cli;
}

/**
 * Why: yargs formats every command's whole help text at start in case it is shown later; flatload's never are, and
 * the text costs CPU at every start (docs/exports.md#measurements). The hook is yargs-internal: without it, as before.
 */
function skipHelpCache(cli: Argv): void {
  type Internals = { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } | undefined } };
  const usage = (cli as unknown as Internals).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

/** Whether the command line asks for --json (read before yargs, which may be what fails). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--json' || a === '--json=true');
}

/**
 * A reader that went away (`| head -3`, a closed terminal) must not stop a
 * load: a write to a closed stdout or stderr fails (EPIPE, EIO) and is
 * dropped, as is every later write; the load finishes and exits with its
 * own code. Returns whether anything was written to the stream.
 */
function survivable(stream: NodeJS.WriteStream): () => boolean {
  let used = false;
  stream.on('error', () => undefined);
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  const guarded = (...args: unknown[]): boolean => {
    used = true;
    if (stream.destroyed) return false;
    return write(...args);
  };
  stream.write = guarded;
  return () => used;
}

async function main(): Promise<void> {
  let code: ExitCode = EXIT.ok;
  const stdoutUsed = survivable(process.stdout);
  survivable(process.stderr);
  hidePasswordsFromProcessList();
  // -pSECRET, -p (prompt), -uNAME ... as the mysql client reads them.
  const argv = normalizeMysqlStyleArgs(hideBin(process.argv));
  let interrupts = 0;
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    argv,
    onInterrupt(first) {
      // A hangup (the terminal or ssh session gone) stops the load like Ctrl-C and SIGTERM: resumably, cleaned up.
      const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
      const handler = (signal: NodeJS.Signals): void => {
        interrupts++;
        if (interrupts === 1) {
          process.stderr.write(`\n${signal === 'SIGINT' ? 'interrupt' : signal}: finishing the chunks in flight (Ctrl-C again to abort at once; nothing half-done is kept)\n`);
          first();
        } else {
          process.stderr.write('\naborting\n');
          process.exit(EXIT.stopped);
        }
      };
      for (const s of signals) process.on(s, handler);
      return () => {
        for (const s of signals) process.off(s, handler);
      };
    },
  };
  try {
    await buildCli(argv, io, (c) => (code = c)).parseAsync();
  } catch (err) {
    process.stderr.write(`${formatError(err)}\n`);
    code = isFlatloadError(err) ? err.exitCode : EXIT.internal;
    // --json promises one object on stdout: a command that failed before printing its report prints this one.
    if (wantsJson(argv) && !stdoutUsed()) process.stdout.write(`${JSON.stringify(errorReport(err))}\n`);
  }
  process.exitCode = code;
  // The work is done and reported: a socket some library left open must not keep a cron job waiting forever.
  setTimeout(() => process.exit(code), 2000).unref();
}

await main();
