/**
 * Runs whose blocks are compressed in another thread (packAside): the same
 * file, byte for byte, as compressed in this thread; a packer that fails
 * fails the run with its error instead of hanging or leaving an unhandled
 * rejection behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FlatloadError, isFlatloadError } from '../../src/errors/index.js';
import { packAside, type BlockPacker } from '../../src/order/packAside.js';
import { writeRun } from '../../src/order/runFile.js';
import { SortScratch } from '../../src/order/scratch.js';
import { recordTerminator, sortChunk } from '../../src/order/sortChunk.js';
import { BY_ID, keyContext, tempDir, TSV, userSummary } from './order-support.js';

const ctx = keyContext(TSV, BY_ID, 5);

/** A run of `rows` user_summary records written with and without the packer. */
async function both(rows: number, packer: BlockPacker): Promise<[Buffer, Buffer]> {
  const dir = tempDir();
  const bytes = userSummary(rows, 11);
  const files: Buffer[] = [];
  for (const p of [undefined, packer]) {
    const path = join(dir, `run-${p ? 'aside' : 'here'}.bin`);
    const sorted = sortChunk(bytes, ctx, new SortScratch());
    await writeRun(path, bytes, sorted, 64, recordTerminator(TSV), new SortScratch(), p);
    files.push(readFileSync(path));
  }
  return [files[0]!, files[1]!];
}

test('a run packed in another thread is the run packed here, byte for byte (one block, several batches)', async () => {
  const packer = packAside();
  try {
    // 500 rows: one short block; 100,000 rows (3.7 MB): batches of 1 MiB, several in flight, meta blocks after them.
    for (const rows of [500, 100_000]) {
      const [here, aside] = await both(rows, packer);
      assert.ok(here.length > 0 && aside.equals(here), `${rows} rows`);
    }
  } finally {
    await packer.close();
  }
});

test('a packer that fails fails the run with its error', async () => {
  let calls = 0;
  const failing: BlockPacker = {
    pack: async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      throw new FlatloadError('INTERNAL', 'the compression thread stopped');
    },
    close: async () => undefined,
  };
  await assert.rejects(both(100_000, failing), (e) => isFlatloadError(e) && /compression thread stopped/.test(e.message));
  assert.ok(calls >= 1);
});
