/**
 * The real on-disk size of one table, made fresh first, per engine.
 *
 * What "fresh" means per engine:
 * - InnoDB: page compression (PAGE_COMPRESSED=1; MySQL's COMPRESSION=) only
 *   punches holes when a page is written, so such a table has its dirty pages
 *   written first (`FLUSH TABLES t FOR EXPORT` + `UNLOCK TABLES`); any other
 *   tablespace is final without it (docs/rules.md#innodb-size-measurement).
 *   `ANALYZE TABLE` refreshes DATA_LENGTH and INDEX_LENGTH, which otherwise
 *   stay at their creation-time values.
 * - MyRocks: rows written without bulk load sit in the memtable and appear in
 *   no SST (DATA_LENGTH 0) until `SET GLOBAL rocksdb_force_flush_memtable_now=1`;
 *   bulk-loaded primary keys are in SSTs at once. A compaction is not needed
 *   for the SST properties to cover the table (it shrinks the files a little
 *   more, because bottommost compaction zeroes sequence numbers, but it
 *   compacts the whole column family, i.e. every table in it), so it is
 *   opt-in (`compactRocksdb`).
 * - Aria/MyISAM: DATA_LENGTH/INDEX_LENGTH are the lengths of the data and
 *   index files; `FLUSH TABLES t` writes out cached blocks first.
 * - TokuDB (by rule; not runnable here): TokuDB_fractal_tree_info.
 *
 * Figures the server does not give (or does not give this user) come back as
 * `bytes: null` with a `note` saying why, never as an estimate from elsewhere.
 */
import type { Connection, PoolConnection } from 'mysql2/promise';
import { FlatloadError } from '../errors/index.js';
import { asServerError, isConnectionLost, toFlatloadError } from '../db/errors.js';
import { ER } from '../db/errnos.js';
import { quoteQualified } from '../db/quote.js';

export type SizeConnection = Connection | PoolConnection;

export interface SizeFigure {
  bytes: number | null;
  /** Where the number comes from, e.g. 'INNODB_SYS_TABLESPACES.ALLOCATED_SIZE'. */
  source: string;
  /** Why the figure is null, or a caveat about it. */
  note?: string;
}

export interface TableSizes {
  engine: string;
  rowFormat: string | null;
  createOptions: string | null;
  /** information_schema.TABLES DATA_LENGTH after ANALYZE/flush. */
  dataBytes: SizeFigure;
  /** information_schema.TABLES INDEX_LENGTH after ANALYZE/flush. */
  indexBytes: SizeFigure;
  /** Apparent on-disk size: InnoDB FILE_SIZE; MyISAM .MYD+.MYI; Aria .MAD+.MAI; MyRocks SST bytes attributed to the table's indexes; TokuDB bt_size_allocated. */
  fileBytes: SizeFigure;
  /** Bytes really allocated: InnoDB ALLOCATED_SIZE; TokuDB bt_size_in_use; others the file figure with a note, or null. */
  allocatedBytes: SizeFigure;
  /** The figure to compare with the input: allocated if known, else file, else data+index. */
  onDiskBytes: number | null;
  onDiskSource: string;
  /** Wall time of the flush/analyze step in ms (absent with flush: false). */
  flushMs?: number;
}

export interface MeasureOptions {
  /**
   * Make the figures fresh first (default true): InnoDB ANALYZE TABLE, after
   * FLUSH TABLES … FOR EXPORT for a page-compressed table (blocks writes to
   * the table while its pages are written); MyRocks a global memtable flush and ANALYZE TABLE;
   * Aria/MyISAM/TokuDB/others FLUSH TABLES t. With false nothing that changes
   * server state runs, and figures may be stale (each says so).
   * FLUSH TABLES and ANALYZE TABLE commit an open transaction on `conn` and
   * wait for other sessions' locks on the table (lock_wait_timeout): measure
   * after the load has finished.
   */
  flush?: boolean;
  /**
   * MyRocks only, with flush: also `SET GLOBAL rocksdb_compact_cf` for each
   * column family the table uses (default false: it compacts every table in
   * that column family and can take long on a big server).
   */
  compactRocksdb?: boolean;
  /**
   * With flush: 'run' (default) runs ANALYZE TABLE first; 'done': the load
   * just ran it (--analyze), so the figures are fresh without a second one;
   * 'skip': --analyze off, so DATA_LENGTH and INDEX_LENGTH may be stale.
   */
  analyze?: 'run' | 'done' | 'skip';
}

type Row = Record<string, unknown>;

/** A value the server returned as text: strings, numbers, bigints and Buffers as they read; anything else as JSON. */
function scalarText(v: unknown, encoding: BufferEncoding): string {
  if (Buffer.isBuffer(v)) return v.toString(encoding);
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
}

function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  const s = scalarText(v, 'latin1');
  if (s.trim() === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

function str(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return scalarText(v, 'utf8');
}

function errText(err: unknown): string {
  const e = asServerError(err);
  const msg = e?.sqlMessage ?? e?.message ?? String(err);
  return e?.errno !== undefined && e.sqlMessage ? `error ${e.errno}: ${msg}` : msg;
}

/** Statement failures that leave a figure unavailable; a lost connection is thrown. */
function unavailable(err: unknown, where: string): string {
  if (isConnectionLost(err)) throw toFlatloadError(err, where);
  return errText(err);
}

async function rows(conn: SizeConnection, sql: string, values: unknown[] = []): Promise<Row[]> {
  const [result] = await conn.query(sql, values);
  return Array.isArray(result) ? (result as Row[]) : [];
}

/**
 * The server's filename-safe encoding of an identifier (tablespace names,
 * MyRocks/TokuDB dictionary names): [A-Za-z0-9_] as is, other ASCII as
 * `@00xx`. Non-ASCII letters use compact codes from the server's own table, so
 * for those the server converts (`CONVERT(… USING filename)`); if it cannot,
 * undefined. Names written `#mysql50#raw` map to `raw`.
 */
export function encodeFilenameAscii(name: string): string | undefined {
  if (name.startsWith('#mysql50#')) return name.slice('#mysql50#'.length);
  let out = '';
  for (const ch of name) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 128) return undefined;
    out += /[A-Za-z0-9_]/.test(ch) ? ch : `@${cp.toString(16).padStart(4, '0')}`;
  }
  return out;
}

async function encodeFilename(conn: SizeConnection, name: string): Promise<string | undefined> {
  const ascii = encodeFilenameAscii(name);
  if (ascii !== undefined) return ascii;
  try {
    const r = await rows(conn, 'SELECT CAST(CONVERT(? USING filename) AS BINARY) AS enc', [name]);
    const v = r[0]?.['enc'];
    return v === undefined || v === null ? undefined : scalarText(v, 'latin1');
  } catch (err) {
    unavailable(err, 'encoding a table name');
    return undefined;
  }
}

/** Rows whose name matches exactly (binary); else the ones matching case-insensitively (lower_case_table_names). */
function preferExact<T>(items: T[], matches: (item: T, ci: boolean) => boolean): T[] {
  const exact = items.filter((i) => matches(i, false));
  return exact.length > 0 ? exact : items.filter((i) => matches(i, true));
}

function eq(a: string, b: string, ci: boolean): boolean {
  return ci ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** `base` itself, or one of its partitions `base#P#p0` (`#p#` on MySQL 8 and Windows), subpartitions `base#P#p0#SP#s0`. */
function isSelfOrPartition(name: string, base: string, ci: boolean): boolean {
  if (eq(name, base, ci)) return true;
  const head = name.slice(0, base.length);
  return eq(head, base, ci) && /^#p#/i.test(name.slice(base.length));
}

const NOT_FRESH = 'measured with flush: false; may be stale';

function figure(bytes: number | null, source: string, note?: string): SizeFigure {
  return note === undefined ? { bytes, source } : { bytes, source, note };
}

function joinNotes(...notes: Array<string | undefined>): string | undefined {
  const n = notes.filter((x): x is string => x !== undefined && x !== '');
  return n.length === 0 ? undefined : n.join('; ');
}

interface TableRow {
  schema: string;
  name: string;
  engine: string;
  rowFormat: string | null;
  createOptions: string | null;
  dataLength: number | null;
  indexLength: number | null;
}

async function readTablesRow(conn: SizeConnection, db: string, table: string): Promise<TableRow> {
  let r: Row[];
  try {
    r = await rows(
      conn,
      'SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name, TABLE_TYPE AS table_type, ENGINE AS engine, ' +
        'ROW_FORMAT AS row_format, CREATE_OPTIONS AS create_options, DATA_LENGTH AS data_length, INDEX_LENGTH AS index_length ' +
        'FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
      [db, table],
    );
  } catch (err) {
    throw toFlatloadError(err, 'reading the table size', { table: `${db}.${table}` });
  }
  const row = r[0];
  if (!row) throw new FlatloadError('UNKNOWN_TABLE', `table ${quoteQualified(db, table)} does not exist (or is not visible to this user)`, { table: `${db}.${table}` });
  const engine = str(row['engine']);
  if (engine === null) {
    throw new FlatloadError('UNSUPPORTED', `${quoteQualified(db, table)} is a ${str(row['table_type']) ?? 'table without an engine'}; it has no size of its own`, {
      table: `${db}.${table}`,
    });
  }
  const co = str(row['create_options']);
  return {
    schema: str(row['table_schema']) ?? db,
    name: str(row['table_name']) ?? table,
    engine,
    rowFormat: str(row['row_format']),
    createOptions: co === '' ? null : co,
    dataLength: num(row['data_length']),
    indexLength: num(row['index_length']),
  };
}

/** Runs ANALYZE TABLE (unless the load ran it or was told not to); returns a note when the figures may be stale. */
async function analyze(conn: SizeConnection, q: string, how: MeasureOptions['analyze'] = 'run'): Promise<string | undefined> {
  if (how === 'done') return undefined;
  if (how === 'skip') return 'no ANALYZE TABLE (--analyze off); may be stale';
  try {
    const r = await rows(conn, `ANALYZE TABLE ${q}`);
    const bad = r.filter((x) => /^error$/i.test(str(x['Msg_type']) ?? ''));
    if (bad.length > 0) return `ANALYZE TABLE failed (${bad.map((x) => str(x['Msg_text'])).join('; ')}); may be stale`;
    return undefined;
  } catch (err) {
    return `ANALYZE TABLE failed (${unavailable(err, 'ANALYZE TABLE')}); may be stale`;
  }
}

// ---------------------------------------------------------------- InnoDB

interface TablespaceRow {
  name: string;
  fileSize: number | null;
  allocatedSize: number | null;
}

async function innodbTablespaces(
  conn: SizeConnection,
  base: string,
): Promise<{ rows: TablespaceRow[]; view: string } | { error: string }> {
  // MariaDB (10.2+): INNODB_SYS_TABLESPACES; MySQL 8.0+: INNODB_TABLESPACES. Both need PROCESS.
  const views = ['INNODB_SYS_TABLESPACES', 'INNODB_TABLESPACES'];
  let last = '';
  for (const view of views) {
    try {
      const r = await rows(
        conn,
        `SELECT NAME AS name, FILE_SIZE AS file_size, ALLOCATED_SIZE AS allocated_size FROM information_schema.${view} ` +
          'WHERE NAME = ? OR LEFT(NAME, CHAR_LENGTH(?)) = ?',
        [base, `${base}#`, `${base}#`],
      );
      const all = r.map((x) => ({ name: str(x['name']) ?? '', fileSize: num(x['file_size']), allocatedSize: num(x['allocated_size']) }));
      // The table itself, or its partitions `t#P#p0` (`t#p#p0` on MySQL 8 / Windows), subpartitions `t#P#p0#SP#s0`.
      const mine = preferExact(all, (t, ci) => isSelfOrPartition(t.name, base, ci));
      return { rows: mine, view };
    } catch (err) {
      const e = asServerError(err);
      last = unavailable(err, `reading information_schema.${view}`);
      if (e?.errno === ER.UNKNOWN_TABLE) continue; // no such view on this server: try the other vendor's name
      return { error: e?.errno === ER.SPECIFIC_ACCESS_DENIED ? `${view} needs the PROCESS privilege (${last})` : `${view}: ${last}` };
    }
  }
  return { error: `no InnoDB tablespace view on this server (${last})` };
}

/** InnoDB page compression (MariaDB PAGE_COMPRESSED, shown so also when innodb_compression_default made it; MySQL COMPRESSION): holes are punched as pages are written. */
function holesPunched(createOptions: string | null): boolean {
  return /page_compressed`?\s*=\s*'?(1|on|yes)|\bcompression\s*=\s*["']?(zlib|lz4)/i.test(createOptions ?? '');
}

async function measureInnodb(
  conn: SizeConnection,
  t: TableRow,
  fresh: boolean,
  flushNote: string | undefined,
): Promise<{ file: SizeFigure; allocated: SizeFigure }> {
  const encDb = await encodeFilename(conn, t.schema);
  const encTable = await encodeFilename(conn, t.name);
  if (encDb === undefined || encTable === undefined) {
    const note = 'cannot derive the tablespace name (filename encoding) for this table name';
    return { file: figure(null, 'INNODB_SYS_TABLESPACES.FILE_SIZE', note), allocated: figure(null, 'INNODB_SYS_TABLESPACES.ALLOCATED_SIZE', note) };
  }
  const base = `${encDb}/${encTable}`;
  const ts = await innodbTablespaces(conn, base);
  if ('error' in ts) {
    return {
      file: figure(null, 'INNODB_SYS_TABLESPACES.FILE_SIZE', ts.error),
      allocated: figure(null, 'INNODB_SYS_TABLESPACES.ALLOCATED_SIZE', ts.error),
    };
  }
  const fileSource = `${ts.view}.FILE_SIZE`;
  const allocSource = `${ts.view}.ALLOCATED_SIZE`;
  if (ts.rows.length === 0) {
    const note = `no tablespace named ${base} (the table is in the system or a general tablespace, e.g. innodb_file_per_table=OFF)`;
    return { file: figure(null, fileSource, note), allocated: figure(null, allocSource, note) };
  }
  const partNote = ts.rows.length > 1 ? `sum of ${ts.rows.length} partition tablespaces` : undefined;
  const sum = (k: 'fileSize' | 'allocatedSize'): number | null =>
    ts.rows.some((r) => r[k] === null) ? null : ts.rows.reduce((a, r) => a + (r[k] ?? 0), 0);
  const pageCompressed = holesPunched(t.createOptions);
  const staleNote = !fresh ? `${NOT_FRESH}${pageCompressed ? ' (page compression only frees blocks when pages are flushed)' : ''}` : flushNote;
  const fileBytes = sum('fileSize');
  const allocatedBytes = sum('allocatedSize');
  const overNote =
    fileBytes !== null && allocatedBytes !== null && allocatedBytes > fileBytes
      ? `exceeds FILE_SIZE by ${allocatedBytes - fileBytes} bytes: the filesystem counts its own metadata blocks`
      : undefined;
  return {
    file: figure(fileBytes, fileSource, joinNotes(partNote, pageCompressed ? 'apparent size; punched holes are not subtracted' : undefined)),
    allocated: figure(
      allocatedBytes,
      allocSource,
      joinNotes(
        partNote,
        overNote,
        staleNote,
        pageCompressed ? 'blocks allocated after hole punching; needs a filesystem with sparse-file/punch-hole support' : undefined,
      ),
    ),
  };
}

// ---------------------------------------------------------------- MyRocks

interface RocksIndex {
  schema: string;
  table: string;
  index: string;
  cf: string;
}

async function rocksdbIndexes(conn: SizeConnection, encDb: string, encTable: string): Promise<RocksIndex[]> {
  const r = await rows(
    conn,
    'SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t, INDEX_NAME AS i, CF AS cf FROM information_schema.ROCKSDB_DDL WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
    [encDb, encTable],
  );
  const all = r.map((x) => ({ schema: str(x['s']) ?? '', table: str(x['t']) ?? '', index: str(x['i']) ?? '', cf: str(x['cf']) ?? '' }));
  return preferExact(all, (x, ci) => eq(x.schema, encDb, ci) && eq(x.table, encTable, ci));
}

const ROCKSDB_SST_SQL =
  'SELECT d.TABLE_SCHEMA AS s, d.TABLE_NAME AS t, d.INDEX_NAME AS i, m.SST_NAME AS sst, m.NUM_ROWS AS num_rows, ' +
  'm.DATA_SIZE AS data_size, tot.total_data_size AS total_data_size, ' +
  'p.DATA_BLOCK_SIZE + p.INDEX_BLOCK_SIZE + p.FILTER_BLOCK_SIZE AS sst_bytes, p.COMPRESSION_ALGO AS algo ' +
  'FROM information_schema.ROCKSDB_DDL d ' +
  'JOIN information_schema.ROCKSDB_INDEX_FILE_MAP m ON m.COLUMN_FAMILY = d.COLUMN_FAMILY AND m.INDEX_NUMBER = d.INDEX_NUMBER ' +
  'JOIN information_schema.ROCKSDB_SST_PROPS p ON p.SST_NAME = m.SST_NAME AND p.COLUMN_FAMILY = m.COLUMN_FAMILY ' +
  'JOIN (SELECT COLUMN_FAMILY, SST_NAME, SUM(DATA_SIZE) AS total_data_size FROM information_schema.ROCKSDB_INDEX_FILE_MAP ' +
  'GROUP BY COLUMN_FAMILY, SST_NAME) tot ON tot.COLUMN_FAMILY = m.COLUMN_FAMILY AND tot.SST_NAME = m.SST_NAME ' +
  'WHERE d.TABLE_SCHEMA = ? AND d.TABLE_NAME = ?';

async function measureRocksdb(
  conn: SizeConnection,
  encDb: string | undefined,
  encTable: string | undefined,
  fresh: boolean,
  flushNote: string | undefined,
): Promise<{ file: SizeFigure; allocated: SizeFigure }> {
  const source = 'ROCKSDB_SST_PROPS (data+index+filter block bytes) pro-rated by ROCKSDB_INDEX_FILE_MAP.DATA_SIZE';
  const none = (note: string): { file: SizeFigure; allocated: SizeFigure } => ({
    file: figure(null, source, note),
    allocated: figure(null, source, note),
  });
  if (encDb === undefined || encTable === undefined) return none('cannot derive the MyRocks table name (filename encoding) for this table name');
  let r: Row[];
  try {
    r = await rows(conn, ROCKSDB_SST_SQL, [encDb, encTable]);
    // The query reads the file map twice and the SST list once: a flush or compaction by another session between those
    // reads joins nothing. Once flushed, the rows are in some SST, so an empty answer is read again (twice at most).
    for (let retry = 0; fresh && r.length === 0 && retry < 2; retry++) {
      await new Promise((done) => setTimeout(done, 200));
      r = await rows(conn, ROCKSDB_SST_SQL, [encDb, encTable]);
    }
  } catch (err) {
    const e = asServerError(err);
    const why = unavailable(err, 'reading the MyRocks SST properties');
    return none(e?.errno === ER.UNKNOWN_TABLE ? `the MyRocks information_schema tables are absent (${why})` : why);
  }
  const mine = preferExact(r, (x, ci) => eq(str(x['s']) ?? '', encDb, ci) && eq(str(x['t']) ?? '', encTable, ci));
  let bytes = 0;
  const ssts = new Set<string>();
  const algos = new Set<string>();
  for (const x of mine) {
    const data = num(x['data_size']) ?? 0;
    const total = num(x['total_data_size']) ?? 0;
    const sst = num(x['sst_bytes']) ?? 0;
    // An SST can hold several indexes (of several tables): attribute its bytes by the share of key+value bytes.
    const share = total > 0 ? Math.min(1, data / total) : 0;
    bytes += share * sst;
    ssts.add(str(x['sst']) ?? '');
    const a = str(x['algo']);
    if (a) algos.add(a);
  }
  const rounded = Math.round(bytes);
  const detail =
    ssts.size === 0
      ? `no SST holds this table's rows${fresh ? '' : ' (they may still be in the memtable)'}`
      : `${ssts.size} SST file(s), compression ${[...algos].join('/') || 'unknown'}; SST properties slightly overstate the .sst file sizes [docs/engines.md]`;
  const stale = fresh ? flushNote : `${NOT_FRESH} (memtable rows are not in any SST until flushed)`;
  return {
    file: figure(rounded, source, joinNotes(detail, stale)),
    allocated: figure(rounded, source, joinNotes('same as the file figure: SST files are not sparse', stale)),
  };
}

// ---------------------------------------------------------------- TokuDB

async function measureTokudb(
  conn: SizeConnection,
  t: TableRow,
  fresh: boolean,
  flushNote: string | undefined,
): Promise<{ file: SizeFigure; allocated: SizeFigure }> {
  const view = 'information_schema.TokuDB_fractal_tree_info';
  const fileSource = 'TokuDB_fractal_tree_info.bt_size_allocated';
  const allocSource = 'TokuDB_fractal_tree_info.bt_size_in_use';
  const encDb = (await encodeFilename(conn, t.schema)) ?? t.schema;
  const encTable = (await encodeFilename(conn, t.name)) ?? t.name;
  let r: Row[];
  try {
    r = await rows(
      conn,
      `SELECT table_schema AS s, table_name AS t, SUM(bt_size_allocated) AS allocated, SUM(bt_size_in_use) AS in_use, COUNT(*) AS dictionaries ` +
        `FROM ${view} WHERE table_schema IN (?, ?) GROUP BY table_schema, table_name`,
      [t.schema, encDb],
    );
  } catch (err) {
    const e = asServerError(err);
    const why = unavailable(err, `reading ${view}`);
    const note = e?.errno === ER.UNKNOWN_TABLE ? `${view} is absent (TokuDB plugin not loaded or too old): ${why}` : why;
    return { file: figure(null, fileSource, note), allocated: figure(null, allocSource, note) };
  }
  // Names may be reported as written or filename-encoded; partitions as `t#P#p0`.
  const mine = preferExact(r, (x, ci) => {
    const s = str(x['s']) ?? '';
    const n = str(x['t']) ?? '';
    if (!(eq(s, t.schema, ci) || eq(s, encDb, ci))) return false;
    return [t.name, encTable].some((b) => isSelfOrPartition(n, b, ci));
  });
  if (mine.length === 0) {
    const note = `no fractal-tree dictionaries found for this table in ${view}`;
    return { file: figure(null, fileSource, note), allocated: figure(null, allocSource, note) };
  }
  const sum = (k: string): number => mine.reduce((a, x) => a + (num(x[k]) ?? 0), 0);
  const dicts = sum('dictionaries');
  const stale = fresh
    ? joinNotes(flushNote, 'reflects the fractal trees as of the last checkpoint (tokudb_checkpointing_period); no checkpoint is forced')
    : NOT_FRESH;
  return {
    file: figure(sum('allocated'), fileSource, joinNotes(`${dicts} dictionaries (main, status, key-*)`, stale)),
    allocated: figure(sum('in_use'), allocSource, joinNotes('compressed bytes of live blocks; the rest of bt_size_allocated is free space inside the files', stale)),
  };
}

// ---------------------------------------------------------------- entry points

export async function measureTableSizes(conn: SizeConnection, db: string, table: string, opts: MeasureOptions = {}): Promise<TableSizes> {
  const fresh = opts.flush ?? true;
  const first = await readTablesRow(conn, db, table);
  const engine = first.engine.toLowerCase();
  const flushStart = Date.now();
  const rocksEnc: RocksNames =
    engine === 'rocksdb' ? { db: await encodeFilename(conn, first.schema), table: await encodeFilename(conn, first.name) } : { db: undefined, table: undefined };
  const notes = fresh ? await makeFresh(conn, first, engine, rocksEnc, opts) : {};
  const flushMs = Date.now() - flushStart;

  const t = fresh ? await readTablesRow(conn, first.schema, first.name) : first;
  // InnoDB's DATA_LENGTH is page counts (ANALYZE is enough); MyRocks' comes from the flushed SSTs; Aria/MyISAM's from the state.
  const tablesNote = fresh ? joinNotes(notes.analyze, engine === 'rocksdb' ? notes.flush : undefined) : NOT_FRESH;
  const { file, allocated, dataNote, indexNote } = await measureFiles(conn, engine, t, rocksEnc, fresh, notes);

  const dataBytes = figure(t.dataLength, 'information_schema.TABLES.DATA_LENGTH', joinNotes(t.dataLength === null ? 'not reported by the engine' : dataNote, tablesNote));
  const indexBytes = figure(t.indexLength, 'information_schema.TABLES.INDEX_LENGTH', joinNotes(t.indexLength === null ? 'not reported by the engine' : indexNote, tablesNote));
  const onDisk = onDiskFigure(t, file, allocated);
  const out: TableSizes = {
    engine: t.engine,
    rowFormat: t.rowFormat,
    createOptions: t.createOptions,
    dataBytes,
    indexBytes,
    fileBytes: file,
    allocatedBytes: allocated,
    onDiskBytes: onDisk.bytes,
    onDiskSource: onDisk.source,
  };
  if (fresh) out.flushMs = flushMs;
  return out;
}

/** A MyRocks table's schema and name as its DDL view spells them (filename-encoded). */
interface RocksNames {
  db: string | undefined;
  table: string | undefined;
}

/** Why a figure may not be fresh after all: a flush, ANALYZE or compaction that failed or was skipped. */
interface FreshNotes {
  flush?: string | undefined;
  analyze?: string | undefined;
  compact?: string | undefined;
}

/** Makes the engine's figures fresh (see MeasureOptions.flush); a step that fails becomes a note, not an error. */
async function makeFresh(conn: SizeConnection, first: TableRow, engine: string, rocksEnc: RocksNames, opts: MeasureOptions): Promise<FreshNotes> {
  const q = quoteQualified(first.schema, first.name);
  if (engine === 'innodb') {
    const flush = holesPunched(first.createOptions) ? await flushForExport(conn, q) : undefined;
    return { flush, analyze: await analyze(conn, q, opts.analyze) };
  }
  if (engine === 'rocksdb') {
    const flush = await flushRocksdbMemtable(conn);
    const compact = opts.compactRocksdb ? await compactRocksdb(conn, rocksEnc) : undefined;
    return { flush, compact, analyze: await analyze(conn, q, opts.analyze) };
  }
  // Aria/MyISAM: writes cached key/data blocks, so the file lengths are final. Also harmless elsewhere.
  try {
    await conn.query(`FLUSH TABLES ${q}`);
    return {};
  } catch (err) {
    return { flush: `FLUSH TABLES failed (${unavailable(err, 'FLUSH TABLES')}); cached blocks may not be written yet` };
  }
}

async function flushForExport(conn: SizeConnection, q: string): Promise<string | undefined> {
  try {
    await conn.query(`FLUSH TABLES ${q} FOR EXPORT`);
    return undefined;
  } catch (err) {
    return `FLUSH TABLES … FOR EXPORT failed (${unavailable(err, 'FLUSH TABLES FOR EXPORT')}); dirty pages may not be on disk yet`;
  } finally {
    await conn.query('UNLOCK TABLES').catch((err: unknown) => unavailable(err, 'UNLOCK TABLES'));
  }
}

async function flushRocksdbMemtable(conn: SizeConnection): Promise<string | undefined> {
  try {
    await conn.query('SET GLOBAL rocksdb_force_flush_memtable_now = 1');
    return undefined;
  } catch (err) {
    return `SET GLOBAL rocksdb_force_flush_memtable_now failed (${unavailable(err, 'flushing the MyRocks memtable')}); rows still in the memtable are not counted`;
  }
}

async function compactRocksdb(conn: SizeConnection, rocksEnc: RocksNames): Promise<string | undefined> {
  if (rocksEnc.db === undefined || rocksEnc.table === undefined) return undefined;
  try {
    const cfs = new Set((await rocksdbIndexes(conn, rocksEnc.db, rocksEnc.table)).map((i) => i.cf));
    for (const cf of cfs) await conn.query('SET GLOBAL rocksdb_compact_cf = ?', [cf]);
    return undefined;
  } catch (err) {
    return `rocksdb_compact_cf failed (${unavailable(err, 'compacting MyRocks')})`;
  }
}

interface FileFigures {
  file: SizeFigure;
  allocated: SizeFigure;
  /** What DATA_LENGTH / INDEX_LENGTH count for this engine, where known. */
  dataNote?: string;
  indexNote?: string;
}

/** The engine's own file-level figures. */
async function measureFiles(conn: SizeConnection, engine: string, t: TableRow, rocksEnc: RocksNames, fresh: boolean, notes: FreshNotes): Promise<FileFigures> {
  switch (engine) {
    case 'innodb':
      return {
        dataNote: 'clustered index pages × page size (KEY_BLOCK_SIZE pages for ROW_FORMAT=COMPRESSED); punched holes not subtracted',
        indexNote: 'secondary index pages × page size',
        ...(await measureInnodb(conn, t, fresh, notes.flush)),
      };
    case 'rocksdb':
      return {
        dataNote: 'engine statistics: compressed SST bytes of the primary key (memtable not included)',
        indexNote: 'engine statistics: compressed SST bytes of the secondary indexes (memtable not included)',
        ...(await measureRocksdb(conn, rocksEnc.db, rocksEnc.table, fresh, joinNotes(notes.flush, notes.compact))),
      };
    case 'tokudb':
      return measureTokudb(conn, t, fresh, notes.flush);
    case 'aria':
    case 'myisam':
    case 'mrg_myisam': {
      const files = engine === 'aria' ? '.MAD+.MAI' : '.MYD+.MYI';
      const src = `information_schema.TABLES.DATA_LENGTH+INDEX_LENGTH (${files} file lengths)`;
      const bytes = t.dataLength === null ? null : t.dataLength + (t.indexLength ?? 0);
      const stale = fresh ? notes.flush : NOT_FRESH;
      return {
        file: figure(bytes, src, joinNotes(bytes === null ? 'the server reported no DATA_LENGTH' : undefined, stale)),
        allocated: figure(bytes, src, joinNotes('apparent file lengths: the server does not report allocated blocks', stale)),
      };
    }
    default: {
      const note = `no file-level size query for engine ${t.engine}`;
      return { file: figure(null, 'none', note), allocated: figure(null, 'none', note) };
    }
  }
}

/** The best on-disk figure there is: allocated blocks, else file lengths, else the TABLES lengths. */
function onDiskFigure(t: TableRow, file: SizeFigure, allocated: SizeFigure): { bytes: number | null; source: string } {
  if (allocated.bytes !== null) return { bytes: allocated.bytes, source: allocated.source };
  if (file.bytes !== null) return { bytes: file.bytes, source: file.source };
  if (t.dataLength !== null) return { bytes: t.dataLength + (t.indexLength ?? 0), source: 'information_schema.TABLES.DATA_LENGTH+INDEX_LENGTH' };
  return { bytes: null, source: 'unavailable' };
}

/** input bytes / on-disk bytes (> 1: the table is smaller than the input); null when either is unknown or zero. */
export function sizeRatio(inputBytes: number, onDiskBytes: number | null): number | null {
  if (onDiskBytes === null || !Number.isFinite(onDiskBytes) || onDiskBytes <= 0) return null;
  if (!Number.isFinite(inputBytes) || inputBytes < 0) return null;
  return inputBytes / onDiskBytes;
}
