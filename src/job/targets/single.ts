import { runTableJob } from '../table.js';
import type { JobRequest, LoadTarget, Opened } from '../types.js';

/**
 * One server: the table ladder as it is, with nothing of its own to add.
 * `verifies` false: a Spider front whose backends the account cannot read
 * (--verify is the routing's, and it has none).
 */
export function singleTarget(req: JobRequest, opened: Opened, how: { verifies: boolean } = { verifies: true }): LoadTarget {
  const target: LoadTarget = {
    kind: 'single',
    prepare: async () => undefined,
    load: () => runTableJob(req, opened, target),
    report: async () => undefined,
    verify: async (report) => {
      if (how.verifies) report.notes.push("--verify compares the nodes of a Galera cluster or a Spider table's backends; this is neither");
      return undefined;
    },
    close: () => undefined,
  };
  return target;
}
