import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { FlatloadError } from '../errors/index.js';
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

export function inputError(err: unknown, path: string): FlatloadError {
  if (err instanceof FlatloadError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new FlatloadError('INPUT_NOT_FOUND', `cannot open input: no such file ${path}`, { file: path });
  if (code === 'EACCES' || code === 'EPERM') {
    return new FlatloadError('INPUT_UNREADABLE', `cannot read input: permission denied for ${path}`, { file: path });
  }
  return new FlatloadError('INPUT_UNREADABLE', `cannot read input ${path}: ${(err as Error).message}`, { file: path });
}
