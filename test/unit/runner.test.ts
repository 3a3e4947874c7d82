/**
 * runChunks, the chunk scheduler, without a server: a fake pool hands out
 * fake connections that record what they are asked, and a scripted executor
 * stands in for LOAD DATA / INSERT. What is checked is the scheduling: slots
 * and connections, backpressure on the input, retries, stopping, aborts and
 * the end-of-session statements.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pool } from 'mysql2/promise';
import type { CutChunk } from '../../src/chunking/types.js';
import { isFlatloadError, FlatloadError } from '../../src/errors/index.js';
import { SharedConnections, type ConnectionPool } from '../../src/load/sharedConnections.js';
import { runChunks, type ChunkContext, type ChunkOutcome, type RunOptions, type RunResult, type StreamGate } from '../../src/load/runner.js';
import { EventHub, type LoadEvent } from '../../src/report/events.js';

class FakeConnection {
  readonly queries: string[] = [];
  released = false;
  destroyed = false;
  private readonly destroyWaiters: Array<() => void> = [];
  constructor(
    readonly id: number,
    private readonly failQuery?: (sql: string) => Error | undefined,
  ) {}
  query(sql: string): Promise<[unknown[], unknown[]]> {
    this.queries.push(sql);
    const err = this.failQuery?.(sql);
    return err === undefined ? Promise.resolve([[], []]) : Promise.reject(err);
  }
  release(): void {
    this.released = true;
  }
  reset(): Promise<void> {
    this.queries.push('(reset)');
    return Promise.resolve();
  }
  destroy(): void {
    this.destroyed = true;
    for (const w of this.destroyWaiters.splice(0)) w();
  }
  /** Resolves when the connection is destroyed (a statement cut off by the client). */
  untilDestroyed(): Promise<void> {
    return this.destroyed ? Promise.resolve() : new Promise((r) => this.destroyWaiters.push(r));
  }
}

class FakePool {
  readonly connections: FakeConnection[] = [];
  constructor(private readonly failQuery?: (sql: string) => Error | undefined) {}
  getConnection(): Promise<FakeConnection> {
    const c = new FakeConnection(this.connections.length + 1, this.failQuery);
    this.connections.push(c);
    return Promise.resolve(c);
  }
}

/** A pool that hands a released connection out again, as mysql2's does. */
class ReusingPool extends FakePool {
  override getConnection(): Promise<FakeConnection> {
    const free = this.connections.find((c) => c.released && !c.destroyed);
    if (!free) return super.getConnection();
    free.released = false;
    return Promise.resolve(free);
  }
  end(): Promise<void> {
    return Promise.resolve();
  }
}

function chunk(index: number): CutChunk {
  return { index, startByte: index * 100, endByte: index * 100 + 100, firstLine: index * 10 + 1, firstRecord: index * 10, records: 10, newlines: 10 };
}

const outcome = (c: CutChunk): ChunkOutcome => ({ records: c.records, rowsLoaded: c.records - 1, rejected: 1, warnings: 2, bytes: c.endByte - c.startByte });

/** The chunks 0..n-1 as a stream that records how far ahead of the executor it has been pulled. */
function chunkStream(n: number, pulled: number[] = []): AsyncIterable<CutChunk> {
  return (async function* () {
    for (let i = 0; i < n; i++) {
      await Promise.resolve();
      pulled.push(i);
      yield chunk(i);
    }
  })();
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const lockWait = (): Error => Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213, code: 'ER_LOCK_DEADLOCK', sqlMessage: 'Deadlock found' });

interface Run {
  result: RunResult;
  pool: FakePool;
  events: LoadEvent[];
  sleeps: number[];
}

async function run(o: Partial<RunOptions> & Pick<RunOptions, 'execute'>, pool = new FakePool()): Promise<Run> {
  const hub = new EventHub();
  const events: LoadEvent[] = [];
  hub.on((e) => events.push(e));
  const sleeps: number[] = [];
  const result = await runChunks({
    pool: pool as unknown as Pool,
    jobs: 2,
    chunks: chunkStream(6),
    sessionSql: ['SET SESSION a = 1', 'SET SESSION b = 2'],
    events: hub,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    ...o,
  });
  return { result, pool, events, sleeps };
}

const ofType = <T extends LoadEvent['type']>(events: LoadEvent[], type: T): Array<Extract<LoadEvent, { type: T }>> =>
  events.filter((e): e is Extract<LoadEvent, { type: T }> => e.type === type);

describe('runChunks: the happy path', () => {
  for (const [jobs, pullAhead] of [1, 2, 3, 5].flatMap((j) => [[j, false], [j, true]] as const)) {
    // A source's chunks are pulled only as far as the slots can run them, or with pullAhead and one slot one further (a merge).
    const ahead = jobs + (pullAhead && jobs === 1 ? 1 : 0);
    test(`jobs=${jobs}${pullAhead ? ', pullAhead' : ''}: every chunk once, at most ${jobs} at a time on distinct slots, one connection per slot, ${ahead} chunks pulled ahead of those finished, no more`, async () => {
      const pulled: number[] = [];
      let finished = 0;
      let running = 0;
      let maxRunning = 0;
      let maxAhead = 0;
      const busySlots = new Set<number>();
      const executed: number[] = [];
      const { result, pool, events } = await run({
        jobs,
        pullAhead,
        chunks: chunkStream(9, pulled),
        sessionEnd: ['SET SESSION a = 0'],
        execute: async (c: CutChunk, ctx: ChunkContext) => {
          assert.ok(pulled.length - finished <= ahead, `pulled ${pulled.length} with ${finished} finished (jobs ${jobs})`);
          assert.ok(!busySlots.has(ctx.slot), `slot ${ctx.slot} used twice at once`);
          assert.ok(ctx.slot >= 1 && ctx.slot <= jobs, `slot ${ctx.slot}`);
          assert.equal(ctx.attempt, 1);
          busySlots.add(ctx.slot);
          running++;
          maxRunning = Math.max(maxRunning, running);
          await tick();
          await tick();
          maxAhead = Math.max(maxAhead, pulled.length - finished);
          running--;
          busySlots.delete(ctx.slot);
          executed.push(c.index);
          finished++;
          return outcome(c);
        },
      });
      assert.equal(result.stoppedBy, undefined);
      assert.equal(result.chunks, 9);
      assert.equal(result.skippedChunks, 0);
      assert.deepEqual([...executed].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
      assert.equal(maxRunning, Math.min(jobs, 9));
      assert.equal(maxAhead, ahead, ahead > jobs ? 'a chunk is pulled while the slot is busy (a merge overlaps the load)' : 'pulled as far as the slots go');
      assert.deepEqual(result.totals, { records: 90, rowsLoaded: 81, rejected: 9, warnings: 18, bytes: 900 });
      assert.deepEqual(result.perChunk.map((p) => p.chunk), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
      assert.ok(pool.connections.length <= jobs, `${pool.connections.length} connections for ${jobs} slots`);
      for (const c of pool.connections) {
        assert.deepEqual(c.queries, ['SET SESSION a = 1', 'SET SESSION b = 2', 'SET SESSION a = 0'], `connection ${c.id}`);
        assert.ok(c.released && !c.destroyed, `connection ${c.id} released`);
      }
      assert.deepEqual(ofType(events, 'chunk-committed').map((e) => e.chunk).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
      assert.equal(ofType(events, 'chunk-start').length, 9);
      assert.equal(ofType(events, 'chunk-retry').length, 0);
    });
  }

  test('chunks an earlier run committed are skipped, not executed', async () => {
    const executed: number[] = [];
    const { result } = await run({
      isDone: (c) => c.index % 2 === 0,
      execute: (c) => {
        executed.push(c.index);
        return Promise.resolve(outcome(c));
      },
    });
    assert.deepEqual([...executed].sort(), [1, 3, 5]);
    assert.equal(result.chunks, 6);
    assert.equal(result.skippedChunks, 3);
    assert.equal(result.totals.records, 30);
  });

  test('an empty input runs nothing and opens no connection', async () => {
    const { result, pool } = await run({ chunks: chunkStream(0), execute: () => assert.fail('nothing to execute') });
    assert.deepEqual(result, { chunks: 0, skippedChunks: 0, totals: { records: 0, rowsLoaded: 0, rejected: 0, warnings: 0, bytes: 0 }, perChunk: [], stoppedBy: undefined });
    assert.equal(pool.connections.length, 0);
  });
});

describe('runChunks: streams shared with other loads', () => {
  /** A gate of `n` streams that counts what is lent. */
  function countingGate(n: number): StreamGate & { lent: number; maxLent: number } {
    const waiting: Array<() => void> = [];
    const g = {
      lent: 0,
      maxLent: 0,
      async take(): Promise<void> {
        if (g.lent >= n) await new Promise<void>((r) => waiting.push(r));
        g.lent++;
        g.maxLent = Math.max(g.maxLent, g.lent);
      },
      give(): void {
        g.lent--;
        waiting.shift()?.();
      },
    };
    return g;
  }

  test('two loads sharing one stream: one chunk at a time in all, each chunk pulled only once a stream is held, every stream given back', async () => {
    const gate = countingGate(1);
    let running = 0;
    const pulledA: number[] = [];
    const pulledB: number[] = [];
    const executed: string[] = [];
    const load = (name: string, pulled: number[]) =>
      run({
        jobs: 3,
        gate,
        chunks: chunkStream(4, pulled),
        execute: async (c) => {
          running++;
          assert.equal(running, 1, 'more chunks at once than the shared streams');
          assert.ok(pulledA.length + pulledB.length - executed.length <= 1, 'a chunk was pulled before a stream was free for it');
          await tick();
          running--;
          executed.push(`${name}${c.index}`);
          return outcome(c);
        },
      });
    const [a, b] = await Promise.all([load('a', pulledA), load('b', pulledB)]);
    assert.equal(a.result.chunks + b.result.chunks, 8);
    assert.equal(executed.length, 8);
    assert.ok(executed.some((x) => x.startsWith('a')) && executed.some((x) => x.startsWith('b')));
    assert.equal(gate.maxLent, 1);
    assert.equal(gate.lent, 0, 'every stream given back');
  });

  test('a load that stops gives back the stream it held for its next chunk', async () => {
    const gate = countingGate(2);
    const { result } = await run({
      gate,
      chunks: chunkStream(6),
      execute: (c) => (c.index === 1 ? Promise.reject(new FlatloadError('INPUT_MALFORMED', 'bad chunk')) : Promise.resolve(outcome(c))),
    });
    assert.equal(result.stoppedBy?.code, 'INPUT_MALFORMED');
    assert.equal(gate.lent, 0);
  });
});

describe('runChunks: connections shared with other loads', () => {
  const lender = (pool: ReusingPool): SharedConnections => new SharedConnections(pool as unknown as ConnectionPool);
  const ok = (c: CutChunk): Promise<ChunkOutcome> => Promise.resolve(outcome(c));

  test('each chunk gives its connection back; the same load finds its settings, another finds the connection reset first', async () => {
    const pool = new ReusingPool();
    const shared = lender(pool);
    const a = await run({ pool: undefined, shared: { connections: shared, as: 'a' }, jobs: 1, chunks: chunkStream(3), execute: ok }, pool);
    assert.equal(a.result.totals.records, 30);
    assert.equal(pool.connections.length, 1);
    assert.ok(pool.connections[0]!.released, 'given back after the last chunk');
    assert.deepEqual(pool.connections[0]!.queries, ['SET SESSION a = 1', 'SET SESSION b = 2'], 'settings once for three chunks');
    await run({ pool: undefined, shared: { connections: shared, as: 'b' }, jobs: 1, chunks: chunkStream(2), sessionSql: ['SET SESSION c = 3'], execute: ok }, pool);
    await run({ pool: undefined, shared: { connections: shared, as: 'a' }, jobs: 1, chunks: chunkStream(1), execute: ok }, pool);
    assert.equal(pool.connections.length, 1);
    assert.deepEqual(pool.connections[0]!.queries.slice(2), ['(reset)', 'SET NAMES utf8mb4', 'SET SESSION c = 3', '(reset)', 'SET NAMES utf8mb4', 'SET SESSION a = 1', 'SET SESSION b = 2']);
  });

  test('a chunk that fails drops its shared connection; the retry gets a new one with the settings', async () => {
    const pool = new ReusingPool();
    let failures = 1;
    const { result } = await run(
      {
        pool: undefined,
        shared: { connections: lender(pool), as: 'a' },
        jobs: 1,
        chunks: chunkStream(2),
        execute: (c) => (failures-- > 0 ? Promise.reject(lockWait()) : ok(c)),
      },
      pool,
    );
    assert.equal(result.stoppedBy, undefined);
    assert.equal(result.totals.records, 20);
    assert.deepEqual(pool.connections.map((c) => [c.destroyed, c.released, c.queries.length]), [[true, false, 2], [false, true, 2]]);
  });

  test('a load whose session ends with statements cannot share connections', async () => {
    const pool = new ReusingPool();
    await assert.rejects(run({ pool: undefined, shared: { connections: lender(pool), as: 'a' }, sessionEnd: ['SET SESSION rocksdb_bulk_load = 0'], execute: ok }, pool), /cannot share/);
  });
});

describe('runChunks: failures', () => {
  const retryable: Array<[string, () => Error]> = [
    ['deadlock (1213)', lockWait],
    ['lock wait timeout (1205)', () => Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205, sqlMessage: 'Lock wait timeout exceeded' })],
    ['lost connection', () => Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true })],
    ['server gone away (2006)', () => Object.assign(new Error('MySQL server has gone away'), { errno: 2006 })],
  ];
  for (const [name, make] of retryable) {
    test(`${name}: the connection is destroyed and the chunk retried on a new one after a backoff`, async () => {
      const attempts = new Map<number, number[]>();
      const { result, pool, events, sleeps } = await run({
        jobs: 1,
        chunks: chunkStream(3),
        execute: (c, ctx) => {
          attempts.set(c.index, [...(attempts.get(c.index) ?? []), ctx.attempt]);
          if (c.index === 1 && ctx.attempt < 3) return Promise.reject(make());
          return Promise.resolve(outcome(c));
        },
      });
      assert.equal(result.stoppedBy, undefined);
      assert.deepEqual([...attempts], [[0, [1]], [1, [1, 2, 3]], [2, [1]]]);
      assert.deepEqual(ofType(events, 'chunk-retry').map((e) => [e.chunk, e.attempt]), [[1, 1], [1, 2]]);
      assert.equal(sleeps.length, 2);
      assert.ok(sleeps[0]! >= 400 && sleeps[0]! <= 600 && sleeps[1]! >= 800 && sleeps[1]! <= 1200, `backoff ${sleeps.join(', ')}`);
      // One connection for chunk 0 that failed chunk 1's first attempt, one for the second attempt, one that finishes.
      assert.deepEqual(pool.connections.map((c) => [c.destroyed, c.released]), [[true, false], [true, false], [false, true]]);
      assert.equal(result.totals.records, 30);
    });
  }

  for (const pullAhead of [false, true]) {
    test(`retries stop at maxAttempts${pullAhead ? ', pullAhead' : ''}: the load stops with the chunk rolled back and no later chunk started or counted`, async () => {
      const started: number[] = [];
      const { result, events } = await run({
        jobs: 1,
        pullAhead,
        maxAttempts: 3,
        chunks: chunkStream(5),
        execute: (c) => {
          started.push(c.index);
          return c.index === 1 ? Promise.reject(lockWait()) : Promise.resolve(outcome(c));
        },
      });
      assert.deepEqual(started, [0, 1, 1, 1]);
      assert.ok(result.stoppedBy);
      assert.equal(result.stoppedBy.context.chunk, 1);
      assert.equal(result.stoppedBy.context.byteOffset, 100);
      assert.equal(result.stoppedBy.context.line, 11);
      assert.match(result.stoppedBy.message, /loading chunk 1/);
      assert.deepEqual(ofType(events, 'chunk-rolled-back').map((e) => e.chunk), [1]);
      assert.deepEqual(result.perChunk.map((p) => p.chunk), [0]);
      assert.equal(result.chunks, 2);
    });
  }

  test('pullAhead: a run that stops while the next chunk is still being pulled (a stalled stream) returns without it', async () => {
    let unstall: () => void = () => undefined;
    const stalled = new Promise<void>((r) => (unstall = r));
    async function* chunks(): AsyncGenerator<CutChunk> {
      yield chunk(0);
      await stalled;
      yield chunk(1);
    }
    const ran = run({ jobs: 1, pullAhead: true, chunks: chunks(), execute: () => Promise.reject(new FlatloadError('ROWS_REJECTED', 'too many')) });
    const deadline = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5000).unref());
    const settled = await Promise.race([ran, deadline]);
    unstall();
    assert.notEqual(settled, 'hung', 'runChunks waited for a pull after the load had stopped');
    const { result } = settled as Run;
    assert.equal(result.stoppedBy?.code, 'ROWS_REJECTED');
    assert.equal(result.chunks, 1);
  });

  const fatal: Array<[string, () => Error, string]> = [
    ['a FlatloadError (rows over --max-errors)', () => new FlatloadError('ROWS_REJECTED', 'too many'), 'ROWS_REJECTED'],
    ['a duplicate key (1062)', () => Object.assign(new Error("Duplicate entry '1' for key 'PRIMARY'"), { errno: 1062, code: 'ER_DUP_ENTRY', sqlMessage: "Duplicate entry '1' for key 'PRIMARY'" }), ''],
    // Already mapped (by an executor that checked whether its chunk committed): its message still reads like a lost connection.
    ['a FlatloadError that reads like a lost connection', () => new FlatloadError('CONNECTION_LOST', "Can't add new command when connection is in closed state"), 'CONNECTION_LOST'],
  ];
  for (const [name, make, code] of fatal) {
    test(`${name}: no retry; the load stops with that error; chunks in flight finish`, async () => {
      const attempts: Array<[number, number]> = [];
      const { result, sleeps, pool } = await run({
        jobs: 2,
        chunks: chunkStream(6),
        execute: async (c, ctx) => {
          attempts.push([c.index, ctx.attempt]);
          await tick();
          if (c.index === 2) throw make();
          await tick();
          return outcome(c);
        },
      });
      assert.ok(result.stoppedBy && isFlatloadError(result.stoppedBy));
      if (code) assert.equal(result.stoppedBy.code, code);
      assert.equal(result.stoppedBy.context.chunk, 2);
      assert.deepEqual(sleeps, []);
      assert.ok(attempts.every(([, a]) => a === 1));
      assert.ok(!attempts.some(([i]) => i >= 4), `started after the stop: ${JSON.stringify(attempts)}`);
      assert.ok(result.perChunk.some((p) => p.chunk === 3), 'chunk 3 was in flight and committed');
      assert.equal(pool.connections.filter((c) => c.destroyed).length, 1);
    });
  }

  test('an input that fails while being read stops the load; the chunks already running finish', async () => {
    const chunks = (async function* () {
      yield chunk(0);
      await tick();
      throw new FlatloadError('INPUT_MALFORMED', 'unterminated quote', { byteOffset: 123 });
    })();
    const { result } = await run({
      chunks,
      execute: async (c) => {
        await tick();
        await tick();
        return outcome(c);
      },
    });
    assert.equal(result.stoppedBy?.code, 'INPUT_MALFORMED');
    assert.equal(result.stoppedBy.context.byteOffset, 123);
    assert.deepEqual(result.perChunk.map((p) => p.chunk), [0]);
  });

  test('a session statement that fails at the end (a failed MyRocks bulk load) stops the load and drops that connection', async () => {
    const pool = new FakePool((sql) => (sql === 'SET SESSION rocksdb_bulk_load = 0' ? Object.assign(new Error('bulk load failed'), { errno: 1105 }) : undefined));
    const { result } = await run({ jobs: 1, sessionEnd: ['SET SESSION rocksdb_bulk_load = 0'], execute: (c) => Promise.resolve(outcome(c)) }, pool);
    assert.ok(result.stoppedBy);
    assert.match(result.stoppedBy.message, /finishing connection 1/);
    assert.equal(result.totals.records, 60, 'the chunks themselves committed');
    assert.deepEqual(pool.connections.map((c) => [c.destroyed, c.released]), [[true, false]]);
  });

  test('a failing session setting is retried like the chunk it was opened for', async () => {
    let failures = 1;
    const pool = new FakePool((sql) => (sql === 'SET SESSION a = 1' && failures-- > 0 ? Object.assign(new Error('gone'), { errno: 2013 }) : undefined));
    const { result } = await run({ jobs: 1, chunks: chunkStream(2), execute: (c) => Promise.resolve(outcome(c)) }, pool);
    assert.equal(result.stoppedBy, undefined);
    assert.equal(result.totals.records, 20);
    assert.equal(pool.connections.length, 2);
    assert.ok(pool.connections[0]!.destroyed);
  });
});

describe('runChunks: interrupts', () => {
  test('aborted before the start: nothing runs, the stop is INTERRUPTED', async () => {
    const ac = new AbortController();
    ac.abort();
    const { result, pool } = await run({ signal: ac.signal, execute: () => assert.fail('must not run') });
    assert.equal(result.stoppedBy?.code, 'INTERRUPTED');
    assert.equal(pool.connections.length, 0);
  });

  test('aborted mid-run: chunks in flight commit, no new chunk starts', async () => {
    const ac = new AbortController();
    const started: number[] = [];
    const { result } = await run({
      signal: ac.signal,
      jobs: 2,
      execute: async (c) => {
        started.push(c.index);
        if (c.index === 1) ac.abort();
        await tick();
        return outcome(c);
      },
    });
    assert.equal(result.stoppedBy?.code, 'INTERRUPTED');
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(result.perChunk.map((p) => p.chunk), [0, 1]);
  });

  test('a chunk that does not finish within the grace period has its connection cut, and is not retried', async () => {
    const ac = new AbortController();
    const attempts: number[] = [];
    const { result, pool } = await run({
      signal: ac.signal,
      jobs: 1,
      abortGraceMs: 20,
      chunks: chunkStream(2),
      execute: async (_c, ctx) => {
        attempts.push(ctx.attempt);
        ac.abort();
        // The grace timer does not hold the process open (a real socket would): this stands in for the socket.
        const socket = setTimeout(() => undefined, 10_000);
        await (ctx.conn as unknown as FakeConnection).untilDestroyed();
        clearTimeout(socket);
        throw Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' });
      },
    });
    assert.equal(result.stoppedBy?.code, 'INTERRUPTED');
    assert.deepEqual(attempts, [1]);
    assert.ok(pool.connections[0]!.destroyed);
    assert.deepEqual(result.perChunk, []);
  });

  test('a statement that never settles once its connection is cut (LOAD DATA LOCAL mid-file) does not hold the run', async () => {
    const ac = new AbortController();
    const { result, pool } = await run({
      signal: ac.signal,
      jobs: 2,
      abortGraceMs: 20,
      chunks: chunkStream(4),
      execute: async (c, ctx) => {
        if (c.index === 1) ac.abort();
        // A socket keeps the process alive; the promise is left pending forever, as mysql2 leaves it.
        const socket = setTimeout(() => undefined, 1_000);
        await (ctx.conn as unknown as FakeConnection).untilDestroyed();
        clearTimeout(socket);
        return new Promise<ChunkOutcome>(() => undefined);
      },
    });
    assert.equal(result.stoppedBy?.code, 'INTERRUPTED');
    assert.equal(pool.connections.length, 2);
    assert.ok(pool.connections.every((c) => c.destroyed), 'both loading connections were cut');
    assert.deepEqual(result.perChunk, []);
  });
});
