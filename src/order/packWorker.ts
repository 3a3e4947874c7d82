/**
 * The run writer's compression thread: compresses each batch of blocks it
 * is sent, each block on its own, and moves the packed bytes back.
 */
import { parentPort } from 'node:worker_threads';
import { FlatloadError } from '../errors/index.js';
import { compressBlock, runCodec } from './codec.js';
import { toWire, type WorkerReply } from './workerPool.js';

export interface PackRequest {
  /** The blocks, one after another. */
  buffer: ArrayBuffer;
  /** Each block's length, in order. */
  sizes: number[];
  /** The codec the run's manifest names: this thread must write the same. */
  codec: string;
}

export interface PackReply {
  /** The packed blocks, one after another, and the batch's buffer back for the next. */
  packed: ArrayBuffer;
  sizes: number[];
  buffer: ArrayBuffer;
}

parentPort!.on('message', (q: PackRequest) => {
  try {
    if (runCodec() !== q.codec) throw new FlatloadError('INTERNAL', `the compression thread loaded codec ${runCodec()}, the run is written with ${q.codec}`);
    const src = Buffer.from(q.buffer);
    const blocks: Buffer[] = [];
    let at = 0;
    for (const n of q.sizes) {
      blocks.push(compressBlock(src.subarray(at, at + n)));
      at += n;
    }
    const packed = Buffer.allocUnsafeSlow(blocks.reduce((sum, b) => sum + b.length, 0));
    let p = 0;
    for (const b of blocks) p += b.copy(packed, p);
    const reply: PackReply = { packed: packed.buffer, sizes: blocks.map((b) => b.length), buffer: q.buffer };
    parentPort!.postMessage({ ok: reply } satisfies WorkerReply<PackReply>, [reply.packed, q.buffer]);
  } catch (err) {
    parentPort!.postMessage({ error: toWire(err) } satisfies WorkerReply<PackReply>);
  }
});
