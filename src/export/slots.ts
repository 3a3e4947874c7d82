/**
 * One connection budget (--jobs) shared by every table of an export. Tables
 * start biggest first; each takes its share of the connections (a small
 * table loads whole, on one), as many as are free when its turn comes, and
 * gives them back when it is done, so the next table starts at once.
 */
const MiB = 1024 * 1024;

/**
 * Connections for a table of `sizeBytes` in an export of `totalBytes`: its
 * share of the budget, rounded up, and at most one per 8 MiB (a small table
 * loads whole, on one). Shares rather than "as many as it can use" keep
 * several tables loading at once, so one table's start-up — reading the
 * server, scanning and sorting its file — overlaps the others' loading
 * instead of leaving every connection idle.
 */
export function slotsWanted(sizeBytes: number, budget: number, totalBytes: number): number {
  const share = totalBytes > 0 ? Math.ceil((budget * sizeBytes) / totalBytes) : budget;
  return Math.max(1, Math.min(budget, share, Math.ceil(sizeBytes / (8 * MiB))));
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
