#!/usr/bin/env node
/**
 * `npm run db:start` / `npm run db:stop`: a throwaway MariaDB that outlives the
 * npm process, for trying flatload by hand. Prints the DATABASE_URL to export.
 * `db:start -- --galera N` starts an N-node Galera cluster instead, and
 * `db:start -- --spider N` a Spider front with N backends; `db:stop` stops
 * whatever was started.
 */
import { FlatloadError } from '../src/errors/index.js';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { join } from 'node:path';
import { formatError } from '../src/errors/index.js';
import { startGaleraCluster } from './galera.js';
import { startThrowawayServer } from '../src/devserver/server.js';
import { startSpiderCluster } from './spider.js';

/** State of a detached server started by `npm run db:start`, so `db:stop` can find it. */
interface DevServerState {
  url: string;
  pid: number;
  baseDir: string;
  socketPath: string;
}

function stateFile(projectDir: string): string {
  const dir = join(projectDir, '.flatload');
  mkdirSync(dir, { recursive: true });
  return join(dir, 'devserver.json');
}

/** What `db:start -- --galera N|--spider N` records: every server, stopped in reverse order. */
interface ClusterState extends DevServerState {
  kind: 'galera' | 'spider';
  servers: Array<DevServerState & { role: string }>;
}

function readState(file: string): DevServerState | ClusterState {
  return JSON.parse(readFileSync(file, 'utf8')) as DevServerState | ClusterState;
}

function members(state: DevServerState | ClusterState): Array<DevServerState & { role?: string }> {
  return 'servers' in state ? state.servers : [state];
}

/** `--galera 3` / `--spider 2` (also `--galera=3`); undefined for the single server. */
function clusterArg(argv: string[]): { kind: 'galera' | 'spider'; count: number } | undefined {
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(galera|spider)(?:=(.*))?$/.exec(argv[i]!);
    if (!m) continue;
    const raw = m[2] ?? argv[i + 1];
    const count = raw === undefined || raw.startsWith('--') ? (m[1] === 'galera' ? 3 : 2) : Number(raw);
    if (!Number.isInteger(count) || count < 1) throw new FlatloadError('INTERNAL', `--${m[1]} takes a positive count, not ${raw}`);
    return { kind: m[1] as 'galera' | 'spider', count };
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(argv: string[]): Promise<void> {
  const file = stateFile(process.cwd());
  if (existsSync(file)) {
    const state = readState(file);
    if (members(state).some((m) => alive(m.pid))) {
      process.stdout.write(`already running (pid ${members(state).map((m) => m.pid).join(', ')})\nexport DATABASE_URL=${state.url}\n`);
      return;
    }
  }
  const cluster = clusterArg(argv);
  if (cluster?.kind === 'galera') {
    const t = Date.now();
    const g = await startGaleraCluster({ nodes: cluster.count, detached: true, log: (l) => process.stderr.write(`${l}\n`) });
    const servers = g.nodes.map((n) => ({ role: `node${n.index + 1}`, url: n.url, pid: n.pid, baseDir: n.baseDir, socketPath: n.socketPath }));
    const state: ClusterState = { kind: 'galera', url: g.url, pid: servers[0]!.pid, baseDir: servers[0]!.baseDir, socketPath: servers[0]!.socketPath, servers };
    writeFileSync(file, JSON.stringify(state, null, 2));
    process.stdout.write(
      `Galera cluster of ${servers.length} running (${Date.now() - t} ms)\n` +
        servers.map((m) => `  ${m.role}: ${m.url} (pid ${m.pid})\n`).join('') +
        `export DATABASE_URL=${g.url}\n`,
    );
    return;
  }
  if (cluster?.kind === 'spider') {
    const t = Date.now();
    const sp = await startSpiderCluster({ backends: cluster.count, detached: true });
    const servers = [
      { role: 'front', url: sp.front.url, pid: sp.front.pid, baseDir: sp.front.baseDir, socketPath: sp.front.socketPath },
      ...sp.backends.map((b) => ({ role: `backend ${b.name}`, url: b.server.url, pid: b.server.pid, baseDir: b.server.baseDir, socketPath: b.server.socketPath })),
    ];
    const state: ClusterState = { kind: 'spider', url: sp.front.url, pid: sp.front.pid, baseDir: sp.front.baseDir, socketPath: sp.front.socketPath, servers };
    writeFileSync(file, JSON.stringify(state, null, 2));
    process.stdout.write(
      `Spider front and ${sp.backends.length} backends running (${Date.now() - t} ms; the front knows them as ${sp.backends.map((b) => b.name).join(', ')})\n` +
        servers.map((m) => `  ${m.role}: ${m.url} (pid ${m.pid})\n`).join('') +
        `export DATABASE_URL=${sp.front.url}\n`,
    );
    return;
  }
  const server = await startThrowawayServer({ detached: true });
  const state: DevServerState = { url: server.url, pid: server.pid, baseDir: server.baseDir, socketPath: server.socketPath };
  writeFileSync(file, JSON.stringify(state, null, 2));
  process.stdout.write(
    `throwaway MariaDB running (pid ${server.pid}, data in ${server.baseDir}${server.rocksdb ? ', MyRocks loaded' : ', no MyRocks plugin'})\n` +
      `export DATABASE_URL=${server.url}\n`,
  );
}

async function stopOne(state: DevServerState): Promise<void> {
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
  process.stdout.write(`stopped (pid ${state.pid}) and removed ${state.baseDir}\n`);
}

async function stop(): Promise<void> {
  const file = stateFile(process.cwd());
  if (!existsSync(file)) {
    process.stdout.write('no throwaway server recorded\n');
    return;
  }
  // Reverse order: Galera joiners before the node that bootstrapped, Spider backends before the front.
  for (const m of [...members(readState(file))].reverse()) await stopOne(m);
  rmSync(file, { force: true });
}

const cmd = process.argv[2];
try {
  if (cmd === 'start') await start(process.argv.slice(3));
  else if (cmd === 'stop') await stop();
  else {
    process.stderr.write('usage: devserver start|stop\n');
    process.exitCode = 2;
  }
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
