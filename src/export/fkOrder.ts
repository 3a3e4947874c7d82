/**
 * The order an export's tables start in when foreign keys link them: a
 * referenced (parent) table before the tables that reference it, since each
 * chunk loads with foreign_key_checks on and a child row whose parent is not
 * there yet fails (1452). Among the tables free to start, smallest first
 * (startOrder, docs/exports.md#start-order). Tables whose keys form a cycle
 * have no such order: they keep the size order, as before, and say so.
 */
import { startOrder } from './slots.js';

/** A foreign key of `child` (a table key, db.table) that references `parent`. */
export interface ForeignKeyEdge {
  child: string;
  parent: string;
}

export interface ForeignKeyOrder<T> {
  /** Parents before their children; otherwise smallest first. */
  order: T[];
  /** Per table key: the export's tables that must finish loading before it starts. */
  waitsFor: Map<string, string[]>;
  /** Tables on a cycle of foreign keys among the export's tables (each cycle's tables together, in order). */
  cycles: string[][];
  /** Tables with a foreign key to themselves: their rows load in file order. */
  selfReferencing: string[];
}

/** Each table's parents among the export's tables (keys to other tables outside the export do not order anything). */
function parentsOf(keys: ReadonlySet<string>, edges: readonly ForeignKeyEdge[]): { parents: Map<string, Set<string>>; self: Set<string> } {
  const parents = new Map<string, Set<string>>([...keys].map((k) => [k, new Set<string>()]));
  const self = new Set<string>();
  for (const e of edges) {
    if (!keys.has(e.child) || !keys.has(e.parent)) continue;
    if (e.child === e.parent) self.add(e.child);
    else parents.get(e.child)!.add(e.parent);
  }
  return { parents, self };
}

/**
 * When every table left waits for another one left, there is a cycle: follow
 * the smallest unplaced parent from the smallest table left until a table
 * repeats; the tables from its first visit on are the cycle.
 */
function findCycle(left: readonly string[], parents: ReadonlyMap<string, ReadonlySet<string>>, placed: ReadonlySet<string>): string[] {
  const rank = new Map(left.map((k, i) => [k, i]));
  const path: string[] = [];
  let at = left[0]!;
  while (!path.includes(at)) {
    path.push(at);
    at = [...parents.get(at)!].filter((p) => !placed.has(p)).sort((a, b) => rank.get(a)! - rank.get(b)!)[0]!;
  }
  return path.slice(path.indexOf(at));
}

/**
 * Topological order over the export's foreign keys, smallest first among the
 * tables whose parents are placed. A cycle is broken at its smallest table,
 * which waits for none of the cycle's other tables.
 */
export function foreignKeyOrder<T extends { key: string; sizeBytes: number }>(tables: readonly T[], edges: readonly ForeignKeyEdge[]): ForeignKeyOrder<T> {
  const sized = startOrder(tables);
  const { parents, self } = parentsOf(new Set(sized.map((t) => t.key)), edges);
  const placed = new Set<string>();
  const order: T[] = [];
  const cycles: string[][] = [];
  const waitsFor = new Map<string, string[]>();
  while (order.length < sized.length) {
    const left = sized.filter((t) => !placed.has(t.key));
    let next = left.find((t) => [...parents.get(t.key)!].every((p) => placed.has(p)));
    if (!next) {
      const cycle = findCycle(left.map((t) => t.key), parents, placed);
      cycles.push(sized.filter((t) => cycle.includes(t.key)).map((t) => t.key));
      next = sized.find((t) => cycle.includes(t.key))!;
    }
    waitsFor.set(next.key, [...parents.get(next.key)!].filter((p) => placed.has(p)));
    placed.add(next.key);
    order.push(next);
  }
  return { order, waitsFor, cycles, selfReferencing: sized.filter((t) => self.has(t.key)).map((t) => t.key) };
}

/** What the plan and the report say about the order the foreign keys imposed. */
export function foreignKeyNotes(o: ForeignKeyOrder<{ key: string }>): string[] {
  const notes: string[] = [];
  const waiting = [...o.waitsFor].filter(([, ps]) => ps.length > 0);
  if (waiting.length > 0) {
    notes.push(`foreign keys among the export's tables: ${waiting.map(([k, ps]) => `${k} starts after ${ps.join(', ')} has loaded`).join('; ')} (a child row is checked against its parent as it loads) [docs/exports.md#foreign-keys]`);
  }
  for (const c of o.cycles) {
    notes.push(`${c.join(', ')} reference each other through foreign keys: no order loads them all with foreign_key_checks on, so ${c[0]} starts first without waiting for the others and a row whose parent is not loaded yet is rejected (1452) [docs/exports.md#foreign-keys]`);
  }
  for (const k of o.selfReferencing) {
    notes.push(`${k} references itself: its rows load in the file's order, and a row before its parent row is rejected (1452) [docs/exports.md#foreign-keys]`);
  }
  return notes;
}
