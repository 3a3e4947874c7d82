import { FlatloadError, isFlatloadError } from '../../errors/index.js';
import { readShardMap } from '../../introspect/cluster.js';
import { checkBackendNames, frontFilled, tableColumns, unreachableBackends } from '../../load/spider.js';
import { partitionFields, planRoute, routeBackends, type RoutePlan } from '../../plan/route.js';
import type { ShardMap } from '../../shard/map.js';
import type { JobRequest, LoadTarget, Opened } from '../types.js';
import { galeraTarget } from './galera.js';
import { singleTarget } from './single.js';
import { spiderDirectTarget, type RunShare } from './spiderDirect.js';
import { spiderFrontTarget } from './spiderFront.js';

/** A Spider table's shard map, or undefined when the account cannot read it and the front can still take the load. */
async function shardMapOf(req: JobRequest, opened: Opened): Promise<ShardMap | undefined> {
  const { prep } = opened;
  return readShardMap(opened.control.connection, prep.db, req.o.table).catch((err: unknown) => {
    // Without SELECT on mysql.servers the backends are unknown, but the front can still take the load.
    if (req.o.route === 'direct' || !isFlatloadError(err) || err.code !== 'MISSING_PRIVILEGE') throw err;
    req.events.emit({ type: 'note', message: `${err.message}: loading through the Spider front` });
    return undefined;
  });
}

/** Front or direct (plan/route.ts), from the shard map, the backends reachable and the input's columns. */
async function routeOf(req: JobRequest, opened: Opened, map: ShardMap): Promise<RoutePlan> {
  const { o, conn } = req;
  const { prep } = opened;
  const { backends } = routeBackends(map);
  checkBackendNames(o, backends);
  const columns = await tableColumns(opened.control.connection, prep.db, o.table);
  const plan = planRoute(
    {
      map,
      unreachable: await unreachableBackends(conn, backends, prep.display, o),
      fields: partitionFields(
        map,
        o.columns,
        columns.map((x) => x.name),
      ),
      inputReason: o.format.linesTerminatedBy.length === 0 ? 'the input has no line terminator (LINES TERMINATED BY empty), so flatload cannot cut it into records' : undefined,
      frontFilled: frontFilled(columns, o),
      mode: o.mode,
      strategy: o.strategy,
    },
    o.route,
  );
  if (plan.route === 'direct' && (o.columnsFromHeader || o.expect)) {
    // The split reads fields by position before any backend's load reads the header, and no share holds the whole table to check.
    throw new FlatloadError('UNSUPPORTED', `${o.columnsFromHeader ? '--columns header' : '--expect-rows/--expect-checksum'} is not supported for a Spider table loaded --route direct`, {
      hint: o.columnsFromHeader ? 'name the columns with --columns a,b,c, or load through the front with --route front' : 'load through the front with --route front, or check the backends with --verify',
    });
  }
  return plan;
}

/**
 * Where the rows go, decided once from the facts the job read once: a
 * Spider table through its front or straight to its backends, a Galera
 * cluster, or one server. A backend's share (`routed` false) is never
 * routed again.
 */
export async function resolveTarget(req: JobRequest, opened: Opened, routed: boolean, runShare: RunShare): Promise<LoadTarget> {
  const { prep } = opened;
  if (routed && prep.table.engine.toUpperCase() === 'SPIDER') {
    const map = await shardMapOf(req, opened);
    if (!map) return singleTarget(req, opened, { verifies: false });
    const route = { map, plan: await routeOf(req, opened, map) };
    return route.plan.route === 'direct' ? spiderDirectTarget(req, opened, route, runShare) : spiderFrontTarget(req, opened, route);
  }
  if (prep.server.galera) return galeraTarget(req, opened, prep.server.galera);
  return singleTarget(req, opened);
}
