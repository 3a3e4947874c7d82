/**
 * The worker pool the sorts run in: replies in order of requests, a
 * worker's FlatloadError arrives as the same error, and a worker that dies
 * fails what waits for it and every later request instead of leaving them
 * waiting for ever; an idle pool, used or not, never keeps the process from
 * exiting (an export in file order starts the sort worker and never uses it).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { isFlatloadError } from '../../src/errors/index.js';
import { WorkerPool } from '../../src/order/workerPool.js';

const CHILD = new URL('./worker-pool-child.ts', import.meta.url);

test('worker pool: more requests than workers all get their own reply; an error keeps its code and context', async () => {
  const pool = new WorkerPool<number, number>(CHILD, 2);
  try {
    assert.deepEqual(await Promise.all([1, 2, 3, 4, 5].map((n) => pool.run(n))), [2, 4, 6, 8, 10]);
    await assert.rejects(pool.run(-1), (e) => isFlatloadError(e) && e.code === 'INPUT_MALFORMED' && e.context.line === 7 && e.context.byteOffset === 99);
    assert.equal(await pool.run(21), 42, 'the worker serves on after an error it replied with');
    assert.ok(!pool.broken);
  } finally {
    await pool.close();
  }
});

test('worker pool: a worker that dies fails the request in it, the requests waiting and every later one', async () => {
  const pool = new WorkerPool<number, number>(CHILD, 1);
  try {
    const dying = pool.run(-2);
    const waiting = pool.run(3);
    const internal = (e: unknown): boolean => isFlatloadError(e) && e.code === 'INTERNAL' && /a sort worker stopped: died on purpose/.test(e.message);
    await assert.rejects(dying, internal);
    await assert.rejects(waiting, internal);
    await assert.rejects(pool.run(4), internal);
    assert.ok(pool.broken, 'the pool says it is broken, so its owner can replace it');
  } finally {
    await pool.close();
  }
});

for (const uses of [0, 2]) {
  test(`worker pool: a process whose pool is idle exits (used ${uses} times)`, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./worker-pool-idle-child.ts', import.meta.url)), String(uses)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // Without the fix the child never exits: the limit only bounds the test, it measures nothing.
    const exited = await Promise.race([
      new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))),
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000).unref()),
    ]);
    if (exited === 'running') child.kill('SIGKILL');
    assert.equal(out, 'done\n');
    assert.equal(exited, 0, 'the process exited by itself once its work was done');
  });
}
