import { contentDigest, type DigestKind } from './digest.js';
import { accessSync, closeSync, constants, mkdtempSync, openSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FlatloadError } from '../errors/index.js';
import type { RemoteObject } from './remote.js';
import { fileChange, inputChanged, type Compression, type InputSource } from './source.js';
import { writeOwner } from './owner.js';
import { openByteStream } from './streams.js';

/**
 * The input as the load reads it: a plain file that can be read by byte
 * range, again and again (the file itself, or a spooled, decompressed copy
 * in a private temporary directory), or a compressed file decompressed once
 * as it is read (`stream`: in that one pass a key-ordered load sorts it into
 * runs and a load in file order cuts and loads its chunks, with no whole
 * copy; see streamedInput).
 *
 * A plain file is what lets an input be loaded in parallel by byte range and
 * resume by byte range; a spooled stream is also identified by its content
 * (two different streams on standard input are two different loads).
 */
export interface LocalInput {
  /** A plain file holding the (decompressed) input. */
  path: string;
  /** The input as the user named it, for messages. */
  display: string;
  /** Bytes of the decompressed input. */
  sizeBytes: number;
  /** The file's modification time when it was opened (a file read in place), with sizeBytes what its read must find. */
  mtimeMs?: number | undefined;
  /** What the original was compressed with. */
  compression: Compression;
  /** Bytes read from the original (compressed size), when it was spooled. */
  originalBytes: number | undefined;
  /** The digest of the decompressed content (src/input/digest.ts), when it was spooled (computed while copying). */
  contentHash: string | undefined;
  /** Standard input read as it loads: sha256 of its first MiB, read before the load (its identity; see JobIdentity). */
  headSha256?: string | undefined;
  spooled: boolean;
  /** A plain remote object, read by byte range where the path would be (not spooled). */
  remote?: RemoteObject | undefined;
  /**
   * Set when the input is not a plain file but is read by decompressing this
   * source from its start (path then names the compressed file): sizeBytes
   * and contentHash are known only once that pass has ended.
   */
  stream?: InputSource | undefined;
  /** Deletes the spooled copy; safe to call twice. */
  dispose(): void;
}

/** The start of standard input that identifies it before it is read to its end. */
const HEAD_BYTES = 1 << 20;

const live = new Set<string>();
let exitHookInstalled = false;

/** A spooled copy must not outlive the process, whichever way it ends (a signal's exit included). */
function removeOnExit(dir: string): void {
  live.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const d of live) rmSync(d, { recursive: true, force: true });
  });
}

/** Free bytes on the file system that holds `dir`, or undefined when it cannot be told. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Why flatload cannot make files in `dir` (the --tmpdir), in words, or
 * undefined when it can. access() asks the kernel, so a read-only file
 * system is caught for root too (whom no mode bit stops).
 */
export function tmpdirProblem(dir: string): string | undefined {
  let st;
  try {
    st = statSync(dir);
  } catch {
    return `${dir} does not exist`;
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return `${dir} is on a read-only file system`;
    if (code === 'EACCES' || code === 'EPERM') return `${dir} is not writable by this user`;
    return `${dir} cannot be written: ${(err as Error).message}`;
  }
}

function spoolError(err: unknown, tmpdir: string, written: number): FlatloadError {
  if (err instanceof FlatloadError) return err;
  const problem = tmpdirProblem(tmpdir);
  if (problem) {
    return new FlatloadError('OUTPUT_UNWRITABLE', `cannot spool the input into --tmpdir: ${problem}`, {
      hint: 'point --tmpdir at a writable directory with room for the (decompressed) input, or give flatload a plain file',
    });
  }
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new FlatloadError('OUTPUT_UNWRITABLE', `no space left in ${tmpdir} after spooling ${written} bytes of the input`, {
      hint: 'point --tmpdir at a file system with room for the decompressed input, or give flatload a plain file',
    });
  }
  return new FlatloadError('OUTPUT_UNWRITABLE', `cannot spool the input into ${tmpdir}: ${(err as Error).message}`, {
    hint: 'point --tmpdir at a writable directory',
  });
}

/**
 * A compressed file or standard input read in one pass, decompressed as it
 * goes, with no copy in --tmpdir: its size and content hash are filled in by
 * the pass.
 */
export async function streamedInput(source: InputSource): Promise<LocalInput> {
  return {
    headSha256: source.replay ? await source.replay.headSha256(HEAD_BYTES) : undefined,
    path: source.path,
    display: source.kind === 'stdin' ? 'standard input' : source.path,
    sizeBytes: 0,
    compression: source.compression,
    originalBytes: source.kind === 'stdin' ? undefined : source.sizeBytes,
    contentHash: undefined,
    spooled: false,
    stream: source,
    dispose: () => undefined,
  };
}

/** How a streamed input is read, for notes: `decompressing F (gzip)`, or `reading standard input`. */
export function streamName(source: InputSource): string {
  return source.kind === 'stdin' ? 'reading standard input' : `decompressing ${source.path} (${source.compression})`;
}

/**
 * Makes the input a plain file. A plain file is returned as it is (no copy);
 * anything else is decompressed into `<tmpdir>/flatload-spool-*` once.
 */
export async function materializeInput(
  source: InputSource,
  tmpdir: string,
  onBytes?: (bytes: number) => void,
  /** The digest an earlier run stored, to compare with. */
  digestKind: DigestKind = 'blake3',
): Promise<LocalInput> {
  if (source.seekable && source.kind === 'file') {
    return {
      path: source.path,
      display: source.path,
      sizeBytes: source.sizeBytes ?? 0,
      mtimeMs: source.mtimeMs,
      compression: 'none',
      originalBytes: undefined,
      contentHash: undefined,
      spooled: false,
      remote: source.remote,
      dispose: () => undefined,
    };
  }
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir, 'flatload-spool-'));
    // A copy left by a kill -9 is removed by a later run once this process is gone (owner.ts).
    writeOwner(dir);
  } catch (err) {
    throw spoolError(err, tmpdir, 0);
  }
  removeOnExit(dir);
  const dispose = (): void => {
    live.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  const path = join(dir, 'input');
  const hash = contentDigest(digestKind);
  let written = 0;
  let fd: number | undefined;
  try {
    const { stream, compression } = await openByteStream(source, 4 << 20);
    fd = openSync(path, 'w');
    for await (const b of stream) {
      const buf = b as Buffer;
      hash.update(buf);
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
      written += buf.length;
      onBytes?.(buf.length);
    }
    // A remote object's reads are conditional on its version: a change stops the read itself.
    const changed = source.kind === 'file' && !source.remote ? fileChange(source.path, source.path, { size: source.sizeBytes, mtimeMs: source.mtimeMs }, 'it was opened') : undefined;
    if (changed) throw inputChanged(source.path, changed);
    return {
      path,
      display: source.path === '-' ? 'standard input' : source.path,
      sizeBytes: written,
      compression,
      originalBytes: source.kind === 'file' ? source.sizeBytes : undefined,
      contentHash: hash.digest(),
      spooled: true,
      dispose,
    };
  } catch (err) {
    dispose();
    throw spoolError(err, tmpdir, written);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
