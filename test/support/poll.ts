import { setTimeout as sleep } from 'node:timers/promises';
import type { Spawned } from './spawn.js';

export interface PollOptions {
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  /** The pause between tries (default 10 ms). */
  everyMs?: number;
  /** A process the condition waits on: the poll fails as soon as it has exited without the condition holding. */
  process?: Spawned;
  /** The same for anything else the condition waits on (a writer process, a flag): false fails the poll. */
  alive?: () => boolean;
}

/**
 * Waits until `ready()` holds. Fails, naming `what`, when the deadline passes,
 * or at once when the watched process has exited first (with its exit status
 * and the end of its stderr): a poll neither hangs nor waits out its deadline
 * for a process that is gone.
 */
export async function pollUntil(what: string, ready: () => Promise<boolean>, opts: PollOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    const p = opts.process;
    if (p && (p.child.exitCode !== null || p.child.signalCode !== null)) {
      if (await ready()) return; // it got there just before exiting
      const r = await p.done;
      throw new Error(`${what}: the process exited first (code ${String(r.code)}, signal ${String(r.signal)})\n${r.stderr.slice(-2000)}`);
    }
    if (opts.alive && !opts.alive()) {
      if (await ready()) return;
      throw new Error(`${what}: what it waits on ended first`);
    }
    if (Date.now() >= end) throw new Error(`${what}: not reached within ${timeoutMs / 1000} s`);
    await sleep(opts.everyMs ?? 10);
  }
}

/** Whether a spawned process is still running (for a test that must act while it is). */
export function running(p: Spawned): boolean {
  return p.child.exitCode === null && p.child.signalCode === null;
}
