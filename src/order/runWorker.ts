/**
 * A sort worker thread: sorts the chunks it is sent into run files, one at
 * a time, and sends each chunk's buffer back with the run's manifest entry.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RunInfo } from './manifest.js';
import { SortScratch } from './scratch.js';
import { keyFromData, sortRun, type KeyData, type SortJob } from './sortRun.js';
import { toWire, type WorkerReply } from './workerPool.js';

export interface RunRequest {
  job: SortJob;
  buffer: ArrayBuffer;
  length: number;
}

/** The run's entry, and the chunk's buffer back for the next chunk (a failed sort fails the load: its buffer is dropped). */
export interface RunReply {
  run: RunInfo;
  buffer: ArrayBuffer;
}

const key = keyFromData(workerData as KeyData);
const scratch = new SortScratch();

parentPort!.on('message', (req: RunRequest) => {
  sortRun(Buffer.from(req.buffer, 0, req.length), req.job, key, scratch).then(
    (run) => parentPort!.postMessage({ ok: { run, buffer: req.buffer } } satisfies WorkerReply<RunReply>, [req.buffer]),
    (err: unknown) => parentPort!.postMessage({ error: toWire(err) } satisfies WorkerReply<RunReply>),
  );
});
