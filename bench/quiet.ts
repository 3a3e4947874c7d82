/**
 * The quiet-machine rule: a published figure comes from a run that started
 * with the machine's 1-minute load average under 1.0. Every run's start is
 * recorded here (one session per bench process), the bench waits for a quiet
 * machine before it starts, and docs are written only when every run of the
 * session started quiet — or with --force, saying so in the text.
 */
import { loadavg } from 'node:os';
import { FlatloadError } from '../src/errors/index.js';

/** Runs starting at or above this 1-minute load average are not quiet-machine figures. */
export const QUIET_LOAD = 1.0;

export type LoadReader = () => number;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const systemLoad: LoadReader = () => loadavg()[0]!;

export interface RunStart {
  label: string;
  load1: number;
}

export class QuietSession {
  readonly starts: RunStart[] = [];
  /** Docs sections not written because a run started busy. */
  readonly refused: string[] = [];
  force = false;
  constructor(public read: LoadReader = systemLoad) {}

  /** Seconds a run waits for the load average to drop under QUIET_LOAD before it starts (0: no wait). */
  waitSeconds = 0;
  pollMs = 2000;

  /** Records (and returns) the load average as the run called `label` starts. */
  start(label: string): number {
    const load1 = this.read();
    this.starts.push({ label, load1 });
    return load1;
  }

  /**
   * Waits (up to waitSeconds) for the 1-minute load average to drop under
   * QUIET_LOAD, then records the start. Runs follow each other within
   * seconds, so without the wait every run after the first would start in
   * the tail of the bench's own previous run.
   */
  async quietStart(label: string): Promise<number> {
    const deadline = Date.now() + this.waitSeconds * 1000;
    let load1 = this.read();
    while (load1 >= QUIET_LOAD && Date.now() < deadline) {
      await sleep(Math.min(this.pollMs, Math.max(1, deadline - Date.now())));
      load1 = this.read();
    }
    this.starts.push({ label, load1 });
    return load1;
  }

  /** The runs that started on a busy machine. */
  busy(): RunStart[] {
    return this.starts.filter((s) => s.load1 >= QUIET_LOAD);
  }

  /** The line a research table ends with when some run started on a busy machine; '' when none did. */
  busyNote(): string {
    const n = this.busy().length;
    return n > 0 ? `\n${n} run(s) started with the load average at or above ${QUIET_LOAD.toFixed(1)}: not quiet-machine figures` : '';
  }
}

/** The bench process's session: every mode records into it, and writeDocSection consults it. */
export const session = new QuietSession();

export interface WriteVerdict {
  write: boolean;
  /** Why not (printed), or '' when quiet. */
  refusal: string;
  /** Prepended to the written text when forced past a busy run, else ''. */
  note: string;
}

/** Whether a docs section may be written after these runs (pure). */
export function writeVerdict(starts: RunStart[], force: boolean): WriteVerdict {
  const busy = starts.filter((s) => s.load1 >= QUIET_LOAD);
  if (busy.length === 0) return { write: true, refusal: '', note: '' };
  const worst = busy.reduce((a, b) => (b.load1 > a.load1 ? b : a));
  const list = busy
    .slice(0, 5)
    .map((s) => `${s.label} (load average ${s.load1.toFixed(2)})`)
    .join('; ');
  if (!force) {
    return {
      write: false,
      refusal: `${busy.length} of ${starts.length} runs started with the 1-minute load average at or above ${QUIET_LOAD.toFixed(1)}: ${list}${busy.length > 5 ? '; …' : ''}. Rerun on a quiet machine, or pass --force for a local look`,
      note: '',
    };
  }
  return { write: true, refusal: '', note: `> load average ${worst.load1.toFixed(2)} at start (${worst.label}): not a quiet-machine figure (written with --force).` };
}

export interface WaitOptions {
  read?: LoadReader;
  /** How long to wait for the load average to drop below QUIET_LOAD. */
  waitSeconds: number;
  force: boolean;
  pollMs?: number;
  log?: (line: string) => void;
}

/**
 * Waits (up to waitSeconds) for the 1-minute load average to drop below 1.0
 * and returns it; refuses to start after that unless forced.
 */
export async function waitQuiet(o: WaitOptions): Promise<number> {
  const read = o.read ?? systemLoad;
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const deadline = Date.now() + o.waitSeconds * 1000;
  let load = read();
  if (load < QUIET_LOAD) return load;
  log(`1-minute load average ${load.toFixed(2)} (≥ ${QUIET_LOAD.toFixed(1)}): waiting up to ${o.waitSeconds} s for a quiet machine…`);
  while (Date.now() < deadline) {
    await sleep(Math.min(o.pollMs ?? 5000, Math.max(0, deadline - Date.now())));
    load = read();
    if (load < QUIET_LOAD) {
      log(`load average ${load.toFixed(2)}: starting`);
      return load;
    }
  }
  if (o.force) {
    log(`load average still ${load.toFixed(2)}: starting anyway (--force); these are not quiet-machine figures`);
    return load;
  }
  throw new FlatloadError(
    'USAGE',
    `the machine is not quiet: 1-minute load average ${load.toFixed(2)} after waiting ${o.waitSeconds} s (a published figure needs it under ${QUIET_LOAD.toFixed(1)}); stop other work, raise --wait-quiet, or pass --force for a local look`,
  );
}

/** "12.30 s median, 11.90–13.00 over 5 rounds": the median and the min–max spread of the runs. */
export function formatSpread(xs: number[], unit = 's'): string {
  if (xs.length === 0) return 'no runs';
  const s = [...xs].sort((a, b) => a - b);
  const med = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  const rounds = `${xs.length} round${xs.length === 1 ? '' : 's'}`;
  if (xs.length === 1) return `${med.toFixed(2)} ${unit} (${rounds})`;
  return `${med.toFixed(2)} ${unit} median, ${s[0]!.toFixed(2)}–${s.at(-1)!.toFixed(2)} over ${rounds}`;
}

/** "~14 min": a rough duration for planning a quiet window. */
export function formatEstimate(seconds: number): string {
  if (seconds < 90) return `~${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 5400) return `~${Math.round(seconds / 60)} min`;
  return `~${(seconds / 3600).toFixed(1)} h`;
}
