import type { Queryable } from '../db/control.js';
import { quoteId } from '../db/quote.js';
import { maskUrlSecrets } from '../errors/mask.js';
import type { RoutePlan } from '../plan/route.js';
import type { LoadPlan } from '../plan/types.js';
import type { Activity } from '../report/activity.js';
import type { JobIdentity } from './identity.js';
import { JOB_LOCK_PREFIX } from './lock.js';
import { selectNumber, selectOne, selectRows } from '../db/rows.js';

type Conn = Queryable;

export type JobState = 'running' | 'interrupted' | 'failed' | 'done' | 'abandoned';
/** How far the job got: its `before` statements ran (prepared), every chunk committed (loaded), `after` ran (finished). */
export type JobPhase = 'created' | 'prepared' | 'loaded' | 'finished';

export interface StoredJob {
  jobId: string;
  target: string;
  inputPath: string;
  state: JobState;
  phase: JobPhase;
  identity: JobIdentity;
  plan: LoadPlan;
  chunksTotal: number | null;
  rowsInInput: number | null;
  rowsBefore: number | null;
  resumeCommand: string | null;
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
  message: string | null;
  /** What a finished job committed (null until it finished). */
  rowsLoaded: number | null;
  rowsRejected: number | null;
  /** The process that last ran the job (user@host pid N). */
  owner: string | null;
  /** The load target's fingerprint when its chunks started (and, once done, the target's when it finished). */
  tableFingerprint: string | null;
  /**
   * The digest of every byte of the input as the job's first run read it (src/input/digest.ts; kept in
   * input_sha256, named for the digest older flatloads took), or null: recorded earlier still, or never read whole.
   */
  inputHash: string | null;
  /** What its run was doing before its first chunk could load (null once chunks load). */
  activity: Activity | null;
}

export interface DoneChunk {
  index: number;
  startByte: number;
  endByte: number;
  records: number;
  rowsLoaded: number;
  rejected: number;
  /**
   * A streamed input's chunk: the digest of its bytes (src/input/digest.ts, CHUNK_DIGEST), or null. Kept in the
   * column sha1, named for the digest older flatloads took: their tables have it, and they still read and write it.
   */
  digest: string | null;
  /** The chunk's rejected rows (JSON, see report/rejectFile.ts), stored with the chunk so a resume can rebuild the reject file. */
  rejects: string | null;
}

export interface JobSummary {
  schema: string;
  jobId: string;
  target: string;
  inputPath: string;
  state: JobState;
  phase: JobPhase;
  chunksDone: number;
  chunksTotal: number | null;
  rowsDone: number;
  rowsInInput: number | null;
  startedAt: string;
  lastProgressAt: string;
  /** Seconds since the last progress, by the server's clock. */
  idleSeconds: number;
  message: string | null;
  owner: string | null;
  /** The server session holding the job's lock (a flatload process at work), or null. */
  heldBy: number | null;
  /** What its run was doing before its first chunk could load — spooling, scanning, sorting — where it is or stopped; null once chunks load. */
  activity: Activity | null;
}

export const JOBS_TABLE = 'flatload_jobs';
const JOBS = JOBS_TABLE;
const CHUNKS = 'flatload_chunks';

/**
 * Chunk rows live in a table of the target's own engine, so a chunk's data
 * and its "done" row commit in one engine's transaction. (Measured: with
 * InnoDB bookkeeping and MyRocks data, a server crash right after COMMIT lost
 * a chunk's MyRocks rows while its InnoDB row survived.)
 */
export function chunkTableFor(engine: string): { name: string; engine: string } {
  const e = engine.toUpperCase();
  if (e === 'ROCKSDB') return { name: 'flatload_chunks_rocksdb', engine: 'ROCKSDB' };
  if (e === 'TOKUDB') return { name: 'flatload_chunks_tokudb', engine: 'TokuDB' };
  return { name: CHUNKS, engine: 'InnoDB' };
}

const ALL_CHUNK_TABLES = [CHUNKS, 'flatload_chunks_rocksdb', 'flatload_chunks_tokudb'];

/** Where a chunk's rejected rows go when they do not fit one statement: the chunk table's name with `_rejects`, same engine. */
function piecesTableOf(chunkTable: string): string {
  return `${chunkTable}_rejects`;
}
const ALL_PIECES_TABLES = ALL_CHUNK_TABLES.map(piecesTableOf);

/** The tables a load into a table of this engine keeps its chunks' bookkeeping in. */
export function bookkeepingChunkTables(engine: string): string[] {
  const chunks = chunkTableFor(engine).name;
  return [chunks, piecesTableOf(chunks)];
}

/** SQL bytes a bookkeeping INSERT needs besides its data. */
const STATEMENT_OVERHEAD = 4096;

/**
 * The JSON of a chunk's rejected rows in pieces that each fit one statement
 * under max_allowed_packet (a piece travels as hex, twice its bytes), or
 * undefined when the whole text fits the chunk row itself (escaping at most
 * doubles it).
 */
export function rejectPieces(json: string | null, maxPacketBytes: number): Buffer[] | undefined {
  if (json === null) return undefined;
  const room = Math.max(1024, Math.floor((maxPacketBytes - STATEMENT_OVERHEAD) / 2));
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length <= room) return undefined;
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += room) out.push(bytes.subarray(i, i + room));
  return out;
}

/**
 * Resume bookkeeping, in the target server: one row per job, one row per
 * committed chunk. A chunk's row is written in the same transaction as the
 * chunk's data, so after any crash a chunk is either loaded and marked or
 * neither. Created on the first real load, never by a dry run.
 */
export class CheckpointStore {
  constructor(
    readonly conn: Conn,
    readonly schema: string,
  ) {}

  private t(name: string): string {
    return `${quoteId(this.schema)}.${quoteId(name)}`;
  }

  static async exists(conn: Conn, schema: string): Promise<boolean> {
    return (await selectNumber(conn, 'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [schema, JOBS])) > 0;
  }

  /** Every schema that holds flatload bookkeeping (for `status` without --table). */
  static async schemas(conn: Conn): Promise<string[]> {
    return (await selectRows<{ s: string }>(conn, 'SELECT TABLE_SCHEMA AS s FROM information_schema.TABLES WHERE TABLE_NAME = ? ORDER BY 1', [JOBS])).map((x) => x.s);
  }

  /** The chunk tables that exist in this schema (one per engine used). */
  private async chunkTables(): Promise<string[]> {
    const r = await selectRows<{ t: string }>(
      this.conn,
      `SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (${ALL_CHUNK_TABLES.map(() => '?').join(',')})`,
      [this.schema, ...ALL_CHUNK_TABLES],
    );
    return r.map((x) => x.t);
  }

  private async piecesTables(): Promise<string[]> {
    const r = await selectRows<{ t: string }>(
      this.conn,
      `SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (${ALL_PIECES_TABLES.map(() => '?').join(',')})`,
      [this.schema, ...ALL_PIECES_TABLES],
    );
    return r.map((x) => x.t);
  }

  /** SELECT over every chunk table, as one derived table. */
  private async chunksUnion(): Promise<string> {
    const tables = await this.chunkTables();
    if (tables.length === 0) return `(SELECT NULL AS job_id, 0 AS chunk_index, 0 AS start_byte, 0 AS end_byte, 0 AS records, 0 AS rows_loaded, 0 AS rejected, NULL AS sha1, NULL AS rejects, NULL AS committed_at FROM DUAL WHERE FALSE)`;
    return `(${tables.map((t) => `SELECT * FROM ${this.t(t)}`).join(' UNION ALL ')})`;
  }

  async ensureTables(targetEngine = 'InnoDB'): Promise<void> {
    await this.conn.query(
      `CREATE TABLE IF NOT EXISTS ${this.t(JOBS)} (
        job_id CHAR(24) NOT NULL PRIMARY KEY,
        target VARCHAR(200) NOT NULL,
        input_path VARCHAR(2048) NOT NULL,
        state VARCHAR(16) NOT NULL,
        phase VARCHAR(16) NOT NULL,
        identity LONGTEXT NOT NULL,
        plan LONGTEXT NOT NULL,
        chunks_total INT NULL,
        rows_in_input BIGINT NULL,
        rows_before BIGINT NULL,
        resume_command TEXT NULL,
        started_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        finished_at DATETIME(3) NULL,
        message TEXT NULL,
        rows_loaded BIGINT NULL,
        rows_rejected BIGINT NULL,
        owner VARCHAR(255) NULL,
        table_fingerprint VARCHAR(255) NULL,
        input_sha256 CHAR(64) NULL,
        activity VARCHAR(16) NULL,
        activity_bytes BIGINT NULL,
        activity_total_bytes BIGINT NULL,
        activity_runs INT NULL,
        KEY target_state (target, state)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='flatload resume bookkeeping: one row per load'`,
    );
    const chunks = chunkTableFor(targetEngine);
    // The column sha1 holds DoneChunk.digest, under the name older flatloads' tables have.
    await this.conn.query(
      `CREATE TABLE IF NOT EXISTS ${this.t(chunks.name)} (
        job_id CHAR(24) NOT NULL,
        chunk_index INT NOT NULL,
        start_byte BIGINT NOT NULL,
        end_byte BIGINT NOT NULL,
        records BIGINT NOT NULL,
        rows_loaded BIGINT NOT NULL,
        rejected BIGINT NOT NULL,
        sha1 CHAR(40) NULL,
        rejects LONGTEXT NULL,
        committed_at DATETIME(3) NOT NULL,
        PRIMARY KEY (job_id, chunk_index)
      ) ENGINE=${chunks.engine} DEFAULT CHARSET=utf8mb4 COMMENT='flatload resume bookkeeping: one row per committed chunk'`,
    );
    await this.conn.query(
      `CREATE TABLE IF NOT EXISTS ${this.t(piecesTableOf(chunks.name))} (
        job_id CHAR(24) NOT NULL,
        chunk_index INT NOT NULL,
        piece INT NOT NULL,
        rejects LONGBLOB NOT NULL,
        PRIMARY KEY (job_id, chunk_index, piece)
      ) ENGINE=${chunks.engine} COMMENT='flatload resume bookkeeping: a committed chunk''s rejected rows, in pieces under max_allowed_packet'`,
    );
    // Tables made by an older flatload lack later columns.
    await this.addMissingColumns(JOBS, [
      ['rows_loaded', 'BIGINT NULL'],
      ['rows_rejected', 'BIGINT NULL'],
      ['owner', 'VARCHAR(255) NULL'],
      ['table_fingerprint', 'VARCHAR(255) NULL'],
      ['input_sha256', 'CHAR(64) NULL'],
      ['activity', 'VARCHAR(16) NULL'],
      ['activity_bytes', 'BIGINT NULL'],
      ['activity_total_bytes', 'BIGINT NULL'],
      ['activity_runs', 'INT NULL'],
    ]);
    await this.addMissingColumns(chunks.name, [['rejects', 'LONGTEXT NULL AFTER sha1']]);
  }

  private async addMissingColumns(table: string, wanted: Array<[string, string]>): Promise<void> {
    const cols = await selectRows<{ c: string }>(this.conn, 'SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [this.schema, table]);
    const have = new Set(cols.map((x) => x.c.toLowerCase()));
    const missing = wanted.filter(([name]) => !have.has(name));
    if (missing.length) await this.conn.query(`ALTER TABLE ${this.t(table)} ${missing.map(([name, type]) => `ADD COLUMN ${quoteId(name)} ${type}`).join(', ')}`);
  }

  /**
   * The unfinished job of this input into this table. Names compare byte for
   * byte (the columns' collation would take `users` for `Users`, and
   * `Users.tsv` for `users.tsv`); where the server folds table names the
   * target is compared folded, as jobs recorded before folding stored it as typed.
   */
  async findUnfinished(target: string, inputPath: string, foldTableNames: boolean): Promise<StoredJob | undefined> {
    const byTarget = foldTableNames ? 'LOWER(target) = LOWER(?)' : 'BINARY target = ?';
    const r = await selectOne<Record<string, unknown>>(
      this.conn,
      `SELECT * FROM ${this.t(JOBS)} WHERE ${byTarget} AND BINARY input_path = ? AND state <> 'done' AND state <> 'abandoned' ORDER BY started_at DESC LIMIT 1`,
      [target, inputPath],
    );
    return r ? toJob(r) : undefined;
  }

  /** Every run of loads of this input into this target, finished or not, newest first (compared as findUnfinished compares). */
  async findAll(target: string, inputPath: string, foldTableNames: boolean): Promise<StoredJob[]> {
    const byTarget = foldTableNames ? 'LOWER(target) = LOWER(?)' : 'BINARY target = ?';
    const rows = await selectRows<Record<string, unknown>>(this.conn, `SELECT * FROM ${this.t(JOBS)} WHERE ${byTarget} AND BINARY input_path = ? AND state <> 'abandoned' ORDER BY started_at DESC`, [target, inputPath]);
    return rows.map(toJob);
  }

  async get(jobId: string): Promise<StoredJob | undefined> {
    const r = await selectOne<Record<string, unknown>>(this.conn, `SELECT * FROM ${this.t(JOBS)} WHERE job_id = ?`, [jobId]);
    return r ? toJob(r) : undefined;
  }

  async createJob(j: {
    jobId: string;
    target: string;
    inputPath: string;
    identity: JobIdentity;
    /** A routed Spider load stores its route: each backend's share has its own job and plan on that backend. */
    plan: LoadPlan | { route: RoutePlan };
    rowsBefore: number | null;
    resumeCommand: string;
    owner: string;
    chunksTotal: number | null;
    rowsInInput: number | null;
    /** The digest of every byte of the input, when the scan read them all. */
    inputHash?: string | null | undefined;
    /** What the run does before its first chunk can load (a job recorded before its input is scanned and sorted). */
    activity?: Activity | null | undefined;
  }): Promise<void> {
    const a = activityValues(j.activity ?? null);
    await this.conn.query(
      `INSERT INTO ${this.t(JOBS)} (job_id, target, input_path, state, phase, identity, plan, rows_before, resume_command, owner, chunks_total, rows_in_input, input_sha256,
         activity, activity_bytes, activity_total_bytes, activity_runs, started_at, updated_at)
       VALUES (?, ?, ?, 'running', 'created', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NOW(3), NOW(3))
       ON DUPLICATE KEY UPDATE state = 'running', phase = 'created', identity = VALUES(identity), plan = VALUES(plan),
         rows_before = VALUES(rows_before), resume_command = VALUES(resume_command), owner = VALUES(owner), started_at = NOW(3), updated_at = NOW(3),
         finished_at = NULL, message = NULL, chunks_total = VALUES(chunks_total), rows_in_input = VALUES(rows_in_input), rows_loaded = NULL, rows_rejected = NULL,
         table_fingerprint = NULL, input_sha256 = VALUES(input_sha256), activity = VALUES(activity), activity_bytes = VALUES(activity_bytes),
         activity_total_bytes = VALUES(activity_total_bytes), activity_runs = VALUES(activity_runs)`,
      [j.jobId, j.target, j.inputPath, JSON.stringify(j.identity), JSON.stringify(j.plan), j.rowsBefore, j.resumeCommand, j.owner, j.chunksTotal, j.rowsInInput, j.inputHash ?? null, ...a],
    );
    await this.deleteChunks(j.jobId);
  }

  private async deleteChunks(jobId: string): Promise<void> {
    for (const t of [...(await this.chunkTables()), ...(await this.piecesTables())]) await this.conn.query(`DELETE FROM ${this.t(t)} WHERE job_id = ?`, [jobId]);
  }

  async update(
    jobId: string,
    f: Partial<{
      state: JobState;
      phase: JobPhase;
      chunksTotal: number;
      rowsInInput: number;
      rowsBefore: number;
      rowsLoaded: number;
      rowsRejected: number;
      message: string | null;
      finished: boolean;
      owner: string;
      tableFingerprint: string | null;
      inputHash: string;
      /** null: chunks can load now. */
      activity: Activity | null;
    }>,
  ): Promise<void> {
    const sets: string[] = ['updated_at = NOW(3)'];
    const values: unknown[] = [];
    const set = (column: string, value: unknown): void => {
      if (value === undefined) return;
      sets.push(`${column} = ?`);
      values.push(value);
    };
    set('state', f.state);
    set('phase', f.phase);
    set('chunks_total', f.chunksTotal);
    set('rows_in_input', f.rowsInInput);
    // An error's message may quote a URL as a server or the system gave it: stored masked, as it is printed.
    set('message', f.message ? maskUrlSecrets(f.message) : f.message);
    set('rows_before', f.rowsBefore);
    set('rows_loaded', f.rowsLoaded);
    set('rows_rejected', f.rowsRejected);
    set('owner', f.owner);
    set('table_fingerprint', f.tableFingerprint);
    set('input_sha256', f.inputHash);
    if (f.activity !== undefined) {
      const a = activityValues(f.activity);
      for (const [i, column] of ACTIVITY_COLUMNS.entries()) set(column, a[i]);
    }
    if (f.finished) sets.push('finished_at = NOW(3)');
    await this.conn.query(`UPDATE ${this.t(JOBS)} SET ${sets.join(', ')} WHERE job_id = ?`, [...values, jobId]);
  }

  async doneChunks(jobId: string, onlyIndex?: number): Promise<Map<number, DoneChunk>> {
    const rows = await selectRows<Record<string, unknown>>(
      this.conn,
      `SELECT * FROM ${await this.chunksUnion()} c WHERE job_id = ?${onlyIndex === undefined ? '' : ' AND chunk_index = ?'}`,
      onlyIndex === undefined ? [jobId] : [jobId, onlyIndex],
    );
    const out = new Map<number, DoneChunk>();
    for (const r of rows) {
      out.set(Number(r['chunk_index']), {
        index: Number(r['chunk_index']),
        startByte: Number(r['start_byte']),
        endByte: Number(r['end_byte']),
        records: Number(r['records']),
        rowsLoaded: Number(r['rows_loaded']),
        rejected: Number(r['rejected']),
        digest: (r['sha1'] as string | null) ?? null,
        rejects: (r['rejects'] as string | null | undefined) ?? null,
      });
    }
    await this.readPieces(jobId, out, onlyIndex);
    return out;
  }

  /** The rejected rows of chunks whose JSON was stored in pieces (each read as its own row, under max_allowed_packet). */
  private async readPieces(jobId: string, chunks: Map<number, DoneChunk>, onlyIndex?: number): Promise<void> {
    const parts = new Map<number, Buffer[]>();
    for (const t of await this.piecesTables()) {
      const rows = await selectRows<{ chunk_index: unknown; rejects: Buffer }>(
        this.conn,
        `SELECT chunk_index, rejects FROM ${this.t(t)} WHERE job_id = ?${onlyIndex === undefined ? '' : ' AND chunk_index = ?'} ORDER BY chunk_index, piece`,
        onlyIndex === undefined ? [jobId] : [jobId, onlyIndex],
      );
      for (const r of rows) {
        const i = Number(r.chunk_index);
        parts.set(i, [...(parts.get(i) ?? []), Buffer.from(r.rejects)]);
      }
    }
    for (const [i, bufs] of parts) {
      const c = chunks.get(i);
      if (c) c.rejects = Buffer.concat(bufs).toString('utf8');
    }
  }

  /** One chunk's committed row, if it has one. */
  async doneChunk(jobId: string, index: number): Promise<DoneChunk | undefined> {
    return (await this.doneChunks(jobId, index)).get(index);
  }

  /**
   * Marks a chunk done; run it on the chunk's own connection inside its
   * transaction. Rejected rows that would not fit one statement under the
   * server's max_allowed_packet go in pieces, one statement each.
   */
  static async markChunk(conn: Conn, schema: string, engine: string, jobId: string, c: DoneChunk, maxPacketBytes: number): Promise<void> {
    const table = chunkTableFor(engine).name;
    const pieces = rejectPieces(c.rejects, maxPacketBytes);
    await conn.query(
      `INSERT INTO ${quoteId(schema)}.${quoteId(table)} (job_id, chunk_index, start_byte, end_byte, records, rows_loaded, rejected, sha1, rejects, committed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NOW(3))`,
      [jobId, c.index, c.startByte, c.endByte, c.records, c.rowsLoaded, c.rejected, c.digest, pieces ? null : c.rejects],
    );
    for (const [i, piece] of (pieces ?? []).entries()) {
      await conn.query(`INSERT INTO ${quoteId(schema)}.${quoteId(piecesTableOf(table))} (job_id, chunk_index, piece, rejects) VALUES (?, ?, ?, ?)`, [jobId, c.index, i, piece]);
    }
  }

  /**
   * A finished job becomes a tombstone: one UPDATE marks it done with its
   * totals, so a run killed at any later moment (even before it printed its
   * report) is never taken for unfinished and loaded twice; the same command
   * then finds it done. Its chunk rows go unless the user keeps history, and
   * tombstones older than 30 days are pruned.
   */
  async finish(jobId: string, keepHistory: boolean, tableFingerprint: string | null): Promise<void> {
    const totals = (await selectOne<{ loaded: unknown; rejected: unknown }>(
      this.conn,
      `SELECT COALESCE(SUM(rows_loaded), 0) AS loaded, COALESCE(SUM(rejected), 0) AS rejected FROM ${await this.chunksUnion()} c WHERE job_id = ?`,
      [jobId],
    ))!;
    await this.update(jobId, { state: 'done', phase: 'finished', rowsLoaded: Number(totals.loaded), rowsRejected: Number(totals.rejected), finished: true, tableFingerprint });
    if (!keepHistory) await this.deleteChunks(jobId);
    await this.conn.query(`DELETE FROM ${this.t(JOBS)} WHERE state IN ('done', 'abandoned') AND finished_at < NOW(3) - INTERVAL 30 DAY AND job_id <> ?`, [jobId]);
  }

  /** Forgets every committed chunk of a job (its table was emptied to start again). */
  async clearChunks(jobId: string): Promise<void> {
    await this.deleteChunks(jobId);
  }

  async abandon(jobId: string): Promise<void> {
    await this.deleteChunks(jobId);
    await this.conn.query(`UPDATE ${this.t(JOBS)} SET state = 'abandoned', updated_at = NOW(3), finished_at = NOW(3) WHERE job_id = ?`, [jobId]);
  }

  /** Every job, or those of one table (its name compared as findUnfinished compares it). */
  async list(target?: string, foldTableNames = false): Promise<JobSummary[]> {
    const where = target ? `WHERE ${foldTableNames ? 'LOWER(j.target) = LOWER(?)' : 'BINARY j.target = ?'}` : '';
    const rows = await selectRows<Record<string, unknown>>(
      this.conn,
      `SELECT j.job_id, j.target, j.input_path, j.state, j.phase, j.chunks_total, j.rows_in_input, j.message, j.owner,
              j.activity, j.activity_bytes, j.activity_total_bytes, j.activity_runs,
              IS_USED_LOCK(CONCAT(?, j.job_id)) AS held_by,
              DATE_FORMAT(j.started_at, '%Y-%m-%d %H:%i:%s') AS started_at,
              DATE_FORMAT(GREATEST(j.updated_at, COALESCE(MAX(c.committed_at), j.updated_at)), '%Y-%m-%d %H:%i:%s') AS last_progress,
              TIMESTAMPDIFF(SECOND, GREATEST(j.updated_at, COALESCE(MAX(c.committed_at), j.updated_at)), NOW(3)) AS idle_seconds,
              -- A finished job's chunk rows are gone; its totals stay on the job row.
              CASE WHEN j.state = 'done' THEN COALESCE(j.chunks_total, COUNT(c.chunk_index)) ELSE COUNT(c.chunk_index) END AS chunks_done,
              COALESCE(j.rows_loaded, SUM(c.rows_loaded), 0) AS rows_done
         FROM ${this.t(JOBS)} j LEFT JOIN ${await this.chunksUnion()} c ON c.job_id = j.job_id
         ${where}
        GROUP BY j.job_id ORDER BY j.started_at`,
      target ? [JOB_LOCK_PREFIX, target] : [JOB_LOCK_PREFIX],
    );
    return rows.map((r) => ({
      schema: this.schema,
      jobId: String(r['job_id']),
      target: String(r['target']),
      inputPath: String(r['input_path']),
      state: r['state'] as JobState,
      phase: r['phase'] as JobPhase,
      chunksDone: Number(r['chunks_done']),
      chunksTotal: r['chunks_total'] === null ? null : Number(r['chunks_total']),
      rowsDone: Number(r['rows_done']),
      rowsInInput: r['rows_in_input'] === null ? null : Number(r['rows_in_input']),
      startedAt: String(r['started_at']),
      lastProgressAt: String(r['last_progress']),
      idleSeconds: Number(r['idle_seconds']),
      message: (r['message'] as string | null) ?? null,
      owner: (r['owner'] as string | null | undefined) ?? null,
      heldBy: r['held_by'] === null || r['held_by'] === undefined ? null : Number(r['held_by']),
      activity: activityOf(r),
    }));
  }
}

function toJob(r: Record<string, unknown>): StoredJob {
  return {
    jobId: String(r['job_id']),
    target: String(r['target']),
    inputPath: String(r['input_path']),
    state: r['state'] as JobState,
    phase: r['phase'] as JobPhase,
    identity: JSON.parse(String(r['identity'])) as JobIdentity,
    plan: JSON.parse(String(r['plan'])) as LoadPlan,
    chunksTotal: r['chunks_total'] === null ? null : Number(r['chunks_total']),
    rowsInInput: r['rows_in_input'] === null ? null : Number(r['rows_in_input']),
    rowsBefore: r['rows_before'] === null ? null : Number(r['rows_before']),
    resumeCommand: (r['resume_command'] as string | null) ?? null,
    startedAt: text(r['started_at']),
    updatedAt: text(r['updated_at']),
    finishedAt: r['finished_at'] === null ? null : text(r['finished_at']),
    message: (r['message'] as string | null) ?? null,
    rowsLoaded: r['rows_loaded'] === null || r['rows_loaded'] === undefined ? null : Number(r['rows_loaded']),
    rowsRejected: r['rows_rejected'] === null || r['rows_rejected'] === undefined ? null : Number(r['rows_rejected']),
    owner: (r['owner'] as string | null | undefined) ?? null,
    tableFingerprint: (r['table_fingerprint'] as string | null | undefined) ?? null,
    inputHash: (r['input_sha256'] as string | null | undefined) ?? null,
    activity: activityOf(r),
  };
}

const ACTIVITY_COLUMNS = ['activity', 'activity_bytes', 'activity_total_bytes', 'activity_runs'] as const;

/** The activity's columns, in ACTIVITY_COLUMNS' order (all NULL: none). */
function activityValues(a: Activity | null): [string | null, number | null, number | null, number | null] {
  return a ? [a.kind, a.bytes, a.totalBytes, a.runs] : [null, null, null, null];
}

/** The activity a job row records, if any (none in a row of an older flatload). */
function activityOf(r: Record<string, unknown>): Activity | null {
  const kind = r['activity'] as Activity['kind'] | null | undefined;
  if (!kind) return null;
  const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return { kind, bytes: n(r['activity_bytes']), totalBytes: n(r['activity_total_bytes']), runs: n(r['activity_runs']) };
}

/** A DATETIME or text column as text (mysql2 returns DATETIME as a Date unless dateStrings is set). */
export function text(v: unknown): string {
  if (v instanceof Date) return v.toISOString().replace('T', ' ').replace('Z', '');
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
}
