/**
 * The in-memory sort (an input within --sort-memory): its chunks must be the
 * merge's chunks, byte for byte, with the same indexes, key bounds and
 * record origins, on every scenario the merge is tested on; the cut rule on
 * its own as a table of cases; an input that changed between the boundary
 * scan and the sort is an input error. Sorted aside (in the worker thread),
 * the same chunks as sorted here, and the same error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFlatloadError } from '../../src/errors/index.js';
import { compareKeys } from '../../src/order/key.js';
import { cutSpans, MemorySort, sortAside } from '../../src/order/memorySort.js';
import { recordTerminator } from '../../src/order/sortChunk.js';
import { merge, reference, SCENARIOS, sortInput, tempDir, type Scenario } from './order-support.js';

/** The input with the spare bytes a missing last terminator is written into. */
function sortInMemory(input: Buffer, s: Scenario, maxRecords?: number): MemorySort {
  const spare = Buffer.concat([input, Buffer.alloc(recordTerminator(s.ctx.fmt).length)]);
  return MemorySort.sort(spare, input.length, s.ctx, reference(input, s.ctx).length, { startByte: 0, firstLine: 1 }, s.targetBytes, maxRecords);
}

for (const s of SCENARIOS) {
  for (const maxRecords of [undefined, 97]) {
    test(`in memory = the merge: ${s.name}${maxRecords ? `, at most ${maxRecords} records a chunk` : ''}`, async () => {
      const { set } = await sortInput(s.input, s.ctx, tempDir(), { chunkBytes: s.chunkBytes });
      const want = await merge(set, { targetBytes: s.targetBytes, maxRecords });
      const mem = sortInMemory(s.input, s, maxRecords);
      assert.equal(mem.records, reference(s.input, s.ctx).length);
      assert.equal(mem.spans.length, want.length, 'chunks');
      for (let i = 0; i < want.length; i++) {
        const w = want[i]!;
        const g = mem.chunk(i);
        assert.equal(g.index, w.index);
        assert.equal(g.records, w.records, `chunk ${i} records`);
        assert.ok(g.bytes.equals(w.bytes), `chunk ${i} bytes`);
        assert.deepEqual([...g.pos], [...w.pos], `chunk ${i} record positions`);
        assert.equal(compareKeys(g.firstKey, w.firstKey), 0, `chunk ${i} first key`);
        assert.equal(compareKeys(g.lastKey, w.lastKey), 0, `chunk ${i} last key`);
        const [gs, ws] = [await g.locate(), await w.locate()];
        assert.deepEqual([...gs.offsets], [...ws.offsets], `chunk ${i} offsets`);
        assert.deepEqual([...gs.lines], [...ws.lines], `chunk ${i} lines`);
      }
    });
  }
}

test('in memory: origins are offset by where the records start in the file (header lines)', () => {
  const s = SCENARIOS[0]!;
  const header = 'user_id\tweight\tlevel\tbeat_rate\tlevel_num\n';
  const spare = Buffer.concat([s.input, Buffer.alloc(1)]);
  const mem = MemorySort.sort(spare, s.input.length, s.ctx, reference(s.input, s.ctx).length, { startByte: header.length, firstLine: 2 }, s.targetBytes, undefined);
  const plain = sortInMemory(s.input, s);
  return Promise.all([mem.chunk(0).locate(), plain.chunk(0).locate()]).then(([a, b]) => {
    assert.deepEqual([...a.offsets], [...b.offsets].map((o) => o + header.length));
    assert.deepEqual([...a.lines], [...b.lines].map((l) => l + 1));
  });
});

test('in memory: a record count other than the boundary scan\'s is an input error', () => {
  const s = SCENARIOS[0]!;
  const n = reference(s.input, s.ctx).length;
  assert.throws(
    () => MemorySort.sort(Buffer.concat([s.input, Buffer.alloc(1)]), s.input.length, s.ctx, n + 1, { startByte: 0, firstLine: 1 }, s.targetBytes, undefined),
    (e) => isFlatloadError(e) && e.code === 'INPUT_MALFORMED' && /changed while it was read/.test(e.message),
  );
});

test('in memory: chunks are gathered into the sort\'s spare arrays, their record offsets after their bytes', () => {
  const s = SCENARIOS[0]!;
  const n = reference(s.input, s.ctx).length;
  // A target that the sort's arrays (4 bytes a record, 3% to spare) fit, as a load's chunks of a few MiB do.
  const target = Math.ceil(2.5 * n);
  const spare = Buffer.concat([s.input, Buffer.alloc(1)]);
  const mem = MemorySort.sort(spare, s.input.length, s.ctx, n, { startByte: 0, firstLine: 1 }, target, undefined);
  assert.ok(mem.spans.length >= 3, `${mem.spans.length} chunks`);
  const seen = new Set<ArrayBufferLike>();
  let before: { release: () => void } | undefined;
  // The last chunk, maybe much smaller than the target, may get a slab of its own.
  for (let i = 0; i < mem.spans.length - 1; i++) {
    // Two chunks held at once, as a load with --jobs 2 does.
    const c = mem.chunk(i);
    before?.release();
    before = c;
    assert.equal(c.pos.buffer, c.bytes.buffer, `chunk ${i}: one slab`);
    assert.equal(c.bytes.buffer.byteLength, Math.ceil(4 * n * 1.03), `chunk ${i}: a sort array's slab`);
    seen.add(c.bytes.buffer);
  }
  assert.equal(seen.size, 2, 'slabs');
});

test('in memory: an empty input has no chunks', () => {
  const s = SCENARIOS[0]!;
  const mem = MemorySort.sort(Buffer.alloc(1), 0, s.ctx, 0, { startByte: 0, firstLine: 1 }, s.targetBytes, undefined);
  assert.equal(mem.records, 0);
  assert.deepEqual(mem.spans, []);
});

/** A copy of the input that owns its memory, with the spare bytes: what the worker is given. */
function owned(input: Buffer, s: Scenario): Buffer {
  const b = Buffer.allocUnsafeSlow(input.length + recordTerminator(s.ctx.fmt).length);
  input.copy(b);
  return b;
}

test('sorted aside = sorted here, in every scenario, and the input moves to the worker', async () => {
  for (const s of SCENARIOS) {
    for (const maxRecords of [undefined, 97]) {
      const n = reference(s.input, s.ctx).length;
      const origin = { startByte: 7, firstLine: 3 };
      const here = MemorySort.sort(owned(s.input, s), s.input.length, s.ctx, n, origin, s.targetBytes, maxRecords);
      const bytes = owned(s.input, s);
      const aside = await sortAside(bytes, s.input.length, s.ctx, n, origin, s.targetBytes, maxRecords);
      assert.equal(bytes.buffer.byteLength, 0, `${s.name}: the input was moved, not copied`);
      assert.equal(aside.records, here.records, s.name);
      assert.deepEqual(aside.spans, here.spans, s.name);
      for (let i = 0; i < here.spans.length; i++) {
        const [g, w] = [aside.chunk(i), here.chunk(i)];
        assert.ok(g.bytes.equals(w.bytes), `${s.name}: chunk ${i} bytes`);
        assert.deepEqual([...g.pos], [...w.pos], `${s.name}: chunk ${i} positions`);
        assert.ok(Buffer.isBuffer(g.firstKey) && g.firstKey.equals(w.firstKey) && g.lastKey.equals(w.lastKey), `${s.name}: chunk ${i} keys`);
        assert.deepEqual(await g.locate(), await w.locate(), `${s.name}: chunk ${i} origins`);
      }
    }
  }
});

test('sorted aside: an input error in the worker arrives as the same input error', async () => {
  const s = SCENARIOS[0]!;
  const n = reference(s.input, s.ctx).length;
  await assert.rejects(
    sortAside(owned(s.input, s), s.input.length, s.ctx, n + 1, { startByte: 40, firstLine: 1 }, s.targetBytes, undefined),
    (e) => isFlatloadError(e) && e.code === 'INPUT_MALFORMED' && /the boundary scan found \d+ records/.test(e.message) && e.context.byteOffset === 40,
  );
  // The worker goes on serving after an error.
  const ok = await sortAside(owned(s.input, s), s.input.length, s.ctx, n, { startByte: 0, firstLine: 1 }, s.targetBytes, undefined);
  assert.equal(ok.records, n);
});

test('sorted aside: an input that shares its memory is refused before anything moves', async () => {
  const s = SCENARIOS[0]!;
  const shared = owned(s.input, s).subarray(1);
  await assert.rejects(sortAside(shared, 0, s.ctx, 0, { startByte: 0, firstLine: 1 }, s.targetBytes, undefined), (e) => isFlatloadError(e) && e.code === 'INTERNAL');
  assert.ok(shared.buffer.byteLength > 0);
});

// cutSpans: lengths and keys of the sorted records; spans as [from, to).
const CUTS: Array<{ name: string; lengths: number[]; keys: number[]; target: number; maxRecords?: number; want: Array<[number, number]> }> = [
  { name: 'no records', lengths: [], keys: [], target: 10, want: [] },
  { name: 'one record larger than the target', lengths: [50], keys: [1], target: 10, want: [[0, 1]] },
  { name: 'a chunk ends at the first record at or past the target', lengths: [4, 4, 4, 4, 4], keys: [1, 2, 3, 4, 5], target: 8, want: [[0, 2], [2, 4], [4, 5]] },
  { name: 'equal keys never straddle two chunks', lengths: [4, 4, 4, 4, 4], keys: [1, 2, 2, 2, 3], target: 8, want: [[0, 4], [4, 5]] },
  { name: 'one key throughout: one chunk whatever its size', lengths: [4, 4, 4, 4], keys: [7, 7, 7, 7], target: 4, want: [[0, 4]] },
  { name: 'a record count binds before the bytes', lengths: [1, 1, 1, 1, 1], keys: [1, 2, 3, 4, 5], target: 100, maxRecords: 2, want: [[0, 2], [2, 4], [4, 5]] },
  { name: 'a record count waits for a key change too', lengths: [1, 1, 1, 1, 1], keys: [1, 1, 1, 2, 3], target: 100, maxRecords: 2, want: [[0, 3], [3, 5]] },
];

for (const c of CUTS) {
  test(`cutSpans: ${c.name}`, () => {
    const spans = cutSpans(c.lengths.length, (j) => c.lengths[j]!, (j) => c.keys[j] === c.keys[j - 1], c.target, c.maxRecords);
    assert.deepEqual(spans.map((s) => [s.from, s.to]), c.want);
    for (const s of spans) {
      assert.equal(s.bytes, c.lengths.slice(s.from, s.to).reduce((a, b) => a + b, 0));
      assert.equal(s.start, c.lengths.slice(0, s.from).reduce((a, b) => a + b, 0));
    }
  });
}
