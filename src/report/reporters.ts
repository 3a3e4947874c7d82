import cliProgress from 'cli-progress';
import type { LoadEvent } from './events.js';
import { fmtDuration, fmtInt, fmtMB, fmtRate } from './format.js';
import { ProgressState } from './progressState.js';

export type ProgressMode = 'bar' | 'lines' | 'none';

export interface Reporter {
  onEvent(e: LoadEvent): void;
  close(): void;
  readonly state: ProgressState;
}

function describe(state: ProgressState, now: number): string {
  const { rowsPerSec } = state.rates(now);
  const frac = state.fraction();
  const eta = state.etaSeconds(now);
  const parts = [
    frac === undefined ? `${fmtMB(state.committedBytes)} committed` : `${(frac * 100).toFixed(1)}% (${fmtMB(state.committedBytes)} of ${fmtMB(state.totalBytes!)} committed)`,
    `${fmtInt(state.committedRows)} rows`,
    `${fmtRate(rowsPerSec)} rows/s`,
  ];
  if (eta !== undefined) parts.push(`ETA ${fmtDuration(eta)}`);
  const conns = state.connectionSummary();
  if (conns) parts.push(`connections: ${conns}`);
  if (state.rejectedRows) parts.push(`${fmtInt(state.rejectedRows)} rejected`);
  if (state.retries) parts.push(`${state.retries} retries`);
  if (state.paused) parts.push(`paused: ${state.paused} (for ${fmtDuration(state.pausedForMs(now) / 1000)})`);
  return parts.join(', ');
}

/** The line a throttle's pause or resume prints when it happens. */
function throttleLine(e: Extract<LoadEvent, { type: 'throttle' }>, pausedMs: number): string {
  return e.state === 'paused' ? `paused: ${e.reason}` : `resumed after ${fmtDuration(pausedMs / 1000)} paused`;
}

/** Plain lines on stderr every few seconds: what cron and CI logs want. */
export class LinesReporter implements Reporter {
  readonly state: ProgressState;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    everyMs = 5000,
    private readonly now: () => number = Date.now,
  ) {
    this.state = new ProgressState(now());
    this.timer = setInterval(() => this.print(), everyMs);
    this.timer.unref();
  }

  onEvent(e: LoadEvent): void {
    const pausedMs = this.state.pausedForMs(this.now());
    this.state.apply(e, this.now());
    if (e.type === 'note' || e.type === 'warning') this.out.write(`${e.type === 'warning' ? 'warning: ' : ''}${e.message}\n`);
    if (e.type === 'throttle') this.out.write(`${throttleLine(e, pausedMs)}\n`);
    if (e.type === 'chunk-retry') this.out.write(`retrying chunk ${e.chunk} in ${(e.delayMs / 1000).toFixed(1)} s (attempt ${e.attempt + 1}): ${e.reason}\n`);
  }

  private print(): void {
    this.out.write(`progress: ${describe(this.state, this.now())}\n`);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** A cli-progress bar on stderr when it is a terminal. */
export class BarReporter implements Reporter {
  readonly state: ProgressState;
  private readonly bar: cliProgress.SingleBar;
  private started = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly out: NodeJS.WriteStream, private readonly now: () => number = Date.now) {
    this.state = new ProgressState(now());
    this.bar = new cliProgress.SingleBar(
      {
        stream: out,
        format: '{bar} {pct} | {mb} | {rows} rows | {rate} rows/s | ETA {eta2} | {conns}',
        hideCursor: true,
        clearOnComplete: false,
        barsize: 30,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  private payload(): Record<string, string> {
    const now = this.now();
    const s = this.state;
    const eta = s.etaSeconds(now);
    const frac = s.fraction();
    return {
      pct: frac === undefined ? '  ?%' : `${(frac * 100).toFixed(1)}%`,
      mb: s.totalBytes ? `${fmtMB(s.committedBytes)}/${fmtMB(s.totalBytes)}` : fmtMB(s.committedBytes),
      rows: fmtInt(s.committedRows),
      rate: fmtRate(s.rates(now).rowsPerSec),
      eta2: eta === undefined ? '?' : fmtDuration(eta),
      conns: s.connectionSummary() + (s.rejectedRows ? `, ${fmtInt(s.rejectedRows)} rejected` : ''),
    };
  }

  onEvent(e: LoadEvent): void {
    const pausedMs = this.state.pausedForMs(this.now());
    this.state.apply(e, this.now());
    if (!this.started && e.type === 'start') {
      this.started = true;
      this.bar.start(Math.max(1, this.state.totalBytes ?? 1), this.state.committedBytes, this.payload());
      this.timer = setInterval(() => this.refresh(), 500);
      this.timer.unref();
    }
    if (e.type === 'note' || e.type === 'warning' || e.type === 'chunk-retry' || e.type === 'throttle') {
      const text = e.type === 'chunk-retry' ? `retrying chunk ${e.chunk}: ${e.reason}` : e.type === 'throttle' ? throttleLine(e, pausedMs) : e.message;
      if (this.started) this.bar.stop();
      this.out.write(`${e.type === 'warning' ? 'warning: ' : ''}${text}\n`);
      if (this.started) this.bar.start(Math.max(1, this.state.totalBytes ?? 1), this.state.committedBytes, this.payload());
    }
    this.refresh();
  }

  private refresh(): void {
    if (!this.started) return;
    if (this.state.totalBytes) this.bar.setTotal(this.state.totalBytes);
    this.bar.update(this.state.committedBytes, this.payload());
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.started) {
      this.refresh();
      this.bar.stop();
    }
  }
}

/** Keeps the state (for the report's timeline) and prints nothing. */
export class SilentReporter implements Reporter {
  readonly state: ProgressState;
  constructor(
    private readonly out: NodeJS.WritableStream | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.state = new ProgressState(now());
  }
  onEvent(e: LoadEvent): void {
    this.state.apply(e, this.now());
    // Notes and warnings are not progress: they print even with --progress none.
    if (this.out && (e.type === 'note' || e.type === 'warning')) this.out.write(`${e.type === 'warning' ? 'warning: ' : ''}${e.message}\n`);
  }
  close(): void {}
}

export function makeReporter(mode: ProgressMode | 'auto', stderr: NodeJS.WriteStream): Reporter {
  const resolved = mode === 'auto' ? (stderr.isTTY ? 'bar' : 'lines') : mode;
  if (resolved === 'bar') return new BarReporter(stderr);
  if (resolved === 'lines') return new LinesReporter(stderr);
  return new SilentReporter(stderr);
}
