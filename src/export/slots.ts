/**
 * One connection budget (--jobs) shared by every table of an export. Tables
 * start biggest first; each takes the connections its size can use (a small
 * table loads whole, on one), as many as are free when its turn comes, and
 * gives them back when it is done, so the next table starts at once.
 */
const MiB = 1024 * 1024;

/** Connections a table of this many bytes can keep busy: one per 8 MiB, at least one, at most the budget. */
export function slotsWanted(sizeBytes: number, budget: number): number {
  return Math.max(1, Math.min(budget, Math.ceil(sizeBytes / (8 * MiB))));
}

/** The order tables start in: biggest first (ties by name, so a rerun starts them in the same order). */
export function startOrder<T extends { sizeBytes: number; key: string }>(tables: readonly T[]): T[] {
  return [...tables].sort((a, b) => b.sizeBytes - a.sizeBytes || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export class SlotBudget {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly total: number) {
    this.free = total;
  }

  /** Waits for at least one free connection, then takes up to `wanted` of those free. */
  async take(wanted: number): Promise<number> {
    while (this.free === 0) await new Promise<void>((r) => this.waiting.push(r));
    const n = Math.max(1, Math.min(wanted, this.free));
    this.free -= n;
    return n;
  }

  give(n: number): void {
    this.free += n;
    this.waiting.shift()?.();
  }

  get available(): number {
    return this.free;
  }
}
