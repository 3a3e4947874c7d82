import type { Connection } from 'mysql2/promise';
import type { ConnectionOptions } from '../config/connection.js';
import type { MaxRate, ThrottleOptions } from '../config/throttle.js';
import { openConnection, type Session } from '../db/connect.js';
import { FlatloadError } from '../errors/index.js';
import { lagSourceText, replicaAddress, replicaConnection, ReplicaWatch, threadsRunning, type LagReading } from '../introspect/replicas.js';
import type { EventHub } from '../report/events.js';
import { fmtInt, fmtMB } from '../report/format.js';
import type { ThrottleReport } from '../report/throttle.js';

/**
 * Paces chunks to a rate: each chunk may start once the ones before it
 * have been "paid for" at the rate, so what is sent by time t is at most
 * rate × t plus one chunk. The clock is passed in: pure.
 */
export class RatePacer {
  private nextAtMs: number | undefined;
  constructor(private readonly perSecond: number) {}

  /** Books `amount` (rows or bytes) and returns how long to wait, from `nowMs`, before sending it. */
  reserve(amount: number, nowMs: number): number {
    const start = Math.max(nowMs, this.nextAtMs ?? nowMs);
    this.nextAtMs = start + (amount / this.perSecond) * 1000;
    return start - nowMs;
  }
}

/** What the pause decision reads: each replica's lag and the primary's Threads_running (when watched). */
export interface Readings {
  replicas: readonly LagReading[];
  threadsRunning?: number | undefined;
}

export interface PauseLimits {
  maxLagSeconds: number;
  maxThreadsRunning: number | undefined;
}

/** One reason to hold the streams: `cause` groups the report's totals, `text` is what progress shows. */
export interface PauseCause {
  cause: string;
  text: string;
}

/**
 * Why the streams must wait now, or nothing. A replica whose lag is unknown
 * counts as over the limit: a stopped SQL thread is exactly when rows pile
 * up unapplied. `ownThreads`: the primary's running threads that are this
 * load's own (its loading streams and the asking connection), not counted
 * against --max-threads-running, which is about everyone else's traffic.
 */
export function pauseCauses(r: Readings, limits: PauseLimits, ownThreads: number): PauseCause[] {
  const out: PauseCause[] = [];
  for (const rep of r.replicas) {
    if (rep.lagSeconds === null) out.push({ cause: `replica ${rep.name} lag`, text: `replica ${rep.name} lag unknown (${rep.state})` });
    else if (rep.lagSeconds > limits.maxLagSeconds) out.push({ cause: `replica ${rep.name} lag`, text: `replica ${rep.name} lag ${rep.lagSeconds} s` });
  }
  if (limits.maxThreadsRunning !== undefined && r.threadsRunning !== undefined) {
    const others = Math.max(0, r.threadsRunning - ownThreads);
    if (others > limits.maxThreadsRunning) out.push({ cause: 'Threads_running', text: `Threads_running ${others} (flatload's own excluded) over ${limits.maxThreadsRunning}` });
  }
  return out;
}

/** Pauses and their time per cause, accumulated as readings come in. Pure: the clock is passed in. */
export class PauseLedger {
  pauses = 0;
  pausedMs = 0;
  readonly byCause = new Map<string, number>();
  private since: number | undefined;
  private last: { atMs: number; causes: PauseCause[] } | undefined;

  /** A new reading at `nowMs`: returns 'paused' when a pause begins, 'changed' when its causes changed, 'resumed' when it ends. */
  observe(causes: PauseCause[], nowMs: number): 'paused' | 'changed' | 'resumed' | undefined {
    if (this.last) {
      const dt = nowMs - this.last.atMs;
      this.pausedMs += dt;
      for (const c of new Set(this.last.causes.map((x) => x.cause))) this.byCause.set(c, (this.byCause.get(c) ?? 0) + dt);
    }
    const before = this.last;
    if (causes.length === 0) {
      this.last = undefined;
      this.since = undefined;
      return before ? 'resumed' : undefined;
    }
    this.last = { atMs: nowMs, causes };
    if (!before) {
      this.pauses++;
      this.since = nowMs;
      return 'paused';
    }
    return before.causes.map((c) => c.text).join() === causes.map((c) => c.text).join() ? undefined : 'changed';
  }

  /** How long the current pause has lasted (0 when not paused). */
  pausedFor(nowMs: number): number {
    return this.since === undefined ? 0 : nowMs - this.since;
  }
}

/** What the throttle needs of the world; tests give a clock and readings of their own. */
export interface ThrottleIo {
  now(): number;
  /** Resolves after ms, or as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  read(): Promise<Readings>;
}

export const PAUSE_POLL_MS = 1000;

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const minutes = (ms: number): string => (ms >= 60_000 ? `${+(ms / 60_000).toFixed(1)} min` : `${+(ms / 1000).toFixed(1)} s`);

/**
 * The gate every chunk passes before it is sent: it holds the streams while
 * a replica lags or the primary is busy, and paces them to --max-rate. One
 * throttle spans every table of an export. A reading is shared by the
 * streams that ask within a poll interval: the replicas are asked at most
 * once a second however many streams wait.
 */
export class Throttle {
  private readonly pacer: RatePacer | undefined;
  private readonly ledger = new PauseLedger();
  private rateWaitMs = 0;
  private inFlight = 0;
  private reading: { atMs: number; value: Promise<Readings> } | undefined;
  replicasChecked: ThrottleReport['replicas'] = [];
  /** With --lag-heartbeat: the primary's server_id, whose heartbeat row is read. */
  heartbeatServerId: string | undefined;

  constructor(
    readonly options: ThrottleOptions,
    private readonly io: ThrottleIo,
    private readonly events: EventHub | undefined,
  ) {
    this.pacer = options.maxRate ? new RatePacer(options.maxRate.perSecond) : undefined;
  }

  /**
   * Waits until the chunk may be sent: no pause cause, then its share of
   * --max-rate. A pause longer than --max-pause throws (resumable).
   */
  async admit(chunk: { records: number; startByte: number; endByte: number }, signal?: AbortSignal): Promise<void> {
    if (this.options.replicas.length > 0 || this.options.maxThreadsRunning !== undefined) await this.waitForClear(signal);
    if (this.pacer && !signal?.aborted) {
      const amount = this.options.maxRate!.unit === 'rows' ? chunk.records : chunk.endByte - chunk.startByte;
      const wait = this.pacer.reserve(amount, this.io.now());
      if (wait > 0) {
        this.rateWaitMs += wait;
        await this.io.sleep(wait, signal);
      }
    }
    this.inFlight++;
  }

  /** A chunk admitted earlier is done (committed or not): its stream's thread is no longer running on the primary. */
  done(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  private async waitForClear(signal?: AbortSignal): Promise<void> {
    const limits = { maxLagSeconds: this.options.maxLagSeconds, maxThreadsRunning: this.options.maxThreadsRunning };
    for (;;) {
      if (signal?.aborted) return;
      const readings = await this.read();
      // The asking connection's own SHOW counts in Threads_running, as do the streams loading now.
      const causes = pauseCauses(readings, limits, this.inFlight + 1);
      const now = this.io.now();
      const change = this.ledger.observe(causes, now);
      const text = causes.map((c) => c.text).join(', ');
      if (change === 'paused' || change === 'changed') this.events?.emit({ type: 'throttle', state: 'paused', reason: text, pausedMs: this.ledger.pausedFor(now) });
      if (change === 'resumed') this.events?.emit({ type: 'throttle', state: 'resumed', reason: '', pausedMs: 0 });
      if (causes.length === 0) return;
      const paused = this.ledger.pausedFor(now);
      if (paused > this.options.maxPauseMs) {
        throw new FlatloadError('THROTTLED', `paused ${minutes(paused)}, longer than --max-pause ${minutes(this.options.maxPauseMs)}: ${text}`, {
          hint: 'let the replica catch up (START SLAVE on it if its SQL thread stopped) or the primary quieten, or raise --max-lag, --max-threads-running or --max-pause; then rerun the same command to resume',
        });
      }
      await this.io.sleep(PAUSE_POLL_MS, signal);
    }
  }

  private read(): Promise<Readings> {
    const now = this.io.now();
    if (!this.reading || now - this.reading.atMs >= PAUSE_POLL_MS) this.reading = { atMs: now, value: this.io.read() };
    return this.reading.value;
  }

  /** The plan's statement of each throttle, and the replicas as they were when checked. */
  rules(): string[] {
    const o = this.options;
    const out: string[] = [];
    if (o.maxRate) out.push(`--max-rate ${o.maxRate.text}: chunks paced to ${rateText(o.maxRate)} across all streams${o.maxRate.unit === 'rows' ? '' : ' (input bytes)'}`);
    for (const r of this.replicasChecked) {
      out.push(`--replica ${r.name} (${r.address}): ${r.state}${r.lagSeconds === null ? ', lag unknown' : `, ${r.lagSeconds} s behind`} now (${lagSourceText(o.lagHeartbeat, this.heartbeatServerId)}); streams pause between chunks while its lag is over --max-lag ${o.maxLagSeconds} s or unknown`);
    }
    if (o.maxThreadsRunning !== undefined) out.push(`--max-threads-running ${o.maxThreadsRunning}: streams pause between chunks while the primary's Threads_running, flatload's own loading streams excluded, is over it`);
    if (o.replicas.length > 0 || o.maxThreadsRunning !== undefined) out.push(`--max-pause ${minutes(o.maxPauseMs)}: a pause longer than that stops the load, resumable (exit 4)`);
    return out;
  }

  report(): ThrottleReport {
    const now = this.io.now();
    // A pause still open when the report is taken (the load stopped during it) counts up to now.
    if (this.ledger.pausedFor(now) > 0) this.ledger.observe([], now);
    return {
      rules: this.rules(),
      replicas: this.replicasChecked,
      pausedSeconds: this.ledger.pausedMs / 1000,
      pauses: this.ledger.pauses,
      causes: [...this.ledger.byCause].map(([cause, ms]) => ({ cause, seconds: ms / 1000 })),
      rateWaitSeconds: this.rateWaitMs / 1000,
    };
  }
}

/** The server_id pt-heartbeat writes its row under on the primary (its own @@server_id). */
async function primaryServerId(conn: Connection): Promise<string> {
  const [rows] = await conn.query('SELECT @@server_id AS id');
  return String((rows as Array<{ id: unknown }>)[0]!.id);
}

function rateText(r: MaxRate): string {
  return r.unit === 'rows' ? `${fmtInt(r.perSecond)} rows/s` : `${fmtMB(r.perSecond)}/s`;
}

/**
 * The throttle of a load or an export, connected: one connection per replica
 * and, with --max-threads-running, one to the primary. `check()` reaches each
 * replica and confirms it replicates, before anything changes.
 */
export class ServerThrottle {
  readonly throttle: Throttle;
  private readonly watches: ReplicaWatch[];
  private primary: Connection | undefined;

  constructor(options: ThrottleOptions, conn: ConnectionOptions, private readonly session: Session, events: EventHub | undefined) {
    this.watches = options.replicas.map((r) => new ReplicaWatch(r, replicaConnection(conn, r)));
    this.throttle = new Throttle(options, { now: Date.now, sleep: abortableSleep, read: () => this.read() }, events);
  }

  async check(): Promise<void> {
    this.throttle.replicasChecked = [];
    const hb = this.throttle.options.lagHeartbeat;
    if (hb) {
      const serverId = await primaryServerId(await this.primaryConnection());
      this.throttle.heartbeatServerId = serverId;
      for (const w of this.watches) w.heartbeat = { table: hb, serverId };
      if (this.throttle.options.maxThreadsRunning === undefined) {
        this.primary?.destroy();
        this.primary = undefined;
      }
    }
    for (const w of this.watches) {
      const r = await w.check();
      this.throttle.replicasChecked.push({ name: r.name, address: replicaAddress(w.target), lagSeconds: r.lagSeconds, state: r.state });
    }
    if (this.throttle.options.maxThreadsRunning !== undefined) await threadsRunning(await this.primaryConnection());
  }

  private async primaryConnection(): Promise<Connection> {
    if (!this.primary) this.primary = await openConnection(this.session);
    return this.primary;
  }

  private async read(): Promise<Readings> {
    const replicas = await Promise.all(this.watches.map((w) => w.read()));
    if (this.throttle.options.maxThreadsRunning === undefined) return { replicas };
    try {
      return { replicas, threadsRunning: await threadsRunning(await this.primaryConnection()) };
    } catch {
      // The primary going away is the loading streams' business (they retry or stop); the throttle just cannot read it now.
      this.primary?.destroy();
      this.primary = undefined;
      return { replicas };
    }
  }

  close(): void {
    for (const w of this.watches) w.close();
    this.primary?.destroy();
    this.primary = undefined;
  }
}
