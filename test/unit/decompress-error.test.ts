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
import { gzipSync } from 'node:zlib';
import { openByteStream } from '../../src/input/streams.js';

const dir = mkdtempSync(join(tmpdir(), 'flatload-gz-'));
const file = join(dir, 'truncated.gz');
const bytes = Buffer.alloc(8 << 20);
for (let i = 0; i < bytes.length; i++) bytes[i] = 97 + ((i * 7919) % 26);
const gz = gzipSync(bytes);
writeFileSync(file, gz.subarray(0, Math.floor(gz.length * 0.9)));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function readUntilError(pauseMs: number): Promise<{ bytes: number; error: string }> {
  const { stream } = await openByteStream({ path: file, kind: 'file', compression: 'gzip', sizeBytes: undefined, mtimeMs: undefined, seekable: false }, 64 << 10);
  let n = 0;
  try {
    for await (const b of stream) {
      n += (b as Buffer).length;
      if (pauseMs > 0) await wait(pauseMs);
    }
  } catch (err) {
    return { bytes: n, error: (err as Error).message };
  }
  return { bytes: n, error: '' };
}

for (const pauseMs of [0, 1, 4]) {
  test(`a truncated .gz read with ${pauseMs} ms between pieces: every decoded byte, then the error`, async () => {
    const fast = await readUntilError(0);
    const r = await readUntilError(pauseMs);
    assert.match(r.error, /cannot decompress .*truncated\.gz: unexpected end of file/);
    assert.equal(r.bytes, fast.bytes);
    assert.ok(r.bytes > 0.8 * bytes.length && r.bytes < bytes.length, `${r.bytes} bytes before the break`);
  });
}
