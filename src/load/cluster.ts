import { endpointText } from '../config/connection.js';
import { openConnectionTo, type Session } from '../db/connect.js';
import type { ControlConnection, Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { selectOne } from '../db/rows.js';
import { readGaleraFacts, type GaleraFacts } from '../introspect/cluster.js';
import type { TableRef } from '../plan/ops.js';
import type { ClusterReport, NodeDigest } from '../report/summary.js';

/** Reads that wait until the node has applied every write-set the cluster certified before them. */
const SYNC_WAIT = 'SET SESSION wsrep_sync_wait = 1';

/**
 * On a Galera node the control connection reads with wsrep_sync_wait=1: a
 * chunk's bookkeeping row read after failover then reflects every commit the
 * cluster certified before the read, the dead node's included
 * (docs/scale-out.md#get_lock-on-galera). Set again on every new connection.
 */
export async function readCausally(control: ControlConnection): Promise<void> {
  control.retryClusterErrors();
  await control.query(SYNC_WAIT);
  control.onReconnect(async (conn) => {
    await conn.query(SYNC_WAIT);
  });
}

/**
 * What a load did on a Galera cluster: the nodes given, used and lost, and
 * how long flow control paused replication meanwhile (the growth of
 * wsrep_flow_control_paused_ns on the node loaded through; its value is
 * per node, so it is unknown when the load moved to another node).
 */
export async function clusterReport(session: Session, control: Queryable | undefined, start: GaleraFacts): Promise<ClusterReport> {
  const { used, lost } = session.router.report();
  const end = control ? await readGaleraFacts(control).catch(() => undefined) : undefined;
  const sameNode = end !== undefined && end.nodeName === start.nodeName && lost.length === 0;
  return {
    nodes: session.router.nodes.map(endpointText),
    nodesUsed: used,
    nodesLost: lost,
    clusterSize: end?.clusterSize ?? start.clusterSize,
    flowControlPausedMs: sameNode ? Math.max(0, end.flowControl.pausedNs - start.flowControl.pausedNs) / 1e6 : null,
    verify: null,
  };
}

/**
 * --verify: COUNT(*) and CHECKSUM TABLE of the table on every node of the
 * list, each read with wsrep_sync_wait=1 so it reflects every commit the
 * cluster certified before the read. A node that cannot be read is listed
 * with its error.
 */
export async function nodeDigests(session: Session, table: TableRef): Promise<NodeDigest[]> {
  const t = quoteQualified(table.db, table.table);
  const out: NodeDigest[] = [];
  for (const node of session.router.nodes) {
    const name = endpointText(node);
    try {
      const conn = await openConnectionTo(session, node);
      try {
        await conn.query(SYNC_WAIT);
        // COUNT(*) and CHECKSUM come back as strings (bigNumberStrings), or a NULL checksum.
        const count = await selectOne<{ n: string | number }>(conn, `SELECT COUNT(*) AS n FROM ${t}`);
        const sum = await selectOne<{ Checksum: string | number | null }>(conn, `CHECKSUM TABLE ${t} EXTENDED`);
        out.push({ node: name, count: count ? String(count.n) : null, checksum: sum?.Checksum === null || sum?.Checksum === undefined ? null : String(sum.Checksum), error: null });
      } finally {
        await conn.end().catch(() => conn.destroy());
      }
    } catch (err) {
      out.push({ node: name, count: null, checksum: null, error: (err as Error).message });
    }
  }
  return out;
}

/** Whether every node that answered holds the same rows (and at least one answered). */
export function digestsAgree(d: readonly NodeDigest[]): boolean {
  const read = d.filter((x) => x.error === null);
  return read.length > 0 && read.every((x) => x.count === read[0]!.count && x.checksum === read[0]!.checksum);
}
