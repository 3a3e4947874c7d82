import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { FlatloadError } from '../errors/index.js';

/**
 * A private, throwaway MariaDB for tests, the demo and benchmarks: its own
 * data directory in a temp dir, its own port and socket, local_infile on,
 * MyRocks loaded when the plugin is installed. Never touches a system server.
 */
export interface ThrowawayServer {
  url: string;
  host: string;
  port: number;
  socketPath: string;
  baseDir: string;
  pid: number;
  rocksdb: boolean;
  /** Stops mariadbd and deletes its directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Kills mariadbd with SIGKILL and starts it again on the same data directory (crash tests). */
  crashAndRestart(): Promise<void>;
}

export interface ThrowawayOptions {
  /** InnoDB buffer pool; the benchmark wants more than the tests. */
  innodbBufferPoolSize?: string;
  innodbLogFileSize?: string;
  /** Extra mariadbd flags, e.g. `--innodb-autoinc-lock-mode=2`. */
  extraArgs?: string[];
  /** Leave the server running when this process exits (npm run db:start). */
  detached?: boolean;
  log?: (line: string) => void;
}

const INSTALL_HINT =
  'mariadbd was not found: install it with `sudo apt-get install -y mariadb-server mariadb-plugin-rocksdb` (Debian/Ubuntu)';

export function findBinary(name: string): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', '/usr/local/mysql/bin']) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return found || undefined;
}

function pluginDir(mariadbd: string): string | undefined {
  const out = spawnSync(mariadbd, ['--no-defaults', '--verbose', '--help'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const m = /^plugin-dir\s+(\S+)/m.exec(out.stdout);
  return m?.[1];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

export async function startThrowawayServer(opts: ThrowawayOptions = {}): Promise<ThrowawayServer> {
  const mariadbd = findBinary('mariadbd') ?? findBinary('mysqld');
  const installDb = findBinary('mariadb-install-db') ?? findBinary('mysql_install_db');
  if (!mariadbd || !installDb) throw new FlatloadError('CONFIG', INSTALL_HINT);

  const baseDir = mkdtempSync(join(tmpdir(), 'flatload-db-'));
  const dataDir = join(baseDir, 'data');
  const socketPath = join(baseDir, 'mysqld.sock');
  const isRoot = userInfo().uid === 0;
  const userArgs = isRoot ? ['--user=root'] : [];
  const install = spawnSync(
    installDb,
    ['--no-defaults', `--datadir=${dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...userArgs],
    { encoding: 'utf8' },
  );
  if (install.status !== 0) {
    rmSync(baseDir, { recursive: true, force: true });
    throw new FlatloadError('CONFIG', `mariadb-install-db failed: ${(install.stderr || install.stdout).trim().split('\n').slice(-3).join(' ')}`);
  }

  const dir = pluginDir(mariadbd);
  const rocksdb = dir !== undefined && existsSync(join(dir, 'ha_rocksdb.so'));
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${dataDir}`,
    `--socket=${socketPath}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--pid-file=${join(baseDir, 'mysqld.pid')}`,
    `--log-error=${join(baseDir, 'mysqld.err')}`,
    '--local-infile=1',
    // Server-side LOAD DATA INFILE is the reference the tests and the bench compare against.
    '--secure-file-priv=',
    '--skip-log-bin',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_general_ci',
    `--innodb-buffer-pool-size=${opts.innodbBufferPoolSize ?? '1G'}`,
    `--innodb-log-file-size=${opts.innodbLogFileSize ?? '256M'}`,
    '--max-allowed-packet=256M',
    '--max-connections=300',
    ...(rocksdb ? ['--plugin-load-add=ha_rocksdb'] : []),
    ...userArgs,
    ...(opts.extraArgs ?? []),
  ];
  writeFileSync(join(baseDir, 'args.json'), JSON.stringify({ mariadbd, args }));

  let child = launch(mariadbd, args, opts.detached ?? false);
  const url = `mysql://root@127.0.0.1:${port}/`;
  const server: ThrowawayServer = {
    url,
    host: '127.0.0.1',
    port,
    socketPath,
    baseDir,
    pid: child.pid ?? -1,
    rocksdb,
    stop: async () => {
      await stopProcess(child, socketPath);
      rmSync(baseDir, { recursive: true, force: true });
    },
    crashAndRestart: async () => {
      child.kill('SIGKILL');
      await waitExit(child, 10_000);
      child = launch(mariadbd, args, opts.detached ?? false);
      server.pid = child.pid ?? -1;
      await waitReady(child, socketPath, baseDir);
    },
  };
  try {
    await waitReady(child, socketPath, baseDir);
  } catch (err) {
    await server.stop().catch(() => undefined);
    throw err;
  }
  return server;
}

function launch(mariadbd: string, args: string[], detached: boolean): ChildProcess {
  const child = spawn(mariadbd, args, { stdio: 'ignore', detached });
  if (detached) child.unref();
  return child;
}

async function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

async function waitReady(child: ChildProcess, socketPath: string, baseDir: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) break;
    try {
      const conn = await mysql.createConnection({ socketPath, user: 'root' });
      await conn.end();
      return;
    } catch {
      await sleep(100);
    }
  }
  const errLog = join(baseDir, 'mysqld.err');
  const tail = existsSync(errLog) ? readFileSync(errLog, 'utf8').trim().split('\n').slice(-5).join('\n') : '';
  throw new FlatloadError('CONFIG', `the throwaway MariaDB did not start${exited ? ' (it exited)' : ''}:\n${tail}`);
}

async function stopProcess(child: ChildProcess, socketPath: string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    const conn = await mysql.createConnection({ socketPath, user: 'root', connectTimeout: 2000 });
    await conn.query('SHUTDOWN');
    await conn.end().catch(() => undefined);
  } catch {
    child.kill('SIGTERM');
  }
  if (!(await waitExit(child, 30_000))) {
    child.kill('SIGKILL');
    await waitExit(child, 5_000);
  }
}

/** State of a detached server started by `npm run db:start`, so `db:stop` can find it. */
export interface DevServerState {
  url: string;
  pid: number;
  baseDir: string;
  socketPath: string;
}

export function stateFile(projectDir: string): string {
  const dir = join(projectDir, '.flatload');
  mkdirSync(dir, { recursive: true });
  return join(dir, 'devserver.json');
}
