#!/usr/bin/env node
/**
 * `npm run db:start` / `npm run db:stop`: a throwaway MariaDB that outlives the
 * npm process, for trying flatload by hand. Prints the DATABASE_URL to export.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { formatError } from '../errors/index.js';
import { startThrowawayServer, stateFile, type DevServerState } from './server.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(): Promise<void> {
  const file = stateFile(process.cwd());
  if (existsSync(file)) {
    const state = JSON.parse(readFileSync(file, 'utf8')) as DevServerState;
    if (alive(state.pid)) {
      process.stdout.write(`already running (pid ${state.pid})\nexport DATABASE_URL=${state.url}\n`);
      return;
    }
  }
  const server = await startThrowawayServer({ detached: true });
  const state: DevServerState = { url: server.url, pid: server.pid, baseDir: server.baseDir, socketPath: server.socketPath };
  writeFileSync(file, JSON.stringify(state, null, 2));
  process.stdout.write(
    `throwaway MariaDB running (pid ${server.pid}, data in ${server.baseDir}${server.rocksdb ? ', MyRocks loaded' : ', no MyRocks plugin'})\n` +
      `export DATABASE_URL=${server.url}\n`,
  );
}

async function stop(): Promise<void> {
  const file = stateFile(process.cwd());
  if (!existsSync(file)) {
    process.stdout.write('no throwaway server recorded\n');
    return;
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as DevServerState;
  if (alive(state.pid)) {
    try {
      const conn = await mysql.createConnection({ socketPath: state.socketPath, user: 'root', connectTimeout: 2000 });
      await conn.query('SHUTDOWN');
      await conn.end().catch(() => undefined);
    } catch {
      process.kill(state.pid, 'SIGTERM');
    }
    const deadline = Date.now() + 30_000;
    while (alive(state.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(state.pid)) process.kill(state.pid, 'SIGKILL');
  }
  rmSync(state.baseDir, { recursive: true, force: true });
  rmSync(file, { force: true });
  process.stdout.write(`stopped (pid ${state.pid}) and removed ${state.baseDir}\n`);
}

const cmd = process.argv[2];
try {
  if (cmd === 'start') await start();
  else if (cmd === 'stop') await stop();
  else {
    process.stderr.write('usage: devserver start|stop\n');
    process.exitCode = 2;
  }
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
