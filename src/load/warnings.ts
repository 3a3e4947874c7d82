/**
 * What a LOAD DATA LOCAL warning means for the row it names. LOCAL makes the
 * server treat errors as warnings and carry on, so these are the only
 * evidence that a row was skipped or changed.
 */
import { ER } from '../db/errnos.js';
import type { SentRecord } from './chunkSource.js';

export interface ServerWarning {
  level: string;
  code: number;
  message: string;
}

export type WarningClass =
  /** The row is not in the table (duplicate key under IGNORE). */
  | 'skipped'
  /** The row was malformed: too few or too many fields. */
  | 'malformed'
  /** A value was changed: truncated, clipped, converted, defaulted. */
  | 'altered'
  /** Informational: nothing happened to the data. */
  | 'note';

const SKIPPED = new Set<number>([ER.DUP_ENTRY, ER.DUP_KEY, ER.DUP_UNIQUE, ER.DUP_ENTRY_WITH_KEY_NAME, ER.FOREIGN_DUPLICATE_KEY]);
const MALFORMED = new Set<number>([ER.WARN_TOO_FEW_RECORDS, ER.WARN_TOO_MANY_RECORDS]);
const ALTERED = new Set<number>([
  ER.WARN_NULL_TO_NOTNULL,
  ER.WARN_DATA_OUT_OF_RANGE,
  ER.WARN_DATA_TRUNCATED,
  ER.TRUNCATED_WRONG_VALUE,
  ER.INVALID_CHARACTER_STRING,
  ER.TRUNCATED_WRONG_VALUE_FOR_FIELD,
  ER.DATA_TOO_LONG,
  ER.BAD_NULL,
  ER.NO_DEFAULT_FOR_FIELD,
  ER.WRONG_VALUE_FOR_TYPE,
  ER.CONSTRAINT_FAILED,
  ER.DATA_OUT_OF_RANGE,
  ER.CANNOT_CONVERT_CHARACTER,
]);
/**
 * Warnings about the statement, not a row: 1638 "Non-ASCII separator
 * arguments are not fully supported" is raised once for a multi-byte
 * separator, which the server then honours (checked against its own LOAD DATA).
 */
const STATEMENT_NOTES = new Set<number>([ER.WARN_NON_ASCII_SEPARATOR]);

export function classifyWarning(w: ServerWarning): WarningClass {
  if (w.level.toLowerCase() === 'note' || STATEMENT_NOTES.has(w.code)) return 'note';
  if (SKIPPED.has(w.code)) return 'skipped';
  if (MALFORMED.has(w.code)) return 'malformed';
  if (ALTERED.has(w.code)) return 'altered';
  // Unknown warnings are treated as data changes: never assume a warning is harmless.
  return 'altered';
}

/**
 * Which warnings make a row a problem (rejected, or the load stopped):
 * every warning but notes, duplicates skipped on purpose (--on-duplicate
 * ignore/replace) and value changes the user accepted (--allow-truncation).
 * The one policy both strategies apply.
 */
export function problemPolicy(o: { duplicatesExpected: boolean; allowAltered: boolean }): (w: ServerWarning) => boolean {
  return (w) => {
    // A row the server refused (refusedRow) is not in the table, whatever --allow-truncation accepts.
    if (w.level === REFUSED) return true;
    const cls = classifyWarning(w);
    return cls !== 'note' && !(cls === 'skipped' && o.duplicatesExpected) && !(cls === 'altered' && o.allowAltered);
  };
}

/** The level of a row refusal (refusedRow): not one of SHOW WARNINGS' levels, whose 'Error' rows may be duplicates skipped on purpose. */
const REFUSED = 'Refused';

/**
 * A LOAD DATA that the server stopped at one row with an error, as a
 * warning about that row: `LOAD DATA LOCAL … REPLACE` does not turn a bad
 * value or a short or long record into a warning as `IGNORE` does, it stops
 * there. Undefined for any other error (and one that names no row).
 */
export function refusedRow(err: unknown): ServerWarning | undefined {
  const e = err as { errno?: unknown; sqlMessage?: unknown } | undefined;
  if (typeof e?.errno !== 'number' || !(MALFORMED.has(e.errno) || ALTERED.has(e.errno))) return undefined;
  const message = typeof e.sqlMessage === 'string' ? e.sqlMessage : '';
  return warningRow(message) === undefined ? undefined : { level: REFUSED, code: e.errno, message };
}

/** The 1-based row number within the statement that a warning names, if it names one. */
export function warningRow(message: string): number | undefined {
  const m = /\bat row (\d+)\b/i.exec(message) ?? /^Row (\d+)\b/i.exec(message);
  return m ? Number(m[1]) : undefined;
}

/**
 * Adjacent equal texts as one, with their count. The server warns once per
 * missing or changed column, so a row short of three columns would print the
 * same line three times.
 */
export function collapseRepeats(texts: readonly string[]): Array<{ text: string; count: number }> {
  const out: Array<{ text: string; count: number }> = [];
  for (const text of texts) {
    const last = out[out.length - 1];
    if (last && last.text === text) last.count++;
    else out.push({ text, count: 1 });
  }
  return out;
}

/** A collapsed text, its count said when it repeats. */
export function counted(c: { text: string; count: number }): string {
  return c.count > 1 ? `${c.text} (${c.count} warnings)` : c.text;
}

/**
 * Up to `limit` problems with the input rows they name, for messages, a
 * repeated one once with its count; `total` counts those the server did not
 * list too.
 */
export function describeWarnings(problems: readonly ServerWarning[], records: readonly Pick<SentRecord, 'line' | 'offset'>[], total = problems.length, limit = 10): string {
  const texts = problems.map((w) => {
    const row = warningRow(w.message);
    const rec = row === undefined ? undefined : records[row - 1];
    return `    ${rec ? `line ${rec.line} (byte offset ${rec.offset})` : 'row not named by the server'}: [${w.code}] ${w.message}`;
  });
  const shown = collapseRepeats(texts).slice(0, limit);
  const lines = shown.map(counted);
  const covered = shown.reduce((n, c) => n + c.count, 0);
  if (total > covered) lines.push(`    … and ${total - covered} more`);
  return lines.join('\n');
}

/** Parses "Records: 3  Deleted: 0  Skipped: 0  Warnings: 0" from the OK packet. */
export interface LoadInfo {
  records: number;
  deleted: number;
  skipped: number;
  warnings: number;
}

export function parseLoadInfo(info: string | undefined): LoadInfo | undefined {
  if (!info) return undefined;
  const n = (k: string): number | undefined => {
    const m = new RegExp(`${k}:\\s*(\\d+)`).exec(info);
    return m ? Number(m[1]) : undefined;
  };
  const records = n('Records');
  if (records === undefined) return undefined;
  return { records, deleted: n('Deleted') ?? 0, skipped: n('Skipped') ?? 0, warnings: n('Warnings') ?? 0 };
}
