import { spawn } from 'node:child_process';
import { close, createReadStream, open, read } from 'node:fs';
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';
import { FlatloadError } from '../errors/index.js';
import { peek } from './peek.js';
import { detectCompression, inputError, type Compression, type InputSource } from './source.js';

/**
 * A half-open byte range [startByte, endByte) of a plain file, in pieces of
 * `pieceBytes`. The one place where a byte range becomes file reads.
 *
 * A piece is valid until the consumer takes the piece after it: pieces are
 * read into a few buffers used in turn, since a fresh buffer per piece is
 * fresh memory for the garbage collector to account for and the kernel to
 * fault in, for bytes that stay only until the LOCAL INFILE sender has
 * written them (it takes the next piece once the kernel has the last).
 */
export function readRange(path: string, startByte: number, endByte: number, pieceBytes: number): Readable {
  return new RangeReader(path, startByte, endByte, pieceBytes);
}

/** Buffers a RangeReader reads into in turn. */
const RING = 4;

class RangeReader extends Readable {
  private fd: number | undefined;
  private position: number;
  private readonly ring: Array<Buffer | undefined> = new Array<Buffer | undefined>(RING);
  /** Per ring buffer: the pushed-byte count at the end of its last piece. */
  private readonly pushedEnd = new Array<number>(RING).fill(0);
  private turn = 0;
  private pushed = 0;

  constructor(
    private readonly path: string,
    startByte: number,
    private readonly endByte: number,
    private readonly pieceBytes: number,
  ) {
    super({ highWaterMark: pieceBytes });
    this.position = startByte;
  }

  override _construct(callback: (err?: Error | null) => void): void {
    if (this.endByte <= this.position) return callback();
    open(this.path, 'r', (err, fd) => {
      this.fd = fd;
      callback(err);
    });
  }

  /**
   * A ring buffer is read into again only once the consumer has taken a
   * byte pushed after its piece (the stream buffers what is not taken yet);
   * otherwise a fresh one takes its place.
   */
  private nextBuffer(): Buffer {
    const t = this.turn;
    this.turn = (t + 1) % RING;
    const taken = this.pushed - this.readableLength;
    const old = this.ring[t];
    if (old !== undefined && taken > this.pushedEnd[t]!) return old;
    return (this.ring[t] = Buffer.allocUnsafeSlow(this.pieceBytes));
  }

  override _read(): void {
    const want = Math.min(this.pieceBytes, this.endByte - this.position);
    if (want <= 0 || this.fd === undefined) {
      this.push(null);
      return;
    }
    const t = this.turn;
    const buf = this.nextBuffer();
    read(this.fd, buf, 0, want, this.position, (err, n) => {
      if (err) {
        this.destroy(err);
        return;
      }
      if (n === 0) {
        this.push(null); // the file is shorter than the range: whoever counts the records finds out
        return;
      }
      this.position += n;
      this.pushed += n;
      this.pushedEnd[t] = this.pushed;
      this.push(buf.subarray(0, n));
    });
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return callback(err);
    close(fd, () => callback(err));
  }
}

type ZstdFactory = (o?: object) => NodeJS.ReadWriteStream;

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
    // Not destroyed at its error: what it decoded before it still flows out (pipeInto).
    const gunzip = zlib.createGunzip({ chunkSize: Math.min(highWaterMark, 1 << 20), autoDestroy: false } as zlib.ZlibOptions);
    return { stream: pipeInto(raw, gunzip, name), compression };
  }
  const native = nativeZstd();
  if (native) return { stream: pipeInto(raw, native({ autoDestroy: false }), name), compression };
  return { stream: spawnZstd(source, raw), compression };
}

function withInputErrors(stream: Readable, path: string): Readable {
  const out = new PassThrough({ highWaterMark: stream.readableHighWaterMark });
  stream.on('error', (err) => out.destroy(inputError(err, path)));
  stream.pipe(out);
  return out;
}

/**
 * The decompressed bytes, ending in the decompressor's error only once
 * every byte it produced before the error has been read. Destroying the
 * output at the error would drop what sat in its buffers, an amount that
 * depends on how far the reader had got: the same broken input would then
 * stop at a different byte from one run to the next. So the output is not
 * destroyed on error (autoDestroy off): its reader takes the bytes, then the error.
 */
class DrainThenFail extends Transform {
  private failure: FlatloadError | undefined;

  constructor(highWaterMark = 1 << 20) {
    super({ highWaterMark, autoDestroy: false });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    cb(this.failure);
  }

  /** Ends the output with `err` after what was written so far. */
  fail(err: FlatloadError): void {
    this.failure ??= err;
    if (!this.writableEnded) this.end();
  }
}

function malformed(err: Error, path: string): FlatloadError {
  return err instanceof FlatloadError ? err : new FlatloadError('INPUT_MALFORMED', `cannot decompress ${path}: ${err.message}`, { file: path });
}

/**
 * `raw` through a decompressor: every byte it decodes, then its error, if any, as an input error naming `path`.
 * `outBytes`: what the output buffers before it holds the decompressor back (a test makes it small).
 */
export function pipeInto(raw: Readable, transform: NodeJS.ReadWriteStream, path: string, outBytes = 1 << 20): Readable {
  const t = transform as unknown as Readable & NodeJS.WritableStream;
  const out = new DrainThenFail(outBytes);
  raw.on('error', (err) => t.destroy(inputError(err, path)));
  t.pipe(out);
  t.on('error', (err: Error) => {
    // What the decompressor produced before the error still goes to `out`, then the error. zlib destroys itself at
    // its error and emits no more 'data', so what its buffer holds while a slow reader keeps `out` full is taken here:
    // waiting for it to flow hung the reader for good.
    t.unpipe(out);
    for (let b = t.read() as Buffer | null; b !== null; b = t.read() as Buffer | null) out.write(b);
    out.fail(malformed(err, path));
    t.destroy();
  });
  out.on('close', () => t.destroy());
  raw.pipe(t);
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
  const out = new DrainThenFail();
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
    // By 'close' its stdout has ended: everything it wrote is in `out`, ahead of the error.
    if (code === 0) out.end();
    else out.fail(new FlatloadError('INPUT_MALFORMED', `cannot decompress ${source.path}: ${stderr.trim() || `zstd exited ${code}`}`, { file: source.path }));
  });
  out.on('close', () => {
    if (child.exitCode === null) child.kill();
  });
  return out;
}
