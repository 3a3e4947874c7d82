/**
 * Loading connections shared by the loads of an export. Without them each
 * table opened a pool of its own and held it to its end, so the connections
 * grew with the tables open at once and could not be bounded in advance
 * (an account's MAX_USER_CONNECTIONS stopped the export half-way). Here the
 * export opens `--jobs` connections once, each chunk borrows one, and a
 * connection that last loaded another table is reset first, so no table's
 * session settings reach the next.
 */
import type { PoolConnection } from 'mysql2/promise';
import { CONNECTION_CHARSET, openPool, type Session } from '../db/connect.js';

/** What the lender needs of a pool (a mysql2 pool; a fake one in unit tests). */
export interface ConnectionPool {
  getConnection(): Promise<PoolConnection>;
  end(): Promise<void>;
}

/**
 * The connection itself: mysql2 wraps the same pooled connection in a new
 * object at every getConnection. (Not its thread id: two nodes of a cluster
 * can give two connections the same one.)
 */
function identity(conn: PoolConnection): object {
  return (conn as unknown as { connection?: object }).connection ?? conn;
}

export class SharedConnections {
  /** The load whose session settings each connection holds. */
  private readonly settledFor = new WeakMap<object, string>();

  constructor(private readonly pool: ConnectionPool) {}

  /** `size` loading connections (LOCAL INFILE allowed) to the session's server, opened as chunks need them. */
  static open(session: Session, size: number): SharedConnections {
    return new SharedConnections(openPool(session, size, { localInfile: true }));
  }

  /**
   * A connection holding `load`'s session settings. One that last served
   * another load is reset (COM_RESET_CONNECTION: its session variables back
   * to the server's defaults) before `sessionSql` runs on it; one that
   * served this load already holds them and is used as it is.
   */
  async borrow(load: string, sessionSql: readonly string[]): Promise<PoolConnection> {
    const conn = await this.pool.getConnection();
    try {
      const id = identity(conn);
      const last = this.settledFor.get(id);
      if (last !== load) {
        this.settledFor.delete(id);
        if (last !== undefined) {
          await conn.reset();
          // The handshake's character set again: MySQL's reset falls back to the server's (MariaDB's keeps it).
          await conn.query(`SET NAMES ${CONNECTION_CHARSET}`);
        }
        for (const sql of sessionSql) await conn.query(sql);
        this.settledFor.set(id, load);
      }
      return conn;
    } catch (err) {
      this.settledFor.delete(identity(conn));
      conn.destroy();
      throw err;
    }
  }

  async end(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
