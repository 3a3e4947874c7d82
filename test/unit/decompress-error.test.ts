/**
 * input/streams openByteStream on a truncated .gz: the reader gets every
 * byte the decompressor produced before the break, then the error, however
 * slowly it reads. (Destroying the output at the error dropped what sat in
 * its buffers, so a slow reader saw the break up to a MiB earlier.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PassThrough, type Readable } from 'node:stream';
import { constants, createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import { openByteStream, pipeInto } from '../../src/input/streams.js';

const dir = mkdtempSync(join(tmpdir(), 'flatload-gz-'));
const file = join(dir, 'truncated.gz');
const bytes = Buffer.alloc(8 << 20);
for (let i = 0; i < bytes.length; i++) bytes[i] = 97 + ((i * 7919) % 26);
const gz = gzipSync(bytes);
const truncated = gz.subarray(0, Math.floor(gz.length * 0.9));
writeFileSync(file, truncated);
/** Every byte zlib can decode from the truncated input, found without a stream. */
const decodable = gunzipSync(truncated, { finishFlush: constants.Z_SYNC_FLUSH }).length;
test.after(() => rmSync(dir, { recursive: true, force: true }));

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function readUntilError(pauseMs: number): Promise<{ bytes: number; error: string }> {
  const { stream } = await openByteStream({ path: file, kind: 'file', compression: 'gzip', sizeBytes: undefined, mtimeMs: undefined, seekable: false }, 64 << 10);
  return drain(stream, pauseMs);
}

/** Reads `stream` to its end or error, pausing between pieces; a reader left waiting fails the test after 20 s. */
async function drain(stream: Readable, pauseMs: number): Promise<{ bytes: number; error: string }> {
  let n = 0;
  const deadline = setTimeout(() => stream.destroy(new Error(`no end and no error after 20 s, ${n} bytes read`)), 20_000);
  try {
    for await (const b of stream) {
      n += (b as Buffer).length;
      if (pauseMs > 0) await wait(pauseMs);
    }
  } catch (err) {
    return { bytes: n, error: (err as Error).message };
  } finally {
    clearTimeout(deadline);
  }
  return { bytes: n, error: '' };
}

for (const pauseMs of [0, 1, 4]) {
  test(`a truncated .gz read with ${pauseMs} ms between pieces: every decoded byte, then the error`, async () => {
    const fast = await readUntilError(0);
    const r = await readUntilError(pauseMs);
    assert.match(r.error, /cannot decompress .*truncated\.gz: unexpected end of file/);
    assert.equal(r.bytes, fast.bytes);
    assert.equal(r.bytes, decodable);
  });
}

// The decompressor errs while its own buffer holds output the reader has no room for yet (the input
// written in small pieces, the output's buffer small, the reader slow): zlib destroys itself at the
// error, so those bytes never flowed out and the reader waited for good. Seen as a rare hang of the
// cases above on a busy machine (the output's usual 1 MiB buffer makes it rare).
for (const pauseMs of [1, 4]) {
  test(`a decompressor that errs with output still in its buffer: every decoded byte reaches a reader pausing ${pauseMs} ms, then the error`, async () => {
    const raw = new PassThrough({ highWaterMark: 16 << 10 });
    const out = pipeInto(raw, createGunzip({ chunkSize: 64 << 10, autoDestroy: false } as object), 'piece.gz', 64 << 10);
    for (let at = 0; at < truncated.length; at += 16 << 10) raw.write(truncated.subarray(at, at + (16 << 10)));
    raw.end();
    const r = await drain(out, pauseMs);
    assert.match(r.error, /cannot decompress piece\.gz: unexpected end of file/);
    assert.equal(r.bytes, decodable);
  });
}
