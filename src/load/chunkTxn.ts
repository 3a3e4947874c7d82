import type { PoolConnection } from 'mysql2/promise';
import type { CommitScope } from '../plan/types.js';

/**
 * A chunk's transaction, whatever the plan's commit scope:
 * - 'chunk': its own transaction, COMMITted with its bookkeeping row, with
 *   the savepoint `flatload_chunk` to return to when rows must be isolated;
 * - 'load': the load's one transaction, opened by the session and committed
 *   at its end; a chunk cannot roll back alone, so a failure rolls back the
 *   whole load (the server would anyway: MariaDB's bulk insert has one undo
 *   record for the table);
 * - 'none': the engine cannot roll back; nothing to open or undo.
 */
export class ChunkTxn {
  private open = false;

  constructor(
    private readonly conn: PoolConnection,
    readonly scope: CommitScope,
  ) {}

  /** Whether the chunk alone can be rolled back (to isolate its bad rows). */
  get canRollBack(): boolean {
    return this.scope === 'chunk';
  }

  async begin(): Promise<void> {
    if (this.scope !== 'chunk') return;
    await this.conn.query('START TRANSACTION');
    await this.conn.query('SAVEPOINT flatload_chunk');
    this.open = true;
  }

  /** Undoes the chunk's rows so far and keeps the transaction (for isolating bad rows). */
  async rollbackToStart(): Promise<void> {
    await this.conn.query('ROLLBACK TO SAVEPOINT flatload_chunk');
  }

  async commit(): Promise<void> {
    if (this.scope === 'chunk') await this.conn.query('COMMIT');
    this.open = false;
  }

  /** Leaves nothing of the chunk behind (called on any failure; never throws). */
  async abort(): Promise<void> {
    // The load's one transaction is open whenever a chunk runs in it; a chunk's own only once begun.
    if (this.scope === 'none' || (this.scope === 'chunk' && !this.open)) return;
    this.open = false;
    await this.conn.query('ROLLBACK').catch(() => undefined);
  }
}
