/**
 * `npm test`: starts one throwaway MariaDB for the whole run (unless
 * DATABASE_URL points at a server), runs every test file with node:test
 * against it, and always stops it, also when tests fail or the run is
 * interrupted.
 *
 * Nothing can hang it: every test has a deadline (TEST_TIMEOUT_MS unless the
 * test sets its own), and a watchdog stops the whole run after RUN_TIMEOUT_MS
 * (FLATLOAD_TEST_RUN_MINUTES overrides it), failing it, for what no test's
 * deadline covers (a hook, a file that never exits).
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import mysql from 'mysql2/promise';
import { startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const TEST_TIMEOUT_MS = 10 * 60_000;
const RUN_TIMEOUT_MS = Number(process.env['FLATLOAD_TEST_RUN_MINUTES'] ?? 120) * 60_000;

const root = new URL('..', import.meta.url).pathname;
// Words pick test files by path; a --test-name-pattern=RE is passed on to node:test.
const patterns = process.argv.slice(2).filter((a) => a.startsWith('--test-name-pattern='));
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const files = findTests(join(root, 'test')).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

let server: ThrowawayServer | undefined;
const env = { ...process.env };
if (!env['DATABASE_URL']) {
  server = await startThrowawayServer({ log: (l) => process.stderr.write(`${l}\n`) });
  env['DATABASE_URL'] = server.url;
  env['FLATLOAD_TEST_SERVER_DIR'] = server.baseDir;
  if (server.rocksdb) env['FLATLOAD_TEST_ROCKSDB'] = '1';
  process.stderr.write(`test server: MariaDB on ${server.url} (${server.rocksdb ? 'MyRocks loaded' : 'no MyRocks'})\n`);
} else {
  // MyRocks tests run wherever the given server has the engine, not only on the throwaway one.
  const conn = await mysql.createConnection({ uri: env['DATABASE_URL'] });
  const [rows] = await conn.query("SELECT SUPPORT AS s FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'");
  await conn.end();
  const rocksdb = (rows as Array<{ s: string }>).some((r) => r.s === 'YES' || r.s === 'DEFAULT');
  if (rocksdb) env['FLATLOAD_TEST_ROCKSDB'] = '1';
  process.stderr.write(`test server: using DATABASE_URL (${rocksdb ? 'MyRocks loaded' : 'no MyRocks'})\n`);
}

const stop = async (): Promise<void> => {
  const s = server;
  server = undefined;
  if (s) await s.stop().catch((e: unknown) => process.stderr.write(`stopping test server: ${String(e)}\n`));
};

let code: number;
try {
  code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=2', `--test-timeout=${TEST_TIMEOUT_MS}`, '--test-reporter=spec', ...patterns, ...files.map((f) => relative(root, f))],
      // Its own process group, so a signal reaches every test file and the loads they started.
      { cwd: root, env, stdio: 'inherit', detached: true },
    );
    const signalAll = (sig: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // the group is gone already
      }
    };
    const forward = (sig: NodeJS.Signals): void => signalAll(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const watchdog = setTimeout(() => {
      process.stderr.write(`test run: still running after ${RUN_TIMEOUT_MS / 60_000} minutes: stopping it (FLATLOAD_TEST_RUN_MINUTES to allow more)\n`);
      signalAll('SIGTERM');
      setTimeout(() => signalAll('SIGKILL'), 10_000).unref();
    }, RUN_TIMEOUT_MS);
    child.on('exit', (c, sig) => {
      clearTimeout(watchdog);
      resolve(c ?? (sig ? 1 : 0));
    });
  });
} finally {
  await stop();
}
process.exitCode = code;
