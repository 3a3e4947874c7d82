/**
 * The loading streams (--jobs) shared by every table of an export. A table
 * reads, checks and (to load in key order) sorts its file holding none; it
 * takes a stream for each chunk it loads and gives it back when the chunk is
 * done. So no connection waits while another table sorts, the tables with
 * chunks ready keep every stream busy, and the last table gets them all.
 */
import type { StreamGate } from '../load/runner.js';

const MiB = 1024 * 1024;

/**
 * Streams a table of `sizeBytes` may use at once: the whole budget, but at
 * most one per 8 MiB (a small table loads whole, on one connection). The
 * budget, not the table, bounds how many chunks of the export load at once.
 */
export function streamsFor(sizeBytes: number, budget: number): number {
  return Math.max(1, Math.min(budget, Math.ceil(sizeBytes / (8 * MiB))));
}

/**
 * Tables open at once (each holds a control connection and its bookkeeping):
 * one per stream, and one more reading or sorting its input meanwhile.
 */
export function tablesAtOnce(budget: number): number {
  return budget + 1;
}

/**
 * Tables open at once and the streams they share, within the connections
 * the account may still open (`left`, after the export's own; undefined: no
 * limit). Each open table holds a control connection and each stream one
 * more, so the ideal takes tablesAtOnce(jobs) + jobs. Fewer tables at once
 * give up first (a table waiting to start needs no connection), then streams.
 */
export function connectionLayout(jobs: number, left: number | undefined): { jobs: number; tables: number; warning?: string } {
  const tables = tablesAtOnce(jobs);
  if (left === undefined || tables + jobs <= left) return { jobs, tables };
  const fewer = left >= jobs + 1 ? { jobs, tables: left - jobs } : { jobs: Math.max(1, left - 1), tables: 1 };
  const streams = fewer.jobs < jobs ? ` and ${fewer.jobs} loading stream(s) instead of ${jobs}` : '';
  return { ...fewer, warning: `the account may open ${left} more connection(s) (max_user_connections): ${fewer.tables} table(s) at once instead of ${tables}${streams}; each table being loaded holds a control connection, each stream one more [docs/exports.md#connections]` };
}

/**
 * The order tables start in: smallest first, ties by name so a rerun starts them alike. Why: the server loads one
 * table while the client prepares the next, shortest preparation first (Johnson's rule; docs/exports.md#start-order).
 */
export function startOrder<T extends { sizeBytes: number; key: string }>(tables: readonly T[]): T[] {
  return [...tables].sort((a, b) => a.sizeBytes - b.sizeBytes || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * `total` streams, lent one chunk at a time: one per ready table before any gets a second, at most one each while
 * tables are still to start, then the free ones to whoever asks (the last table gets them all). Why: a second stream
 * into one table costs the server CPU the tables still sorting need (docs/exports.md#one-job).
 */
export class StreamBudget {
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly waiting: Array<{ table: string; wake: () => void }> = [];
  /** Tables not yet loading: to start, or reading and sorting their inputs. */
  private readonly pending: Set<string>;

  constructor(
    readonly total: number,
    tables: Iterable<string>,
  ) {
    this.free = total;
    this.pending = new Set(tables);
  }

  /** The gate one table's load takes its streams through. */
  gateFor(table: string): StreamGate {
    return { take: () => this.take(table), give: () => this.give(table) };
  }

  /** The table needs no more preparing: it asked for a stream, or it finished (or failed) without one. */
  started(table: string): void {
    if (this.pending.delete(table)) this.lend();
  }

  private holds(table: string): number {
    return this.held.get(table) ?? 0;
  }

  async take(table: string): Promise<void> {
    const granted = new Promise<void>((wake) => this.waiting.push({ table, wake }));
    this.pending.delete(table);
    this.lend();
    await granted;
  }

  give(table: string): void {
    this.held.set(table, this.holds(table) - 1);
    this.free++;
    this.lend();
  }

  /** Free streams to the waiting tables that hold the fewest (first asked first among equals). */
  private lend(): void {
    while (this.free > 0) {
      let best = -1;
      for (let i = 0; i < this.waiting.length; i++) {
        if (best < 0 || this.holds(this.waiting[i]!.table) < this.holds(this.waiting[best]!.table)) best = i;
      }
      if (best < 0) return;
      const next = this.waiting[best]!;
      if (this.holds(next.table) > 0 && this.pending.size > 0) return;
      this.waiting.splice(best, 1);
      this.free--;
      this.held.set(next.table, this.holds(next.table) + 1);
      next.wake();
    }
  }

  get available(): number {
    return this.free;
  }
}
