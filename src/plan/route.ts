import type { ColumnTarget, LoadMode, StrategyName } from '../config/loadOptions.js';
import { FlatloadError } from '../errors/index.js';
import { backendKey, distinctBackends, type ShardBackend, type ShardMap } from '../shard/map.js';

/**
 * How the rows of a Spider table reach its backends. `front`: the front
 * server takes the load and Spider forwards each row (one INSERT per row to
 * its backend, measured in docs/scale-out.md). `direct`: flatload evaluates
 * the partition rule per record and loads each backend's share straight into
 * the backend table over its own connections. Pure.
 */
export const ROUTES = ['front', 'direct'] as const;
export type SpiderRoute = (typeof ROUTES)[number];

/** A backend table as the route loads it: where it is (never who logs in), and which partitions it holds. */
export interface RouteBackend extends Omit<ShardBackend, 'user'> {
  /** host:port (or socket) / database / table: what identifies a share. */
  key: string;
  /** The partitions whose rows this backend table holds. */
  partitions: string[];
}

export interface RouteFacts {
  map: ShardMap;
  /** Per backend key, why flatload could not connect to it; absent keys were reached. */
  unreachable: ReadonlyMap<string, string>;
  /** Where each partitioning column is in a record, or why a record does not carry it as a plain field. */
  fields: number[] | string;
  /** Why the input cannot be cut into records here (no line terminator…), or undefined. */
  inputReason: string | undefined;
  /**
   * A column the front fills itself and the input does not carry (an
   * AUTO_INCREMENT key): rows written straight into the backends would not
   * get the front's values.
   */
  frontFilled: string | undefined;
  mode: LoadMode;
  /** --strategy, when given. */
  strategy: StrategyName | undefined;
}

export interface RoutePlan {
  route: SpiderRoute;
  /** --route overrode the planner's choice. */
  forced: boolean;
  plannerChoice: SpiderRoute;
  /** One line per decision, naming the fact behind it. */
  reasons: string[];
  backends: RouteBackend[];
  /** Per partition index, the position of its backend in `backends`. */
  partitionBackend: number[];
  /** Per partitioning column, its field in a record (direct only). */
  fields: number[];
}

/**
 * Where each partitioning column sits in a record: its position in --columns,
 * or in the table's column order without one. A string says why not (the
 * column is not in the file, or reaches the table through a SET expression
 * flatload does not evaluate).
 */
export function partitionFields(map: ShardMap, columns: readonly ColumnTarget[] | undefined, tableColumns: readonly string[]): number[] | string {
  const cols = map.rule.columns;
  if (!cols) return map.unevaluable ?? `the partitioning expression ${map.rule.expression} is not a column list`;
  const names = columns ? columns.map((c) => (c.isVariable ? undefined : c.name.toLowerCase())) : tableColumns.map((c) => c.toLowerCase());
  const out: number[] = [];
  for (const c of cols) {
    const i = names.indexOf(c.name.toLowerCase());
    if (i === -1) return `the partitioning column ${c.name} is not a field of the input (--columns), so its value is the column default or an expression's`;
    out.push(i);
  }
  return out;
}

export function routeBackends(map: ShardMap): { backends: RouteBackend[]; partitionBackend: number[] } {
  const backends = distinctBackends(map).map(({ backend: { user: _user, ...b }, partitions }) => ({
    ...b,
    key: backendKey({ ...b, user: undefined }),
    partitions: partitions.map((i) => map.partitions[i]!.name),
  }));
  const partitionBackend = map.partitions.map((p) => backends.findIndex((b) => b.key === backendKey(p.backend)));
  return { backends, partitionBackend };
}

/** Why direct routing is not possible for these facts, or undefined when it is. */
function directObstacle(f: RouteFacts, backends: RouteBackend[]): string | undefined {
  if (f.map.unevaluable) return `flatload cannot evaluate the partition rule: ${f.map.unevaluable}`;
  if (typeof f.fields === 'string') return f.fields;
  if (f.inputReason) return f.inputReason;
  if (f.frontFilled) return `the front generates ${f.frontFilled} (AUTO_INCREMENT) and the input does not carry it`;
  if (f.mode !== 'append') return `--mode ${f.mode} empties the table first, which only the front does for every backend at once`;
  const down = backends.filter((b) => f.unreachable.has(b.key));
  if (down.length > 0) return `backend${down.length > 1 ? 's' : ''} ${down.map((b) => `${b.server ?? b.key} (${f.unreachable.get(b.key)})`).join(', ')} could not be reached with the given credentials`;
  return undefined;
}

/**
 * Direct when flatload can evaluate the rule for every record and reach
 * every backend; else the front, saying why. `override` (--route) wins, but
 * direct is refused when it cannot be done exactly.
 */
export function planRoute(f: RouteFacts, override: SpiderRoute | undefined): RoutePlan {
  const { backends, partitionBackend } = routeBackends(f.map);
  const obstacle = directObstacle(f, backends);
  const plannerChoice: SpiderRoute = obstacle ? 'front' : 'direct';
  const table = `\`${f.map.db}\`.\`${f.map.table}\``;
  const rule = `${f.map.rule.method} (${f.map.rule.expression}) over ${f.map.partitions.length} partitions on ${backends.length} backend table${backends.length === 1 ? '' : 's'}`;
  const reasons = [`${table} is a Spider table: ${rule}`];
  if (override === 'direct' && obstacle) {
    throw new FlatloadError('UNSUPPORTED', `--route direct: ${obstacle}`, { table, hint: 'use --route front (or leave --route out) to load through the Spider front' });
  }
  const route = override ?? plannerChoice;
  if (obstacle) reasons.push(`route front: ${obstacle}`);
  else if (route === 'direct') {
    reasons.push('route direct: flatload evaluates the partition rule per record and loads each backend table over its own connections (the front forwards one INSERT per row)');
  }
  if (override === 'front' && plannerChoice === 'direct') reasons.push('route front: --route front');
  if (route === 'front' && !f.strategy) {
    // Measured: batched INSERTs would reach the backends as one statement each, but the insert strategy's
    // per-batch SAVEPOINT fails on a Spider table (error 1178), so the front gets LOAD DATA.
    reasons.push('through the front with LOAD DATA LOCAL: Spider forwards it to the backends one row at a time (the batched-INSERT strategy needs SAVEPOINT, which a Spider table refuses with error 1178)');
  }
  return { route, forced: override !== undefined && override !== plannerChoice, plannerChoice, reasons, backends, partitionBackend, fields: typeof f.fields === 'string' ? [] : f.fields };
}

/** The route and the shard map as plan text. */
export function renderRoute(r: RoutePlan, map: ShardMap): string {
  const lines = [`route: ${r.route}${r.forced ? ` (forced by --route; the planner chose ${r.plannerChoice})` : ''}`];
  for (const reason of r.reasons) lines.push(`  - ${reason}`);
  lines.push('shard map:');
  for (const p of map.partitions) {
    const b = r.backends[r.partitionBackend[p.index]!]!;
    const bound = p.description === null ? '' : ` ${map.rule.method.startsWith('RANGE') ? '<' : 'in'} (${p.description})`;
    lines.push(`  ${p.name}${bound} -> ${b.server ? `${b.server} ` : ''}${b.key}`);
  }
  return lines.join('\n');
}
