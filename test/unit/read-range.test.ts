/**
 * input/streams readRange: a byte range of a file in pieces read into a few
 * buffers used in turn. Whatever the consumer's pace, every piece it takes
 * holds the file's bytes until it takes the next one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readRange } from '../../src/input/streams.js';

const dir = mkdtempSync(join(tmpdir(), 'flatload-range-'));
const file = join(dir, 'bytes');
const bytes = Buffer.alloc(1_000_003);
for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
writeFileSync(file, bytes);
test.after(() => rmSync(dir, { recursive: true, force: true }));

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('pieces taken by a data listener, copied at once (as the LOCAL INFILE sender does)', async () => {
  const got: Buffer[] = [];
  const s = readRange(file, 17, 900_001, 4096);
  s.on('data', (b: Buffer) => got.push(Buffer.from(b)));
  await new Promise((r) => s.on('end', r));
  assert.ok(got.length > 200);
  assert.ok(got.every((b) => b.length <= 4096));
  assert.ok(Buffer.concat(got).equals(bytes.subarray(17, 900_001)));
});

test('a consumer that pauses and resumes, and one that awaits between pieces, see the right bytes', async () => {
  const got: Buffer[] = [];
  const s = readRange(file, 0, bytes.length, 1000);
  s.on('data', (b: Buffer) => {
    got.push(Buffer.from(b));
    if (got.length % 7 === 0) {
      s.pause();
      setTimeout(() => s.resume(), 2);
    }
  });
  await new Promise((r) => s.on('end', r));
  assert.ok(Buffer.concat(got).equals(bytes));

  const seen: Buffer[] = [];
  for await (const b of readRange(file, 5, 50_005, 3000)) {
    const piece = b as Buffer;
    const copy = Buffer.from(piece);
    await wait(1);
    assert.ok(piece.equals(copy), 'a piece changed before the next one was taken');
    seen.push(copy);
  }
  assert.ok(Buffer.concat(seen).equals(bytes.subarray(5, 50_005)));
});

test('an empty range ends at once; a range past the end of the file ends where the file does', async () => {
  const empty: Buffer[] = [];
  for await (const b of readRange(file, 10, 10, 4096)) empty.push(b as Buffer);
  assert.equal(empty.length, 0);
  const tail: Buffer[] = [];
  for await (const b of readRange(file, bytes.length - 10, bytes.length + 100, 4096)) tail.push(Buffer.from(b as Buffer));
  assert.ok(Buffer.concat(tail).equals(bytes.subarray(bytes.length - 10)));
});

test('a missing file fails the stream', async () => {
  await assert.rejects(async () => {
    for await (const _ of readRange(join(dir, 'missing'), 0, 10, 4096)) void _;
  }, /ENOENT/);
});
