import { ER } from './errnos.js';
import { isConnectionLost, isNodeNotReady, isRetryableLock } from './errors.js';

/**
 * Faults after which the chunk's transaction is gone and a fresh attempt is
 * safe: a lost connection, a deadlock or Galera certification conflict
 * (1213), a lock wait timeout, a Galera node not ready (1047), a new
 * connection refused over the account's MAX_USER_CONNECTIONS (1226: nothing
 * ran on it, and one of this process's may just be ending on the server).
 */
export function isRetryable(err: unknown): boolean {
  return isConnectionLost(err) || isRetryableLock(err) || isNodeNotReady(err) || (err as { errno?: number }).errno === ER.USER_LIMIT_REACHED;
}

/** The one backoff: exponential with a little jitter, 0.5 s, 1 s, 2 s, 4 s … up to `capMs`. */
export function backoffMs(attempt: number, random: () => number = Math.random, capMs = 15_000): number {
  const base = Math.min(500 * 2 ** (attempt - 1), capMs);
  return Math.round(base * (0.8 + 0.4 * random()));
}
