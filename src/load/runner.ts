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
  const sleep = o.sleep ?? defaultSleep;
  const maxAttempts = o.maxAttempts ?? 5;
  const freeSlots = Array.from({ length: o.jobs }, (_, i) => o.jobs - i);
  /** The connection each slot holds between chunks; dropped after any error. */
  const held = new Map<number, PoolConnection>();
  const inflight = new Set<Promise<void>>();
  const totals: ChunkOutcome = { records: 0, rowsLoaded: 0, rejected: 0, warnings: 0, bytes: 0 };
  const perChunk: RunResult['perChunk'] = [];
  let stoppedBy: FlatloadError | undefined;
  let chunks = 0;
  let skipped = 0;
  const t0 = Date.now();

  const stop = (err: FlatloadError): void => {
    if (!stoppedBy) stoppedBy = err;
  };
  /** Connections loading a chunk, each with the way to give up waiting for it. */
  const active = new Map<PoolConnection, (err: Error) => void>();
  let graceTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    stop(new FlatloadError('INTERRUPTED', 'interrupted: chunks in flight were committed or rolled back; nothing is half-loaded'));
    graceTimer = setTimeout(() => {
      // A chunk that cannot finish in time is cut off; the server rolls its transaction back. A statement
      // whose connection is destroyed under it (a LOAD DATA LOCAL sending its file) may never settle, so
      // the chunk stops being waited for as well.
      for (const [c, cutOff] of active) {
        c.destroy();
        cutOff(new FlatloadError('INTERRUPTED', 'the chunk did not finish within the grace period after the interrupt; its connection was closed'));
      }
    }, o.abortGraceMs ?? 5000);
    graceTimer.unref();
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  if (o.signal?.aborted) onAbort();

  const runOne = async (chunk: CutChunk, gated: boolean): Promise<void> => {
    const slot = freeSlots.pop() ?? 0;
    const setState = (state: ConnectionState): void => o.events.emit({ type: 'connection-state', slot, state, chunk: chunk.index });
    try {
      for (let attempt = 1; ; attempt++) {
        let conn: PoolConnection | undefined = held.get(slot);
        held.delete(slot);
        const started = Date.now();
        try {
          if (!conn && o.shared) conn = await o.shared.connections.borrow(o.shared.as, o.sessionSql);
          else if (!conn) {
            conn = await o.pool!.getConnection();
            for (const sql of o.sessionSql) await conn.query(sql);
          }
          o.events.emit({ type: 'chunk-start', chunk: chunk.index, slot, startByte: chunk.startByte, endByte: chunk.endByte, records: chunk.records });
          setState('loading');
          const loading = conn;
          const executing = o.execute(chunk, { conn: loading, slot, attempt, setState });
          const cutOff = new Promise<never>((_, reject) => active.set(loading, reject));
          executing.catch(() => undefined); // settles (if ever) after a cut-off nobody waits for
          const out = await Promise.race([executing, cutOff]).finally(() => active.delete(loading));
          // A shared connection goes back before the stream does, so whoever takes the stream finds it free.
          if (o.shared) conn.release();
          else held.set(slot, conn);
          conn = undefined;
          totals.records += out.records;
          totals.rowsLoaded += out.rowsLoaded;
          totals.rejected += out.rejected;
          totals.warnings += out.warnings;
          totals.bytes += out.bytes;
          const elapsedMs = Date.now() - started;
          perChunk.push({ chunk: chunk.index, records: out.records, elapsedMs, bytes: out.bytes });
          o.events.emit({
            type: 'chunk-committed',
            chunk: chunk.index,
            slot,
            records: out.records,
            rowsLoaded: out.rowsLoaded,
            rejected: out.rejected,
            bytes: out.bytes,
            elapsedMs,
            atMs: Date.now() - t0,
          });
          return;
        } catch (err) {
          if (conn) {
            o.onFault?.(conn, err);
            // A connection that failed mid-statement may hold a half-done transaction: never reuse it.
            conn.destroy();
            conn = undefined;
          }
          if (!isFlatloadError(err) && isRetryable(err) && attempt < maxAttempts && !stoppedBy) {
            const delayMs = backoffMs(attempt);
            const reason = toFlatloadError(err, `chunk ${chunk.index}`).message;
            o.events.emit({ type: 'chunk-retry', chunk: chunk.index, attempt, delayMs, reason });
            setState('retrying');
            await sleep(delayMs);
            continue;
          }
          const fe = midLoadError(toFlatloadError(err, `loading chunk ${chunk.index}`, { chunk: chunk.index, ...chunkPlace(chunk) }));
          o.events.emit({ type: 'chunk-rolled-back', chunk: chunk.index, reason: fe.message });
          stop(fe);
          return;
        }
      }
    } finally {
      setState('idle');
      o.throttle?.done();
      freeSlots.push(slot);
      if (gated) o.gate?.give();
      o.onFinished?.(chunk);
    }
  };

  /** Whether this load holds a shared stream for the next chunk it pulls. */
  let holding = false;
  const holdStream = async (): Promise<void> => {
    if (!o.gate || holding) return;
    await o.gate.take();
    holding = true;
  };
  try {
    // The stream is taken before the chunk is pulled: pulling reads (or merges) its bytes, which would otherwise wait in memory.
    await holdStream();
    for await (const chunk of o.chunks) {
      if (stoppedBy) break;
      chunks++;
      if (o.isDone?.(chunk)) {
        skipped++;
        o.onFinished?.(chunk);
        continue;
      }
      if (o.throttle) {
        await o.throttle.admit(chunk, o.signal);
        if (stoppedBy) break;
      }
      const p: Promise<void> = runOne(chunk, holding).finally(() => inflight.delete(p));
      holding = false;
      inflight.add(p);
      // Backpressure on the input: pull the next chunk only when a connection is free.
      while (inflight.size >= o.jobs && !stoppedBy) await Promise.race(inflight);
      if (stoppedBy) break;
      await holdStream();
      if (stoppedBy) break;
    }
  } catch (err) {
    stop(isFlatloadError(err) ? err : toFlatloadError(err, 'reading the input'));
  } finally {
    if (holding) o.gate?.give();
    holding = false;
    await Promise.allSettled([...inflight]);
    if (graceTimer) clearTimeout(graceTimer);
    o.signal?.removeEventListener('abort', onAbort);
    for (const [slot, conn] of held) {
      try {
        for (const sql of o.sessionEnd ?? []) await conn.query(sql);
        conn.release();
      } catch (err) {
        conn.destroy();
        stop(toFlatloadError(err, `finishing connection ${slot}`));
      }
    }
    held.clear();
  }
  perChunk.sort((a, b) => a.chunk - b.chunk);
  return { chunks, skippedChunks: skipped, totals, perChunk, stoppedBy };
}
