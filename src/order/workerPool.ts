import { Worker, type Transferable } from 'node:worker_threads';
import { FlatloadError, isFlatloadError, type ErrorCode } from '../errors/index.js';

/** An error as it crosses a thread: a FlatloadError keeps its code and context. */
export interface WireError {
  code?: string;
  message: string;
  context?: unknown;
}

/** What a worker posts back: its result, or why it has none. */
export type WorkerReply<R> = { ok: R; error?: undefined } | { ok?: undefined; error: WireError };

export function toWire(err: unknown): WireError {
  return isFlatloadError(err) ? { code: err.code, message: err.message, context: err.context } : { message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}

function fromWire(e: WireError): Error {
  if (e.code) return new FlatloadError(e.code as ErrorCode, e.message, e.context ?? {});
  return new FlatloadError('INTERNAL', `a sort worker failed: ${e.message}`);
}

/** A worker entry beside the module `from` (its import.meta.url): the compiled .js, or under tsx (tests) the .ts source. */
export function workerEntry(name: string, from: string): URL {
  return new URL(`./${name}${from.endsWith('.ts') ? '.ts' : '.js'}`, from);
}

/** Tests run the sources under tsx: a worker then loads tsx before its .ts entry. */
function startWorker(url: URL, workerData: unknown): Worker {
  return url.pathname.endsWith('.ts')
    ? new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`, { eval: true, workerData })
    : new Worker(url, { workerData });
}

/**
 * `n` worker threads running one entry, one request each at a time; more
 * requests wait in order. A worker holds the process open only while it has
 * a request: an idle pool never keeps a finished command from exiting.
 */
export class WorkerPool<Q, R> {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<{ resolve: (w: Worker) => void; reject: (e: unknown) => void }> = [];
  private readonly all: Worker[] = [];
  private readonly pending = new Map<Worker, { resolve: (r: R) => void; reject: (e: unknown) => void }>();
  private failed: FlatloadError | undefined;

  constructor(url: URL, readonly capacity: number, workerData?: unknown) {
    for (let i = 0; i < capacity; i++) {
      const w = startWorker(url, workerData);
      w.on('message', (reply: WorkerReply<R>) => {
        const p = this.pending.get(w);
        this.pending.delete(w);
        this.release(w);
        if (!p) return;
        if (reply.error) p.reject(fromWire(reply.error));
        else p.resolve(reply.ok);
      });
      // A worker that died (out of memory, say) takes the pool with it: what waits for it fails, not hangs.
      w.on('error', (err) => this.fail(err.message, err));
      w.on('exit', (code) => this.fail(`the worker exited (code ${code})`));
      // After the listeners: attaching one refs the worker's message port again.
      w.unref();
      this.all.push(w);
      this.idle.push(w);
    }
  }

  /** Sends `request` (moving `transfer` to the worker, not copying it) and waits for its reply. */
  async run(request: Q, transfer: readonly Transferable[] = []): Promise<R> {
    if (this.failed) throw this.failed;
    const w = await this.acquire();
    w.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(w, { resolve, reject });
      w.postMessage(request, [...new Set(transfer)]);
    });
  }

  /** A worker died or the pool was closed: every request fails. */
  get broken(): boolean {
    return this.failed !== undefined;
  }

  async close(): Promise<void> {
    this.failed ??= new FlatloadError('INTERNAL', 'the sort workers were closed');
    await Promise.all(this.all.map((w) => w.terminate()));
  }

  private fail(why: string, cause?: Error): void {
    if (this.failed) return;
    this.failed = new FlatloadError('INTERNAL', `a sort worker stopped: ${why}`, {}, { cause });
    for (const p of [...this.pending.values(), ...this.waiting.splice(0)]) p.reject(this.failed);
    this.pending.clear();
    for (const w of this.all) void w.terminate();
  }

  private acquire(): Promise<Worker> {
    const w = this.idle.pop();
    return w ? Promise.resolve(w) : new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next.resolve(w);
    else {
      w.unref();
      this.idle.push(w);
    }
  }
}
