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
  /** Kills mariadbd with SIGKILL and leaves it down (a dead backend). */
  kill(): Promise<void>;
  /** Starts a killed or stopped mariadbd again on the same data directory and port; no-op while it runs. */
  restart(): Promise<void>;
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

const pluginDirs = new Map<string, string | undefined>();

export function pluginDir(mariadbd: string): string | undefined {
  if (pluginDirs.has(mariadbd)) return pluginDirs.get(mariadbd);
  const out = spawnSync(mariadbd, ['--no-defaults', '--verbose', '--help'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const dir = /^plugin-dir\s+(\S+)/m.exec(out.stdout)?.[1];
  pluginDirs.set(mariadbd, dir);
  return dir;
}

/** Ports handed out by this process: two servers started side by side never get the same one. */
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (what connections and listen(0) take ports from). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A loopback port nothing listens on, for a throwaway server. It is picked
 * below the kernel's ephemeral range: a port from that range (what listen(0)
 * gives) can be taken by any outgoing connection while its server is down,
 * and a Galera node the tests restarted once found its group-communication
 * port held by a peer's reconnecting socket ("Address already in use").
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.min(10000, high - 1000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new FlatloadError('INTERNAL', `no free loopback port found between ${low} and ${high} in 100 tries`);
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Where a throwaway server keeps its files: everything under one temp dir, so deleting it cleans up. */
export interface ServerPaths {
  baseDir: string;
  dataDir: string;
  socketPath: string;
  tmpDir: string;
}

export function serverPaths(baseDir: string): ServerPaths {
  return { baseDir, dataDir: join(baseDir, 'data'), socketPath: join(baseDir, 'mysqld.sock'), tmpDir: join(baseDir, 'tmp') };
}

export function serverBinaries(): { mariadbd: string; installDb: string } {
  const mariadbd = findBinary('mariadbd') ?? findBinary('mysqld');
  const installDb = findBinary('mariadb-install-db') ?? findBinary('mysql_install_db');
  if (!mariadbd || !installDb) throw new FlatloadError('CONFIG', INSTALL_HINT);
  return { mariadbd, installDb };
}

/**
 * Runs mariadb-install-db into paths.dataDir. Never run two at once: parallel
 * runs can fail. Its temporary tables go to the server's own tmp dir: in a
 * shared /tmp, an install failed with "Error on delete of
 * '/tmp/#sql-temptable-….MAI'" while other servers were working there.
 */
export function installDataDir(installDb: string, paths: ServerPaths, userArgs: string[]): void {
  mkdirSync(paths.tmpDir, { recursive: true });
  const install = spawnSync(
    installDb,
    ['--no-defaults', `--datadir=${paths.dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...userArgs],
    { encoding: 'utf8', env: { ...process.env, TMPDIR: paths.tmpDir } },
  );
  if (install.status !== 0) {
    throw new FlatloadError('CONFIG', `mariadb-install-db failed: ${(install.stderr || install.stdout).trim().split('\n').slice(-3).join(' ')}`);
  }
}

/** The flags every throwaway server runs with; callers append their own (later flags win). */
export function baseServerArgs(
  paths: ServerPaths,
  port: number,
  opts: Pick<ThrowawayOptions, 'innodbBufferPoolSize' | 'innodbLogFileSize'> & { rocksdb: boolean; userArgs: string[] },
): string[] {
  return [
    '--no-defaults',
    `--datadir=${paths.dataDir}`,
    `--socket=${paths.socketPath}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--pid-file=${join(paths.baseDir, 'mysqld.pid')}`,
    `--log-error=${join(paths.baseDir, 'mysqld.err')}`,
    `--tmpdir=${paths.tmpDir}`,
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
    ...(opts.rocksdb ? ['--plugin-load-add=ha_rocksdb'] : []),
    ...opts.userArgs,
  ];
}

export function hasPlugin(mariadbd: string, soName: string): boolean {
  const dir = pluginDir(mariadbd);
  return dir !== undefined && existsSync(join(dir, soName));
}

export async function startThrowawayServer(opts: ThrowawayOptions = {}): Promise<ThrowawayServer> {
  const { mariadbd, installDb } = serverBinaries();
  const paths = serverPaths(mkdtempSync(join(tmpdir(), 'flatload-db-')));
  const { baseDir, socketPath } = paths;
  const isRoot = userInfo().uid === 0;
  const userArgs = isRoot ? ['--user=root'] : [];
  try {
    installDataDir(installDb, paths, userArgs);
  } catch (err) {
    rmSync(baseDir, { recursive: true, force: true });
    throw err;
  }

  const rocksdb = hasPlugin(mariadbd, 'ha_rocksdb.so');
  const port = await freePort();
  const args = [...baseServerArgs(paths, port, { ...opts, rocksdb, userArgs }), ...(opts.extraArgs ?? [])];
  writeFileSync(join(baseDir, 'args.json'), JSON.stringify({ mariadbd, args }));

  let child = launch(mariadbd, args, opts.detached ?? false);
  // A process that dies without stop() (an uncaught error) must not leave a server behind on a shared machine.
  const removeExitHook = opts.detached
    ? () => true
    : onProcessExit(() => {
        child.kill('SIGKILL');
        rmSync(baseDir, { recursive: true, force: true });
      });
  const url = `mysql://root@127.0.0.1:${port}/`;
  const kill = async (): Promise<void> => {
    child.kill('SIGKILL');
    await waitExit(child, 10_000);
  };
  const restart = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) return;
    child = launch(mariadbd, args, opts.detached ?? false);
    server.pid = child.pid ?? -1;
    await waitReady(child, socketPath, baseDir);
  };
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
      removeExitHook();
    },
    crashAndRestart: async () => {
      await kill();
      await restart();
    },
    kill,
    restart,
  };
  try {
    await waitReady(child, socketPath, baseDir);
  } catch (err) {
    await server.stop().catch(() => undefined);
    throw err;
  }
  return server;
}

export function launch(mariadbd: string, args: string[], detached: boolean): ChildProcess {
  const child = spawn(mariadbd, args, { stdio: 'ignore', detached });
  if (detached) child.unref();
  return child;
}

export async function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

export async function waitReady(child: ChildProcess, socketPath: string, baseDir: string): Promise<void> {
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

export async function stopProcess(child: ChildProcess, socketPath: string): Promise<void> {
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

const exitHandlers = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Runs fn when this process exits without having stopped its throwaway
 * servers (a failed test, an uncaught error): only synchronous work is
 * possible then, so fn kills and deletes rather than shutting down. Returns
 * the function that unregisters it, for a normal stop.
 */
export function onProcessExit(fn: () => void): () => void {
  exitHandlers.add(fn);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    const runAll = (): void => {
      for (const h of [...exitHandlers]) {
        exitHandlers.delete(h);
        try {
          h();
        } catch {
          // best effort: the process is going away
        }
      }
    };
    process.once('exit', runAll);
    // A signal ends the process without 'exit' handlers: clean up, then let the signal do what it would have done.
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const onSignal = (): void => {
        runAll();
        process.removeListener(sig, onSignal);
        if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
      };
      process.on(sig, onSignal);
    }
  }
  return () => exitHandlers.delete(fn);
}
