import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isFlatloadError } from '../../src/errors/index.js';
import { blockCodecs, compressBlock, decompressBlockInto, runCodec, RUN_BLOCK_BYTES } from '../../src/order/codec.js';

/** Blocks as a run holds them: records in key order, a short last block, one that does not compress, an empty one. */
function blocks(): Buffer[] {
  const text = Array.from({ length: 4000 }, (_, i) => `${1000 + i}\t${i % 7}\tlevel${i % 13}\t0.${i % 97}\t${i % 5}\n`).join('');
  const records = Buffer.from(text);
  const random = Buffer.alloc(RUN_BLOCK_BYTES);
  let s = 7;
  for (let i = 0; i < random.length; i++) random[i] = (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  return [records.subarray(0, RUN_BLOCK_BYTES), records.subarray(RUN_BLOCK_BYTES, RUN_BLOCK_BYTES + 1234), random, Buffer.alloc(0)];
}

const spill = (re: RegExp) => (err: unknown): boolean => isFlatloadError(err) && err.code === 'SPILL' && re.test(err.message);

test('the codec in use is the first that loaded, and deflate is always there last', () => {
  const all = blockCodecs();
  assert.equal(runCodec(), all[0]!.name);
  assert.equal(all.at(-1)!.name, 'deflate-1');
});

test('every codec gives back each block exactly, and codecs of one name read each other', () => {
  const all = blockCodecs();
  for (const writer of all) {
    for (const block of blocks()) {
      const packed = writer.compress(block);
      for (const reader of all.filter((c) => c.name === writer.name)) {
        const dst = Buffer.alloc(block.length + 10, 0xee);
        const n = reader.decompressInto(packed, dst.subarray(5, 5 + block.length));
        assert.equal(n, block.length, `${writer.library} -> ${reader.library}`);
        assert.ok(dst.subarray(5, 5 + n).equals(block), `${writer.library} -> ${reader.library}`);
        assert.ok(dst.subarray(0, 5).every((b) => b === 0xee) && dst.subarray(5 + n).every((b) => b === 0xee), 'bytes outside the room untouched');
      }
    }
  }
});

test('a block decompresses into a buffer at an offset, its length checked', () => {
  const block = blocks()[0]!;
  const packed = compressBlock(block);
  const dst = Buffer.alloc(block.length + 100);
  decompressBlockInto(packed, dst, 100, block.length, 'run-1');
  assert.ok(dst.subarray(100).equals(block));
  // Told it holds more than it does: the length check names the file.
  assert.throws(() => decompressBlockInto(packed, Buffer.alloc(block.length + 8), 0, block.length + 8, 'run-1'), spill(/run-1 holds a block of 65536 bytes where 65544 were written/));
  // Told it holds less: it does not fit.
  assert.throws(() => decompressBlockInto(packed, Buffer.alloc(block.length), 0, block.length - 1, 'run-1'), spill(/run-1 holds a block that does not decompress to the 65535 bytes/));
});

test('bytes that are not a block are a SPILL error naming the file', () => {
  // (A run file changed on disk is caught before this by its sha256, checked when a run is reused.)
  const dst = Buffer.alloc(RUN_BLOCK_BYTES);
  assert.throws(() => decompressBlockInto(Buffer.from('not a block at all'), dst, 0, dst.length, 'run-7'), spill(/run-7 holds a block that does not decompress/));
  const packed = compressBlock(blocks()[0]!);
  assert.throws(() => decompressBlockInto(packed.subarray(0, packed.length >> 1), dst, 0, dst.length, 'run-7'), spill(/run-7 holds a block/));
});
