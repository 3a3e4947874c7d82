/**
 * The chunk guard's last check for exactly once, against the real server's
 * bookkeeping tables: when this session's bookkeeping row for a chunk is
 * refused as a duplicate (1062), another session has committed the chunk
 * meanwhile (on a Galera cluster the chunk's named lock is node-local, so a
 * retry through another node can race the first attempt's commit). The chunk
 * is then reported with that session's counts and not loaded again; a 1062
 * about anything else still stops the chunk.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Pool } from 'mysql2/promise';
import type { CutChunk } from '../../src/chunking/types.js';
import type { JobIdentity } from '../../src/checkpoint/identity.js';
import type { CheckpointContext } from '../../src/load/resume.js';
import { CheckpointStore, type DoneChunk } from '../../src/checkpoint/store.js';
import { openPool } from '../../src/db/connect.js';
import type { Prepared } from '../../src/introspect/target.js';
import { guardChunks } from '../../src/load/chunkGuard.js';
import type { ChunkSource } from '../../src/load/chunkSource.js';
import type { RejectKeeper } from '../../src/load/rejects.js';
import type { ChunkExecutor } from '../../src/load/runner.js';
import type { LoadPlan } from '../../src/plan/types.js';
import { EventHub, type LoadEvent } from '../../src/report/events.js';
import { createTestDatabase, openTestSession, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let pool: Pool;
let store: CheckpointStore;

before(async () => {
  db = await createTestDatabase('guard');
  const { session, conn } = await openTestSession(db, { localInfile: false });
  conn.destroy();
  pool = openPool(session, 2);
  store = new CheckpointStore(db.conn, db.name);
  await store.ensureTables('InnoDB');
  await db.conn.query('CREATE TABLE t (k INT PRIMARY KEY) ENGINE=InnoDB');
});

after(async () => {
  await pool?.end();
  await db?.drop();
});

const chunk: CutChunk = { index: 3, startByte: 300, endByte: 400, firstLine: 31, firstRecord: 30, records: 10, newlines: 10 };

async function guarded(jobId: string, executor: ChunkExecutor): Promise<{ run: ReturnType<ChunkExecutor>; events: LoadEvent[]; kept: unknown[] }> {
  await store.createJob({ jobId, target: `${db.name}.t`, inputPath: '/in.tsv', identity: {} as JobIdentity, plan: {} as LoadPlan, rowsBefore: null, resumeCommand: '', owner: 'test', chunksTotal: null, rowsInInput: null });
  const cp: CheckpointContext = { store, schema: db.name, jobId, done: new Map(), phase: 'created', keepHistory: false, resumed: false, rowsBefore: null, tableFingerprint: null };
  const events: LoadEvent[] = [];
  const hub = new EventHub();
  hub.on((e) => events.push(e));
  const kept: unknown[] = [];
  const guard = guardChunks({
    plan: { commitScope: 'chunk', onResume: [] } as unknown as LoadPlan,
    prep: {} as Prepared,
    input: {} as ChunkSource,
    cp,
    events: hub,
    executor,
    notBulk: new Set(),
    partial: undefined,
    resuming: false,
    beforeCommit: () => Promise.resolve(),
    rejects: { keep: (rows: unknown[]) => kept.push(...rows) } as unknown as RejectKeeper,
  });
  const conn = await pool.getConnection();
  const run = guard(chunk, { conn, slot: 1, attempt: 2, setState: () => undefined }).finally(() => conn.release());
  return { run, events, kept };
}

const theirs: DoneChunk = { index: 3, startByte: 300, endByte: 400, records: 10, rowsLoaded: 9, rejected: 1, digest: null, rejects: JSON.stringify([{ line: 35, byteOffset: 350, bytes: Buffer.from('bad\n').toString('base64'), errors: [{ code: 1366, message: 'Incorrect integer value' }] }]) };

describe('a chunk whose bookkeeping row another session committed meanwhile', () => {
  test('its own row refused (1062): reported with the other session\'s counts and rejected rows, not loaded again', async () => {
    const jobId = 'g1';
    let loaded = 0;
    const { run, events, kept } = await guarded(jobId, async (c, ctx) => {
      // The other session's commit lands between this attempt's look-up and its own bookkeeping row.
      await CheckpointStore.markChunk(db.conn, db.name, 'InnoDB', jobId, theirs, 16 << 20);
      await ctx.conn.query('START TRANSACTION');
      try {
        await ctx.conn.query('INSERT INTO t VALUES (1), (2)');
        loaded += 2;
        await CheckpointStore.markChunk(ctx.conn, db.name, 'InnoDB', jobId, { ...theirs, index: c.index, rowsLoaded: 10, rejected: 0, rejects: null }, 16 << 20);
        await ctx.conn.query('COMMIT');
      } finally {
        await ctx.conn.query('ROLLBACK');
      }
      return { records: 10, rowsLoaded: 10, rejected: 0, warnings: 0, bytes: 100 };
    });
    const out = await run;
    assert.equal(loaded, 2, 'the attempt got as far as its bookkeeping row');
    assert.deepEqual(out, { records: 10, rowsLoaded: 9, rejected: 1, warnings: 0, bytes: 100 });
    const [rows] = await db.conn.query('SELECT COUNT(*) AS n FROM t');
    assert.equal(Number((rows as Array<{ n: unknown }>)[0]!.n), 0, 'this attempt\'s rows were rolled back');
    assert.equal(kept.length, 1, 'the other session\'s rejected row is kept for the reject file');
    assert.ok(events.some((e) => e.type === 'note' && /chunk 3: committed meanwhile by a session on another node; not loaded again/.test(e.message)), JSON.stringify(events));
    assert.equal((await store.doneChunks(jobId)).get(3)?.rowsLoaded, 9, 'one bookkeeping row, the other session\'s');
  });

  test('a duplicate key in the rows, with no bookkeeping row: the error stands', async () => {
    await db.conn.query('INSERT INTO t VALUES (7)');
    const { run } = await guarded('g2', async (_c, ctx) => {
      await ctx.conn.query('START TRANSACTION');
      try {
        await ctx.conn.query('INSERT INTO t VALUES (7)');
      } finally {
        await ctx.conn.query('ROLLBACK');
      }
      return { records: 1, rowsLoaded: 1, rejected: 0, warnings: 0, bytes: 10 };
    });
    await assert.rejects(run, (e: unknown) => (e as { errno?: number }).errno === 1062);
  });
});
