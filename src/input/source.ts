import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { FlatloadError } from '../errors/index.js';
import type { Readable } from 'node:stream';
import type { RemoteObject } from './remote.js';

export type Compression = 'none' | 'gzip' | 'zstd';

/** What we know about the input before reading it. */
export interface InputSource {
  /** As the user named it (`-` for stdin). */
  path: string;
  kind: 'file' | 'stdin';
  compression: Compression;
  /** Bytes on disk (compressed size for .gz/.zst); undefined for stdin. */
  sizeBytes: number | undefined;
  mtimeMs: number | undefined;
  /** A plain file: chunks can be re-read by byte range, in parallel, and on resume. */
  seekable: boolean;
  /** An http(s):// or s3:// input (path is then its URL with any password masked). */
  remote?: RemoteObject | undefined;
  /**
   * Standard input whose start can be read again before the load's one pass
   * (input/stdinReplay.ts); `last` opens that pass, after which it cannot.
   */
  replay?: { open(last: boolean): Promise<{ stream: Readable; compression: Compression }>; headSha256(bytes: number): Promise<string> } | undefined;
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

export function detectCompression(head: Buffer, path: string): Compression {
  if (head.subarray(0, 2).equals(GZIP_MAGIC)) return 'gzip';
  if (head.subarray(0, 4).equals(ZSTD_MAGIC)) return 'zstd';
  if (/\.gz$/i.test(path) || /\.zst$/i.test(path)) {
    // Named like a compressed file but isn't: trust the bytes, as gzip -t would.
    return 'none';
  }
  return 'none';
}

/** Stats and sniffs the input; the one place that turns fs errors into input errors. */
export function openInput(path: string): InputSource {
  if (path === '-') {
    return { path, kind: 'stdin', compression: 'none', sizeBytes: undefined, mtimeMs: undefined, seekable: false };
  }
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    throw inputError(err, path);
  }
  if (st.isDirectory()) throw new FlatloadError('INPUT_UNREADABLE', `cannot read input: ${path} is a directory`, { file: path });
  const head = Buffer.alloc(4);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    readSync(fd, head, 0, 4, 0);
  } catch (err) {
    throw inputError(err, path);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const compression = detectCompression(head, path);
  return {
    path,
    kind: 'file',
    compression,
    sizeBytes: st.size,
    mtimeMs: st.mtimeMs,
    seekable: compression === 'none' && st.isFile(),
  };
}

/**
 * How a local file differs from the size and modification time it had when
 * `since` (e.g. "it was opened"), or undefined when it looks the same.
 */
export function fileChange(path: string, display: string, then: { size: number | undefined; mtimeMs: number | undefined }, since: string): string | undefined {
  let st;
  try {
    st = statSync(path);
  } catch {
    return `${display} is gone`;
  }
  if (st.size !== then.size) return `${display} is ${st.size} bytes now, ${then.size} when ${since}`;
  if (st.mtimeMs !== then.mtimeMs) return `${display} was modified at ${new Date(st.mtimeMs).toISOString()}, after ${since}`;
  return undefined;
}

/** The error for an input found changed (`change`, from fileChange or a read) while it was read. */
export function inputChanged(display: string, change: string): FlatloadError {
  return new FlatloadError('INPUT_CHANGED', `the input changed while it was read: ${change}`, {
    file: display,
    hint: 'load a file that nothing writes to meanwhile (let its writer finish, or copy it first)',
  });
}

export function inputError(err: unknown, path: string): FlatloadError {
  if (err instanceof FlatloadError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new FlatloadError('INPUT_NOT_FOUND', `cannot open input: no such file ${path}`, { file: path });
  if (code === 'EACCES' || code === 'EPERM') {
    return new FlatloadError('INPUT_UNREADABLE', `cannot read input: permission denied for ${path}`, { file: path });
  }
  return new FlatloadError('INPUT_UNREADABLE', `cannot read input ${path}: ${(err as Error).message}`, { file: path });
}
