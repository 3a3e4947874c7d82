import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { cutChunks } from '../../src/chunking/cut.js';

async function* blocks(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

test('maxRecordsPerChunk bounds records per chunk as well as bytes, deterministically', async () => {
  const text = Buffer.from(Array.from({ length: 1000 }, (_, i) => `${i}\t"row ${i}"\n`).join(''));
  for (const [chunkSizeBytes, max] of [
    [1 << 20, 7],
    [100, 50],
    [1 << 20, 1],
    [64, 3],
  ] as const) {
    for (const blockSize of [1, 13, 4096]) {
      const chunks = [];
      for await (const c of cutChunks(blocks(text, blockSize), {
        format: { fieldTerm: Buffer.from('\t'), lineTerm: Buffer.from('\n'), enclosure: 0x22, escape: 0x5c },
        charset: charsetInfo('utf8mb4')!,
        targets: { fields: 2, textField: [false, true] },
        chunkSizeBytes,
        maxRecordsPerChunk: max,
        maxRecordBytes: 1 << 20,
        ignoreLines: 0,
        stripBom: false,
        keepBytes: true,
        file: 'x',
      })) chunks.push(c);
      assert.equal(chunks.reduce((a, c) => a + c.records, 0), 1000);
      for (const c of chunks) {
        assert.ok(c.records <= max, `chunk ${c.index} has ${c.records} records > ${max}`);
        // A chunk ends at the byte target or at the record bound, whichever comes first.
        const bytes = c.endByte - c.startByte;
        if (c.index < chunks.length - 1) assert.ok(c.records === max || bytes >= chunkSizeBytes, `chunk ${c.index}: ${c.records} records, ${bytes} bytes`);
        assert.equal(Buffer.concat(c.buffers!).length, bytes);
      }
      assert.equal(chunks.at(-1)!.endByte, text.length);
    }
  }
});
