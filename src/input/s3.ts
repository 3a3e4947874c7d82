import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { FlatloadError } from '../errors/index.js';
import { contentRangeFailure, readInto, RemoteFailure, REMOTE_TIMEOUT_MS, resumingRead, transientSocketError, type FetchRange, type RemoteEntry, type RemoteObject } from './remote.js';
import { detectCompression } from './source.js';

/** Where S3 is: an endpoint for S3-compatible servers (else AWS's own), a region (else the SDK's chain). */
export interface S3Settings {
  endpoint?: string | undefined;
  region?: string | undefined;
}

/** `s3://bucket/key` in pieces (the key may be empty or end in `/`: a prefix). */
export function parseS3Url(text: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(text);
  if (!m || m[1] === '') throw new FlatloadError('USAGE', `${text}: an S3 input is s3://bucket/key or s3://bucket/prefix/`);
  return { bucket: m[1]!, key: m[2]! };
}

/**
 * The endpoint: --s3-endpoint, else the standard AWS_ENDPOINT_URL_S3 and
 * AWS_ENDPOINT_URL. With one, addressing is path-style (bucket in the path),
 * which S3-compatible servers on a bare host:port need.
 */
export function s3Endpoint(settings: S3Settings, env: NodeJS.ProcessEnv): string | undefined {
  return settings.endpoint ?? (env['AWS_ENDPOINT_URL_S3'] || undefined) ?? (env['AWS_ENDPOINT_URL'] || undefined);
}

const clients = new Map<string, S3Client>();

/** One client per endpoint and region; the SDK's default chain finds the credentials (environment, shared files and profile, SSO, instance roles). */
export function s3Client(settings: S3Settings, env: NodeJS.ProcessEnv = process.env): S3Client {
  const endpoint = s3Endpoint(settings, env);
  const region = settings.region ?? (env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || undefined) ?? (endpoint ? 'us-east-1' : undefined);
  const key = `${endpoint ?? ''}|${region ?? ''}`;
  let c = clients.get(key);
  if (!c) {
    // The SDK warns on every run under Node 20 that its releases of 2027 will need Node 22; the locked version runs on 20.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    // The SDK waits forever by default: a stalled endpoint (before the answer or in the middle of a body) must fail
    // like a dropped connection, retried by the SDK and by resumingRead. socketTimeout is an idle timeout, body included.
    const requestHandler = { connectionTimeout: REMOTE_TIMEOUT_MS, socketTimeout: REMOTE_TIMEOUT_MS };
    c = new S3Client({ ...(region ? { region } : {}), ...(endpoint ? { endpoint, forcePathStyle: true } : {}), requestHandler });
    clients.set(key, c);
  }
  return c;
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** The SDK's error as flatload's (its own message only: the SDK's never holds a secret, but the request might). */
export function s3Failure(err: unknown, display: string): RemoteFailure {
  const e = err as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const what = `${e.name ?? 'error'}${status ? ` (HTTP ${status})` : ''} from ${display}`;
  if (status === 412 || e.name === 'PreconditionFailed') return new RemoteFailure(`${display} was replaced since the load started (${what})`, 'changed');
  if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'Forbidden', 'CredentialsProviderError', 'ExpiredToken', 'InvalidToken'].includes(e.name ?? '') || status === 403 || status === 401) {
    return new RemoteFailure(what, 'fatal', new FlatloadError('ACCESS_DENIED', `${what}: S3 refused the credentials`, { file: display, hint: 'check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the shared credentials file' }));
  }
  if (status === 404 || e.name === 'NoSuchKey' || e.name === 'NotFound' || e.name === 'NoSuchBucket') {
    return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_NOT_FOUND', `cannot open input: ${what}`, { file: display }));
  }
  if ((status !== undefined && status >= 500) || transientSocketError(err)) return new RemoteFailure(what, 'transient');
  const code = e.code ?? (err as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND') {
    return new RemoteFailure(what, 'fatal', new FlatloadError('CONNECTION_REFUSED', `cannot reach S3 for ${display}: ${code}`, { file: display }));
  }
  return new RemoteFailure(what, 'fatal', new FlatloadError('INPUT_UNREADABLE', `cannot read ${display}: ${e.name ?? ''} ${e.message ?? ''}`.trim(), { file: display }));
}

/** An S3 object as a remote input: HEAD for its size and ETag, then ranged GETs conditional on that ETag. */
export async function openS3(text: string, settings: S3Settings): Promise<RemoteObject> {
  const { bucket, key } = parseS3Url(text);
  const display = `s3://${bucket}/${key}`;
  const client = s3Client(settings);
  let head;
  try {
    head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    throw s3Failure(err, display).flatload ?? new FlatloadError('INPUT_UNREADABLE', `cannot read ${display}: ${(err as Error).name}`, { file: display });
  }
  const size = head.ContentLength ?? 0;
  const etag = head.ETag;
  const fetch: FetchRange = async (start, end) => {
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}`, ...(etag ? { IfMatch: etag } : {}) }));
      if (etag && out.ETag && out.ETag !== etag) {
        (out.Body as Readable | undefined)?.destroy();
        throw new RemoteFailure(`${display} has ETag ${out.ETag} now, ${etag} when the load started`, 'changed');
      }
      // The body is taken to start at `start`: an answer for other bytes would repeat or skip rows.
      const wrong = contentRangeFailure(out.ContentRange, start, end, size, display);
      if (wrong) {
        (out.Body as Readable | undefined)?.destroy();
        throw wrong;
      }
      return out.Body as Readable;
    } catch (err) {
      throw err instanceof RemoteFailure ? err : s3Failure(err, display);
    }
  };
  const obj: RemoteObject = {
    display,
    sizeBytes: size,
    etag,
    mtimeMs: head.LastModified?.getTime(),
    compression: 'none',
    ranges: true,
    changed: undefined,
    read: (start, end) => resumingRead(fetch, start, end, display, (why) => (obj.changed = why)),
  };
  const first = Buffer.alloc(Math.min(4, size));
  await readInto(obj, first, 0, first.length, 0);
  obj.compression = detectCompression(first, key);
  return obj;
}

/** Every object under `s3://bucket/prefix/` (not below a further `/`), as s3:// URLs, in key order. */
export async function listS3(text: string, settings: S3Settings): Promise<RemoteEntry[]> {
  const { bucket, key: prefix } = parseS3Url(text);
  const client = s3Client(settings);
  const out: RemoteEntry[] = [];
  let token: string | undefined;
  do {
    let page;
    try {
      page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
    } catch (err) {
      throw s3Failure(err, text).flatload ?? new FlatloadError('INPUT_UNREADABLE', `cannot list ${text}: ${(err as Error).name}`, { file: text });
    }
    for (const o of page.Contents ?? []) {
      if (o.Key && !o.Key.endsWith('/')) out.push({ url: `s3://${bucket}/${o.Key}`, sizeBytes: o.Size ?? 0, mtimeMs: o.LastModified?.getTime() ?? 0 });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}
