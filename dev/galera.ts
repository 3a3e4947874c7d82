import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import mysql, { type Connection } from 'mysql2/promise';
import { FlatloadError } from '../src/errors/index.js';
import {
  baseServerArgs,
  freePort,
  installDataDir,
  launch,
  onProcessExit,
  serverBinaries,
  serverPaths,
  sleep,
  stopProcess,
  waitExit,
  waitReady,
  type ServerPaths,
} from '../src/devserver/server.js';

/**
 * A throwaway MariaDB Galera cluster on loopback: N mariadbd processes, each
 * with its own temp dir and its own client, group-communication (gmcast), IST
 * and SST ports. For tests, the demo and measurements; never a system server.
 */
export interface GaleraNode {
  /** 0-based position in `nodes`; the node's wsrep_node_name is `node${index + 1}`. */
  index: number;
  host: string;
  port: number;
  url: string;
  socketPath: string;
  pid: number;
  dataDir: string;
  baseDir: string;
  /** gmcast (group communication) port, the one other nodes' gcomm:// addresses name. */
  galeraPort: number;
  istPort: number;
  sstPort: number;
  /** False between killNode() and restartNode(). */
  running: boolean;
}

export interface GaleraCluster {
  nodes: GaleraNode[];
  /** The cluster's address list as a connector takes it: `mysql://root@h1:p1,h2:p2,…/`. */
  url: string;
  /** SIGKILL of node i (0-based): what a crashed machine looks like to the others. */
  killNode(i: number): Promise<void>;
  /**
   * Starts a killed or stopped node again: `--wsrep-recover` finds its last
   * committed position, then it starts at that position so the donor can send
   * the missing write-sets by IST (no full copy); resolves once it is Synced.
   */
  restartNode(i: number): Promise<void>;
  /** A connection to node i over TCP as root. */
  connect(i: number, options?: mysql.ConnectionOptions): Promise<Connection>;
  /** Stops every node and deletes their dirs. Safe to call twice. */
  stop(): Promise<void>;
  /** Milliseconds each phase of the start took (install, bootstrap, each join). */
  timings: Record<string, number>;
}

export interface GaleraOptions {
  nodes?: number;
  /** wsrep_max_ws_size in bytes (server default 2 GiB). */
  wsrepMaxWsSize?: number;
  /** Extra mariadbd flags for every node. */
  extraArgs?: string[];
  /** Extra `wsrep_provider_options` entries (`key=value`), e.g. `evs.suspect_timeout=PT2S`. */
  providerOptions?: string[];
  innodbBufferPoolSize?: string;
  /** Leave the nodes running when this process exits (npm run db:start). */
  detached?: boolean;
  log?: (line: string) => void;
}

const GALERA_HINT =
  'the Galera provider (libgalera_smm.so) was not found: install it with `sudo apt-get install -y galera-4 rsync` (Debian/Ubuntu)';

const PROVIDER_PATHS = ['/usr/lib/galera/libgalera_smm.so', '/usr/lib/libgalera_smm.so', '/usr/lib64/galera-4/libgalera_smm.so', '/usr/lib64/galera/libgalera_smm.so'];

/** The wsrep provider library, or undefined when galera-4 is not installed. */
export function findGaleraProvider(): string | undefined {
  return PROVIDER_PATHS.find((p) => existsSync(p));
}

/** Why a Galera cluster cannot start here, or undefined when it can (tests skip with this message). */
export function galeraUnavailable(): string | undefined {
  if (!findGaleraProvider()) return GALERA_HINT;
  for (const tool of ['rsync', 'wsrep_sst_rsync']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      return `${tool} was not found: install it with \`sudo apt-get install -y galera-4 rsync mariadb-server\``;
    }
  }
  try {
    serverBinaries();
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

interface NodeRuntime {
  node: GaleraNode;
  paths: ServerPaths;
  /** Flags without the cluster address and start position, which differ between first start and restart. */
  args: string[];
  child: ChildProcess | undefined;
}

/** rsync SST refuses to run as root, so when we are root the nodes run as the `mysql` OS user. */
function runAsUser(): { args: string[]; uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return { args: [] };
  const ids = spawnSync('id', ['-u', 'mysql'], { encoding: 'utf8' });
  const gids = spawnSync('id', ['-g', 'mysql'], { encoding: 'utf8' });
  if (ids.status !== 0 || gids.status !== 0) {
    throw new FlatloadError('CONFIG', 'running as root, and there is no `mysql` OS user to run the Galera nodes as (rsync SST fails as root)');
  }
  return { args: ['--user=mysql'], uid: Number(ids.stdout.trim()), gid: Number(gids.stdout.trim()) };
}

function chownTree(dir: string, uid: number | undefined, gid: number | undefined): void {
  if (uid === undefined || gid === undefined) return;
  spawnSync('chown', ['-R', `${uid}:${gid}`, dir]);
}

function tail(file: string, lines = 20): string {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n') : '';
}

async function status(socketPath: string): Promise<Record<string, string>> {
  const conn = await mysql.createConnection({ socketPath, user: 'root', connectTimeout: 2000 });
  try {
    const [rows] = await conn.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_ready', 'wsrep_cluster_status')");
    return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, r.Value]));
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/** Waits until the node answers, is Synced, and sees `clusterSize` members in the primary component. */
async function waitSynced(rt: NodeRuntime, clusterSize: number, timeoutMs: number): Promise<void> {
  const child = rt.child!;
  await waitReady(child, rt.paths.socketPath, rt.paths.baseDir);
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, string> = {};
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      last = await status(rt.paths.socketPath);
      if (last['wsrep_local_state_comment'] === 'Synced' && Number(last['wsrep_cluster_size']) === clusterSize && last['wsrep_ready'] === 'ON') return;
    } catch {
      // still starting
    }
    await sleep(50);
  }
  throw new FlatloadError(
    'CONFIG',
    `Galera node${rt.node.index + 1} did not reach Synced in a ${clusterSize}-node cluster (last state: ${JSON.stringify(last)}):\n${tail(join(rt.paths.baseDir, 'mysqld.err'))}`,
  );
}

/** `--wsrep-recover` prints the last committed position (`uuid:seqno`) of a node that died without a clean shutdown. */
function recoverPosition(mariadbd: string, rt: NodeRuntime, clusterAddress: string): string | undefined {
  const logFile = join(rt.paths.baseDir, 'recover.err');
  rmSync(logFile, { force: true });
  // The rsync SST method refuses to start, even for recovery, without a cluster address.
  const args = [...rt.args.filter((a) => !a.startsWith('--log-error=')), `--log-error=${logFile}`, `--wsrep-cluster-address=${clusterAddress}`, '--wsrep-recover'];
  const run = spawnSync(mariadbd, args, { encoding: 'utf8', timeout: 60_000 });
  const text = `${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}\n${run.stderr ?? ''}`;
  return /WSREP: Recovered position:\s*([0-9a-f-]{36}:-?\d+)/.exec(text)?.[1];
}

/** One replicated InnoDB commit, so node1's InnoDB stores a wsrep position (a fresh install has none). */
async function seedHistory(socketPath: string): Promise<void> {
  const conn = await mysql.createConnection({ socketPath, user: 'root', multipleStatements: true });
  try {
    await conn.query(
      'CREATE TABLE mysql.flatload_seed (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO mysql.flatload_seed VALUES (1); DROP TABLE mysql.flatload_seed',
    );
  } finally {
    await conn.end().catch(() => undefined);
  }
}

export async function startGaleraCluster(opts: GaleraOptions = {}): Promise<GaleraCluster> {
  const why = galeraUnavailable();
  if (why) throw new FlatloadError('CONFIG', why);
  const provider = findGaleraProvider()!;
  const { mariadbd, installDb } = serverBinaries();
  const count = opts.nodes ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new FlatloadError('USAGE', `a Galera cluster needs at least 1 node, not ${count}`);
  const user = runAsUser();
  const log = opts.log ?? (() => undefined);
  const detached = opts.detached ?? false;
  const timings: Record<string, number> = {};

  const runtimes: NodeRuntime[] = [];
  for (let i = 0; i < count; i++) {
    const [port, galeraPort, istPort, sstPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const paths = serverPaths(mkdtempSync(join(tmpdir(), `flatload-galera${i + 1}-`)));
    const node: GaleraNode = {
      index: i,
      host: '127.0.0.1',
      port,
      url: `mysql://root@127.0.0.1:${port}/`,
      socketPath: paths.socketPath,
      pid: -1,
      dataDir: paths.dataDir,
      baseDir: paths.baseDir,
      galeraPort,
      istPort,
      sstPort,
      running: false,
    };
    const providerOptions = [
      `gmcast.listen_addr=tcp://127.0.0.1:${galeraPort}`,
      `ist.recv_addr=127.0.0.1:${istPort}`,
      // Big enough that a node down during a ~100 MB load can still catch up by IST.
      'gcache.size=512M',
      ...(opts.providerOptions ?? []),
    ];
    const args = [
      ...baseServerArgs(paths, port, { innodbBufferPoolSize: opts.innodbBufferPoolSize ?? '512M', innodbLogFileSize: '128M', rocksdb: false, userArgs: user.args }),
      '--wsrep-on=ON',
      `--wsrep-provider=${provider}`,
      '--wsrep-cluster-name=flatload',
      `--wsrep-node-name=node${i + 1}`,
      `--wsrep-node-address=127.0.0.1:${galeraPort}`,
      `--wsrep-node-incoming-address=127.0.0.1:${port}`,
      `--wsrep-sst-receive-address=127.0.0.1:${sstPort}`,
      '--wsrep-sst-method=rsync',
      `--wsrep-provider-options=${providerOptions.join(';')}`,
      // Galera requires row-based write-sets and interleaved auto-increment locking.
      '--binlog-format=ROW',
      '--innodb-autoinc-lock-mode=2',
      '--default-storage-engine=InnoDB',
      ...(opts.wsrepMaxWsSize !== undefined ? [`--wsrep-max-ws-size=${opts.wsrepMaxWsSize}`] : []),
      ...(opts.extraArgs ?? []),
    ];
    runtimes.push({ node, paths, args, child: undefined });
  }
  const clusterAddress = `gcomm://${runtimes.map((r) => `127.0.0.1:${r.node.galeraPort}`).join(',')}`;

  let stopped = false;
  const killAllSync = (): void => {
    for (const rt of runtimes) {
      if (rt.child && rt.child.exitCode === null && rt.child.signalCode === null) rt.child.kill('SIGKILL');
      rmSync(rt.paths.baseDir, { recursive: true, force: true });
    }
  };
  const removeExitHook = detached ? () => true : onProcessExit(killAllSync);

  const startNode = (rt: NodeRuntime, extra: string[]): void => {
    rt.child = launch(mariadbd, [...rt.args, ...extra], detached);
    rt.node.pid = rt.child.pid ?? -1;
    rt.node.running = true;
    writeFileSync(join(rt.paths.baseDir, 'args.json'), JSON.stringify({ mariadbd, args: [...rt.args, ...extra] }));
  };
  const running = (): number => runtimes.filter((r) => r.node.running).length;

  const cluster: GaleraCluster = {
    nodes: runtimes.map((r) => r.node),
    url: `mysql://root@${runtimes.map((r) => `127.0.0.1:${r.node.port}`).join(',')}/`,
    timings,
    killNode: async (i) => {
      const rt = runtimes[i];
      if (!rt?.child) throw new FlatloadError('USAGE', `no Galera node ${i}`);
      rt.child.kill('SIGKILL');
      await waitExit(rt.child, 10_000);
      rt.node.running = false;
    },
    restartNode: async (i) => {
      const rt = runtimes[i];
      if (!rt) throw new FlatloadError('USAGE', `no Galera node ${i}`);
      if (rt.child && rt.child.exitCode === null && rt.child.signalCode === null) return;
      const position = recoverPosition(mariadbd, rt, clusterAddress);
      log(`node${i + 1}: recovered position ${position ?? '(none: full SST)'}`);
      // Its ports were free when the cluster started and lie below the ephemeral range, so no outgoing
      // connection takes one while it is down; another process still could (gcomm "Address already in use"). Try again.
      for (let attempt = 1; ; attempt++) {
        startNode(rt, [`--wsrep-cluster-address=${clusterAddress}`, ...(position ? [`--wsrep-start-position=${position}`] : [])]);
        try {
          await waitSynced(rt, running(), 120_000);
          return;
        } catch (err) {
          if (attempt >= 5 || !(err instanceof Error) || !/Address already in use/.test(err.message)) throw err;
          log(`node${i + 1}: a port was still in use, starting again (attempt ${attempt + 1})`);
          await sleep(2000);
        }
      }
    },
    connect: async (i, options = {}) => {
      const n = runtimes[i]?.node;
      if (!n) throw new FlatloadError('USAGE', `no Galera node ${i}`);
      return mysql.createConnection({ host: n.host, port: n.port, user: 'root', ...options });
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      // Joiners first, the bootstrap node last, so no node is left waiting for a departed peer.
      for (const rt of [...runtimes].reverse()) {
        if (rt.child) await stopProcess(rt.child, rt.paths.socketPath).catch(() => rt.child?.kill('SIGKILL'));
        rt.node.running = false;
      }
      for (const rt of runtimes) rmSync(rt.paths.baseDir, { recursive: true, force: true });
      removeExitHook();
    },
  };

  try {
    let t = Date.now();
    const first = runtimes[0]!;
    for (const d of [first.paths.dataDir, first.paths.tmpDir]) mkdirSync(d, { recursive: true });
    chownTree(first.paths.baseDir, user.uid, user.gid);
    installDataDir(installDb, first.paths, user.args);
    timings['install'] = Date.now() - t;

    // Seed a cluster history on node1 alone, then give every joiner a copy of
    // its cleanly shut down data dir: a joiner whose InnoDB already holds the
    // group's position catches up by IST (a few events) instead of a full rsync
    // SST of the data dir (~4-5 s a node, measured).
    t = Date.now();
    startNode(first, ['--wsrep-cluster-address=gcomm://', '--wsrep-new-cluster']);
    await waitSynced(first, 1, 60_000);
    await seedHistory(first.paths.socketPath);
    await stopProcess(first.child!, first.paths.socketPath);
    first.node.running = false;
    for (const rt of runtimes.slice(1)) {
      const cp = spawnSync('cp', ['-a', '--sparse=always', first.paths.dataDir, rt.paths.dataDir], { encoding: 'utf8' });
      if (cp.status !== 0) throw new FlatloadError('CONFIG', `copying the Galera data dir failed: ${cp.stderr.trim()}`);
      mkdirSync(rt.paths.tmpDir, { recursive: true });
      // Each node its own gcache and its own view of the primary component.
      for (const f of ['galera.cache', 'gvwstate.dat']) rmSync(join(rt.paths.dataDir, f), { force: true });
      chownTree(rt.paths.baseDir, user.uid, user.gid);
    }
    timings['seed'] = Date.now() - t;

    t = Date.now();
    startNode(first, ['--wsrep-cluster-address=gcomm://', '--wsrep-new-cluster']);
    await waitSynced(first, 1, 60_000);
    timings['bootstrap'] = Date.now() - t;
    log(`node1 bootstrapped on port ${first.node.port} (${timings['bootstrap']} ms)`);

    // Joiners one after another: two SSTs from one donor at once would serialise anyway and can time out.
    for (const rt of runtimes.slice(1)) {
      t = Date.now();
      startNode(rt, [`--wsrep-cluster-address=${clusterAddress}`]);
      await waitSynced(rt, running(), 120_000);
      timings[`join node${rt.node.index + 1}`] = Date.now() - t;
      log(`node${rt.node.index + 1} joined on port ${rt.node.port} (${timings[`join node${rt.node.index + 1}`]} ms)`);
    }
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    throw err;
  }
  return cluster;
}
