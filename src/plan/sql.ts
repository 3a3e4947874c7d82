import type { FileFormat } from '../config/format.js';
import type { ColumnTarget, DuplicateHandling } from '../config/loadOptions.js';
import { quoteBytes, quoteId, quoteQualified } from '../db/quote.js';
import type { LoadPlan } from './types.js';


export function columnListSql(columns: readonly ColumnTarget[] | undefined): string {
  if (!columns || columns.length === 0) return '';
  return ` (${columns.map((c) => (c.isVariable ? `@${c.name}` : quoteId(c.name))).join(', ')})`;
}

export interface LoadDataSqlInput {
  /** The name the server will echo back in its LOCAL INFILE request. */
  fileToken: string;
  db: string;
  table: string;
  format: FileFormat;
  /** The file's character set, always spelled out so the current database's default cannot change it. */
  characterSet: string;
  columns: readonly ColumnTarget[] | undefined;
  /** SET clause assignments, already SQL (e.g. a pre-assigned key). */
  setClause?: string | undefined;
  duplicates: DuplicateHandling;
}

/**
 * LOAD DATA LOCAL INFILE for one chunk. Never IGNORE n LINES: headers are
 * skipped on the client, so every chunk is plain records.
 */
export function loadDataSql(i: LoadDataSqlInput): string {
  const f = i.format;
  const dup = i.duplicates === 'replace' ? ' REPLACE' : i.duplicates === 'ignore' ? ' IGNORE' : '';
  let sql = `LOAD DATA LOCAL INFILE '${i.fileToken.replace(/[^A-Za-z0-9_.-]/g, '_')}'${dup} INTO TABLE ${quoteQualified(i.db, i.table)}`;
  sql += ` CHARACTER SET ${i.characterSet.replace(/[^a-z0-9_]/gi, '')}`;
  sql += ` FIELDS TERMINATED BY ${quoteBytes(f.fieldsTerminatedBy)}`;
  if (f.fieldsEnclosedBy.length) sql += ` ${f.fieldsOptionallyEnclosed ? 'OPTIONALLY ' : ''}ENCLOSED BY ${quoteBytes(f.fieldsEnclosedBy)}`;
  sql += ` ESCAPED BY ${quoteBytes(f.fieldsEscapedBy)}`;
  sql += ` LINES TERMINATED BY ${quoteBytes(f.linesTerminatedBy)}`;
  sql += columnListSql(i.columns);
  if (i.setClause) sql += ` SET ${i.setClause}`;
  return sql;
}

/** The user variable that numbers pre-assigned keys within a LOAD DATA statement. */
export const KEY_VARIABLE = '@flatload_key';

/** What the chunk statement's SQL needs besides the plan: how the file is written. */
export interface ChunkSqlContext {
  format: FileFormat;
  /** The file's character set (LOAD DATA's CHARACTER SET). */
  characterSet: string;
}

/** The plan's pre-assigned surrogate key, if it has one. */
export function preAssignedKey(plan: LoadPlan): { column: string; firstValue: string } | undefined {
  return plan.surrogateKey?.kind === 'pre-assign' ? plan.surrogateKey : undefined;
}

/**
 * The LOAD DATA LOCAL statement that loads a chunk (or a run of its records)
 * — the one text both the executor sends and `flatload plan` shows. With a
 * pre-assigned key, each row takes the next value of KEY_VARIABLE.
 */
export function chunkLoadSql(plan: LoadPlan, c: ChunkSqlContext, fileToken: string): string {
  const key = preAssignedKey(plan);
  return loadDataSql({
    fileToken,
    db: plan.loadTarget.db,
    table: plan.loadTarget.table,
    format: c.format,
    characterSet: c.characterSet,
    columns: plan.columns,
    duplicates: plan.duplicates,
    setClause: key ? `${quoteId(key.column)} = (${KEY_VARIABLE} := ${KEY_VARIABLE} + 1)` : undefined,
  });
}

/** Sets the key counter so that the next row gets `firstKey` (the key of the first record loaded). */
export function keyCounterSql(firstKey: bigint | string): string {
  return typeof firstKey === 'string' ? `SET ${KEY_VARIABLE} = ${firstKey} - 1` : `SET ${KEY_VARIABLE} = ${(firstKey - 1n).toString()}`;
}

/** `INSERT INTO t (cols…) VALUES ` for the insert strategy: the file's columns, then a pre-assigned key. */
export function insertHeadSql(plan: LoadPlan, fileColumns: readonly ColumnTarget[]): string {
  const cols = fileColumns.filter((f) => !f.isVariable).map((f) => quoteId(f.name));
  const key = preAssignedKey(plan);
  if (key) cols.push(quoteId(key.column));
  // LOAD DATA LOCAL runs as IGNORE unless REPLACE is given: IGNORE gives the INSERTs its conversions (a value it
  // adjusts is a warning, not a strict-mode error) and its duplicates (a warning, the row skipped, then rejected).
  const verb = plan.duplicates === 'replace' ? 'REPLACE' : 'INSERT IGNORE';
  return `${verb} INTO ${quoteQualified(plan.loadTarget.db, plan.loadTarget.table)} (${cols.join(', ')}) VALUES `;
}
