import type { Pool, PoolConnection } from 'mysql2/promise';
import { chunkPlace, type CutChunk } from '../chunking/types.js';
import { toFlatloadError } from '../db/errors.js';
import { FlatloadError, isFlatloadError } from '../errors/index.js';
import type { ConnectionState, EventHub } from '../report/events.js';
import { backoffMs, isRetryable } from '../db/retry.js';
import type { SharedConnections } from './sharedConnections.js';

/** What a chunk's execution reports back. */
export interface ChunkOutcome {
  records: number;
  rowsLoaded: number;
  rejected: number;
  warnings: number;
  bytes: number;
}

export interface ChunkContext {
  conn: PoolConnection;
  slot: number;
  attempt: number;
  setState(state: ConnectionState): void;
}

/**
 * Runs one chunk on a connection, inside its own transaction, and either
 * commits it (rows and bookkeeping together) or leaves nothing behind.
 */
export type ChunkExecutor = (chunk: CutChunk, ctx: ChunkContext) => Promise<ChunkOutcome>;

/**
 * Loading streams shared with other loads (the tables of one export): one
 * is taken before each chunk is read and given back when the chunk is done
 * with, so the loads together never run more chunks at once than the
 * budget, and a load that is still reading or sorting its input holds none.
 */
export interface StreamGate {
  take(): Promise<void>;
  give(): void;
}

/**
 * Held before each chunk is sent (replica lag, the primary's load, a rate):
 * the pause goes between chunks, never inside one, so no transaction stays
 * open while it lasts. One may span several loads (an export's tables).
 */
export interface ChunkThrottle {
  /** Resolves when the chunk may go (at once on an abort); throws when a pause outlasts its limit. */
  admit(chunk: CutChunk, signal?: AbortSignal): Promise<void>;
  /** An admitted chunk is finished with. */
  done(): void;
}

export interface RunOptions {
  /** connectionLimit >= jobs; each slot keeps one connection for the whole run. Unused when `shared` is given. */
  pool?: Pool | undefined;
  /**
   * Connections shared with other loads, borrowed for each chunk and given
   * back after it (as `as`, whose session settings they then hold). Not for
   * a plan with `sessionEnd`: its session lasts from the first chunk to the last.
   */
  shared?: { connections: SharedConnections; as: string } | undefined;
  jobs: number;
  chunks: AsyncIterable<CutChunk>;
  execute: ChunkExecutor;
  /** SQL run once on each new connection (session settings). */
  sessionSql: readonly string[];
  /**
   * Run on each slot's connection after its last chunk (e.g. SET rocksdb_bulk_load=0,
   * which is where MyRocks reports a failed bulk load). An error here stops the run.
   */
  sessionEnd?: readonly string[];
  /** Run instead of sessionEnd when the run stopped (ROLLBACK of the load's one transaction): none, sessionEnd runs either way. */
  sessionAbort?: readonly string[] | undefined;
  events: EventHub;
  /** Chunks already committed by an earlier run (resume): skipped. */
  isDone?: (chunk: CutChunk) => boolean;
  /** A chunk is finished with — committed, skipped, or given up — never before a retry (its bytes may be reused). */
  onFinished?: (chunk: CutChunk) => void;
  signal?: AbortSignal;
  /** After an abort, in-flight chunks get this long to commit before their connections are cut (they then roll back). */
  abortGraceMs?: number;
  maxAttempts?: number;
  /** Told of every failed attempt before its connection is dropped (a node that said it is not ready is avoided). */
  onFault?: (conn: PoolConnection, err: unknown) => void;
  /** Shared with other loads: a stream is taken before each chunk is pulled from `chunks`. */
  gate?: StreamGate | undefined;
  /**
   * With one slot, pull the next chunk while it is busy (ignored under a gate):
   * for a source whose pull is work (a merge), not bytes that would wait in
   * memory or in --tmpdir. Two chunks are then held instead of one. With more
   * slots the others keep the server busy meanwhile, and a chunk more would
   * only cost memory.
   */
  pullAhead?: boolean | undefined;
  throttle?: ChunkThrottle | undefined;
  /** For tests: a deterministic clock and sleep. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RunResult {
  chunks: number;
  skippedChunks: number;
  totals: ChunkOutcome;
  perChunk: Array<{ chunk: number; records: number; elapsedMs: number; bytes: number }>;
  /** Set when the run stopped before the end (error or interrupt). */
  stoppedBy: FlatloadError | undefined;
}

/**
 * A server (or every node of a list) that refuses connections once the load
 * has begun went away under it: the load stops resumable, like any lost
 * connection, rather than as a configuration error.
 */
function midLoadError(fe: FlatloadError): FlatloadError {
  if (fe.code !== 'CONNECTION_REFUSED') return fe;
  return new FlatloadError('CONNECTION_LOST', `${fe.message}; the server went away during the load`, { ...fe.context, hint: 'start the server (or a node of the list) again, then rerun the same command to resume' });
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One run's state, shared by its dispatch loop and its slots. */
class Run {
  readonly sleep: (ms: number) => Promise<void>;
  readonly maxAttempts: number;
  readonly t0 = Date.now();
  readonly freeSlots: number[];
  /** The connection each slot holds between chunks; dropped after any error. */
  readonly held = new Map<number, PoolConnection>();
  readonly inflight = new Set<Promise<void>>();
  /** Connections loading a chunk, each with the way to give up waiting for it. */
  readonly active = new Map<PoolConnection, (err: Error) => void>();
  readonly totals: ChunkOutcome = { records: 0, rowsLoaded: 0, rejected: 0, warnings: 0, bytes: 0 };
  readonly perChunk: RunResult['perChunk'] = [];
  chunks = 0;
  skipped = 0;
  /** Whether this load holds a shared stream for the next chunk it pulls. */
  holding = false;
  stoppedBy: FlatloadError | undefined;
  private halt: () => void = () => undefined;
  /** Settles when the run stops: a chunk still being pulled then (a stalled stream) is not waited for. */
  readonly halted = new Promise<void>((resolve) => (this.halt = resolve));

  constructor(readonly o: RunOptions) {
    this.sleep = o.sleep ?? defaultSleep;
    this.maxAttempts = o.maxAttempts ?? 5;
    this.freeSlots = Array.from({ length: o.jobs }, (_, i) => o.jobs - i);
  }

  /** The first error wins; later ones are consequences of it. */
  stop(err: FlatloadError): void {
    if (this.stoppedBy) return;
    this.stoppedBy = err;
    this.halt();
  }

  stopped(): boolean {
    return this.stoppedBy !== undefined;
  }
}

/**
 * Pulls chunks one at a time and runs them over `jobs` pooled connections,
 * one slot per connection. It pulls the next chunk only when a slot is free
 * (that wait is the whole concurrency limit), so at most jobs + 1 chunks are
 * in memory. On the first fatal error (or an abort) it stops dispatching,
 * lets in-flight chunks finish (commit or roll back), and reports.
 */
export async function runChunks(o: RunOptions): Promise<RunResult> {
  if (o.shared && o.sessionEnd?.length) throw new FlatloadError('INTERNAL', 'a load whose session ends with statements cannot share its connections');
  if (!o.shared && !o.pool) throw new FlatloadError('INTERNAL', 'a load needs a pool or shared connections');
  const run = new Run(o);
  const disarm = armAbort(run);
  try {
    await dispatch(run);
  } catch (err) {
    run.stop(isFlatloadError(err) ? err : toFlatloadError(err, 'reading the input'));
  } finally {
    if (run.holding) o.gate?.give();
    run.holding = false;
    await Promise.allSettled([...run.inflight]);
    disarm();
    await endSessions(run);
  }
  run.perChunk.sort((a, b) => a.chunk - b.chunk);
  return { chunks: run.chunks, skippedChunks: run.skipped, totals: run.totals, perChunk: run.perChunk, stoppedBy: run.stoppedBy };
}

/** On an abort: stop dispatching, and cut off chunks still loading after the grace period. Returns the undo. */
function armAbort(run: Run): () => void {
  const { o } = run;
  let graceTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    run.stop(new FlatloadError('INTERRUPTED', 'interrupted: chunks in flight were committed or rolled back; nothing is half-loaded'));
    graceTimer = setTimeout(() => {
      // A chunk that cannot finish in time is cut off; the server rolls its transaction back. A statement
      // whose connection is destroyed under it (a LOAD DATA LOCAL sending its file) may never settle, so
      // the chunk stops being waited for as well.
      for (const [c, cutOff] of run.active) {
        c.destroy();
        cutOff(new FlatloadError('INTERRUPTED', 'the chunk did not finish within the grace period after the interrupt; its connection was closed'));
      }
    }, o.abortGraceMs ?? 5000);
    graceTimer.unref();
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  return () => {
    if (graceTimer) clearTimeout(graceTimer);
    o.signal?.removeEventListener('abort', onAbort);
  };
}

/**
 * The input loop: pull a chunk, skip it or hand it to a free slot. The next
 * chunk is pulled when a slot is free (and under a gate, a stream held), or
 * with pullAhead and one slot as soon as the last one is handed out:
 * pulling a sorted input's chunk merges it, which a single stream's server
 * would otherwise wait for at every chunk.
 */
async function dispatch(run: Run): Promise<void> {
  const { o } = run;
  const ahead = o.pullAhead === true && !o.gate && o.jobs === 1;
  const it = o.chunks[Symbol.asyncIterator]();
  await holdStream(run);
  let next: Promise<IteratorResult<CutChunk>> | undefined = it.next();
  const halted = run.halted.then(() => undefined);
  try {
    while (next !== undefined) {
      const pulled = await Promise.race([next, halted]);
      if (!pulled) break;
      next = undefined;
      if (pulled.done || run.stopped()) break;
      const chunk = pulled.value;
      if (o.isDone?.(chunk)) {
        run.chunks++;
        run.skipped++;
        o.onFinished?.(chunk);
        next = it.next();
        continue;
      }
      if (!(await freeSlot(run))) break;
      run.chunks++;
      if (o.throttle) {
        await o.throttle.admit(chunk, o.signal);
        if (run.stopped()) break;
      }
      const p: Promise<void> = runOne(run, chunk, run.holding).finally(() => run.inflight.delete(p));
      run.holding = false;
      run.inflight.add(p);
      if (!ahead) {
        if (!(await freeSlot(run))) break;
        await holdStream(run);
        if (run.stopped()) break;
      }
      next = it.next();
    }
  } finally {
    // A pull still under way when the run stopped ends on its own; its generator is closed after it.
    if (next !== undefined) void next.then(() => it.return?.(undefined)).catch(() => undefined);
    else await it.return?.(undefined);
  }
}

/** Backpressure on the input: waits until a connection is free; false when the run stopped meanwhile. */
async function freeSlot(run: Run): Promise<boolean> {
  while (run.inflight.size >= run.o.jobs && !run.stopped()) await Promise.race(run.inflight);
  return !run.stopped();
}

async function holdStream(run: Run): Promise<void> {
  if (!run.o.gate || run.holding) return;
  await run.o.gate.take();
  run.holding = true;
}

/** One chunk on one slot, retried on a retryable error; whatever happens, the slot and stream are given back. */
async function runOne(run: Run, chunk: CutChunk, gated: boolean): Promise<void> {
  const { o } = run;
  const slot = run.freeSlots.pop() ?? 0;
  const setState = (state: ConnectionState): void => o.events.emit({ type: 'connection-state', slot, state, chunk: chunk.index });
  try {
    for (let attempt = 1; ; attempt++) {
      if ((await attemptChunk(run, chunk, { slot, attempt, setState })) !== 'retry') return;
    }
  } finally {
    setState('idle');
    o.throttle?.done();
    run.freeSlots.push(slot);
    if (gated) o.gate?.give();
    o.onFinished?.(chunk);
  }
}

type Attempt = Omit<ChunkContext, 'conn'>;

async function attemptChunk(run: Run, chunk: CutChunk, at: Attempt): Promise<'committed' | 'retry' | 'stopped'> {
  const { o } = run;
  let conn = run.held.get(at.slot);
  run.held.delete(at.slot);
  const started = Date.now();
  try {
    if (!conn && o.shared) conn = await o.shared.connections.borrow(o.shared.as, o.sessionSql);
    else if (!conn) {
      // Assigned before its settings run, so a setting that fails drops this connection like any failed attempt.
      conn = await o.pool!.getConnection();
      for (const sql of o.sessionSql) await conn.query(sql);
    }
    const out = await executeChunk(run, chunk, { ...at, conn });
    // A shared connection goes back before the stream does, so whoever takes the stream finds it free.
    if (o.shared) conn.release();
    else run.held.set(at.slot, conn);
    conn = undefined;
    recordCommitted(run, chunk, at.slot, out, Date.now() - started);
    return 'committed';
  } catch (err) {
    if (conn) {
      o.onFault?.(conn, err);
      // A connection that failed mid-statement may hold a half-done transaction: never reuse it.
      conn.destroy();
    }
    return afterFailure(run, chunk, at, err);
  }
}

/** Runs the executor, unless the abort's grace period cuts the connection off first. */
async function executeChunk(run: Run, chunk: CutChunk, ctx: ChunkContext): Promise<ChunkOutcome> {
  run.o.events.emit({ type: 'chunk-start', chunk: chunk.index, slot: ctx.slot, startByte: chunk.startByte, endByte: chunk.endByte, records: chunk.records });
  ctx.setState('loading');
  const loading = ctx.conn;
  const executing = run.o.execute(chunk, ctx);
  const cutOff = new Promise<never>((_, reject) => run.active.set(loading, reject));
  executing.catch(() => undefined); // settles (if ever) after a cut-off nobody waits for
  return Promise.race([executing, cutOff]).finally(() => run.active.delete(loading));
}

function recordCommitted(run: Run, chunk: CutChunk, slot: number, out: ChunkOutcome, elapsedMs: number): void {
  const { totals } = run;
  totals.records += out.records;
  totals.rowsLoaded += out.rowsLoaded;
  totals.rejected += out.rejected;
  totals.warnings += out.warnings;
  totals.bytes += out.bytes;
  run.perChunk.push({ chunk: chunk.index, records: out.records, elapsedMs, bytes: out.bytes });
  run.o.events.emit({
    type: 'chunk-committed',
    chunk: chunk.index,
    slot,
    records: out.records,
    rowsLoaded: out.rowsLoaded,
    rejected: out.rejected,
    bytes: out.bytes,
    elapsedMs,
    atMs: Date.now() - run.t0,
  });
}

/** A retryable error is retried after a back-off (unless the run is stopping); any other stops the run. */
async function afterFailure(run: Run, chunk: CutChunk, at: Attempt, err: unknown): Promise<'retry' | 'stopped'> {
  const { o } = run;
  if (!isFlatloadError(err) && isRetryable(err) && at.attempt < run.maxAttempts && !run.stopped()) {
    const delayMs = backoffMs(at.attempt);
    const reason = toFlatloadError(err, `chunk ${chunk.index}`).message;
    o.events.emit({ type: 'chunk-retry', chunk: chunk.index, attempt: at.attempt, delayMs, reason });
    at.setState('retrying');
    await run.sleep(delayMs);
    return 'retry';
  }
  const fe = midLoadError(toFlatloadError(err, `loading chunk ${chunk.index}`, { chunk: chunk.index, ...chunkPlace(chunk) }));
  o.events.emit({ type: 'chunk-rolled-back', chunk: chunk.index, reason: fe.message });
  run.stop(fe);
  return 'stopped';
}

/** Each slot's held connection runs the session's closing statements and goes back; an error there stops the run. */
async function endSessions(run: Run): Promise<void> {
  const closing = run.stopped() && run.o.sessionAbort ? run.o.sessionAbort : (run.o.sessionEnd ?? []);
  for (const [slot, conn] of run.held) {
    try {
      for (const sql of closing) await conn.query(sql);
      conn.release();
    } catch (err) {
      conn.destroy();
      run.stop(toFlatloadError(err, `finishing connection ${slot}`));
    }
  }
  run.held.clear();
}
