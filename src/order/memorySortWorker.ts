/**
 * The in-memory sort's worker thread: sorts each input it is sent
 * (sortInMemory) and moves the result back.
 */
import { parentPort } from 'node:worker_threads';
import { partsToWire, sortInMemory, type MemoryOrigin, type WireParts } from './memorySort.js';
import { keyFromData, type KeyData } from './sortRun.js';
import { toWire, type WorkerReply } from './workerPool.js';

export interface MemorySortRequest {
  key: KeyData;
  /** The input's records, with the spare bytes for a last terminator. */
  buffer: ArrayBuffer;
  length: number;
  records: number;
  origin: MemoryOrigin;
  targetBytes: number;
  maxRecords: number | undefined;
}

parentPort!.on('message', (q: MemorySortRequest) => {
  try {
    const parts = sortInMemory(Buffer.from(q.buffer), q.length, keyFromData(q.key), q.records, q.origin, q.targetBytes, q.maxRecords);
    const { wire, transfer } = partsToWire(parts);
    parentPort!.postMessage({ ok: wire } satisfies WorkerReply<WireParts>, transfer);
  } catch (err) {
    parentPort!.postMessage({ error: toWire(err) } satisfies WorkerReply<WireParts>);
  }
});
