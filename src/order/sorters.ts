import { Worker } from 'node:worker_threads';
import { FlatloadError, type ErrorCode } from '../errors/index.js';
import type { KeyContext } from './key.js';
import type { RunInfo } from './manifest.js';
import type { WorkerReply, WorkerRequest } from './runWorker.js';
import type { SortScratch } from './scratch.js';
import { keyData, sortRun, type SortJob } from './sortRun.js';

/** Sorts chunks into runs: in this thread, or in worker threads (one chunk each at a time). */
export interface Sorter {
  /** Chunks it sorts at once. */
  readonly capacity: number;
  /** Sorts slab[0, length) into the job's run; gives the slab back with the run's entry. */
  sort(slab: ArrayBuffer, length: number, job: SortJob): Promise<{ run: RunInfo; slab: ArrayBuffer }>;
  close(): Promise<void>;
}

export function inProcessSorter(key: KeyContext, scratch: SortScratch): Sorter {
  return {
    capacity: 1,
    async sort(slab, length, job) {
      return { run: await sortRun(Buffer.from(slab, 0, length), job, key, scratch), slab };
    },
    async close() {},
  };
}

/** The worker's entry: its compiled .js next to this file, or (tests run from source under tsx) its .ts source. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './runWorker.ts' : './runWorker.js', import.meta.url);

/**
 * `n` worker threads, each with its own scratch arrays. A chunk's buffer is
 * transferred to the worker (not copied) and transferred back with the
 * result, so memory is the same as sorting in this thread, once per worker.
 */
export function workerSorter(key: KeyContext, n: number): Sorter {
  const data = keyData(key);
  const idle: Worker[] = [];
  const waiting: Array<(w: Worker) => void> = [];
  const all: Worker[] = [];
  const pending = new Map<Worker, { resolve: (r: { run: RunInfo; slab: ArrayBuffer }) => void; reject: (e: unknown) => void }>();
  for (let i = 0; i < n; i++) {
    const w = FROM_SOURCE
      ? new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`, { eval: true, workerData: data })
      : new Worker(WORKER_URL, { workerData: data });
    w.unref();
    w.on('message', (reply: WorkerReply) => {
      const p = pending.get(w);
      pending.delete(w);
      release(w);
      if (!p) return;
      if (reply.run) p.resolve({ run: reply.run, slab: reply.buffer });
      else p.reject(rebuild(reply.error));
    });
    w.on('error', (err) => {
      const p = pending.get(w);
      pending.delete(w);
      p?.reject(err);
    });
    all.push(w);
    idle.push(w);
  }
  const release = (w: Worker): void => {
    const next = waiting.shift();
    if (next) next(w);
    else idle.push(w);
  };
  const acquire = (): Promise<Worker> => {
    const w = idle.pop();
    return w ? Promise.resolve(w) : new Promise((resolve) => waiting.push(resolve));
  };
  return {
    capacity: n,
    async sort(slab, length, job) {
      const w = await acquire();
      return new Promise((resolve, reject) => {
        pending.set(w, { resolve, reject });
        w.postMessage({ job, buffer: slab, length } satisfies WorkerRequest, [slab]);
      });
    },
    async close() {
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}

function rebuild(e: WorkerReply['error']): Error {
  if (e?.code) return new FlatloadError(e.code as ErrorCode, e.message, (e.context ?? {}));
  return new FlatloadError('INTERNAL', `a sort worker failed: ${e?.message ?? 'no reason given'}`);
}
