import type { Connection } from 'mysql2/promise';
import { openConnection, type Session } from './connect.js';
import type { FlatloadError } from '../errors/index.js';
import { isConnectionLost, isNodeNotReady, isRetryableLock, toFlatloadError } from './errors.js';
import { backoffMs, isRetryable } from './retry.js';

/**
 * The control connection (bookkeeping, before/after statements): if the
 * server restarted under it, it reconnects and retries the statement, with
 * backoff, for up to ~30 s. Only statements that are safe to repeat go
 * through it (each is its own autocommit statement).
 */
/** What the bookkeeping and plan statements need of a connection. */
export interface Queryable {
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
}

export class ControlConnection implements Queryable {
  constructor(
    private conn: Connection,
    private readonly session: Session,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  get connection(): Connection {
    return this.conn;
  }

  /** One reconnection at a time: callers that lost the same connection share it (two would orphan a socket). */
  private reconnecting: Promise<void> | undefined;
  /** Session state to restore on a new connection (a named lock); a hook that throws ends this connection's use. */
  private readonly restore: Array<(conn: Connection) => Promise<void>> = [];
  private broken: FlatloadError | undefined;
  /**
   * On a Galera cluster a statement may also fail while the group changes:
   * 1047 (node not ready), 1213 (certification conflict), 1205 (a causal
   * read timed out). Each rolled the statement back, so it is repeated too.
   */
  private clusterRetries = false;

  retryClusterErrors(): void {
    this.clusterRetries = true;
  }

  /** Runs `fn` on every replacement connection, before any caller's statement. */
  onReconnect(fn: (conn: Connection) => Promise<void>): void {
    this.restore.push(fn);
  }

  async query(sql: string, values?: unknown[]): Promise<[unknown, unknown]> {
    for (let attempt = 1; ; attempt++) {
      if (this.broken !== undefined) throw this.broken;
      const used = this.conn;
      try {
        const [rows, fields] = await used.query(sql, values);
        return [rows, fields];
      } catch (err) {
        if (this.clusterRetries && (isNodeNotReady(err) || isRetryableLock(err)) && attempt < 8) {
          await this.sleep(backoffMs(attempt, Math.random, 8000));
          continue;
        }
        if (!isConnectionLost(err)) throw err;
        if (attempt >= 8) {
          // The server (every node of a list) stayed away through every reconnection: later statements fail at once
          // instead of waiting it out again, so a stopped load reports and exits.
          this.broken = toFlatloadError(err, 'the control connection gave up reconnecting');
          throw err;
        }
        // Another caller may already have replaced the connection this one lost.
        if (used === this.conn) {
          this.reconnecting ??= this.reconnect(attempt).finally(() => (this.reconnecting = undefined));
        }
        await this.reconnecting;
      }
    }
  }

  private async reconnect(attempt: number): Promise<void> {
    this.conn.destroy();
    await this.sleep(backoffMs(attempt, Math.random, 8000));
    let fresh: Connection;
    try {
      fresh = await openConnection(this.session);
    } catch {
      // The server may still be starting; the next attempt tries again.
      return;
    }
    this.conn = fresh;
    try {
      for (const fn of this.restore) await fn(fresh);
    } catch (err) {
      // A connection lost again (or a cluster node not ready yet) is retried by the caller's next attempt; anything else
      // (the lock taken by another process) is final.
      if (!isRetryable(err)) this.broken = toFlatloadError(err, 'reconnecting');
    }
  }

  async end(): Promise<void> {
    await this.conn.end().catch(() => undefined);
  }
}
