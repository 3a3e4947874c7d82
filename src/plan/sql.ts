import type { FileFormat } from '../config/format.js';
import { quoteBytes, quoteId, quoteQualified } from '../db/quote.js';

export type DuplicateHandling = 'error' | 'ignore' | 'replace';

/** A column list entry: a column name, or a user variable that discards/holds the field. */
export interface ColumnTarget {
  name: string;
  isVariable: boolean;
}

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
