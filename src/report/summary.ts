import type { TableSizes } from '../introspect/sizes.js';
import { fmtInt, fmtMB, fmtRate } from './format.js';
import { renderThrottleSummary, type ThrottleReport } from './throttle.js';

/** The JSON report (`--json`): one object on stdout. Field names are a public interface. */
export interface LoadReport {
  status: 'ok' | 'rejected-within-budget' | 'stopped' | 'dry-run' | 'already-loaded';
  table: string;
  engine: string;
  strategy: string;
  mode: string;
  /** Rows now in the table from this input (this run plus resumed chunks). */
  rows: number;
  /** Records in the input (header lines excluded); null when the load stopped before reading it all. */
  rowsInInput: number | null;
  rejected: number;
  /** Duplicates skipped because --on-duplicate ignore asked for it. */
  skippedDuplicates: number;
  warnings: number;
  inputBytes: number;
  inputBytesCompressed: number | null;
  seconds: number;
  rowsPerSec: number;
  mbPerSec: number;
  jobs: number;
  chunks: number;
  chunkSizeBytes: number;
  resumedChunks: number;
  encrypted: boolean;
  /** The TLS session, when encrypted. */
  tls: { version: string; cipher: string; verified: boolean } | null;
  rejectFile: string | null;
  slowestChunk: { chunk: number; seconds: number; rows: number } | null;
  /** [seconds since start, rows committed in that second]. */
  timeline: Array<[number, number]>;
  sizes: (TableSizes & { inputToOnDiskRatio: number | null; growthBytes: number | null }) | null;
  /** Galera: the nodes given, connected to and lost, flow control, and (--verify) each node's digest; null on one server. */
  cluster: ClusterReport | null;
  notes: string[];
  error: { code: string; message: string } | null;
  /** A Spider table loaded straight into its backends: one entry per backend table. */
  shards?: ShardReport[];
  /**
   * --verify on a Spider table: COUNT(*) through the front against what the
   * backends hold. The front reads a backend table once per partition that
   * names it, so `expectedFront` counts each backend's rows that many times.
   */
  verify?: { front: number; expectedFront: number; backends: Array<{ backend: string; rows: number; partitions: number; checksum: string | null }>; equal: boolean };
  /** ANALYZE TABLE after the load (--analyze): its time, and why the statistics may be stale (null when it succeeded); absent when not run. */
  analyze?: { seconds: number; note: string | null };
  /** --expect-rows / --expect-checksum: the table after the load against the exporter's figures; absent when none were given. */
  check?: CheckResult;
  /** --max-rate, --replica, --max-threads-running: the rules, and how long the load paused and why. */
  throttle?: ThrottleReport;
}

/** A loaded table against what its exporter recorded. */
export interface CheckResult {
  /** Where the expected figures come from (a flag, a manifest, mydumper's metadata). */
  source: string;
  expectedRows: number | null;
  rows: number;
  expectedChecksum: string | null;
  /** CHECKSUM TABLE's value; null when no checksum was expected (it reads every row, so it runs only when asked for). */
  checksum: string | null;
  equal: boolean;
}

/** One line: the figures and whether they agree. */
export function describeCheck(c: CheckResult): string {
  const parts = [`COUNT(*) ${fmtInt(c.rows)}${c.expectedRows === null ? '' : ` (${fmtInt(c.expectedRows)} expected)`}`];
  if (c.expectedChecksum !== null) parts.push(`CHECKSUM TABLE ${c.checksum ?? 'NULL'} (${c.expectedChecksum} expected)`);
  return `${parts.join(', ')} from ${c.source}: ${c.equal ? 'equal' : 'DIFFERENT'}`;
}

export interface ShardReport {
  /** The front's server name for it (mysql.servers), or its address. */
  backend: string;
  /** host:port/database/table. */
  key: string;
  status: LoadReport['status'];
  rows: number;
  rowsInInput: number | null;
  seconds: number;
  chunks: number;
  resumedChunks: number;
  error: { code: string; message: string } | null;
}

/** One node's view of the loaded table, read with wsrep_sync_wait=1. */
export interface NodeDigest {
  node: string;
  count: string | null;
  checksum: string | null;
  /** Why the node could not be read (down, not ready). */
  error: string | null;
}

export interface ClusterReport {
  /** Every node of --url/--host, host:port. */
  nodes: string[];
  nodesUsed: string[];
  /** Nodes that refused or dropped a connection, or said they were not ready, during the run. */
  nodesLost: string[];
  clusterSize: number;
  /**
   * wsrep_flow_control_paused_ns grew by this much (ms) on the node loaded
   * through, from before the load to after it; null when that node changed.
   */
  flowControlPausedMs: number | null;
  /** --verify: every node's COUNT(*) and CHECKSUM TABLE; null without --verify. */
  verify: NodeDigest[] | null;
}

export function renderSummary(r: LoadReport): string {
  const lines: string[] = [];
  const head =
    r.status === 'ok'
      ? 'loaded'
      : r.status === 'rejected-within-budget'
        ? 'loaded with rejected rows'
        : r.status === 'dry-run'
          ? 'dry run'
          : r.status === 'already-loaded'
            ? 'already loaded, nothing done'
            : 'stopped';
  lines.push(`${head}: ${r.table} (${r.engine}, strategy ${r.strategy}, mode ${r.mode})`);
  lines.push(
    `  rows:     ${fmtInt(r.rows)} loaded + ${fmtInt(r.rejected)} rejected${r.skippedDuplicates ? ` + ${fmtInt(r.skippedDuplicates)} duplicates skipped` : ''} = ${fmtInt(r.rows + r.rejected + r.skippedDuplicates)}${r.rowsInInput === null ? ' (the input was not read to the end)' : ` of ${fmtInt(r.rowsInInput)} in the input`}`,
  );
  lines.push(
    `  time:     ${r.seconds.toFixed(2)} s, ${fmtRate(r.rowsPerSec)} rows/s, ${r.mbPerSec.toFixed(1)} MB/s over ${r.jobs} connection${r.jobs === 1 ? '' : 's'}${r.encrypted ? ` (${r.tls ? `${r.tls.version}${r.tls.verified ? ', verified' : ', not verified'}` : 'TLS'})` : ' (unencrypted)'}`,
  );
  lines.push(
    `  input:    ${fmtMB(r.inputBytes)}${r.inputBytesCompressed !== null ? ` (${fmtMB(r.inputBytesCompressed)} compressed)` : ''} in ${r.chunks} chunk${r.chunks === 1 ? '' : 's'}${r.resumedChunks ? ` (${r.resumedChunks} from an earlier run)` : ''}`,
  );
  if (r.slowestChunk) lines.push(`  slowest:  chunk ${r.slowestChunk.chunk}, ${r.slowestChunk.seconds.toFixed(2)} s for ${fmtInt(r.slowestChunk.rows)} rows`);
  if (r.warnings) lines.push(`  warnings: ${fmtInt(r.warnings)}`);
  if (r.sizes) {
    const s = r.sizes;
    const disk = s.onDiskBytes === null ? 'not available' : fmtMB(s.onDiskBytes);
    lines.push(
      `  on disk:  ${disk} (${s.onDiskSource})${s.inputToOnDiskRatio !== null ? `, input/on-disk ${s.inputToOnDiskRatio.toFixed(2)}` : ''}${s.growthBytes !== null ? `, grew by ${fmtMB(s.growthBytes)}` : ''}`,
    );
  }
  for (const sh of r.shards ?? []) {
    const what = sh.status === 'already-loaded' ? 'already loaded' : sh.error ? `stopped: ${sh.error.code}` : `${sh.seconds.toFixed(2)} s`;
    lines.push(`  backend:  ${sh.backend} ${sh.key}: ${fmtInt(sh.rows)} rows, ${what}${sh.resumedChunks ? ` (${sh.resumedChunks} of ${sh.chunks} chunks from an earlier run)` : ''}`);
  }
  if (r.verify) {
    const each = r.verify.backends.map((b) => `${b.backend} ${fmtInt(b.rows)}${b.partitions > 1 ? ` x ${b.partitions} partitions` : ''}, checksum ${b.checksum ?? '-'}`);
    lines.push(`  verify:   COUNT(*) ${fmtInt(r.verify.front)} through the front, ${fmtInt(r.verify.expectedFront)} expected from the backends (${each.join('; ')}): ${r.verify.equal ? 'equal' : 'DIFFERENT'}`);
  }
  if (r.analyze) lines.push(`  analyze:  ANALYZE TABLE ${r.analyze.seconds.toFixed(2)} s${r.analyze.note ? ` (${r.analyze.note})` : ''}`);
  if (r.check) lines.push(`  check:    ${describeCheck(r.check)}`);
  if (r.cluster) {
    const c = r.cluster;
    lines.push(
      `  cluster:  Galera, ${c.clusterSize} nodes; loaded through ${c.nodesUsed.join(', ') || 'none'}${c.nodesLost.length ? `; lost ${c.nodesLost.join(', ')}` : ''}; flow control paused ${c.flowControlPausedMs === null ? 'unknown (the node changed)' : `${c.flowControlPausedMs.toFixed(0)} ms`}`,
    );
    for (const d of c.verify ?? []) lines.push(`  verify:   ${d.node}: ${d.error ?? `${d.count} rows, checksum ${d.checksum}`}`);
  }
  if (r.throttle && r.status !== 'dry-run') lines.push(renderThrottleSummary(r.throttle));
  if (r.rejectFile) lines.push(`  rejects:  ${r.rejectFile} (the rows, as in the input) and ${r.rejectFile}.log (line, offset, error)`);
  for (const n of r.notes) lines.push(`  note:     ${n}`);
  return lines.join('\n');
}
