/**
 * Checking a loaded table against what the exporter recorded: its row count
 * and the value of `CHECKSUM TABLE` (what mydumper's `--data-checksums`
 * writes as `data_checksum`). flatload proves loaded + rejected = input;
 * this catches an input that is not the whole table (a cut file, an export
 * that stopped early) and rows the load legitimately left out (rejected,
 * duplicates skipped).
 */
import type { Expectation } from '../config/loadOptions.js';
import type { Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { selectRows } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import type { TableRef } from '../plan/ops.js';
import { fmtInt } from '../report/format.js';
import type { CheckResult } from '../report/summary.js';

/** Pure: the comparison and, when it fails, the error naming the table and each figure. */
export function compareExpectation(e: Expectation, rows: number, checksum: string | null, display: string): { result: CheckResult; error: FlatloadError | undefined } {
  const diffs: string[] = [];
  if (e.rows !== undefined && e.rows !== rows) diffs.push(`${fmtInt(rows)} rows, ${fmtInt(e.rows)} expected`);
  if (e.checksum !== undefined && e.checksum !== checksum) diffs.push(`CHECKSUM TABLE ${checksum ?? 'NULL'}, ${e.checksum} expected`);
  const result: CheckResult = { source: e.source, expectedRows: e.rows ?? null, rows, expectedChecksum: e.checksum ?? null, checksum, equal: diffs.length === 0 };
  if (diffs.length === 0) return { result, error: undefined };
  const error = new FlatloadError('EXPECTATION_MISMATCH', `${display} does not match the export: ${diffs.join('; ')} (${e.source})`, {
    table: display,
    hint: 'the loaded rows are the input\'s (see the report for rows rejected or skipped): the export or its file is not the whole table, or the table held other rows; fetch the export again and rerun with --restart',
  });
  return { result, error };
}

/** COUNT(*) and, when one is expected, CHECKSUM TABLE of the loaded table (a swap's shadow, before it is published). */
export async function checkExpectation(control: Queryable, table: TableRef, display: string, e: Expectation): Promise<{ result: CheckResult; error: FlatloadError | undefined }> {
  const q = quoteQualified(table.db, table.table);
  const [count] = await selectRows<{ n: unknown }>(control, `SELECT COUNT(*) AS n FROM ${q}`);
  let checksum: string | null = null;
  if (e.checksum !== undefined) {
    const [c] = await selectRows<{ Checksum: string | number | null }>(control, `CHECKSUM TABLE ${q}`);
    checksum = c?.Checksum == null ? null : String(c.Checksum);
  }
  return compareExpectation(e, Number(count?.n ?? 0), checksum, display);
}
