import { selectOne } from '../db/rows.js';
import type { Connection } from 'mysql2/promise';
import { charsetInfo, WIDE_CHARSETS, type CharsetInfo } from '../chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import { isChunkable } from '../config/format.js';
import type { LoadOptions } from '../config/loadOptions.js';
import type { Session } from '../db/connect.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError } from '../errors/index.js';
import type { InputSource } from '../input/source.js';
import { readServerFacts } from './server.js';
import { readTableFacts } from './table.js';
import type { ServerFacts, TableFacts } from './types.js';
import type { ColumnTarget } from '../config/loadOptions.js';

/** Everything read (never written) before planning. */
export interface Prepared {
  db: string;
  /** `db.table` for messages. */
  display: string;
  server: ServerFacts;
  table: TableFacts;
  /** The column list the file maps to (undefined: all columns in table order). */
  columns: ColumnTarget[] | undefined;
  targets: ScanTargets;
  characterSet: string;
  charset: CharsetInfo;
  scan: ScanFormat;
  /** Why the input cannot be split (it then loads as one chunk). */
  unchunkableReason: string | undefined;
}

export function scanFormatOf(o: LoadOptions): ScanFormat {
  return {
    fieldTerm: o.format.fieldsTerminatedBy,
    lineTerm: o.format.linesTerminatedBy,
    enclosure: o.format.fieldsEnclosedBy.length ? o.format.fieldsEnclosedBy[0]! : -1,
    escape: o.format.fieldsEscapedBy.length ? o.format.fieldsEscapedBy[0]! : -1,
  };
}

/**
 * Which target fields the server scans as text in the file's character set:
 * CHAR/VARCHAR/TEXT/ENUM/SET columns. Binary, numeric and temporal columns
 * and @variables are scanned byte by byte (MariaDB 10.11, MDEV-34883).
 */
export function scanTargets(table: TableFacts, columns: readonly ColumnTarget[] | undefined): ScanTargets {
  const byName = new Map(table.columns.map((c) => [c.name.toLowerCase(), c]));
  const isText = (cs: string | null): boolean => cs !== null && cs !== 'binary';
  const textField = columns
    ? columns.map((c) => !c.isVariable && isText(byName.get(c.name.toLowerCase())?.characterSet ?? null))
    : table.columns.map((c) => isText(c.characterSet));
  return { fields: textField.length, textField };
}

export async function prepareLoad(o: LoadOptions, session: Session, control: Connection, file: InputSource): Promise<Prepared> {
  const db = o.db ?? session.options.database;
  if (!db) throw new FlatloadError('USAGE', 'no database given: use --table db.table, --database, or a URL ending in /db');
  const display = `${db}.${o.table}`;
  let server: ServerFacts;
  let table: TableFacts;
  try {
    server = await readServerFacts(control);
    table = await readTableFacts(control, db, o.table);
  } catch (err) {
    throw toFlatloadError(err, `reading ${display}`, { table: display });
  }
  const columns = o.columns;
  if (columns) {
    const known = new Set(table.columns.map((c) => c.name.toLowerCase()));
    const unknown = columns.filter((c) => !c.isVariable && !known.has(c.name.toLowerCase()));
    if (unknown.length) {
      throw new FlatloadError('UNKNOWN_COLUMN', `--columns names ${unknown.map((c) => `\`${c.name}\``).join(', ')}, not in ${display}`, {
        table: display,
      });
    }
  }
  // As the server does: without CHARACTER SET, LOAD DATA reads the file in character_set_database.
  const characterSet = o.format.characterSet ?? (await selectOne<{ cs: string }>(control, 'SELECT @@character_set_database AS cs'))?.cs ?? 'utf8mb4';
  if (WIDE_CHARSETS.has(characterSet.toLowerCase())) {
    throw new FlatloadError('UNSUPPORTED', `the file's character set would be ${characterSet}: LOAD DATA accepts it but loads garbage`, {
      file: file.path,
      hint: 'convert the file to UTF-8 and load it with --character-set utf8mb4',
    });
  }
  const charset = charsetInfo(characterSet);
  if (!charset) {
    throw new FlatloadError('UNSUPPORTED', `character set ${characterSet} is not one flatload can scan for record boundaries`, {
      file: file.path,
    });
  }
  const chunkable = isChunkable(o.format);
  return {
    db,
    display,
    server,
    table,
    columns,
    targets: scanTargets(table, columns),
    characterSet,
    charset,
    scan: scanFormatOf(o),
    unchunkableReason: chunkable.ok ? undefined : chunkable.reason,
  };
}
