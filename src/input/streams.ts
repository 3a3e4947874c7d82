import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { FlatloadError } from '../errors/index.js';
import { peek } from './peek.js';
import { detectCompression, inputError, type Compression, type InputSource } from './source.js';

/**
 * A half-open byte range [startByte, endByte) of a plain file. The one place
 * where that becomes Node's inclusive `end`.
 */
export function readRange(path: string, startByte: number, endByte: number, highWaterMark: number): Readable {
  if (endByte <= startByte) {
    const empty = new PassThrough();
    empty.end();
    return empty;
  }
  return createReadStream(path, { start: startByte, end: endByte - 1, highWaterMark });
}

type ZstdFactory = () => NodeJS.ReadWriteStream;

/** Node >= 22.15 has zstd in zlib; on Node 20 we use the `zstd` program. */
function nativeZstd(): ZstdFactory | undefined {
  const f = (zlib as unknown as { createZstdDecompress?: ZstdFactory }).createZstdDecompress;
  return typeof f === 'function' ? f : undefined;
}

/**
 * The input's bytes, decompressed, as one stream (stdin, .gz, .zst, or a
 * whole plain file). Standard input is sniffed for gzip/zstd magic, so
 * `zcat`-less pipes work too.
 */
export async function openByteStream(
  source: InputSource,
  highWaterMark: number,
  /** Standard input read with a replayable start: false for a look at its start (a sample), not the load's pass. */
  last = true,
): Promise<{ stream: Readable; compression: Compression }> {
  if (source.kind === 'stdin' && source.replay) return source.replay.open(last);
  let raw: Readable = source.kind === 'stdin' ? process.stdin : source.remote ? source.remote.read(0, source.remote.sizeBytes) : createReadStream(source.path, { highWaterMark });
  raw.on('error', () => undefined); // surfaced through the pipeline below
  let compression = source.compression;
  if (source.kind === 'stdin') {
    const peeked = await peek(raw, 4);
    raw = peeked.stream;
    compression = detectCompression(peeked.head, '-');
  }
  if (compression === 'none') {
    return { stream: source.kind === 'stdin' ? raw : withInputErrors(raw, source.path), compression };
  }
  // Errors name the input as the user knows it: `-` is standard input.
  const name = source.kind === 'stdin' ? 'standard input' : source.path;
  if (compression === 'gzip') {
    const gunzip = zlib.createGunzip({ chunkSize: Math.min(highWaterMark, 1 << 20) });
    return { stream: pipeInto(raw, gunzip, name), compression };
  }
  const native = nativeZstd();
  if (native) return { stream: pipeInto(raw, native(), name), compression };
  return { stream: spawnZstd(source, raw), compression };
}

function withInputErrors(stream: Readable, path: string): Readable {
  const out = new PassThrough({ highWaterMark: stream.readableHighWaterMark });
  stream.on('error', (err) => out.destroy(inputError(err, path)));
  stream.pipe(out);
  return out;
}

function pipeInto(raw: Readable, transform: NodeJS.ReadWriteStream, path: string): Readable {
  const t = transform as unknown as Readable & NodeJS.WritableStream;
  raw.on('error', (err) => t.destroy(inputError(err, path)));
  t.on('error', () => undefined);
  raw.pipe(t);
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  t.on('error', (err: Error) =>
    out.destroy(
      err instanceof FlatloadError
        ? err
        : new FlatloadError('INPUT_MALFORMED', `cannot decompress ${path}: ${err.message}`, { file: path }),
    ),
  );
  t.pipe(out);
  return out;
}

function spawnZstd(source: InputSource, raw: Readable): Readable {
  const args = ['-dc', '--no-progress'];
  // A stream (standard input, a remote object) is piped in; a local file zstd reads itself.
  const piped = source.kind === 'stdin' || source.remote !== undefined;
  const child = spawn('zstd', piped ? args : [...args, '--', source.path], {
    stdio: [piped ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (piped && child.stdin) {
    child.stdin.on('error', () => undefined);
    raw.pipe(child.stdin);
  } else raw.destroy();
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.on('error', (err: NodeJS.ErrnoException) => {
    out.destroy(
      err.code === 'ENOENT'
        ? new FlatloadError('CONFIG', `${source.path} is zstd-compressed, and this Node has no zstd: install the zstd program (apt-get install -y zstd)`, { file: source.path })
        : new FlatloadError('INPUT_UNREADABLE', `zstd failed on ${source.path}: ${err.message}`, { file: source.path }),
    );
  });
  child.stdout!.pipe(out, { end: false });
  child.on('close', (code) => {
    if (code === 0) out.end();
    else out.destroy(new FlatloadError('INPUT_MALFORMED', `cannot decompress ${source.path}: ${stderr.trim() || `zstd exited ${code}`}`, { file: source.path }));
  });
  out.on('close', () => {
    if (child.exitCode === null) child.kill();
  });
  return out;
}
