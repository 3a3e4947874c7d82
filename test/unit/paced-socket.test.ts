import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { test } from 'node:test';
import { pacedBySocket } from '../../src/load/loadData.js';

/** A socket whose queue drains one piece every few ms, as a busy server reads it. */
function slowSocket(written: Buffer[]): Writable {
  return new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, cb) {
      written.push(chunk);
      setTimeout(cb, 2);
    },
  });
}

test('pacedBySocket: the driver writes each piece on arrival, yet no more than one piece waits in the socket', { timeout: 10_000 }, async () => {
  const pieces = Array.from({ length: 40 }, (_, i) => Buffer.alloc(4096, i));
  let pulled = 0;
  const src = Readable.from(
    (function* () {
      for (const p of pieces) {
        pulled++;
        yield p;
      }
    })(),
    { objectMode: false },
  );
  const written: Buffer[] = [];
  const socket = slowSocket(written);
  let maxQueued = 0;
  const paced = pacedBySocket(src, socket);
  // What mysql2 does with a LOCAL INFILE stream: write each piece as it comes, no backpressure of its own.
  paced.on('data', (b: Buffer) => {
    socket.write(Buffer.from(b));
    maxQueued = Math.max(maxQueued, socket.writableLength);
  });
  await new Promise<void>((resolve, reject) => paced.on('end', resolve).on('error', reject));
  await new Promise<void>((resolve) => socket.end(resolve));
  assert.equal(pulled, 40);
  assert.deepEqual(Buffer.concat(written), Buffer.concat(pieces));
  assert.ok(maxQueued <= 2 * 4096, `at most a piece or two queued, saw ${maxQueued} bytes`);
});

test('pacedBySocket: without pacing the same driver queues the whole stream (what the pacing prevents)', { timeout: 10_000 }, async () => {
  const pieces = Array.from({ length: 40 }, (_, i) => Buffer.alloc(4096, i));
  const written: Buffer[] = [];
  const socket = slowSocket(written);
  let maxQueued = 0;
  const unpaced = pacedBySocket(Readable.from(pieces, { objectMode: false }), undefined);
  unpaced.on('data', (b: Buffer) => {
    socket.write(Buffer.from(b));
    maxQueued = Math.max(maxQueued, socket.writableLength);
  });
  await new Promise<void>((resolve, reject) => unpaced.on('end', resolve).on('error', reject));
  await new Promise<void>((resolve) => socket.end(resolve));
  assert.ok(maxQueued > 20 * 4096, `queued ${maxQueued} bytes`);
});

test('pacedBySocket: a socket that closes while a piece waits ends the wait, and a source error reaches the driver', { timeout: 10_000 }, async () => {
  const socket = new Writable({ highWaterMark: 1, write: () => undefined });
  socket.write(Buffer.alloc(10)); // never called back: the queue stays full
  const src = Readable.from(
    (async function* () {
      yield Buffer.from('a');
      yield Buffer.from('b');
      throw new Error('read failed');
    })(),
    { objectMode: false },
  );
  const paced = pacedBySocket(src, socket);
  const got: string[] = [];
  paced.on('data', (b: Buffer) => got.push(b.toString()));
  setTimeout(() => socket.destroy(), 20);
  await assert.rejects(new Promise((resolve, reject) => paced.on('end', resolve).on('error', reject)), /read failed/);
  assert.deepEqual(got, ['a', 'b']);
});
