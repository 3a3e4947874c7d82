/**
 * Run generation + merge round trips on generated inputs (user_summary tsv,
 * awkward csv with quoted newlines, composite and text keys, duplicates,
 * fast-path and general runs mixed, a last record without terminator):
 * every record once, in key order, ties in input order, offsets and lines
 * back to the original bytes; chunks cut only between different keys;
 * range-restricted merges partition the whole; determinism; resume reuse.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { generateLines } from '../../fixtures/generate.js';
import { cutChunks } from '../../src/chunking/cut.js';
import type { CutChunk } from '../../src/chunking/types.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { copyRecord, viewOf } from '../../src/order/copy.js';
import { compareKeys, keyReader, recordKey, type KeyContext } from '../../src/order/key.js';
import { mergeRuns, type OrderedChunk } from '../../src/order/merge.js';
import { generateRuns, openRuns } from '../../src/order/runs.js';
import { planRanges, splitKeys } from '../../src/order/split.js';
import { SpillDir } from '../../src/order/spillDir.js';
import { BY_ID, flatten, keyContext, merge, reference, SCENARIOS, sortInput, tempDir, TSV, userSummary, type Scenario } from './order-support.js';

const dir = tempDir;

/** The record's key, for boundary checks. */
function keyAt(c: OrderedChunk, i: number, ctx: KeyContext): Buffer {
  return recordKey(c.bytes, c.pos[i]!, c.pos[i + 1]!, keyReader(ctx));
}

for (const s of SCENARIOS) {
  test(`round trip: ${s.name}`, async () => {
    const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes, stream: s.stream === true });
    assert.ok(set.runs.length > 2, `${set.runs.length} runs`);
    const chunks = await merge(set, { targetBytes: s.targetBytes });
    const got = await flatten(chunks, s.ctx);
    const want = reference(s.input, s.ctx);
    // Every record exactly once, in key order with ties in input order: the same sequence of origins.
    assert.equal(got.length, want.length);
    assert.deepEqual(got.map((r) => r.offset), want.map((r) => r.offset));
    // Windows smaller than a record (every record and meta entry read across a refill): the same stream.
    const tiny = await merge(set, { targetBytes: s.targetBytes, readBufferBytes: 8 });
    assert.ok(Buffer.concat(tiny.map((c) => c.bytes)).equals(Buffer.concat(chunks.map((c) => c.bytes))), 'tiny read windows');
    for (let i = 0; i < got.length; i++) {
      const g = got[i]!;
      const w = want[i]!;
      assert.equal(g.line, w.line, `record at ${w.offset}: line`);
      const original = s.input.subarray(w.offset, w.offset + w.length);
      // The input's last record gains a terminator when it had none.
      const expected = w.offset + w.length === s.input.length && !original.subarray(-s.ctx.fmt.lineTerm.length).equals(s.ctx.fmt.lineTerm) ? Buffer.concat([original, s.ctx.fmt.lineTerm]) : original;
      assert.ok(g.bytes.equals(expected), `record at ${w.offset}: bytes`);
    }
    // Chunks: numbered 0.., each at least the target but the last, disjoint adjacent key ranges.
    assert.deepEqual(chunks.map((c) => c.index), chunks.map((_, i) => i));
    for (let k = 0; k < chunks.length; k++) {
      const c = chunks[k]!;
      assert.equal(compareKeys(c.firstKey, keyAt(c, 0, s.ctx)), 0, `chunk ${k} firstKey`);
      assert.equal(compareKeys(c.lastKey, keyAt(c, c.records - 1, s.ctx)), 0, `chunk ${k} lastKey`);
      assert.equal(c.pos[c.records], c.bytes.length);
      if (k + 1 < chunks.length) {
        assert.ok(c.bytes.length >= s.targetBytes, `chunk ${k} is ${c.bytes.length} bytes`);
        assert.ok(compareKeys(c.lastKey, chunks[k + 1]!.firstKey) < 0, `chunk ${k} and ${k + 1} share a key`);
        // It ends at the first key change after reaching the target.
        let i = c.records - 1;
        while (i > 0 && compareKeys(keyAt(c, i - 1, s.ctx), c.lastKey) === 0) i--;
        assert.ok(c.pos[i]! < s.targetBytes, `chunk ${k} went on past a key change after its target`);
      }
    }
  });
}

test('fast-path keys of every shape (signs, -0, leading zeros, 1 to 15 digits, ties across runs, long records): the reference order, chunk bounds where the key changes, in any window size', async () => {
  let seed = 99;
  const rand = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const keys = ['0', '-0', '007', '-007', '999999999999999', '-999999999999999', '5', '5', '5'];
  for (let i = 0; i < 6000; i++) {
    const digits = String(rand(1e9) * 1e6 + rand(1e6)).slice(0, 1 + rand(15));
    keys.push(rand(5) === 0 ? `-${digits}` : rand(7) === 0 ? String(rand(40)) : digits);
  }
  const input = Buffer.from(keys.map((k, i) => `${k}\t${'x'.repeat(rand(9) === 0 ? 100 + rand(200) : rand(12))}\t${i}\n`).join(''));
  const ctx = keyContext(TSV, BY_ID, 3);
  const { set } = await sortInput(input, ctx, dir(), { chunkBytes: 16 << 10 });
  assert.ok(set.intKeys && set.runs.length > 4, `${set.runs.length} runs, fast path ${set.intKeys}`);
  const want = reference(input, ctx);
  for (const readBufferBytes of [undefined, 8, 3000]) {
    for (const opts of [{ targetBytes: 4 << 10 }, { targetBytes: 1 << 30, maxRecords: 37 }]) {
      const chunks = await merge(set, { ...opts, readBufferBytes });
      const got = await flatten(chunks, ctx);
      assert.deepEqual(got.map((r) => r.offset), want.map((r) => r.offset), `${JSON.stringify(opts)}, window ${readBufferBytes}`);
      for (let k = 0; k + 1 < chunks.length; k++) assert.ok(compareKeys(chunks[k]!.lastKey, chunks[k + 1]!.firstKey) < 0, `chunks ${k} and ${k + 1} share a key`);
      for (const c of chunks) assert.ok(compareKeys(c.firstKey, keyAt(c, 0, ctx)) === 0 && compareKeys(c.lastKey, keyAt(c, c.records - 1, ctx)) === 0);
    }
  }
});

test('copyRecord copies exactly src[s, e) to pos, whatever the length and alignment, and writes nothing around it', () => {
  const src = Buffer.from(Array.from({ length: 400 }, (_, i) => (i * 37 + 11) & 0xff));
  for (let len = 0; len <= 140; len++) {
    for (const [s, pos] of [[0, 0], [3, 5], [7, 2]] as const) {
      const dst = Buffer.alloc(len + 16, 0xee);
      copyRecord(src, viewOf(src), s, s + len, dst, viewOf(dst), pos);
      const want = Buffer.alloc(len + 16, 0xee);
      src.copy(want, pos, s, s + len);
      assert.ok(dst.equals(want), `length ${len} from ${s} to ${pos}`);
    }
  }
});

test('range-restricted merges partition the whole merge exactly', async () => {
  for (const s of SCENARIOS.slice(0, 3)) {
    const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes });
    const whole = await flatten(await merge(set, { targetBytes: s.targetBytes }), s.ctx);
    // Bounds from the sparse indexes (P streams), and arbitrary keys: present, absent, below and above all.
    const bounds = [
      ...(await splitKeys(set, 2)).map((k) => [k]),
      await splitKeys(set, 3),
      await splitKeys(set, 7),
      // (A key followed by a 00 byte sorts right after it and before every greater key: a bound no record has.)
      [whole[0]!.key, whole[5]!.key, Buffer.concat([whole[9]!.key, Buffer.of(0)]), whole[Math.floor(whole.length / 2)]!.key, whole.at(-1)!.key, Buffer.concat([whole.at(-1)!.key, Buffer.of(0)])],
    ];
    for (const cut of bounds) {
      const keys = [...cut].sort(compareKeys).filter((k, i, a) => i === 0 || compareKeys(a[i - 1]!, k) < 0);
      const parts = [];
      for (let p = 0; p <= keys.length; p++) {
        const lo = p === 0 ? undefined : keys[p - 1];
        const hi = keys[p];
        const recs = await flatten(await merge(set, { targetBytes: s.targetBytes, lo, hi, firstIndex: p * 1000 }), s.ctx);
        for (const r of recs) {
          if (lo) assert.ok(compareKeys(r.key, lo) >= 0, 'below lo');
          if (hi) assert.ok(compareKeys(r.key, hi) < 0, 'not below hi');
        }
        parts.push(...recs);
      }
      assert.deepEqual(parts.map((r) => r.offset), whole.map((r) => r.offset), `${s.name}: ${keys.length + 1} ranges`);
    }
    // P streams: split keys strictly increasing, ranges of roughly equal bytes.
    const split = await splitKeys(set, 4);
    assert.equal(split.length, 3);
    for (let i = 1; i < split.length; i++) assert.ok(compareKeys(split[i - 1]!, split[i]!) < 0);
  }
});

test('planRanges: one chunk per range, about the target each, numbered by range', async () => {
  const s = SCENARIOS[0]!;
  const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes });
  const target = 60 << 10;
  const ranges = await planRanges(set, target);
  assert.equal(ranges.length, Math.ceil(set.recordBytes / target));
  const chunks: OrderedChunk[] = [];
  for (const r of ranges) {
    const got = await merge(set, { targetBytes: Number.MAX_SAFE_INTEGER, lo: r.lo, hi: r.hi, firstIndex: r.index });
    assert.equal(got.length, 1, `range ${r.index}`);
    assert.ok(Math.abs(got[0]!.bytes.length - target) < target * 0.25, `range ${r.index}: ${got[0]!.bytes.length} bytes`);
    assert.ok(Math.abs(got[0]!.bytes.length - r.estimatedBytes) < target * 0.25);
    chunks.push(...got);
  }
  assert.deepEqual(chunks.map((c) => c.index), ranges.map((r) => r.index));
  const whole = await flatten(await merge(set, { targetBytes: 1 << 30 }), s.ctx);
  assert.deepEqual((await flatten(chunks, s.ctx)).map((r) => r.offset), whole.map((r) => r.offset));
  // One merge per group of consecutive ranges, cut at the ranges' bounds: the same chunks, the same numbers.
  const half = Math.floor(ranges.length / 2);
  const grouped: OrderedChunk[] = [];
  for (const g of [ranges.slice(0, half), ranges.slice(half)]) {
    grouped.push(...(await merge(set, { targetBytes: 1, lo: g[0]!.lo, hi: g.at(-1)!.hi, cuts: g.slice(1).map((r) => r.lo!), firstIndex: g[0]!.index })));
  }
  assert.deepEqual(grouped.map((c) => c.index), chunks.map((c) => c.index));
  for (let i = 0; i < chunks.length; i++) assert.ok(grouped[i]!.bytes.equals(chunks[i]!.bytes) && grouped[i]!.lastKey.equals(chunks[i]!.lastKey), `chunk ${i}`);
});

test('a record cap: planRanges overshoots when chunks are small beside the runs; a merge with maxRecords never does, and its first keys as cuts give the same chunks', async () => {
  const s = SCENARIOS[0]!;
  // Many small runs and chunks of ~250 records: the sparse indexes cannot place range bounds that finely.
  const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: 16 << 10, sparseEvery: 64 });
  const maxRecords = 250;
  const target = 250 * Math.ceil(set.recordBytes / set.records);
  let planned = 0;
  for (const r of await planRanges(set, target)) {
    for (const c of await merge(set, { targetBytes: Number.MAX_SAFE_INTEGER, lo: r.lo, hi: r.hi })) planned = Math.max(planned, c.records);
  }
  assert.ok(planned > maxRecords, `the sparse-index ranges stayed under the cap (${planned}): this test would not show the difference`);
  const counted = await merge(set, { targetBytes: 1 << 30, maxRecords });
  assert.ok(counted.every((c) => c.records <= maxRecords), `a chunk of ${Math.max(...counted.map((c) => c.records))} records`);
  assert.ok(counted.slice(0, -1).every((c) => c.records === maxRecords), 'unique keys: every chunk but the last is full');
  const whole = await flatten(await merge(set, { targetBytes: 1 << 30 }), s.ctx);
  assert.deepEqual((await flatten(counted, s.ctx)).map((r) => r.offset), whole.map((r) => r.offset));
  const recut = await merge(set, { targetBytes: 1, cuts: counted.slice(1).map((c) => c.firstKey) });
  assert.deepEqual(recut.map((c) => [c.index, c.records]), counted.map((c) => [c.index, c.records]));
});

test('cut keys of every kind, on the fast path and off it: chunks hold exactly their key ranges, empty ranges keep their numbers', async () => {
  for (const s of [SCENARIOS[2]!, SCENARIOS[3]!]) {
    const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes });
    const key = (field: string): Buffer => recordKey(Buffer.from(`${field}\tx\n`), 0, field.length + 3, keyReader(keyContext(TSV, { fields: [0], numeric: [true] }, 2)));
    const all = await flatten(await merge(set, { targetBytes: 1 << 30 }), s.ctx);
    const existing = all[Math.floor(all.length / 3)]!.key;
    const cuts = [key('\\N'), key('-1'), key('3.5'), key('50'), existing, Buffer.concat([existing, Buffer.of(0)]), key('1e20'), key('abc')]
      .sort(compareKeys)
      .filter((k, i, a) => i === 0 || compareKeys(a[i - 1]!, k) < 0);
    const chunks = await merge(set, { targetBytes: 1, cuts, firstIndex: 100 });
    const flat = await flatten(chunks, s.ctx);
    assert.deepEqual(flat.map((r) => r.offset), all.map((r) => r.offset));
    let prev = -1;
    for (const c of chunks) {
      const i = c.index - 100;
      assert.ok(i > prev, 'numbers increase');
      prev = i;
      for (const r of await flatten([c], s.ctx)) {
        if (i > 0) assert.ok(compareKeys(r.key, cuts[i - 1]!) >= 0, `chunk ${c.index}: below its range`);
        if (i < cuts.length) assert.ok(compareKeys(r.key, cuts[i]!) < 0, `chunk ${c.index}: above its range`);
      }
    }
    assert.ok(chunks.length < cuts.length + 1, 'some ranges are empty');
  }
  await assert.rejects(collectAll(SCENARIOS[2]!), /strictly increasing/);
});

async function collectAll(s: Scenario): Promise<OrderedChunk[]> {
  const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes });
  const k = (await splitKeys(set, 3))[0]!;
  return merge(set, { targetBytes: 1, cuts: [k, k] });
}

test('determinism: sorting again, in this thread or in workers, gives byte-identical runs and chunks', async () => {
  for (const s of [SCENARIOS[1]!, SCENARIOS[3]!, SCENARIOS[4]!]) {
    const one = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes, stream: s.stream === true });
    const two = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes, stream: s.stream === true, workers: 2 });
    assert.deepEqual(two.set.manifest, one.set.manifest);
    const a = await merge(one.set, { targetBytes: s.targetBytes });
    const b = await merge(two.set, { targetBytes: s.targetBytes });
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i++) {
      assert.equal(a[i]!.index, b[i]!.index);
      assert.ok(a[i]!.bytes.equals(b[i]!.bytes));
      assert.ok(a[i]!.firstKey.equals(b[i]!.firstKey) && a[i]!.lastKey.equals(b[i]!.lastKey));
    }
    // Run files are a function of the input alone.
    for (let r = 0; r < one.set.runs.length; r++) assert.ok(readFileSync(one.set.path(r)).equals(readFileSync(two.set.path(r))));
  }
});

test('resume: intact runs are reused without reading the input; a damaged one is sorted again, identically', async () => {
  const s = SCENARIOS[0]!;
  const d = dir();
  const first = await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes });
  const n = first.set.runs.length;
  assert.deepEqual(first.reads, [...Array(n).keys()]);
  const again = await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes });
  assert.deepEqual(again.reads, []);
  assert.deepEqual(again.reused, [...Array(n).keys()]);
  assert.deepEqual(again.set.manifest, first.set.manifest);
  // A process that only merges opens the finished runs, verified.
  assert.deepEqual((await openRuns(first.spill, s.ctx, 'test', 16))?.manifest, first.set.manifest);
  assert.equal(await openRuns(first.spill, s.ctx, 'another job', 16), undefined);
  // One byte of run 2 changed: its hash no longer matches, so it is sorted again to the same bytes.
  const path = first.set.path(2);
  const bytes = readFileSync(path);
  bytes[10] = bytes[10]! ^ 0xff;
  writeFileSync(path, bytes);
  assert.equal(await openRuns(first.spill, s.ctx, 'test', 16), undefined);
  const repaired = await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes });
  assert.deepEqual(repaired.reads, [2]);
  assert.deepEqual(repaired.set.manifest, first.set.manifest);
  // Another job identity, or another chunk size: nothing is reused.
  const other = await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes, identity: 'another job' });
  assert.equal(other.reused.length, 0);
  const rechunked = await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes + 1000, identity: 'another job' });
  assert.ok(rechunked.reused.length <= 1, 'only a first chunk that happens to be identical');
  assert.deepEqual((await flatten(await merge(rechunked.set, { targetBytes: 1 << 30 }), s.ctx)).map((r) => r.offset), reference(s.input, s.ctx).map((r) => r.offset));
});

test('resume from a stream: runs are reused only for the same bytes', async () => {
  const s = SCENARIOS[0]!;
  const d = dir();
  await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes, stream: true });
  const same = await sortInput(s.input, s.ctx, d, { chunkBytes: s.chunkBytes, stream: true });
  assert.equal(same.reused.length, same.set.runs.length);
  // Same length and record boundaries, one key changed: that chunk's run is not reused.
  const changed = Buffer.from(s.input);
  const at = changed.indexOf(0x0a, 100_000) + 1;
  changed[at] = changed[at] === 0x31 ? 0x32 : 0x31;
  const next = await sortInput(changed, s.ctx, d, { chunkBytes: s.chunkBytes, stream: true });
  assert.equal(next.reused.length, next.set.runs.length - 1);
  assert.deepEqual((await flatten(await merge(next.set, { targetBytes: 1 << 30 }), s.ctx)).map((r) => r.offset), reference(changed, s.ctx).map((r) => r.offset));
});

test('released chunks lend their memory to the next; locate() after release is refused', async () => {
  const s = SCENARIOS[0]!;
  const { set } = await sortInput(s.input, s.ctx, dir(), { chunkBytes: s.chunkBytes });
  const seen = new Set<ArrayBufferLike>();
  let reusedBuffers = 0;
  let records = 0;
  for await (const c of mergeRuns(set, { targetBytes: 20 << 10 })) {
    if (seen.has(c.bytes.buffer)) reusedBuffers++;
    seen.add(c.bytes.buffer);
    records += c.records;
    c.release();
    assert.throws(() => c.locate(), /released/);
  }
  assert.equal(records, set.records);
  assert.ok(reusedBuffers > 0);
});

test('already ordered input: runs written as read, and the set says so', async () => {
  const input = Buffer.concat([...generateLines({ table: 'user_summary', rows: 5000, seed: 9, sorted: true })]);
  const ctx = keyContext(TSV, BY_ID, 5);
  const { set } = await sortInput(input, ctx, dir(), { chunkBytes: 30 << 10 });
  assert.ok(set.runs.every((r) => r.ordered));
  assert.equal(set.inputOrdered, true);
  const shuffled = await sortInput(userSummary(5000, 9), ctx, dir(), { chunkBytes: 30 << 10 });
  assert.equal(shuffled.set.inputOrdered, false);
  const chunks = await merge(set, { targetBytes: 1 << 30 });
  assert.ok(chunks[0]!.bytes.equals(input));
});

test('empty input: no runs, no chunks', async () => {
  const { set } = await sortInput(Buffer.alloc(0), keyContext(TSV, BY_ID, 5), dir(), { chunkBytes: 1000 });
  assert.equal(set.runs.length, 0);
  assert.deepEqual(await merge(set, { targetBytes: 1000 }), []);
  assert.deepEqual(await splitKeys(set, 4), []);
});

test('an input that changed since it was cut is an input error naming the chunk, from a worker too', async () => {
  const s = SCENARIOS[0]!;
  async function* blocks(): AsyncGenerator<Buffer> {
    yield s.input;
  }
  // The bytes read back for chunk 1 have one record boundary less (a newline turned into a tab).
  const read = async (c: CutChunk, into: Buffer): Promise<Buffer> => {
    const got = into.subarray(0, s.input.copy(into, 0, c.startByte, c.endByte));
    if (c.index === 1) got[got.indexOf(0x0a)] = 0x09;
    return got;
  };
  for (const workers of [1, 2]) {
    const spill = await SpillDir.open({ jobId: 'changed', tmpdir: dir() });
    const { fmt, cs, targets } = s.ctx;
    const chunks = cutChunks(blocks(), { format: fmt, charset: cs, targets, chunkSizeBytes: s.chunkBytes, maxRecordBytes: 1 << 20, ignoreLines: 0, stripBom: false, keepBytes: false, file: 'input' });
    await assert.rejects(
      generateRuns(chunks, { key: s.ctx, spill, read, identity: 't', workers }),
      (err: unknown) => isFlatloadError(err) && err.code === 'INPUT_MALFORMED' && err.context.chunk === 1 && /changed while it was read/.test(err.message),
      `${workers} sort threads`,
    );
  }
});

test('compressed blocks: runs of many blocks, records longer than a block, range merges and locate() as the reference; runs smaller than their records; a damaged block is a spill error', async () => {
  // Long records (over a 64 KiB block) among short ones, so records and meta entries straddle blocks.
  const long = (i: number): string => `${(i * 7919) % 5003}\t${'x'.repeat(70_000 + i)}\n`;
  const input = Buffer.concat([userSummary(40_000, 11), Buffer.from([0, 1, 2].map(long).join('')), userSummary(30_000, 12)]);
  const ctx = keyContext(TSV, BY_ID, 5);
  const { set } = await sortInput(input, ctx, dir(), { chunkBytes: 900 << 10, sparseEvery: 64 });
  assert.ok(set.runs.some((r) => r.recordBytes > 4 * (64 << 10)), 'runs of several blocks');
  assert.ok(set.runs.some((r) => r.maxRecordBytes > 64 << 10), 'a record longer than a block');
  assert.ok(set.spillBytes < 0.8 * set.recordBytes, `${set.spillBytes} bytes on disk for ${set.recordBytes} of records`);
  const want = reference(input, ctx);
  const whole = await flatten(await merge(set, { targetBytes: 200 << 10 }), ctx);
  assert.deepEqual(whole.map((r) => r.offset), want.map((r) => r.offset));
  assert.deepEqual(whole.map((r) => r.line), want.map((r) => r.line));
  // Entered mid-run by the sparse index (a position inside a block), the ranges give exactly the whole.
  const keys = await splitKeys(set, 5);
  const parts = [];
  for (let p = 0; p <= keys.length; p++) parts.push(...(await flatten(await merge(set, { targetBytes: 200 << 10, lo: keys[p - 1], hi: keys[p] }), ctx)));
  assert.deepEqual(parts.map((r) => r.offset), want.map((r) => r.offset));
  // A block's frame header damaged: the merge stops with a spill error naming the run file.
  const path = set.path(0);
  const bytes = readFileSync(path);
  bytes[0] = bytes[0]! ^ 0xff;
  writeFileSync(path, bytes);
  await assert.rejects(merge(set, { targetBytes: 200 << 10 }), (err: unknown) => isFlatloadError(err) && err.code === 'SPILL' && err.message.includes(set.runs[0]!.file));
});
