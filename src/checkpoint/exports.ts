/**
 * Bookkeeping of a whole export (many files, many tables, one job): one row
 * in `flatload_exports` beside the per-load tables, naming the export's
 * tables and their inputs. Each table's loads keep their own job rows (and
 * resume by them); this row adds what belongs to the set: its phase (for
 * swap mode, whether the shadow tables exist and whether the one RENAME has
 * run) and its state, shown by `flatload status` as one job.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/control.js';
import { quoteId } from '../db/quote.js';
import { selectNumber, selectOne, selectRows } from '../db/rows.js';
import { JOB_LOCK_PREFIX } from './lock.js';
import { text, type JobState } from './store.js';

export const EXPORTS_TABLE = 'flatload_exports';

/** created → prepared (swap: shadows made; replace: tables emptied) → loaded (every table) → finished (swap: renamed). */
export type ExportPhase = 'created' | 'prepared' | 'loaded' | 'finished';

export interface ExportMember {
  /** db.table, the table readers see. */
  target: string;
  /** Where its rows are loaded (the shadow table in swap mode). */
  loadTarget: string;
  files: Array<{ path: string; sizeBytes: number; mtimeMs: number }>;
}

export interface StoredExport {
  exportId: string;
  source: string;
  mode: string;
  state: JobState;
  phase: ExportPhase;
  members: ExportMember[];
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
  message: string | null;
  owner: string | null;
  /** The server session holding the export's lock (a flatload at work), or null. */
  heldBy: number | null;
}

/** An export is its inputs (path, size, mtime per file), their targets and the mode: tomorrow's files are a new export. */
export function exportIdOf(mode: string, members: readonly ExportMember[], options: unknown): string {
  const h = createHash('sha256').update(JSON.stringify({ mode, members, options }));
  return `x${h.digest('hex').slice(0, 23)}`;
}

export class ExportStore {
  constructor(
    readonly conn: Queryable,
    readonly schema: string,
  ) {}

  private get t(): string {
    return `${quoteId(this.schema)}.${quoteId(EXPORTS_TABLE)}`;
  }

  static async exists(conn: Queryable, schema: string): Promise<boolean> {
    return (await selectNumber(conn, 'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [schema, EXPORTS_TABLE])) > 0;
  }

  static async schemas(conn: Queryable): Promise<string[]> {
    return (await selectRows<{ s: string }>(conn, 'SELECT TABLE_SCHEMA AS s FROM information_schema.TABLES WHERE TABLE_NAME = ? ORDER BY 1', [EXPORTS_TABLE])).map((x) => x.s);
  }

  async ensureTable(): Promise<void> {
    await this.conn.query(
      `CREATE TABLE IF NOT EXISTS ${this.t} (
        export_id CHAR(24) NOT NULL PRIMARY KEY,
        source VARCHAR(2048) NOT NULL,
        mode VARCHAR(16) NOT NULL,
        state VARCHAR(16) NOT NULL,
        phase VARCHAR(16) NOT NULL,
        members LONGTEXT NOT NULL,
        started_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        finished_at DATETIME(3) NULL,
        message TEXT NULL,
        owner VARCHAR(255) NULL
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='flatload resume bookkeeping: one row per export (a set of loads run as one job)'`,
    );
  }

  async get(exportId: string): Promise<StoredExport | undefined> {
    const r = await selectOne<Record<string, unknown>>(this.conn, `SELECT * FROM ${this.t} WHERE export_id = ?`, [exportId]);
    return r ? toExport(r) : undefined;
  }

  async create(e: { exportId: string; source: string; mode: string; members: ExportMember[]; owner: string }): Promise<void> {
    await this.conn.query(
      `INSERT INTO ${this.t} (export_id, source, mode, state, phase, members, started_at, updated_at, owner)
       VALUES (?, ?, ?, 'running', 'created', ?, NOW(3), NOW(3), ?)
       ON DUPLICATE KEY UPDATE state = 'running', phase = 'created', members = VALUES(members), started_at = NOW(3), updated_at = NOW(3),
         finished_at = NULL, message = NULL, owner = VALUES(owner)`,
      [e.exportId, e.source, e.mode, JSON.stringify(e.members), e.owner],
    );
  }

  async update(exportId: string, f: { state?: JobState; phase?: ExportPhase; message?: string | null; owner?: string; finished?: boolean }): Promise<void> {
    const sets = ['updated_at = NOW(3)'];
    const values: unknown[] = [];
    for (const [col, v] of [['state', f.state], ['phase', f.phase], ['message', f.message], ['owner', f.owner]] as const) {
      if (v === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(v);
    }
    if (f.finished) sets.push('finished_at = NOW(3)');
    await this.conn.query(`UPDATE ${this.t} SET ${sets.join(', ')} WHERE export_id = ?`, [...values, exportId]);
  }

  async list(): Promise<StoredExport[]> {
    const rows = await selectRows<Record<string, unknown>>(this.conn, `SELECT *, IS_USED_LOCK(CONCAT(?, export_id)) AS held_by FROM ${this.t} ORDER BY started_at`, [JOB_LOCK_PREFIX]);
    return rows.map(toExport);
  }
}

function toExport(r: Record<string, unknown>): StoredExport {
  const s = (v: unknown): string | null => (v === null || v === undefined ? null : text(v));
  return {
    exportId: text(r['export_id']),
    source: text(r['source']),
    mode: text(r['mode']),
    state: text(r['state']) as JobState,
    phase: text(r['phase']) as ExportPhase,
    members: JSON.parse(text(r['members'])) as ExportMember[],
    startedAt: text(r['started_at']),
    updatedAt: text(r['updated_at']),
    finishedAt: s(r['finished_at']),
    message: s(r['message']),
    owner: s(r['owner']),
    heldBy: r['held_by'] === null || r['held_by'] === undefined ? null : Number(r['held_by']),
  };
}
