import mysql, { type Connection } from 'mysql2/promise';
import { quoteId, quoteQualified } from '../src/db/quote.js';
import { FlatloadError } from '../src/errors/index.js';
import type { PartitionMethod } from '../src/shard/partition.js';
import { hasPlugin, serverBinaries, sleep, startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';

/**
 * A throwaway Spider setup on loopback: one front server with ha_spider
 * loaded and N ordinary backend servers, the front knowing them as
 * `CREATE SERVER b1 … bN`. For tests, the demo and measurements.
 */
export interface SpiderBackend {
  /** 0-based position in `backends`. */
  index: number;
  /** The front's server name for it: `b${index + 1}`. */
  name: string;
  server: ThrowawayServer;
  running: boolean;
}


export interface SpiderPartitionSpec {
  name: string;
  /** 0-based backend index. */
  backend: number;
  /** For RANGE: the `VALUES LESS THAN (…)` text, e.g. `1000` or `MAXVALUE`; for LIST: the `VALUES IN (…)` text. */
  values?: string;
}

/** `count` partitions named prefix0… spread over the backends in turn (p0 on backend 0, p1 on backend 1, …). */
export function roundRobinPartitions(count: number, backends: number, prefix = 'p'): SpiderPartitionSpec[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${prefix}${i}`, backend: i % backends }));
}

export interface SpiderTableSpec {
  db: string;
  table: string;
  /** Column and key definitions, as between the parentheses of CREATE TABLE. */
  definition: string;
  method: PartitionMethod;
  /** The partitioning expression or column list, e.g. `id` or `a, b` (empty for KEY over the primary key). */
  expression: string;
  /** KEY only: ALGORITHM=1 (MySQL 5.1 hash for numbers); the server default is 2. */
  keyAlgorithm?: 1 | 2;
  partitions: SpiderPartitionSpec[];
  /** Backend table engine (default InnoDB). */
  backendEngine?: string;
  /**
   * How each partition names its backend: `comment` (`COMMENT = 'srv "b1"'`,
   * every Spider version) or `options` (MariaDB 10.8+ `REMOTE_SERVER`/`REMOTE_TABLE`).
   */
  style?: 'comment' | 'options';
}

export interface SpiderCluster {
  front: ThrowawayServer;
  backends: SpiderBackend[];
  /** A connection to the front as root (TCP). */
  connectFront(options?: mysql.ConnectionOptions): Promise<Connection>;
  /** A connection to backend i as root (TCP). */
  connectBackend(i: number, options?: mysql.ConnectionOptions): Promise<Connection>;
  /** Creates the table on every backend and the Spider table over them on the front. */
  createSpiderTable(spec: SpiderTableSpec): Promise<void>;
  /** SIGKILL of backend i: the front then fails every statement on a table that uses it. */
  killBackend(i: number): Promise<void>;
  restartBackend(i: number): Promise<void>;
  stop(): Promise<void>;
  timings: Record<string, number>;
}

export interface SpiderOptions {
  backends?: number;
  /** Extra mariadbd flags for the front. */
  frontArgs?: string[];
  detached?: boolean;
  log?: (line: string) => void;
}

const SPIDER_HINT = 'the Spider engine (ha_spider.so) was not found: install it with `sudo apt-get install -y mariadb-plugin-spider` (Debian/Ubuntu)';

/** Why a Spider setup cannot start here, or undefined when it can (tests skip with this message). */
export function spiderUnavailable(): string | undefined {
  try {
    const { mariadbd } = serverBinaries();
    return hasPlugin(mariadbd, 'ha_spider.so') ? undefined : SPIDER_HINT;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * A plain '…' literal: COMMENT and the REMOTE_* options take no charset
 * introducer or hex literal, which quoteString would write.
 */
export function textLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

async function tcp(server: ThrowawayServer, options: mysql.ConnectionOptions): Promise<Connection> {
  return mysql.createConnection({ host: server.host, port: server.port, user: 'root', ...options });
}

/** The partition clause of a Spider table: each partition names its backend server. */
export function spiderPartitionClause(spec: SpiderTableSpec, backendNames: string[]): string {
  const parts = spec.partitions.map((p) => {
    const server = backendNames[p.backend];
    if (server === undefined) throw new FlatloadError('USAGE', `partition ${p.name} names backend ${p.backend}, which does not exist`);
    let values = '';
    if (spec.method.startsWith('RANGE')) values = ` VALUES LESS THAN (${p.values ?? 'MAXVALUE'})`;
    else if (spec.method.startsWith('LIST')) values = ` VALUES IN (${p.values ?? ''})`;
    const where =
      (spec.style ?? 'comment') === 'comment'
        ? ` COMMENT = ${textLiteral(`srv "${server}"`)}`
        : ` REMOTE_SERVER = ${textLiteral(server)} REMOTE_DATABASE = ${textLiteral(spec.db)} REMOTE_TABLE = ${textLiteral(spec.table)}`;
    return `PARTITION ${quoteId(p.name)}${values}${where}`;
  });
  const algorithm = spec.keyAlgorithm !== undefined && spec.method.endsWith('KEY') ? ` ALGORITHM=${spec.keyAlgorithm}` : '';
  return `PARTITION BY ${spec.method}${algorithm} (${spec.expression}) (${parts.join(', ')})`;
}

export async function startSpiderCluster(opts: SpiderOptions = {}): Promise<SpiderCluster> {
  const why = spiderUnavailable();
  if (why) throw new FlatloadError('CONFIG', why);
  const count = opts.backends ?? 2;
  if (!Number.isInteger(count) || count < 1) throw new FlatloadError('USAGE', `a Spider setup needs at least 1 backend, not ${count}`);
  const log = opts.log ?? (() => undefined);
  const timings: Record<string, number> = {};
  const started: ThrowawayServer[] = [];
  const backends: SpiderBackend[] = [];
  let front: ThrowawayServer;
  const t0 = Date.now();
  // Started together: each mariadb-install-db runs synchronously (spawnSync), so
  // the installs still run one after another (parallel runs can fail) while the
  // servers' own start-ups overlap.
  const results = await Promise.allSettled([
    startThrowawayServer({ detached: opts.detached ?? false, extraArgs: ['--plugin-load-add=ha_spider', ...(opts.frontArgs ?? [])] }),
    ...Array.from({ length: count }, () => startThrowawayServer({ detached: opts.detached ?? false, innodbBufferPoolSize: '512M' })),
  ]);
  for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
  try {
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    front = started[0]!;
    started.slice(1).forEach((server, i) => backends.push({ index: i, name: `b${i + 1}`, server, running: true }));
    timings['servers'] = Date.now() - t0;
    log(`front on port ${front.port}, backends on ${backends.map((b) => `${b.name}:${b.server.port}`).join(', ')} (${timings['servers']} ms)`);
    const t = Date.now();
    const conn = await tcp(front, {});
    try {
      await waitSpiderReady(conn);
      for (const b of backends) {
        await conn.query(
          `CREATE SERVER ${quoteId(b.name)} FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', PORT ${b.server.port}, USER 'root', PASSWORD '', DATABASE 'mysql')`,
        );
      }
    } finally {
      await conn.end().catch(() => undefined);
    }
    timings['create servers'] = Date.now() - t;
  } catch (err) {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    throw err;
  }

  let stopped = false;
  const backend = (i: number): SpiderBackend => {
    const b = backends[i];
    if (!b) throw new FlatloadError('USAGE', `no Spider backend ${i}`);
    return b;
  };
  return {
    front,
    backends,
    timings,
    connectFront: (options = {}) => tcp(front, options),
    connectBackend: (i, options = {}) => tcp(backend(i).server, options),
    createSpiderTable: async (spec) => {
      const engine = spec.backendEngine ?? 'InnoDB';
      const used = new Set(spec.partitions.map((p) => p.backend));
      for (const i of used) {
        const c = await tcp(backend(i).server, {});
        try {
          await c.query(`CREATE DATABASE IF NOT EXISTS ${quoteId(spec.db)}`);
          await c.query(`CREATE TABLE ${quoteQualified(spec.db, spec.table)} (${spec.definition}) ENGINE=${engine}`);
        } finally {
          await c.end().catch(() => undefined);
        }
      }
      const c = await tcp(front, {});
      try {
        await c.query(`CREATE DATABASE IF NOT EXISTS ${quoteId(spec.db)}`);
        // The table-level comment names the remote table; each partition names its server.
        const tableComment = textLiteral(`wrapper "mysql", database "${spec.db}", table "${spec.table}"`);
        await c.query(
          `CREATE TABLE ${quoteQualified(spec.db, spec.table)} (${spec.definition}) ENGINE=SPIDER ` +
            `${(spec.style ?? 'comment') === 'comment' ? `COMMENT=${tableComment} ` : ''}` +
            spiderPartitionClause(
              spec,
              backends.map((b) => b.name),
            ),
        );
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    killBackend: async (i) => {
      const b = backend(i);
      await b.server.kill();
      b.running = false;
    },
    restartBackend: async (i) => {
      const b = backend(i);
      await b.server.restart();
      b.running = true;
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      for (const b of backends) await b.server.stop().catch(() => undefined);
      await front.stop().catch(() => undefined);
    },
  };
}

/** ha_spider creates its system tables in the background after the server starts; wait for them. */
async function waitSpiderReady(conn: Connection): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    const [rows] = await conn.query(
      "SELECT (SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE = 'SPIDER' AND SUPPORT IN ('YES', 'DEFAULT')) AS engine, (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME LIKE 'spider%') AS tables",
    );
    const r = (rows as Array<{ engine: number; tables: number }>)[0]!;
    last = JSON.stringify(r);
    if (Number(r.engine) > 0 && Number(r.tables) > 0) return;
    await sleep(100);
  }
  throw new FlatloadError('CONFIG', `the Spider engine did not become ready on the front server (${last})`);
}
