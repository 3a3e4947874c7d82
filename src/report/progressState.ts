import type { ConnectionState, LoadEvent } from './events.js';

/**
 * Folds load events into what a progress display shows: committed rows and
 * bytes (not bytes read), per-connection state, and an ETA from the
 * committed-bytes rate over a recent window. Pure: the clock is passed in.
 */
export class ProgressState {
  totalBytes: number | undefined;
  committedBytes = 0;
  committedRows = 0;
  rejectedRows = 0;
  sentBytes = 0;
  chunksDone = 0;
  chunksKnown = 0;
  scanDone = false;
  retries = 0;
  /** Why the streams are held between chunks now (a throttle), or undefined. */
  paused: string | undefined;
  private pausedSinceMs: number | undefined;
  jobs = 1;
  startMs: number;
  readonly slots = new Map<number, { state: ConnectionState; chunk: number | undefined }>();
  /** [ms, committedBytes, committedRows] samples for the recent rate. */
  private samples: Array<[number, number, number]> = [];
  /** Committed rows/s sampled once a second through the load: the throughput timeline. */
  readonly timeline: Array<[number, number]> = [];
  private lastTimelineMs: number;
  private lastTimelineRows = 0;

  constructor(nowMs: number) {
    this.startMs = nowMs;
    this.lastTimelineMs = nowMs;
    this.samples.push([nowMs, 0, 0]);
  }

  apply(e: LoadEvent, nowMs: number): void {
    switch (e.type) {
      case 'start':
        this.totalBytes = e.totalBytes;
        this.jobs = e.jobs;
        this.committedBytes = e.resumedBytes;
        this.committedRows = e.resumedRows;
        this.chunksDone = e.resumedChunks;
        this.samples = [[nowMs, this.committedBytes, this.committedRows]];
        this.lastTimelineRows = this.committedRows;
        break;
      case 'scan':
        this.chunksKnown = e.chunksFound;
        this.scanDone = e.done;
        if (e.totalBytes !== undefined) this.totalBytes = e.totalBytes;
        break;
      case 'connection-state':
        this.slots.set(e.slot, { state: e.state, chunk: e.chunk });
        break;
      case 'chunk-bytes':
        this.sentBytes += e.bytes;
        break;
      case 'chunk-committed':
        this.committedBytes += e.bytes;
        this.committedRows += e.rowsLoaded;
        this.rejectedRows += e.rejected;
        this.chunksDone++;
        this.samples.push([nowMs, this.committedBytes, this.committedRows]);
        break;
      case 'chunk-retry':
        this.retries++;
        break;
      case 'throttle':
        this.paused = e.state === 'paused' ? e.reason : undefined;
        this.pausedSinceMs = e.state === 'paused' ? (this.pausedSinceMs ?? nowMs) : undefined;
        break;
      default:
        break;
    }
    this.sample(nowMs);
  }

  /** Records the timeline point for each elapsed second. */
  sample(nowMs: number): void {
    while (nowMs - this.lastTimelineMs >= 1000) {
      this.lastTimelineMs += 1000;
      const rows = this.committedRows;
      this.timeline.push([Math.round((this.lastTimelineMs - this.startMs) / 1000), rows - this.lastTimelineRows]);
      this.lastTimelineRows = rows;
    }
  }

  /** Rows/s and bytes/s over the last ~30 s of commits (whole run if shorter). */
  rates(nowMs: number): { rowsPerSec: number; bytesPerSec: number } {
    const windowStart = nowMs - 30_000;
    while (this.samples.length > 2 && this.samples[1]![0] < windowStart) this.samples.shift();
    const first = this.samples[0]!;
    const seconds = (nowMs - first[0]) / 1000;
    if (seconds <= 0) return { rowsPerSec: 0, bytesPerSec: 0 };
    return { rowsPerSec: (this.committedRows - first[2]) / seconds, bytesPerSec: (this.committedBytes - first[1]) / seconds };
  }

  /** Seconds left, or undefined when the total is unknown or nothing has committed yet. */
  etaSeconds(nowMs: number): number | undefined {
    if (this.totalBytes === undefined) return undefined;
    const { bytesPerSec } = this.rates(nowMs);
    if (bytesPerSec <= 0) return undefined;
    return Math.max(0, (this.totalBytes - this.committedBytes) / bytesPerSec);
  }

  /** How long the current pause has lasted, in ms (0 when not paused). */
  pausedForMs(nowMs: number): number {
    return this.pausedSinceMs === undefined ? 0 : nowMs - this.pausedSinceMs;
  }

  fraction(): number | undefined {
    if (!this.totalBytes) return undefined;
    return Math.min(1, this.committedBytes / this.totalBytes);
  }

  connectionSummary(): string {
    const counts = new Map<string, number>();
    for (const s of this.slots.values()) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
    const order: ConnectionState[] = ['loading', 'checking', 'committing', 'isolating', 'retrying', 'idle'];
    return order
      .filter((s) => counts.get(s))
      .map((s) => `${counts.get(s)} ${s}`)
      .join(', ');
  }
}
