import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm, stat, statfs } from 'node:fs/promises';
import { tmpdir as systemTmpdir } from 'node:os';
import { join } from 'node:path';
import { FlatloadError } from '../errors/index.js';
import { OWNER_FILE, writeOwner } from '../input/owner.js';
import { tmpdirProblem } from '../input/spool.js';

export interface SpillOptions {
  /** Names the directory, so a rerun of the same job finds its runs: letters, digits, '.', '_', '-'. */
  jobId: string;
  /** Where to make it; default the system's temporary directory. */
  tmpdir?: string | undefined;
  /** Bytes the runs will take (spillBytesEstimate); checked against the free space before anything is written. */
  needBytes?: number | undefined;
}

const PREFIX = 'flatload-order-';

/** Whether a name in --tmpdir is a spill directory (of any job), or that of job `jobId`. */
export function isSpillDirName(name: string, jobId?: string): boolean {
  return jobId === undefined ? name.startsWith(PREFIX) : name === PREFIX + jobId;
}

/** Bytes of the files in a directory, its owner's marker aside (0 when there is none). */
function filesBytes(path: string): number {
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    if (name === OWNER_FILE) continue;
    try {
      const st = lstatSync(join(path, name));
      if (st.isFile()) n += st.size;
    } catch {
      // removed meanwhile
    }
  }
  return n;
}

/** Bytes the runs left in job `jobId`'s spill directory under `parent` hold: room its sort has already (it reuses or rewrites them). */
export function keptSpillBytes(parent: string, jobId: string): number {
  return filesBytes(join(parent, PREFIX + jobId));
}
const JOB_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * The spill directory of one ordering job: <tmpdir>/flatload-order-<jobId>.
 * Everything the sort writes goes in it, and dispose() removes it and
 * nothing else: no path outside it is ever built from a name.
 */
export class SpillDir {
  private disposed = false;

  private constructor(readonly path: string) {}

  static async open(opts: SpillOptions): Promise<SpillDir> {
    if (!JOB_ID.test(opts.jobId)) throw new FlatloadError('INTERNAL', `not a usable spill job id: ${JSON.stringify(opts.jobId)}`);
    const parent = opts.tmpdir ?? systemTmpdir();
    const st = await stat(parent).catch(() => undefined);
    if (!st?.isDirectory()) {
      throw new FlatloadError('SPILL', `the spill directory's parent ${parent} is not a directory`, { hint: 'point --tmpdir at an existing directory' });
    }
    // mkdir -p on a read-only file system says ENOENT: name the cause instead.
    const problem = tmpdirProblem(parent);
    if (problem) {
      throw new FlatloadError('OUTPUT_UNWRITABLE', `the sorted runs cannot be written to --tmpdir: ${problem}`, {
        hint: 'point --tmpdir at a writable directory with room for about the input\'s size, or load in file order (--order file)',
      });
    }
    const dir = new SpillDir(join(parent, PREFIX + opts.jobId));
    const existing = await lstat(dir.path).catch(() => undefined);
    if (existing && !existing.isDirectory()) {
      throw new FlatloadError('SPILL', `${dir.path} exists and is not a directory`, { hint: 'remove it, or point --tmpdir elsewhere' });
    }
    await dir.claim();
    if (opts.needBytes !== undefined) await dir.checkSpace(opts.needBytes);
    return dir;
  }

  /**
   * Makes the directory this process's (marked with its owner, see
   * input/owner.ts), keeping what a killed run left in it. The directory is
   * taken by an atomic rename, as a later run removing a dead owner's takes it:
   * of the two, one has it whole.
   */
  private async claim(): Promise<void> {
    const claim = `${this.path}.claim-${process.pid}`;
    await rm(claim, { recursive: true, force: true });
    try {
      await rename(this.path, claim);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw spillFailure(err, this.path);
      await mkdir(claim, { mode: 0o700 }).catch((e: unknown) => {
        throw spillFailure(e, this.path);
      });
    }
    writeOwner(claim);
    await rename(claim, this.path).catch((e: unknown) => {
      throw spillFailure(e, this.path);
    });
  }

  /** A file in the directory; `name` is a plain file name. */
  file(name: string): string {
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name === '.' || name === '..') throw new FlatloadError('INTERNAL', `not a spill file name: ${name}`);
    return join(this.path, name);
  }

  /** Bytes of the files already in the directory (runs a rerun may reuse). */
  usedBytes(): Promise<number> {
    return Promise.resolve(filesBytes(this.path));
  }

  /** Throws SPILL unless the file system has room for `needBytes` more than the directory holds now. */
  async checkSpace(needBytes: number): Promise<void> {
    const fs = await statfs(this.path);
    const free = fs.bavail * fs.bsize;
    const more = needBytes - (await this.usedBytes());
    if (more > free) {
      throw new FlatloadError(
        'SPILL',
        `ordering needs about ${mib(more)} MiB of spill space in ${this.path}, and its file system has ${mib(free)} MiB free`,
        { hint: 'free space there or point --tmpdir at a larger file system' },
      );
    }
  }

  /** Removes every file in the directory (a rerun whose runs cannot be reused). */
  async clear(): Promise<void> {
    for (const name of await readdir(this.path)) if (name !== OWNER_FILE) await rm(join(this.path, name), { force: true, recursive: true });
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await rm(this.path, { recursive: true, force: true });
  }

  /** For exit and signal handlers, which cannot wait. */
  disposeSync(): void {
    this.disposed = true;
    const st = (() => {
      try {
        return lstatSync(this.path);
      } catch {
        return undefined;
      }
    })();
    if (st?.isDirectory()) rmSync(this.path, { recursive: true, force: true });
  }

  get isDisposed(): boolean {
    return this.disposed;
  }
}

function spillFailure(err: unknown, path: string): FlatloadError {
  return new FlatloadError('SPILL', `cannot make the spill directory ${path}: ${(err as Error).message}`, { hint: 'point --tmpdir at a writable directory' });
}

function mib(n: number): string {
  return (n / 2 ** 20).toFixed(0);
}

/**
 * Removes the directory when the process exits or receives one of
 * `signals`. A signal nobody else listens to then takes its default course
 * (the process ends by it), so registering this never swallows Ctrl-C; when
 * the caller has its own handler, that handler decides. Returns the function
 * that unregisters it (after a clean dispose()).
 */
export function cleanupOnExit(dir: SpillDir, signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']): () => void {
  const onExit = (): void => dir.disposeSync();
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of signals) {
    const h = (): void => {
      dir.disposeSync();
      if (process.listenerCount(sig) === 1) {
        unregister();
        process.kill(process.pid, sig);
      }
    };
    handlers.set(sig, h);
    process.on(sig, h);
  }
  process.on('exit', onExit);
  function unregister(): void {
    process.off('exit', onExit);
    for (const [sig, h] of handlers) process.off(sig, h);
  }
  return unregister;
}

/** Spill bytes for an input: its bytes once, about 9 bytes of bookkeeping per record, and stored keys where the fast path does not apply. */
export function spillBytesEstimate(inputBytes: number, records: number, storedKeyBytesPerRecord = 0): number {
  return inputBytes + records * (META_BYTES_PER_RECORD + storedKeyBytesPerRecord) + (1 << 20);
}

/** A record's meta entry: varints of its offset in the chunk (~4 bytes), length (1–2) and line in the chunk (~3). */
export const META_BYTES_PER_RECORD = 9;
