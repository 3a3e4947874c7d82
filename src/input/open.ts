import { listHttp, openHttp } from './http.js';
import { isRemoteInput, type RemoteEntry } from './remote.js';
import type { S3Settings } from './s3.js';
import { openInput, type InputSource } from './source.js';
import { StdinReplay } from './stdinReplay.js';
import { openByteStream } from './streams.js';

/** The AWS SDK is a large import: only a load that reads from S3 pays for it. */
function s3Module(): Promise<typeof import('./s3.js')> {
  return import('./s3.js');
}

/**
 * The input as the user named it: a local path or `-` (openInput), or an
 * http(s):// or s3:// URL (asked for its size and version first). A remote
 * plain object that the server reads by range is seekable like a file.
 */
export async function openAnyInput(path: string, s3: S3Settings = {}): Promise<InputSource> {
  if (path === '-') {
    // Read once, as the load goes; its start is kept for the sample and the header read before that pass.
    const raw = openInput(path);
    return { ...raw, replay: new StdinReplay(() => openByteStream(raw, 4 << 20)) };
  }
  if (!isRemoteInput(path)) return openInput(path);
  const remote = /^s3:/i.test(path) ? await (await s3Module()).openS3(path, s3) : await openHttp(path);
  return {
    path: remote.display,
    kind: 'file',
    compression: remote.compression,
    sizeBytes: remote.sizeBytes,
    mtimeMs: remote.mtimeMs,
    seekable: remote.compression === 'none' && remote.ranges,
    remote,
  };
}

/** Every object under a remote prefix (`s3://b/prefix/`, or an http(s) directory whose server lists it as JSON). */
export function listRemote(prefix: string, s3: S3Settings = {}): Promise<RemoteEntry[]> {
  return /^s3:/i.test(prefix) ? s3Module().then((m) => m.listS3(prefix, s3)) : listHttp(prefix);
}

/** A small remote object (a mysqldump .sql file) as text. */
export async function readRemoteText(url: string, s3: S3Settings = {}): Promise<string> {
  const { remote } = await openAnyInput(url, s3);
  const parts: Buffer[] = [];
  for await (const b of remote!.read(0, remote!.sizeBytes)) parts.push(b as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
