/**
 * A sort worker thread: sorts the chunks it is sent into run files, one at
 * a time, and sends each chunk's buffer back with the run's manifest entry.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isFlatloadError } from '../errors/index.js';
import { SortScratch } from './scratch.js';
import { keyFromData, sortRun, type KeyData, type SortJob } from './sortRun.js';

export interface WorkerRequest {
  job: SortJob;
  buffer: ArrayBuffer;
  length: number;
}

export interface WorkerReply {
  run?: import('./manifest.js').RunInfo;
  error?: { code?: string; message: string; context?: unknown };
  buffer: ArrayBuffer;
}

const key = keyFromData(workerData as KeyData);
const scratch = new SortScratch();

parentPort!.on('message', (req: WorkerRequest) => {
  sortRun(Buffer.from(req.buffer, 0, req.length), req.job, key, scratch).then(
    (run) => parentPort!.postMessage({ run, buffer: req.buffer } satisfies WorkerReply, [req.buffer]),
    (err: unknown) => {
      const error = isFlatloadError(err) ? { code: err.code, message: err.message, context: err.context } : { message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
      parentPort!.postMessage({ error, buffer: req.buffer } satisfies WorkerReply, [req.buffer]);
    },
  );
});
