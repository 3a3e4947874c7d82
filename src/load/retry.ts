import { isConnectionLost, isRetryableLock } from '../db/errors.js';

/** Faults after which the chunk's transaction is gone and a fresh attempt is safe. */
export function isRetryable(err: unknown): boolean {
  return isConnectionLost(err) || isRetryableLock(err);
}

/** Exponential backoff with a little jitter: 0.5 s, 1 s, 2 s, 4 s ... capped. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(500 * 2 ** (attempt - 1), 15_000);
  return Math.round(base * (0.8 + 0.4 * random()));
}
