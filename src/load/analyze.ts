/**
 * `--analyze`: ANALYZE TABLE once the rows are in, so the optimizer's
 * statistics describe the table as loaded, not as it was (a reloaded table
 * otherwise keeps the statistics of the empty one until the engine's own
 * recalculation, if it has one, gets to it). Timed for the report.
 */
import type { Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { selectRows } from '../db/rows.js';
import type { TableRef } from '../plan/ops.js';

export interface AnalyzeResult {
  seconds: number;
  /** Why the statistics may not be fresh (ANALYZE refused or reported an error); null when it succeeded. */
  note: string | null;
}

/** Whether to run it: asked for, or (auto) the load started from an empty table, whose statistics describe no rows. */
export function analyzeWanted(choice: 'on' | 'off' | 'auto', startedEmpty: boolean): boolean {
  return choice === 'on' || (choice === 'auto' && startedEmpty);
}

export async function analyzeTable(control: Queryable, t: TableRef): Promise<AnalyzeResult> {
  const t0 = Date.now();
  try {
    const rows = await selectRows<{ Msg_type?: string; Msg_text?: string }>(control, `ANALYZE TABLE ${quoteQualified(t.db, t.table)}`);
    const bad = rows.filter((r) => /^error$/i.test(String(r.Msg_type ?? '')));
    return { seconds: (Date.now() - t0) / 1000, note: bad.length ? `ANALYZE TABLE reported: ${bad.map((r) => r.Msg_text).join('; ')}` : null };
  } catch (err) {
    // Statistics are advice to the optimizer: the rows are loaded either way, so a refusal is a note, not a failed load.
    return { seconds: (Date.now() - t0) / 1000, note: `ANALYZE TABLE failed: ${(err as Error).message}` };
  }
}
