import { verified } from '../../load/spider.js';
import type { RoutePlan } from '../../plan/route.js';
import type { ShardMap } from '../../shard/map.js';
import { runTableJob } from '../table.js';
import type { JobRequest, LoadTarget, Opened } from '../types.js';

/**
 * A Spider table loaded through its front: the table ladder as on one
 * server, the routing's reasons in the report, and --verify comparing the
 * front's count with the backends'.
 */
export function spiderFrontTarget(req: JobRequest, opened: Opened, route: { plan: RoutePlan; map: ShardMap }): LoadTarget {
  const { o } = req;
  const target: LoadTarget = {
    kind: 'spider-front',
    prepare: async () => undefined,
    load: async () => {
      if (!o.dryRun) for (const r of route.plan.reasons) req.events.emit({ type: 'note', message: r });
      const result = await runTableJob(req, opened, target);
      result.report.notes.unshift(...route.plan.reasons);
      return { ...result, route };
    },
    report: async () => undefined,
    verify: (report) => verified(report, req.conn, o, route.map, route.plan, opened.control),
    close: () => undefined,
  };
  return target;
}
