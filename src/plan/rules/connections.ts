/**
 * Loading streams that fit the account's connection limit. A load holds its
 * control connection (open when the facts were read, so counted among the
 * account's) and one connection per stream; a stream over the limit would
 * stop the load at its connection (1226, ER_USER_LIMIT_REACHED), so the
 * plan takes fewer streams instead and says so.
 */
import type { ServerFacts } from '../../introspect/types.js';

export function streamsThatFit(wanted: number, server: ServerFacts, budgeted: boolean | undefined): { streams: number; warning?: string } {
  const a = server.accountConnections;
  // An export's loads share connections it fitted to the limit itself.
  if (!a || budgeted || wanted <= a.limit - a.open) return { streams: wanted };
  const left = a.limit - a.open;
  const streams = Math.max(1, left);
  const over = left < 1 ? '; even that one is over the limit, so the load would stop before its first chunk' : '';
  return {
    streams,
    warning: `${streams} loading connection(s) instead of ${wanted}: max_user_connections is ${a.limit} for this account and it has ${a.open} open, this load's own included [docs/strategies.md#connections]${over}`,
  };
}
