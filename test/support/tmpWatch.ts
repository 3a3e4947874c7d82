/**
 * Watching a load's --tmpdir from a test: what it holds at its peak and
 * which entries appear (a streamed input must never hold a whole copy).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { running } from './poll.js';
import type { Spawned } from './spawn.js';

/** Bytes of the files under `path` and the names directly in it. */
export function usage(path: string): { bytes: number; names: string[] } {
  let bytes = 0;
  const walk = (p: string): void => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      const full = join(p, e.name);
      try {
        if (e.isDirectory()) walk(full);
        else bytes += statSync(full).size;
      } catch {
        // removed between the listing and the stat
      }
    }
  };
  let names: string[] = [];
  try {
    names = readdirSync(path);
    walk(path);
  } catch {
    // a directory removed mid-walk is counted as far as it was seen
  }
  return { bytes, names };
}

/** Watches a tmpdir while a load runs (until it exits, with a deadline): the most it held, and every entry seen. */
export async function watchTmp(path: string, s: Spawned, deadlineMs = 120_000): Promise<{ peak: number; seen: Set<string> }> {
  const end = Date.now() + deadlineMs;
  let peak = 0;
  const seen = new Set<string>();
  while (running(s)) {
    if (Date.now() > end) {
      s.child.kill('SIGKILL');
      throw new Error(`the load did not finish within ${deadlineMs / 1000} s`);
    }
    const u = usage(path);
    peak = Math.max(peak, u.bytes);
    for (const n of u.names) seen.add(n.replace(/-\d.*$/, '-*'));
    await sleep(5);
  }
  return { peak, seen };
}
