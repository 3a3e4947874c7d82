/** A problem the server reported for a row, as the reject log records it. */
export interface RowProblem {
  code: number;
  message: string;
}

/** The outcome of loading records [a, b) under a savepoint (rolled back by the attempt itself when not ok). */
export interface RangeAttempt {
  ok: boolean;
  /** Rows now in the table (a range can be ok yet skip duplicates on purpose). */
  landed: number;
  problems: RowProblem[];
  /** Records the server named as bad, when it named them all; splitting there isolates them fastest. */
  named?: number[];
}

/**
 * Loads records [from, to) in ranges: a range that loads cleanly stays; one with
 * problems (rolled back by `attempt`) is split — at the records the server
 * named, else in halves — until each bad record stands alone and is handed
 * to `reject` with the server's own messages. pgloader's method, with the
 * server's exact conversions. Returns the rows that landed.
 */
export async function bisect(
  from: number,
  to: number,
  attempt: (a: number, b: number) => Promise<RangeAttempt>,
  reject: (record: number, problems: RowProblem[]) => void,
): Promise<number> {
  let landed = 0;
  const solve = async (a: number, b: number): Promise<void> => {
    if (b <= a) return;
    const r = await attempt(a, b);
    if (r.ok) {
      landed += r.landed;
      return;
    }
    if (b - a === 1) {
      reject(a, r.problems.length ? r.problems : [{ code: 0, message: 'the server skipped this row' }]);
      return;
    }
    if (r.named && r.named.length > 0) {
      let from = a;
      for (const row of [...r.named].sort((x, y) => x - y)) {
        await solve(from, row);
        await solve(row, row + 1);
        from = row + 1;
      }
      await solve(from, b);
      return;
    }
    const mid = (a + b) >>> 1;
    await solve(a, mid);
    await solve(mid, b);
  };
  await solve(from, to);
  return landed;
}
