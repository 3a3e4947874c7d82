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

/** The run's entry, or the error; the chunk's buffer comes back either way. */
export interface RunReply {
  run: RunInfo | undefined;
  error: WorkerReply<unknown>['error'];
  buffer: ArrayBuffer;
}

const key = keyFromData(workerData as KeyData);
const scratch = new SortScratch();

parentPort!.on('message', (req: RunRequest) => {
  const reply = (r: RunReply): void => parentPort!.postMessage({ ok: r } satisfies WorkerReply<RunReply>, [req.buffer]);
  sortRun(Buffer.from(req.buffer, 0, req.length), req.job, key, scratch).then(
    (run) => reply({ run, error: undefined, buffer: req.buffer }),
    (err: unknown) => reply({ run: undefined, error: toWire(err), buffer: req.buffer }),
  );
});
