/**
 * Compressing a run's blocks in a thread of its own while this one sorts
 * and gathers the next: while runs are written the server has nothing to
 * load, so the other core is idle (docs/ordering.md#7-speed).
 */
import { runCodec } from './codec.js';
import type { PackReply, PackRequest } from './packWorker.js';
import { workerEntry, WorkerPool } from './workerPool.js';

/** Packs batches of blocks in the order they are given. */
export interface BlockPacker {
  /** `batch` (owning its memory) moves to the thread; its first sizes.length blocks are packed, each on its own. */
  pack(batch: Buffer, sizes: number[]): Promise<{ packed: Buffer; sizes: number[]; batch: Buffer }>;
  close(): Promise<void>;
}

const PACK_URL = workerEntry('packWorker', import.meta.url);

export function packAside(): BlockPacker {
  const pool = new WorkerPool<PackRequest, PackReply>(PACK_URL, 1);
  const codec = runCodec();
  return {
    async pack(batch, sizes) {
      const r = await pool.run({ buffer: batch.buffer as ArrayBuffer, sizes, codec }, [batch.buffer as ArrayBuffer]);
      return { packed: Buffer.from(r.packed), sizes: r.sizes, batch: Buffer.from(r.buffer) };
    },
    close: () => pool.close(),
  };
}
