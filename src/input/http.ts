import * as http from 'node:http';
import * as https from 'node:https';
import { FlatloadError } from '../errors/index.js';
import { maskedParamsOf } from '../errors/mask.js';
import { contentRangeFailure, maskInputUrl, RemoteFailure, readInto, REMOTE_TIMEOUT_MS, resumingRead, transientSocketError, type FetchRange, type RemoteEntry, type RemoteObject, MAX_ATTEMPTS, backoffMs } from './remote.js';
import { credentialsFor, isRedirect, redirectTarget } from './redirect.js';
import { firstByteSize, FIRST_BYTE, refusesHead, signsMethod } from './probe.js';
import { detectCompression } from './source.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** One keep-alive pool per scheme: parallel chunk reads reuse their connections. */
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** What the probe (a HEAD, or a GET of the first byte) says about the object. */
interface Head {
  size: number;
  etag: string | undefined;
  lastModified: string | undefined;
  ranges: boolean;
  /** Where the object was found: the URL named, or the last of its redirects. */
  at: URL;
}

/**
 * Inputs (as displayed: a fresh signature of the same URL is the same input)
 * whose server refused a HEAD in this process: every later probe of them (an
 * export's load after its discovery, a load run again by chunks) goes straight
 * to the GET of the first byte rather than paying the refusal again.
 */
const headRefused = new Set<string>();

function request(url: URL, method: 'GET' | 'HEAD', headers: Record<string, string>, auth: string | undefined): Promise<http.IncomingMessage> {
  const mod = url.protocol === 'https:' ? https : http;
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

/** An answer and the URLs that led to it: the one named first, then each redirect's. */
interface Answer {
  res: http.IncomingMessage;
  chain: URL[];
}

/**
 * One request, following redirects as curl -L does: each Location in turn (at
 * most MAX_REDIRECTS), the same method and headers, the named URL's
 * credentials only to its own origin. A chain that cannot end well (a loop,
 * too long, https → http, no Location) is a fatal RemoteFailure naming it; a
 * redirector's 5xx or reset is transient, and the retry starts again from the
 * named URL.
 */
async function send(named: URL, method: 'GET' | 'HEAD', headers: Record<string, string>): Promise<Answer> {
  const chain = [named];
  for (;;) {
    const url = chain[chain.length - 1]!;
    const res = await request(url, method, headers, credentialsFor(named, url));
    if (!isRedirect(res.statusCode ?? 0)) return { res, chain };
    res.resume();
    const next = redirectTarget(chain, res.statusCode!, res.headers.location);
    if (next instanceof FlatloadError) throw new RemoteFailure(next.message, 'fatal', next);
    chain.push(next);
  }
}

/** The input as messages name it: the URL given, and where its redirects led when they did. */
function answeredBy(display: string, chain: readonly URL[]): string {
  return chain.length > 1 ? `${display} (redirected to ${maskInputUrl(chain[chain.length - 1]!.href)})` : display;
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
function statusFailure({ res, chain }: Answer, named: string): RemoteFailure {
  res.resume();
  const s = res.statusCode ?? 0;
  const display = answeredBy(named, chain);
  const what = `HTTP ${s}${res.statusMessage ? ` ${res.statusMessage}` : ''} from ${display}`;
  if (s === 412) return new RemoteFailure(`${display} was replaced since the load started (${what})`, 'changed');
  if (s >= 500 || s === 408 || s === 429) return new RemoteFailure(what, 'transient');
  if (s === 401 || s === 403) {
    const [first, last] = [chain[0]!, chain[chain.length - 1]!];
    const hint =
      last.origin === first.origin
        ? maskedParamsOf(last.href).length > 0
          ? "the URL's signature or token may have expired, or be for another object: sign the URL again (a freshly signed URL of the same object resumes the load)"
          : 'check the user and password in the URL (https://user:password@host/…)'
        : first.username || first.password
          ? `the URL was redirected to ${last.origin}, another server: the user and password in a URL go only to the server it names (as with curl -L)`
          : `the URL was redirected to ${last.origin}, which refused the request: a signed URL it was sent to may have expired`;
    return new RemoteFailure(what, 'fatal', new FlatloadError('ACCESS_DENIED', `${what}: access refused`, { file: named, hint }));
  }
  if (s === 404 || s === 410) return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_NOT_FOUND', `cannot open input: ${what}`, { file: named }));
  return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_UNREADABLE', `cannot read input: ${what}`, { file: named }));
}

/**
 * The object's size and version, asked again after a dropped connection, a 5xx
 * or a timeout: by HEAD, or by a GET of its first byte where HEAD is refused
 * (then remembered for the rest of the process) or where the URL's signature
 * rules it out.
 */
async function probe(url: URL, display: string): Promise<Head> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (headRefused.has(display) || signsMethod(url)) return await probeFirstByte(url, display);
      const head = await probeHead(url, display);
      if (head) return head;
      headRefused.add(display);
      return await probeFirstByte(url, display);
    } catch (err) {
      const transient = err instanceof RemoteFailure ? err.kind === 'transient' : transientSocketError(err);
      if (!transient || attempt >= MAX_ATTEMPTS) throw openError(err, display);
      await sleep(backoffMs(attempt));
    }
  }
}

/** HEAD: the object's facts, or undefined when the server refuses the method (403, 405, 501) rather than the object. */
async function probeHead(url: URL, display: string): Promise<Head | undefined> {
  const answer = await send(url, 'HEAD', {});
  const res = answer.res;
  res.resume();
  if (refusesHead(res.statusCode ?? 0)) return undefined;
  if (res.statusCode !== 200) throw statusFailure(answer, display);
  const encoded = encodingFailure(res, display);
  if (encoded) throw encoded;
  const len = res.headers['content-length'];
  if (len === undefined) throw new FlatloadError('INPUT_UNREADABLE', `${display} has no Content-Length: flatload needs the size of a remote input`, { file: display });
  return { size: Number(len), ...versionOf(answer), ranges: /bytes/i.test(String(res.headers['accept-ranges'] ?? '')) };
}

/**
 * GET of the first byte (`Range: bytes=0-0`): the size from its 206's
 * Content-Range. A 200 is a server without ranges sending the whole object:
 * its Content-Length is the size, and its body is cut off unread.
 */
async function probeFirstByte(url: URL, display: string): Promise<Head> {
  const answer = await send(url, 'GET', { range: FIRST_BYTE });
  const { res } = answer;
  const status = res.statusCode ?? 0;
  if (status !== 200 && status !== 206 && status !== 416) throw statusFailure(answer, display);
  if (status === 200) res.destroy();
  else res.resume();
  const encoded = encodingFailure(res, display);
  if (encoded) throw encoded;
  const size = firstByteSize(status, res.headers['content-range'], res.headers['content-length']);
  if (size === undefined) {
    const said = status === 200 ? 'no Content-Length' : `Content-Range ${JSON.stringify(res.headers['content-range'] ?? '(none)')}`;
    throw new FlatloadError('INPUT_UNREADABLE', `${display} answered ${FIRST_BYTE} (HTTP ${status}) with ${said}, which gives no size: flatload needs the size of a remote input`, { file: display });
  }
  return { size, ...versionOf(answer), ranges: status !== 200 };
}

/** The version an answer names (ETag, Last-Modified) and where the object was found. */
function versionOf({ res, chain }: Answer): Pick<Head, 'etag' | 'lastModified' | 'at'> {
  return { etag: res.headers.etag, lastModified: res.headers['last-modified'], at: chain[chain.length - 1]! };
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

/**
 * A URL pasted from a printed resume command as it was: its signature is the
 * placeholder `***`. Refused before a request, saying what to do, rather than
 * sent for a 403 that would point at the credentials.
 */
function refusePlaceholder(text: string, display: string): void {
  const names = maskedParamsOf(text, '***');
  if (names.length === 0) return;
  throw new FlatloadError('USAGE', `${display}: ${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} ***, the placeholder a printed resume command shows for a signed URL`, {
    file: display,
    hint: 'put a freshly signed URL of the same object in its place: the load resumes where it stopped while the object is unchanged (size, Last-Modified, ETag)',
  });
}

/** An HTTP(S) URL as a remote input: a HEAD (or a GET of its first byte) for its size and version, then ranged, conditional GETs. */
export async function openHttp(text: string): Promise<RemoteObject> {
  const url = new URL(text);
  const display = maskInputUrl(text);
  refusePlaceholder(text, display);
  const head = await probe(url, display);
  const size = head.size;
  const condition = conditionHeaders(head.etag, head.lastModified);
  const fetch: FetchRange = async (start, end) => {
    const whole = start === 0 && end === size;
    // A server without byte ranges is only ever asked for the whole object (wholeOnly), without a Range.
    // Every read starts again at the URL named, not at where its redirects led last time: a signed URL a redirector hands
    // out (a release download, a CDN's front door) may expire within minutes, long before a large load is done. The
    // object is still pinned by its version (If-Match and the ETag compared), wherever the redirects lead.
    const answer = await send(url, 'GET', { ...condition, ...(head.ranges ? { range: `bytes=${start}-${end - 1}` } : {}) });
    const res = answer.res;
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
    throw statusFailure(answer, display);
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
  } else obj.compression = compressionByName(url.pathname) ?? compressionByName(head.at.pathname) ?? 'none';
  return obj;
}

/** What a name ending in .gz or .zst says of the bytes behind it (the URL named first, else where its redirects led). */
function compressionByName(path: string): 'gzip' | 'zstd' | undefined {
  return /\.gz$/i.test(path) ? 'gzip' : /\.zst$/i.test(path) ? 'zstd' : undefined;
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

/** The URL a listing's names are relative to: the last of its redirects, with the named URL's user and password while on its origin. */
function listedAt(named: URL, chain: readonly URL[]): URL {
  const last = new URL(chain[chain.length - 1]!.href);
  if (last.origin === named.origin && !last.username && !last.password) {
    last.username = named.username;
    last.password = named.password;
  }
  return last;
}

/**
 * The files a directory URL lists, where the server gives a machine-readable
 * listing: nginx's `autoindex_format json` (an array of {name, type, mtime,
 * size}). An HTML index or none is refused, naming what to do instead.
 */
export async function listHttp(text: string): Promise<RemoteEntry[]> {
  const url = new URL(text);
  const display = maskInputUrl(text);
  refusePlaceholder(text, display);
  let answer: Answer;
  try {
    answer = await send(url, 'GET', { accept: 'application/json' });
  } catch (err) {
    throw openError(err, display);
  }
  const res = answer.res;
  if (res.statusCode !== 200) throw openError(statusFailure(answer, display), display);
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
    // Named relative to where the listing was found (a directory's redirect adds its `/`); the user's credentials stay only on its own origin.
    .map((e) => ({ url: new URL(encodeURIComponent(e.name as string), listedAt(url, answer.chain)).toString(), sizeBytes: Number(e.size ?? 0), mtimeMs: (typeof e.mtime === 'string' ? Date.parse(e.mtime) : 0) || 0 }));
}
