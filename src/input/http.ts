import * as http from 'node:http';
import * as https from 'node:https';
import { FlatloadError } from '../errors/index.js';
import { contentRangeFailure, maskInputUrl, RemoteFailure, readInto, REMOTE_TIMEOUT_MS, resumingRead, transientSocketError, type FetchRange, type RemoteEntry, type RemoteObject, MAX_ATTEMPTS, backoffMs } from './remote.js';
import { detectCompression } from './source.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** One keep-alive pool per scheme: parallel chunk reads reuse their connections. */
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** What a HEAD (or the first GET) says about the object. */
interface Head {
  status: number;
  size: number | undefined;
  etag: string | undefined;
  lastModified: string | undefined;
  ranges: boolean;
}

function request(url: URL, method: 'GET' | 'HEAD', headers: Record<string, string>): Promise<http.IncomingMessage> {
  const mod = url.protocol === 'https:' ? https : http;
  const auth = url.username || url.password ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      // identity: the bytes of the file as stored, which ranges and sizes count (Node would not decode a gzipped body anyway).
      { protocol: url.protocol, hostname: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, agent: agents[url.protocol as 'http:' | 'https:'], headers: { 'accept-encoding': 'identity', ...headers, ...(auth ? { authorization: auth } : {}) } },
      resolve,
    );
    // A server that stops answering is a dropped connection, retried like one.
    req.setTimeout(REMOTE_TIMEOUT_MS, () => req.destroy(new RemoteFailure(`no answer for ${REMOTE_TIMEOUT_MS / 1000} s`, 'transient')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The failure an answer encoded despite `Accept-Encoding: identity` is (its
 * bytes are not the file's: counted, ranged and loaded as they are, they
 * would load garbage or rows twice), or undefined for a plain one.
 */
export function encodingFailure(res: http.IncomingMessage, display: string): RemoteFailure | undefined {
  const enc = String(res.headers['content-encoding'] ?? '').trim();
  if (enc === '' || enc.toLowerCase() === 'identity') return undefined;
  res.resume();
  const what = `${display} was sent with Content-Encoding: ${enc} though flatload asked for none (Accept-Encoding: identity)`;
  return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_UNREADABLE', `cannot read ${what}`, { file: display, hint: 'have the server send the file as stored (no on-the-fly compression for it); a compressed file is read as such when its name ends in .gz or .zst' }));
}

/** The failure an unexpected status is (its body drained so the connection can be reused). */
function statusFailure(res: http.IncomingMessage, display: string): RemoteFailure {
  res.resume();
  const s = res.statusCode ?? 0;
  const what = `HTTP ${s}${res.statusMessage ? ` ${res.statusMessage}` : ''} from ${display}`;
  if (s === 412) return new RemoteFailure(`${display} was replaced since the load started (${what})`, 'changed');
  if (s >= 500 || s === 408 || s === 429) return new RemoteFailure(what, 'transient');
  if (s === 401 || s === 403) {
    return new RemoteFailure(what, 'fatal', new FlatloadError('ACCESS_DENIED', `${what}: access refused`, { file: display, hint: 'check the user and password in the URL (https://user:password@host/…)' }));
  }
  if (s === 404 || s === 410) return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_NOT_FOUND', `cannot open input: ${what}`, { file: display }));
  return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_UNREADABLE', `cannot read input: ${what}`, { file: display }));
}

async function probe(url: URL, display: string): Promise<Head> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await request(url, 'HEAD', {});
      res.resume();
      if (res.statusCode !== 200) throw statusFailure(res, display);
      const encoded = encodingFailure(res, display);
      if (encoded) throw encoded;
      const len = res.headers['content-length'];
      return {
        status: res.statusCode,
        size: len === undefined ? undefined : Number(len),
        etag: res.headers.etag,
        lastModified: res.headers['last-modified'],
        ranges: /bytes/i.test(String(res.headers['accept-ranges'] ?? '')),
      };
    } catch (err) {
      const transient = err instanceof RemoteFailure ? err.kind === 'transient' : transientSocketError(err);
      if (!transient || attempt >= MAX_ATTEMPTS) throw openError(err, display);
      await sleep(backoffMs(attempt));
    }
  }
}

function openError(err: unknown, display: string): FlatloadError {
  if (err instanceof RemoteFailure && err.flatload) return err.flatload;
  if (err instanceof FlatloadError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new FlatloadError('CONNECTION_REFUSED', `cannot reach ${display}: ${(err as Error).message}`, { file: display });
  }
  if (String(code).startsWith('ERR_TLS') || /certificate/i.test((err as Error).message)) {
    return new FlatloadError('TLS', `TLS failed for ${display}: ${(err as Error).message}`, { file: display });
  }
  return new FlatloadError('INPUT_UNREADABLE', `cannot read ${display}: ${(err as Error).message}`, { file: display });
}

/**
 * Request headers that make a read of the object conditional on it being the
 * version first seen: a strong ETag with If-Match, else its Last-Modified.
 */
export function conditionHeaders(etag: string | undefined, lastModified: string | undefined): Record<string, string> {
  if (etag && !etag.startsWith('W/')) return { 'if-match': etag };
  if (lastModified) return { 'if-unmodified-since': lastModified };
  return {};
}

/** An HTTP(S) URL as a remote input: a HEAD for its size and version, then ranged, conditional GETs. */
export async function openHttp(text: string): Promise<RemoteObject> {
  const url = new URL(text);
  const display = maskInputUrl(text);
  const head = await probe(url, display);
  if (head.size === undefined) {
    throw new FlatloadError('INPUT_UNREADABLE', `${display} has no Content-Length: flatload needs the size of a remote input`, { file: display });
  }
  const size = head.size;
  const condition = conditionHeaders(head.etag, head.lastModified);
  const fetch: FetchRange = async (start, end) => {
    const whole = start === 0 && end === size;
    // A server without byte ranges is only ever asked for the whole object (wholeOnly), without a Range.
    const res = await request(url, 'GET', { ...condition, ...(head.ranges ? { range: `bytes=${start}-${end - 1}` } : {}) });
    if (res.statusCode === 206 || (whole && res.statusCode === 200)) {
      const encoded = encodingFailure(res, display);
      if (encoded) throw encoded;
      // A 206 must hold the bytes asked for, of an object of the size first seen; a whole 200 its Content-Length.
      const wrong =
        res.statusCode === 206
          ? contentRangeFailure(res.headers['content-range'], start, end, size, display)
          : res.headers['content-length'] !== undefined && Number(res.headers['content-length']) !== size
            ? new RemoteFailure(`${display} is ${res.headers['content-length']} bytes now, ${size} when the load started`, 'changed')
            : undefined;
      if (wrong) {
        res.resume();
        throw wrong;
      }
      if (head.etag && res.headers.etag && res.headers.etag !== head.etag) {
        res.resume();
        throw new RemoteFailure(`${display} has ETag ${res.headers.etag} now, ${head.etag} when the load started`, 'changed');
      }
      return res;
    }
    if (res.statusCode === 200) {
      // The server ignored the Range: reading the whole object for a part of it would be wrong.
      res.resume();
      throw new RemoteFailure(`${display} answered a byte-range request with the whole object`, 'fatal', new FlatloadError('INPUT_UNREADABLE', `${display}: the server does not honour byte ranges`, { file: display }));
    }
    throw statusFailure(res, display);
  };
  const obj: RemoteObject = {
    display,
    sizeBytes: size,
    etag: head.etag,
    mtimeMs: head.lastModified ? Date.parse(head.lastModified) : undefined,
    compression: 'none',
    ranges: head.ranges,
    changed: undefined,
    read: (start, end) => resumingRead(head.ranges ? fetch : wholeOnly(fetch, size, display), start, end, display, (why) => (obj.changed = why)),
  };
  if (head.ranges) {
    const first = Buffer.alloc(Math.min(4, size));
    await readInto(obj, first, 0, first.length, 0);
    obj.compression = detectCompression(first, text);
  } else obj.compression = /\.gz$/i.test(url.pathname) ? 'gzip' : /\.zst$/i.test(url.pathname) ? 'zstd' : 'none';
  return obj;
}

/** A server without byte ranges: the object can only be read whole, once, from its start (a cut transfer is not resumed). */
function wholeOnly(fetch: FetchRange, size: number, display: string): FetchRange {
  return (start, end) => {
    if (start !== 0 || end !== size) {
      const e = new FlatloadError('INPUT_UNREADABLE', `${display}: the server does not honour byte ranges, so a transfer cut short at byte ${start} cannot resume`, { file: display, byteOffset: start, hint: 'run the same command again' });
      return Promise.reject(new RemoteFailure('no byte ranges', 'fatal', e));
    }
    return fetch(start, end);
  };
}

/**
 * The files a directory URL lists, where the server gives a machine-readable
 * listing: nginx's `autoindex_format json` (an array of {name, type, mtime,
 * size}). An HTML index or none is refused, naming what to do instead.
 */
export async function listHttp(text: string): Promise<RemoteEntry[]> {
  const url = new URL(text);
  const display = maskInputUrl(text);
  let res: http.IncomingMessage;
  try {
    res = await request(url, 'GET', { accept: 'application/json' });
  } catch (err) {
    throw openError(err, display);
  }
  if (res.statusCode !== 200) throw openError(statusFailure(res, display), display);
  const encoded = encodingFailure(res, display);
  if (encoded) throw openError(encoded, display);
  const parts: Buffer[] = [];
  for await (const b of res) parts.push(b as Buffer);
  let list: unknown;
  try {
    list = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list)) {
    throw new FlatloadError('INPUT_UNREADABLE', `${display} gives no JSON listing of its files`, {
      file: display,
      hint: 'name the files (or a --manifest of URLs), or serve the directory with nginx autoindex on; autoindex_format json;',
    });
  }
  return (list as Array<{ name?: unknown; type?: unknown; size?: unknown; mtime?: unknown }>)
    .filter((e) => e.type === 'file' && typeof e.name === 'string')
    .map((e) => ({ url: new URL(encodeURIComponent(e.name as string), url).toString(), sizeBytes: Number(e.size ?? 0), mtimeMs: (typeof e.mtime === 'string' ? Date.parse(e.mtime) : 0) || 0 }));
}
