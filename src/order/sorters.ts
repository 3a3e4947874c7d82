import type { KeyContext } from './key.js';
import type { RunInfo } from './manifest.js';
import type { RunReply, RunRequest } from './runWorker.js';
import type { SortScratch } from './scratch.js';
import { keyData, sortRun, type SortJob } from './sortRun.js';
import { workerEntry, WorkerPool } from './workerPool.js';

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

const WORKER_URL = workerEntry('runWorker', import.meta.url);

/**
 * `n` worker threads, each with its own scratch arrays. A chunk's buffer is
 * transferred to the worker (not copied) and transferred back with the
 * result, so memory is the same as sorting in this thread, once per worker.
 */
export function workerSorter(key: KeyContext, n: number): Sorter {
  const pool = new WorkerPool<RunRequest, RunReply>(WORKER_URL, n, keyData(key));
  return {
    capacity: n,
    async sort(slab, length, job) {
      const { run, buffer } = await pool.run({ job, buffer: slab, length }, [slab]);
      return { run, slab: buffer };
    },
    close: () => pool.close(),
  };
}
