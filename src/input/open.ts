import { openHttp } from './http.js';
import { isRemoteInput } from './remote.js';
import { openS3, type S3Settings } from './s3.js';
import { openInput, type InputSource } from './source.js';

/**
 * The input as the user named it: a local path or `-` (openInput), or an
 * http(s):// or s3:// URL (asked for its size and version first). A remote
 * plain object that the server reads by range is seekable like a file.
 */
export async function openAnyInput(path: string, s3: S3Settings = {}): Promise<InputSource> {
  if (!isRemoteInput(path)) return openInput(path);
  const remote = /^s3:/i.test(path) ? await openS3(path, s3) : await openHttp(path);
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
