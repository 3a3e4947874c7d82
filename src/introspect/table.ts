import type { Connection, PoolConnection } from 'mysql2/promise';
import type { Queryable } from '../db/control.js';
import { quoteQualified } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';
import type { ColumnFacts, IndexFacts, TableFacts } from './types.js';

type Conn = Connection | PoolConnection;

async function rows<T>(conn: Conn, sql: string, values?: unknown[]): Promise<T[]> {
  const [r] = await conn.query(sql, values);
  return r as T[];
}

type TableRow = { ENGINE: string | null; ROW_FORMAT: string | null; CREATE_OPTIONS: string | null; TABLE_ROWS: string | number | null; TABLE_COLLATION: string | null; TABLE_TYPE: string; AUTO_INCREMENT: string | number | null };

/** Read-only facts about the target table. Throws UNKNOWN_DATABASE / UNKNOWN_TABLE with the name. */
export async function readTableFacts(conn: Conn, db: string, table: string): Promise<TableFacts> {
  const t = await readTableRow(conn, db, table);
  const columns = await readColumns(conn, db, table);
  const indexes = await readIndexes(conn, db, table);
  const primaryKey = indexes.find((i) => i.primary);
  const foreignKeys = await readForeignKeys(conn, db, table);
  const referencedBy = await countOne(
    conn,
    `SELECT COUNT(DISTINCT CONSTRAINT_SCHEMA, CONSTRAINT_NAME) AS n FROM information_schema.KEY_COLUMN_USAGE
          WHERE REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?`,
    [db, table],
  );
  const triggers = (
    await rows<{ TRIGGER_NAME: string; EVENT_MANIPULATION: string; ACTION_TIMING: string }>(
      conn,
      `SELECT TRIGGER_NAME, EVENT_MANIPULATION, ACTION_TIMING FROM information_schema.TRIGGERS
        WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ?`,
      [db, table],
    )
  ).map((r) => ({ name: r.TRIGGER_NAME, event: r.EVENT_MANIPULATION, timing: r.ACTION_TIMING }));
  const partitions = await countOne(
    conn,
    `SELECT COUNT(*) AS n FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL`,
    [db, table],
  );
  const qualified = quoteQualified(db, table);
  const empty = (await rows<{ one: number }>(conn, `SELECT 1 AS one FROM ${qualified} LIMIT 1`)).length === 0;
  const create = await rows<Record<string, string>>(conn, `SHOW CREATE TABLE ${qualified}`);
  const collation = t.TABLE_COLLATION;

  return {
    db,
    table,
    engine: (t.ENGINE ?? 'UNKNOWN').toUpperCase(),
    rowFormat: t.ROW_FORMAT,
    createOptions: t.CREATE_OPTIONS ?? '',
    charset: collation ? collation.split('_')[0]! : null,
    columns,
    indexes,
    primaryKey,
    clusteredKey: primaryKey ?? implicitClusteredKey(indexes, columns),
    autoIncrementColumn: columns.find((c) => /auto_increment/i.test(c.extra))?.name,
    autoIncrementNext: t.AUTO_INCREMENT === null ? null : String(t.AUTO_INCREMENT),
    foreignKeys,
    referencedBy,
    triggers,
    partitioned: partitions > 0,
    empty,
    approxRows: Number(t.TABLE_ROWS ?? 0),
    createSql: String(create[0]?.['Create Table'] ?? ''),
  };
}

async function countOne(conn: Conn, sql: string, values: unknown[]): Promise<number> {
  return Number((await rows<{ n: number }>(conn, sql, values))[0]?.n ?? 0);
}

/** The table's row in information_schema.TABLES, after checking that the database and a base table of that name exist. */
async function readTableRow(conn: Conn, db: string, table: string): Promise<TableRow> {
  const schemata = await countOne(conn, 'SELECT COUNT(*) AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [db]);
  if (schemata === 0) {
    throw new FlatloadError('UNKNOWN_DATABASE', `unknown database \`${db}\``, { table: `${db}.${table}` });
  }
  const t = (
    await rows<TableRow>(
      conn,
      `SELECT ENGINE, ROW_FORMAT, CREATE_OPTIONS, TABLE_ROWS, TABLE_COLLATION, TABLE_TYPE, AUTO_INCREMENT
         FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
      [db, table],
    )
  )[0];
  if (!t) throw new FlatloadError('UNKNOWN_TABLE', `unknown table \`${db}\`.\`${table}\``, { table: `${db}.${table}` });
  if (t.TABLE_TYPE !== 'BASE TABLE') {
    throw new FlatloadError('UNSUPPORTED', `\`${db}\`.\`${table}\` is a ${t.TABLE_TYPE.toLowerCase()}, not a table`, { table: `${db}.${table}` });
  }
  return t;
}

async function readColumns(conn: Conn, db: string, table: string): Promise<ColumnFacts[]> {
  const found = await rows<{
    COLUMN_NAME: string;
    ORDINAL_POSITION: number;
    DATA_TYPE: string;
    COLUMN_TYPE: string;
    IS_NULLABLE: string;
    COLUMN_DEFAULT: string | null;
    EXTRA: string;
    CHARACTER_MAXIMUM_LENGTH: string | number | null;
    CHARACTER_SET_NAME: string | null;
    COLLATION_NAME: string | null;
  }>(
    conn,
    `SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA,
              CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME, COLLATION_NAME
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
    [db, table],
  );
  return found.map((c) => ({
    name: c.COLUMN_NAME,
    ordinal: Number(c.ORDINAL_POSITION),
    dataType: c.DATA_TYPE.toLowerCase(),
    columnType: c.COLUMN_TYPE,
    nullable: c.IS_NULLABLE === 'YES',
    defaultValue: c.COLUMN_DEFAULT,
    extra: c.EXTRA ?? '',
    maxChars: c.CHARACTER_MAXIMUM_LENGTH === null ? null : Number(c.CHARACTER_MAXIMUM_LENGTH),
    characterSet: c.CHARACTER_SET_NAME,
    collation: c.COLLATION_NAME,
    generated: /GENERATED|VIRTUAL|PERSISTENT|STORED/i.test(c.EXTRA ?? ''),
  }));
}

async function readIndexes(conn: Conn, db: string, table: string): Promise<IndexFacts[]> {
  const stats = await rows<{ INDEX_NAME: string; NON_UNIQUE: number | string; SEQ_IN_INDEX: number; COLUMN_NAME: string; INDEX_TYPE: string }>(
    conn,
    `SELECT INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, INDEX_TYPE
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
    [db, table],
  );
  const byName = new Map<string, IndexFacts>();
  for (const s of stats) {
    const ix = byName.get(s.INDEX_NAME) ?? { name: s.INDEX_NAME, unique: Number(s.NON_UNIQUE) === 0, primary: s.INDEX_NAME === 'PRIMARY', columns: [], type: s.INDEX_TYPE };
    ix.columns.push(s.COLUMN_NAME);
    byName.set(s.INDEX_NAME, ix);
  }
  return [...byName.values()];
}

/** Without a PRIMARY KEY, InnoDB and MyRocks cluster by the first UNIQUE NOT NULL key. */
function implicitClusteredKey(indexes: IndexFacts[], columns: ColumnFacts[]): IndexFacts | undefined {
  const notNull = new Set(columns.filter((c) => !c.nullable).map((c) => c.name));
  return indexes.find((i) => i.unique && i.columns.every((c) => notNull.has(c)) && i.type !== 'FULLTEXT');
}

async function readForeignKeys(conn: Conn, db: string, table: string): Promise<TableFacts['foreignKeys']> {
  const found = await rows<{ CONSTRAINT_NAME: string; COLUMN_NAME: string; REFERENCED_TABLE_NAME: string }>(
    conn,
    `SELECT CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY CONSTRAINT_NAME, ORDINAL_POSITION`,
    [db, table],
  );
  const fkMap = new Map<string, { name: string; columns: string[]; referencedTable: string }>();
  for (const f of found) {
    const fk = fkMap.get(f.CONSTRAINT_NAME) ?? { name: f.CONSTRAINT_NAME, columns: [], referencedTable: f.REFERENCED_TABLE_NAME };
    fk.columns.push(f.COLUMN_NAME);
    fkMap.set(f.CONSTRAINT_NAME, fk);
  }
  return [...fkMap.values()];
}

/** A Galera table's fingerprint: that it exists (its rows are counted instead, see sameTable). */
export const CLUSTER_FINGERPRINT = 'a Galera table (node-local facts not compared: its rows are counted)';

/**
 * What changes when a table is emptied by TRUNCATE or re-created, but not
 * when rows are written: its creation time (MyISAM/Aria re-create their
 * files on TRUNCATE), InnoDB's table id and MyRocks' index numbers (both new
 * after TRUNCATE and re-creation). A finished or half-done load checks it
 * before trusting that the rows it committed are still in the table. On a
 * Galera node (`cluster`) the creation time and the table id are the node's
 * own, different on every node and new after a state transfer: only the
 * table's existence is recorded there, and its row count does the rest.
 */
export async function readTableFingerprint(conn: Queryable, db: string, table: string, cluster = false): Promise<string | null> {
  const rows = async <T>(sql: string, values: unknown[]): Promise<T[]> => (await conn.query(sql, values))[0] as T[];
  const t = (await rows<{ ENGINE: string | null; CREATE_TIME: unknown }>('SELECT ENGINE, CREATE_TIME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [db, table]))[0];
  if (!t) return null;
  if (cluster) return CLUSTER_FINGERPRINT;
  const parts = [`created ${String(t.CREATE_TIME)}`];
  const engine = (t.ENGINE ?? '').toUpperCase();
  if (engine === 'INNODB') {
    const r = await rows<{ id: unknown }>('SELECT TABLE_ID AS id FROM information_schema.INNODB_SYS_TABLES WHERE NAME = ?', [`${db}/${table}`]).catch(() => []);
    if (r[0]) parts.push(`innodb table id ${String(r[0].id)}`);
  } else if (engine === 'ROCKSDB') {
    const r = await rows<{ n: unknown }>('SELECT MIN(INDEX_NUMBER) AS n FROM information_schema.ROCKSDB_DDL WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [db, table]).catch(() => []);
    if (r[0]) parts.push(`rocksdb index ${String(r[0].n)}`);
  }
  return parts.join(', ');
}

/**
 * Whether the table is still the one a job recorded (`then`): a table that
 * is gone is not; on a Galera cluster any table that exists is (fingerprints
 * recorded on another node, or before this rule, included), and the caller
 * counts its rows. Pure.
 */
export function sameTable(then: string | null, now: string | null, cluster: boolean): boolean {
  if (then === null) return true;
  if (now === null) return false;
  return cluster || now === then;
}
