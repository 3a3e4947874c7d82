import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlatloadError } from '../errors/index.js';
import type { Compression } from './source.js';

/**
 * An input that lives on an HTTP(S) server or in an S3 bucket. A plain
 * object is read by byte range like a local file (in parallel, again on retry
 * and resume); a compressed one is read once from its start. Every read is
 * conditional on the object being the one first seen (its ETag, else its
 * modification time), so an object replaced mid-load stops the load instead
 * of mixing two versions.
 */
export interface RemoteObject {
  /** The URL with any password and credential parameters masked: for messages, identity and reports. */
  display: string;
  sizeBytes: number;
  etag: string | undefined;
  /** The server's Last-Modified, in ms since the epoch. */
  mtimeMs: number | undefined;
  compression: Compression;
  /** The server reads byte ranges: plain objects are read in parallel, by range. */
  ranges: boolean;
  /** Bytes [start, end) as a stream; a dropped transfer resumes at the byte it reached. */
  read(start: number, end: number): Readable;
  /** Why a read found the object changed since it was first seen (INPUT_CHANGED was thrown then). */
  changed: string | undefined;
}

/** An object a listing names: its URL (credentials as given), size and modification time. */
export interface RemoteEntry {
  url: string;
  sizeBytes: number;
  mtimeMs: number;
}

/** What a transport does for one ranged GET: the body of [start, end), or a RemoteFailure. */
export type FetchRange = (start: number, end: number) => Promise<Readable>;

/** A failed request, as the transports classify it. */
export class RemoteFailure extends Error {
  constructor(
    message: string,
    /** transient: retried (reset, 5xx, a body cut short); changed: the object is not the one first seen. */
    readonly kind: 'transient' | 'changed' | 'fatal',
    readonly flatload?: FlatloadError,
  ) {
    super(message);
  }
}

/** Attempts in a row without a byte of progress before a read gives up. */
export const MAX_ATTEMPTS = 6;

/** Exponential backoff with jitter: 0.2 s, 0.4 s … at most 5 s. */
export function backoffMs(attempt: number, random = Math.random()): number {
  return Math.min(5000, 200 * 2 ** (attempt - 1)) * (0.5 + random / 2);
}

/**
 * How long a request may wait for its connection, its answer or the next byte
 * of its body before it counts as dropped: 60 s. FLATLOAD_TEST_REMOTE_TIMEOUT_MS
 * is for the tests only (so a stalled server costs them seconds, not minutes).
 */
export const REMOTE_TIMEOUT_MS = Number(process.env['FLATLOAD_TEST_REMOTE_TIMEOUT_MS']) || 60_000;

/** Errors of a socket that dropped or never answered in time: worth another request. */
export function transientSocketError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  // TimeoutError: the AWS SDK's socket idle and connection timeouts, which carry no code.
  return ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN', 'ERR_STREAM_PREMATURE_CLOSE', 'UND_ERR_SOCKET'].includes(code ?? '') || (err as Error).message === 'aborted' || (err as Error).name === 'TimeoutError';
}

/**
 * What is wrong with a 206 answer's Content-Range (`bytes A-B/TOTAL`) for the
 * bytes [start, end) asked of an object of `size` bytes, or undefined when it
 * fits. The body is taken to begin at `start`: a server answering from
 * elsewhere (a start rounded to a block) would have rows read twice or never.
 */
export function contentRangeFailure(header: string | undefined, start: number, end: number, size: number, display: string): RemoteFailure | undefined {
  const asked = `bytes=${start}-${end - 1}`;
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/i.exec((header ?? '').trim());
  if (m && m[3] !== '*' && Number(m[3]) !== size) return new RemoteFailure(`${display} is ${m[3]} bytes now, ${size} when the load started`, 'changed');
  if (m && Number(m[1]) === start && Number(m[2]) >= start && Number(m[2]) <= end - 1) return undefined;
  // Retried like a dropped connection (a cache in between may answer right next time); six in a row stop the load naming both.
  return new RemoteFailure(`${display} answered ${asked} with Content-Range ${header === undefined ? '(none)' : JSON.stringify(header)}, not the bytes asked for`, 'transient');
}

/**
 * [start, end) of the object through `fetch`, one request after another as
 * needed: a connection reset, a 5xx or a body that ends early is retried with
 * backoff from the byte reached (a Range request), so a flaky network costs
 * time, not the load. Gives up after MAX_ATTEMPTS failures in a row without
 * progress; a changed object is INPUT_CHANGED at once.
 */
export function resumingRead(
  fetch: FetchRange,
  start: number,
  end: number,
  display: string,
  onChanged: (why: string) => void,
  /** Waits out a backoff (replaceable so the unit cases run without waiting). */
  pause: (ms: number) => Promise<unknown> = sleep,
): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    let pos = start;
    let failures = 0;
    while (pos < end) {
      let body: Readable | undefined;
      try {
        body = await fetch(pos, end);
        for await (const b of body) {
          const buf = b as Buffer;
          const take = Math.min(buf.length, end - pos);
          pos += take;
          failures = 0;
          yield take === buf.length ? buf : buf.subarray(0, take);
          if (pos >= end) break;
        }
        if (pos < end) throw new RemoteFailure(`the transfer ended at byte ${pos} of ${end}`, 'transient');
      } catch (err) {
        const f = err instanceof RemoteFailure ? err : transientSocketError(err) ? new RemoteFailure((err as Error).message, 'transient') : undefined;
        if (f?.kind === 'changed') {
          onChanged(f.message);
          throw new FlatloadError('INPUT_CHANGED', `the input changed while it was being loaded: ${f.message}`, { file: display, byteOffset: pos });
        }
        if (!f || f.kind === 'fatal') throw f?.flatload ?? (err instanceof FlatloadError ? err : new FlatloadError('INPUT_UNREADABLE', `cannot read ${display}: ${(err as Error).message}`, { file: display, byteOffset: pos }));
        if (++failures >= MAX_ATTEMPTS) {
          throw new FlatloadError('INPUT_UNREADABLE', `cannot read ${display}: ${f.message} (${failures} attempts in a row at byte ${pos})`, {
            file: display,
            byteOffset: pos,
            hint: 'the server or the network keeps failing: run the same command again later, it resumes',
          });
        }
        await pause(backoffMs(failures));
      } finally {
        body?.destroy();
      }
    }
  }
  return Readable.from(bytes(), { objectMode: false, highWaterMark: 1 << 20 });
}

/** Reads [position, position + length) into buf; resolves to the bytes read (fewer only at the object's end). */
export async function readInto(obj: RemoteObject, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  const end = Math.min(obj.sizeBytes, position + length);
  if (end <= position) return 0;
  let off = offset;
  for await (const b of obj.read(position, end)) {
    (b as Buffer).copy(buf, off);
    off += (b as Buffer).length;
  }
  return off - offset;
}

/** Whether the input names a remote object rather than a local path. */
export function isRemoteInput(path: string): boolean {
  return /^(https?|s3):\/\//i.test(path);
}

/** The URL with its user's password and its credential parameters replaced by `***` (a user alone is kept: it is no secret). */
export { maskInputUrl } from '../errors/mask.js';
