import { FlatloadError } from '../../errors/index.js';
import type { GaleraFacts } from '../../introspect/cluster.js';
import { clusterReport, digestsAgree, nodeDigests, readCausally } from '../../load/cluster.js';
import { runTableJob } from '../table.js';
import type { JobRequest, LoadTarget, Opened } from '../types.js';

/**
 * A Galera cluster: the control connection reads causally and follows
 * failovers, the report says which nodes were used and lost, and --verify
 * compares every node's rows.
 */
export function galeraTarget(req: JobRequest, opened: Opened, start: GaleraFacts): LoadTarget {
  const { session, control } = opened;
  let stopFollowing: (() => void) | undefined;
  const target: LoadTarget = {
    kind: 'galera',
    prepare: async () => {
      await readCausally(control);
      stopFollowing = session.router.onFailover((lost, next) => req.events.emit({ type: 'warning', message: `Galera node ${lost} refused a connection or is not ready: new connections go to ${next}` }));
    },
    load: () => runTableJob(req, opened, target),
    report: async (report, reachable) => {
      report.cluster = await clusterReport(session, reachable ? control : undefined, start);
    },
    verify: async (report, plan) => {
      const digests = await nodeDigests(session, plan.target);
      if (report.cluster) report.cluster.verify = digests;
      if (digestsAgree(digests)) return undefined;
      return new FlatloadError('SERVER_ERROR', `--verify: the nodes do not hold the same rows: ${digests.map((d) => `${d.node} ${d.error ?? `${d.count} rows, checksum ${d.checksum}`}`).join('; ')}`, {
        table: report.table,
        hint: 'a node that differs is out of sync with the cluster: check its wsrep_local_state_comment and error log',
      });
    },
    close: () => stopFollowing?.(),
  };
  return target;
}
