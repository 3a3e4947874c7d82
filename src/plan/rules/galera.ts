/**
 * A Galera node (wsrep_on with a provider): every transaction is one
 * write-set, certified and applied on every node. The InnoDB rule still
 * decides how a chunk loads; this rule refuses what a cluster cannot load
 * safely and sizes chunks under the write-set limits. Facts and sources:
 * docs/rules.md#galera and docs/scale-out.md#galera.
 */
import type { GaleraFacts } from '../../introspect/cluster.js';
import { FlatloadError } from '../../errors/index.js';
import type { OpKind, Step } from '../ops.js';
import type { SurrogateKeyPlan } from '../types.js';
import { type Ctx, type EngineDecision } from './context.js';

/** Write-set bytes per TSV byte for user_summary: 1.168-1.179 [docs/scale-out.md#verified-facts]. */
export const WS_BYTES_PER_INPUT_BYTE = 1.2;
/** Chunks are planned at this fraction of the limit: rows wider in binary than in text, and the bookkeeping row, fit in the rest. */
export const WS_MARGIN = 0.5;

/** How far past its target a key-ordered chunk may come out (docs/rules.md#galera-write-set-limits); file-order chunks are exact. */
const KEY_ORDER_OVERSHOOT = 8;

/** The write-set limits a chunk must stay under, and the chunk bounds that follow. */
export interface WriteSetBounds {
  maxBytes: number;
  maxRecords: number | undefined;
}

/**
 * Chunk bounds under wsrep_max_ws_size and wsrep_max_ws_rows: half of the
 * bytes the measured write-set ratio allows, and half of the rows minus the
 * bookkeeping row (0 rows = no limit).
 */
export function writeSetBounds(maxWsSize: number, maxWsRows: number): WriteSetBounds {
  const maxBytes = Math.max(1, Math.floor((maxWsSize / WS_BYTES_PER_INPUT_BYTE) * WS_MARGIN));
  const maxRecords = maxWsRows > 0 ? Math.max(1, Math.floor(maxWsRows * WS_MARGIN) - 1) : undefined;
  return { maxBytes, maxRecords };
}

/** Operations that are DDL: on a Galera node they run as Total Order Isolation, blocking the table on every node. */
const DDL_KINDS: ReadonlySet<OpKind> = new Set<OpKind>([
  'truncate',
  'drop-table',
  'create-like',
  'swap-tables',
  'drop-indexes',
  'add-indexes',
  'drop-column',
  'add-auto-increment-key',
  'disable-keys',
  'enable-keys',
  'auto-increment-after-input',
]);

/** Deferred-DDL operations the plan chose for speed (not the ones a mode needs). */
const DEFERRAL_KINDS: ReadonlySet<OpKind> = new Set<OpKind>(['drop-indexes', 'add-indexes', 'drop-column', 'add-auto-increment-key']);

/** The cluster a plan is for: the node's facts when it replicates, else undefined. */
export function galeraOf(ctx: Ctx): GaleraFacts | undefined {
  const g = ctx.server.galera;
  return g?.wsrepOn ? g : undefined;
}

/**
 * What no plan can load safely on a Galera node, refused before any rule
 * runs: another engine than InnoDB (not replicated: the rows would stay on
 * one node) and a table without a key to certify by.
 */
export function refuseOnGalera(ctx: Ctx, g: GaleraFacts): void {
  const where = `${ctx.table.db}.${ctx.table.table}`;
  const node = `Galera node ${g.nodeName ?? ''} (cluster ${g.clusterName ?? '?'}, ${g.clusterSize} nodes)`.replace('node  (', 'node (');
  if (ctx.engine !== 'innodb') {
    throw new FlatloadError('UNSUPPORTED', `${where} is ENGINE=${ctx.table.engine} on a ${node}: only InnoDB is replicated by Galera, so the loaded rows would stay on this node alone`, {
      table: where,
      hint: `ALTER TABLE ${where} ENGINE=InnoDB first (MyISAM/Aria replication is experimental, MyRocks is not replicated at all) [docs/rules.md#galera-replicates-innodb-only]`,
    });
  }
  if (!ctx.table.clusteredKey) {
    throw new FlatloadError('UNSUPPORTED', `${where} has no PRIMARY KEY and no UNIQUE NOT NULL key, on a ${node}: Galera certifies row changes by key, and a table without one is unsafe to replicate (rows can differ between nodes, and applying deletes scans the table)`, {
      table: where,
      hint: 'add a PRIMARY KEY to the table (an AUTO_INCREMENT id the file lacks is numbered by flatload) [docs/rules.md#galera-needs-a-primary-key]',
    });
  }
}

/** Caps the chunk under the write-set limits and says so with the numbers. */
function sizeChunks(ctx: Ctx, d: EngineDecision, g: GaleraFacts): void {
  const b = writeSetBounds(g.maxWsSize, g.maxWsRows);
  const before = d.chunkSizeBytes;
  if (b.maxBytes < d.chunkSizeBytes) d.chunkSizeBytes = b.maxBytes;
  if (b.maxRecords !== undefined) {
    d.chunkMaxRecords = Math.min(d.chunkMaxRecords ?? Infinity, b.maxRecords);
    // Cut by bytes too, so a key-ordered input (cut after sorting, by bytes) also stays under the row limit.
    const avg = ctx.input.avgRecordBytes;
    if (avg !== undefined && avg > 0) d.chunkSizeBytes = Math.max(1, Math.min(d.chunkSizeBytes, Math.floor(b.maxRecords * avg * WS_MARGIN)));
  }
  // Key-ordered chunks are cut at sampled key quantiles, so one can come out several times the target
  // (docs/rules.md#galera-write-set-limits): over a write-set limit it would fail at every retry. Key order stays only
  // where a chunk KEY_ORDER_OVERSHOOT times its target still fits.
  const binding = d.chunkSizeBytes * KEY_ORDER_OVERSHOOT > b.maxBytes || b.maxRecords !== undefined;
  if (binding && ctx.order.kind === 'key') {
    ctx.order = { kind: 'file' };
    (ctx.options.order === 'key' ? ctx.warnings : ctx.reasons).push(
      `Galera: the input is loaded in file order, not sorted by key: key-ordered chunks are cut at sampled key quantiles and can exceed their target several times (${KEY_ORDER_OVERSHOOT}x would not fit here), and a chunk over the write-set limit fails however often it is retried; file-order chunks are cut exactly by bytes and records [docs/rules.md#galera-write-set-limits]`,
    );
  }
  const rows = b.maxRecords !== undefined ? ` and at most ${b.maxRecords} records (half of wsrep_max_ws_rows=${g.maxWsRows}, less the bookkeeping row)` : ' (wsrep_max_ws_rows=0: no row limit)';
  ctx.reasons.push(
    `Galera: each chunk is one write-set, replicated at COMMIT and refused whole when over wsrep_max_ws_size=${g.maxWsSize} bytes (1105) or wsrep_max_ws_rows (1180); a write-set measured ${WS_BYTES_PER_INPUT_BYTE}x the input bytes, so chunks are cut at ${d.chunkSizeBytes} bytes${d.chunkSizeBytes < before ? ` (not ${before})` : ''}, at most half of the ${Math.floor(g.maxWsSize / WS_BYTES_PER_INPUT_BYTE)} input bytes that fit${rows} [docs/rules.md#galera-write-set-limits]`,
  );
}

function surrogateReason(ctx: Ctx, g: GaleraFacts, key: SurrogateKeyPlan | undefined): void {
  const pair = `auto_increment_increment=${g.autoIncrementIncrement}, auto_increment_offset=${g.autoIncrementOffset}${g.autoIncrementControl ? ' (set per node by wsrep_auto_increment_control)' : ''}`;
  if (key?.kind === 'pre-assign') {
    ctx.reasons.push(
      `Galera: ${key.column} is pre-assigned by flatload (explicit values from ${key.firstValue}, dense, in input order); the server's ${pair} only shapes values a node generates itself, and the ALTER … AUTO_INCREMENT after the load moves every node's counter past the last key, so later inserts on any node do not collide [docs/rules.md#galera-auto-increment]`,
    );
  } else if (key?.kind === 'server' || (ctx.autoInc && ctx.autoInc.inFile === 'no')) {
    ctx.reasons.push(`Galera: the server numbers ${ctx.autoInc?.column ?? 'the key'} with ${pair}: values step by ${g.autoIncrementIncrement}, gaps are normal [docs/rules.md#galera-auto-increment]`);
  }
}

/** DDL in the plan runs as TOI: said once, as a warning when the plan chose it for speed. */
function ddlWarnings(ctx: Ctx, steps: readonly Step[]): void {
  const ddl = steps.filter((s) => DDL_KINDS.has(s.op.kind));
  if (ddl.length === 0) return;
  const kinds = [...new Set(ddl.map((s) => s.op.kind))].join(', ');
  const deferred = ddl.filter((s) => DEFERRAL_KINDS.has(s.op.kind));
  if (deferred.length > 0) {
    ctx.warnings.push(
      `Galera: the deferred DDL (${[...new Set(deferred.map((s) => s.op.kind))].join(', ')}) runs as Total Order Isolation (wsrep_OSU_method=TOI): each ALTER blocks the table on every node, and every node rebuilds the index or table at the same time, while the cluster applies nothing else [docs/rules.md#galera-ddl-is-toi]`,
    );
  } else {
    ctx.reasons.push(`Galera: the plan's DDL (${kinds}) runs as Total Order Isolation on every node; each is a short metadata change [docs/rules.md#galera-ddl-is-toi]`);
  }
  if (steps.some((s) => s.op.kind === 'delete-all')) {
    ctx.warnings.push('Galera: DELETE FROM of the whole table is one write-set: over wsrep_max_ws_size it fails (1105) and deletes nothing [docs/rules.md#galera-write-set-limits]');
  }
}

/**
 * The Galera pass over an InnoDB decision: chunk bounds under the write-set
 * limits, no empty-table bulk insert (the InnoDB rule never uses it; on a
 * cluster its table lock would hold up every node's writers too), DDL
 * warnings, and how keys are numbered.
 */
export function planGalera(ctx: Ctx, d: EngineDecision, g: GaleraFacts, steps: readonly Step[], key: SurrogateKeyPlan | undefined): void {
  ctx.reasons.unshift(
    `Galera node ${g.nodeName ?? '?'} of cluster ${g.clusterName ?? '?'}: ${g.clusterSize} nodes, ${g.clusterStatus ?? 'status unknown'}, ${g.localState ?? 'state unknown'}${g.providerVersion ? `, provider ${g.providerVersion}` : ''} [docs/scale-out.md#galera]`,
  );
  sizeChunks(ctx, d, g);
  ctx.reasons.push(
    'Galera: no empty-table bulk insert, whatever the table holds: it takes an exclusive table lock and makes the whole load one transaction, which on a cluster would be one write-set far over the limit [docs/rules.md#galera-no-bulk-insert]',
  );
  ctx.reasons.push(
    `Galera: all ${d.concurrency} connection(s) go to one node, the others are failover targets; every node applies every write-set either way, and spreading measured no faster on loopback [docs/scale-out.md#chunked-loads-one-node-or-spread]`,
  );
  ctx.reasons.push('Galera: a certification conflict (1213) or a node not ready (1047) rolls the chunk back and it is retried with backoff; after a lost node, its bookkeeping row is read with wsrep_sync_wait=1 on the new node first [docs/rules.md#galera-retries-and-failover]');
  if (g.loadDataSplitting === true && ctx.transport === 'load-data') {
    ctx.reasons.push(
      'Galera: wsrep_load_data_splitting=ON (deprecated, removed in 11.5): since 10.4 it replicates a LOAD DATA as streaming fragments of 10,000 rows and still commits it once, so a chunk stays one transaction; flatload does not rely on it, its chunks are sized under the limits anyway [docs/rules.md#galera-load-data-splitting]',
    );
  }
  surrogateReason(ctx, g, key);
  ddlWarnings(ctx, steps);
}
