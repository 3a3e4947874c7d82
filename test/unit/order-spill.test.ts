/**
 * The spill directory: named by the job, free space checked, cleaned up by
 * dispose(), on exit and on signals, never touching anything outside itself.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FlatloadError, isFlatloadError } from '../../src/errors/index.js';
import type { CutChunk } from '../../src/chunking/types.js';
import { cleanupOnExit, SpillDir, spillBytesEstimate } from '../../src/order/spillDir.js';
import { generateRuns, runChunkBytes } from '../../src/order/runs.js';
import { BY_ID, keyContext, sortInput, tempDir, TSV, userSummary } from './order-support.js';
import { generateLines } from '../../fixtures/generate.js';

const dir = tempDir;

const spillError = (re: RegExp) => (err: unknown): boolean => isFlatloadError(err) && err.code === 'SPILL' && re.test(err.message);

test('named by the job, found again by a rerun, files only by plain names', async () => {
  const tmp = dir();
  const a = await SpillDir.open({ jobId: 'job-1.a_b', tmpdir: tmp });
  assert.equal(a.path, join(tmp, 'flatload-order-job-1.a_b'));
  writeFileSync(a.file('manifest.json'), '{}');
  const again = await SpillDir.open({ jobId: 'job-1.a_b', tmpdir: tmp });
  assert.deepEqual(readdirSync(again.path).sort(), ['.flatload-owner', 'manifest.json'], 'the runs, and the marker of the process that owns them now');
  for (const bad of ['', '../x', 'a/b', '.hidden', 'x'.repeat(200)]) await assert.rejects(SpillDir.open({ jobId: bad, tmpdir: tmp }), /spill job id/);
  for (const bad of ['../x', 'a/b', '..', '.', '']) assert.throws(() => a.file(bad), /spill file name/);
});

test('refused when the parent is missing or the name is taken by a file', async () => {
  const tmp = dir();
  await assert.rejects(SpillDir.open({ jobId: 'j', tmpdir: join(tmp, 'missing') }), spillError(/not a directory/));
  writeFileSync(join(tmp, 'flatload-order-j'), 'not a dir');
  await assert.rejects(SpillDir.open({ jobId: 'j', tmpdir: tmp }), spillError(/not a directory/));
});

test('free space: checked before anything is written, counting what the directory already holds', async () => {
  const tmp = dir();
  await assert.rejects(SpillDir.open({ jobId: 'big', tmpdir: tmp, needBytes: 2 ** 62 }), spillError(/spill space/));
  const d = await SpillDir.open({ jobId: 'small', tmpdir: tmp, needBytes: 1000 });
  writeFileSync(d.file('run-000000.bin'), Buffer.alloc(5000));
  assert.equal(await d.usedBytes(), 5000);
  await d.checkSpace(5000); // all of it already there
});

test('clear() and dispose() remove the directory\'s contents and itself, nothing outside', async () => {
  const tmp = dir();
  const outside = join(tmp, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'keep.txt'), 'keep');
  writeFileSync(join(tmp, 'sibling.txt'), 'keep');
  const d = await SpillDir.open({ jobId: 'j', tmpdir: tmp });
  writeFileSync(d.file('run-000001.bin'), 'x');
  symlinkSync(outside, join(d.path, 'link'));
  await d.clear();
  assert.deepEqual(readdirSync(d.path), ['.flatload-owner'], 'every file but the owner marker');
  symlinkSync(outside, join(d.path, 'link'));
  await d.dispose();
  assert.equal(existsSync(d.path), false);
  assert.deepEqual(readdirSync(tmp).sort(), ['outside', 'sibling.txt']);
  assert.deepEqual(readdirSync(outside), ['keep.txt']);
  await d.dispose(); // twice is fine
  d.disposeSync();
});

function child(tmp: string, mode: string): { kill: (s: NodeJS.Signals) => void; ready: Promise<void>; done: Promise<{ code: number | null; signal: string | null }> } {
  const p = spawn(process.execPath, ['--import', 'tsx', new URL('./order-spill-child.ts', import.meta.url).pathname, tmp, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) =>
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    }),
  );
  const done = new Promise<{ code: number | null; signal: string | null }>((resolve) => p.on('close', (code, signal) => resolve({ code, signal })));
  return { kill: (s) => p.kill(s), ready, done };
}

test('cleanupOnExit: removed on SIGTERM (the process still dies of it), on SIGINT with the caller\'s own handler, on exit; kept when unregistered', async () => {
  const cases: Array<{ mode: string; signal?: NodeJS.Signals; expect: { code: number | null; signal: string | null }; removed: boolean }> = [
    { mode: 'wait', signal: 'SIGTERM', expect: { code: null, signal: 'SIGTERM' }, removed: true },
    { mode: 'wait', signal: 'SIGINT', expect: { code: null, signal: 'SIGINT' }, removed: true },
    { mode: 'handled', signal: 'SIGINT', expect: { code: 7, signal: null }, removed: true },
    { mode: 'exit', expect: { code: 0, signal: null }, removed: true },
    { mode: 'keep', expect: { code: 0, signal: null }, removed: false },
  ];
  for (const c of cases) {
    const tmp = dir();
    const p = child(tmp, c.mode);
    await p.ready;
    if (c.signal) p.kill(c.signal);
    assert.deepEqual(await p.done, c.expect, `${c.mode} ${c.signal ?? ''}`);
    assert.equal(existsSync(join(tmp, 'flatload-order-child')), !c.removed, `${c.mode} ${c.signal ?? ''}`);
  }
  // In this process: unregistering leaves no listeners behind.
  const d = await SpillDir.open({ jobId: 'here', tmpdir: dir() });
  const before = process.listenerCount('SIGTERM') + process.listenerCount('exit');
  cleanupOnExit(d)();
  assert.equal(process.listenerCount('SIGTERM') + process.listenerCount('exit'), before);
});

test('spillBytesEstimate covers what a sort writes (fast-path keys)', async () => {
  const input = Buffer.concat([...generateLines({ table: 'user_summary', rows: 20_000, seed: 1 })]);
  const { set } = await sortInput(input, keyContext(TSV, { fields: [0], numeric: [true] }, 5), dir(), { chunkBytes: 100 << 10, sparseEvery: 1024 });
  const estimate = spillBytesEstimate(input.length, 20_000);
  assert.ok(estimate >= set.spillBytes, `${estimate} < ${set.spillBytes}`);
  // Runs are compressed: the estimate is the bound for records that do not compress at all.
  assert.ok(set.spillBytes < 0.8 * (estimate - (1 << 20)), `${estimate} vs ${set.spillBytes}`);
});

test('runChunkBytes: 16 MiB runs, larger for inputs over 8 GiB, never over the load chunk', () => {
  const MiB = 2 ** 20;
  const GiB = 2 ** 30;
  const cases: Array<[number | undefined, number, number]> = [
    [235e6, 64 * MiB, 16 * MiB],
    [1e5, 64 * MiB, 16 * MiB],
    [20 * GiB, 64 * MiB, 40 * MiB],
    [100 * GiB, 64 * MiB, 64 * MiB],
    [235e6, 8 * MiB, 8 * MiB],
    [undefined, 64 * MiB, 64 * MiB],
    [undefined, 32 * MiB, 32 * MiB],
    [235e6, 100, MiB],
  ];
  for (const [input, chunk, want] of cases) assert.equal(runChunkBytes(input, chunk), want, `${input} / ${chunk}`);
});

test('a streamed input that fails while a run is being sorted: generateRuns throws its error, none is left unhandled', async () => {
  const spill = await SpillDir.open({ jobId: 'failing-stream', tmpdir: dir() });
  const bytes = userSummary(20_000, 3);
  async function* chunks(): AsyncGenerator<CutChunk> {
    yield { index: 0, startByte: 0, endByte: bytes.length, firstLine: 1, firstRecord: 0, records: 20_000, newlines: 20_000, buffers: [bytes] };
    throw new FlatloadError('INPUT_MALFORMED', 'the stream broke');
  }
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown): void => void unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  try {
    const read = (): Promise<Buffer> => Promise.reject(new Error('a streamed chunk is never read back'));
    await assert.rejects(generateRuns(chunks(), { key: keyContext(TSV, BY_ID, 5), spill, read, identity: 't' }), /the stream broke/);
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  assert.deepEqual(unhandled, []);
});
