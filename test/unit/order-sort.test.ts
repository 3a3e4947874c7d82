/**
 * Sorting one chunk: the chunking scanner's record table (ends, lines) on
 * every scanner case; the radix sort against a reference; sortChunk's
 * order, on both key paths, equals a stable sort by the one comparator;
 * writeRun's sections decode to the sorted records, their meta and index.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { recordTable } from '../../src/chunking/records.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import { compareKeys, keyReader, recordKey, type KeyContext, type KeySpec } from '../../src/order/key.js';
import { radixSort64 } from '../../src/order/radix.js';
import { SortScratch } from '../../src/order/scratch.js';
import { decompressBlockInto, META_BLOCK_BYTES, RUN_BLOCK_BYTES } from '../../src/order/codec.js';
import { parseBlocks, parseIndex, writeRun } from '../../src/order/runFile.js';
import { inKeyOrder, keyOfRecord, recordTerminator, sortChunk, type SortedChunk } from '../../src/order/sortChunk.js';
import { charsetOf, countLf, formatOf, readCases, rng, scanWhole, targetsOf } from './chunking-support.js';

test('recordTable: the scanner\'s record ends and each record\'s line, on every scanner case', () => {
  let checked = 0;
  for (const file of ['chunking-cases.json', 'chunking-fuzz.json']) {
    for (const c of readCases(file)) {
      if (c.ignore > 0 || c.openQuote !== null) continue;
      const data = Buffer.from(c.hex, 'hex');
      const whole = scanWhole(data, formatOf(c), charsetOf(c), targetsOf(c), 0);
      // A table of a fresh scanner over the whole input, once with room and once growing from nothing.
      for (const into of [undefined, { ends: new Uint32Array(1), lineOffsets: new Uint32Array(1) }]) {
        const t = recordTable(data, formatOf(c), charsetOf(c), targetsOf(c), into);
        assert.deepEqual([...t.ends], whole.ends, c.name);
        const starts = whole.ends.map((_, i) => (i === 0 ? 0 : whole.ends[i - 1]!));
        assert.deepEqual([...t.lineOffsets], starts.map((s) => countLf(data, 0, s)), `${c.name}: lines`);
        assert.equal(t.terminated, whole.ends.length === 0 || endsWithRecordEnd(data, c), `${c.name}: terminated`);
      }
      checked++;
    }
  }
  assert.ok(checked > 300, `${checked} cases`);
});

/** Whether the last record of data ends with a terminator the scanner saw (not cut off by the end of input). */
function endsWithRecordEnd(data: Buffer, c: ReturnType<typeof readCases>[number]): boolean {
  const t = recordTable(Buffer.concat([data, Buffer.from('x')]), formatOf(c), charsetOf(c), targetsOf(c));
  return t.ends.includes(data.length);
}

test('radixSort64: stable, equal to a reference sort, for every kind of key spread', () => {
  const rand = rng(11);
  const spreads: Array<[string, () => [number, number]]> = [
    ['all equal', () => [5, 7]],
    ['lo only, few values', () => [0, Math.floor(rand() * 4)]],
    ['lo only, wide', () => [0, Math.floor(rand() * 2 ** 32)]],
    ['hi and lo', () => [Math.floor(rand() * 3), Math.floor(rand() * 2 ** 32)]],
    ['lo high digit and hi low digit', () => [Math.floor(rand() * 3), Math.floor(rand() * 5) * 2 ** 16]],
    ['top bits only', () => [Math.floor(rand() * 4) * 2 ** 30, 0]],
    ['full 64 bits', () => [Math.floor(rand() * 2 ** 32), Math.floor(rand() * 2 ** 32)]],
  ];
  const scratch = new SortScratch();
  for (const [name, gen] of spreads) {
    for (const n of [0, 1, 2, 3, 100, 5000]) {
      const pairs = Array.from({ length: n }, gen);
      const hi = Uint32Array.from(pairs.map((p) => p[0]));
      const lo = Uint32Array.from(pairs.map((p) => p[1]));
      const sameHi = hi.every((h) => h === hi[0]);
      const loCopy = lo.slice();
      const perm = [...radixSort64(hi, lo, scratch)];
      const expected = pairs.map((_, i) => i).sort((a, b) => pairs[a]![0] - pairs[b]![0] || pairs[a]![1] - pairs[b]![1] || a - b);
      assert.deepEqual(perm, expected, `${name}, n=${n}`);
      // Without the high halves (all the same), as an in-memory sort of narrow keys calls it.
      if (sameHi) assert.deepEqual([...radixSort64(undefined, loCopy, scratch)], expected, `${name}, n=${n}, no hi`);
    }
  }
});

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const CSV: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c };
const utf8 = charsetInfo('utf8mb4')!;

function context(fmt: ScanFormat, spec: KeySpec, fields: number): KeyContext {
  return { spec, fmt, cs: utf8, targets: { fields, textField: Array.from({ length: fields }, () => true) } };
}

/** The order a stable sort by the one comparator gives: what every sort path must match. */
function referenceOrder(bytes: Buffer, ctx: KeyContext): number[] {
  const { ends } = recordTable(bytes, ctx.fmt, ctx.cs, ctx.targets);
  const r = keyReader(ctx);
  const keys = [...ends].map((e, i) => recordKey(bytes, i === 0 ? 0 : ends[i - 1]!, e, r));
  return keys.map((_, i) => i).sort((x, y) => compareKeys(keys[x]!, keys[y]!) || x - y);
}

type Gen = (rand: () => number, i: number) => string;
const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

/** Key generators: field text for the key column, some giving the fast path and some not. */
const KEYS: Array<[string, Gen, boolean]> = [
  ['small ints with ties', (rand) => String(Math.floor(rand() * 20)), true],
  ['11-digit ids', (rand) => String(13_000_000_000 + Math.floor(rand() * 6_000_000_000)), true],
  ['negatives', (rand) => String(Math.floor(rand() * 2000) - 1000), true],
  ['ids over a few 2^32 stretches, then far apart (high halves in bytes, then widened)', (rand, i) => String((i < 30 ? 13_000_000_000 : 1e14) + Math.floor(rand() * 6_000_000_000)), true],
  ['15 digits, both signs (radix path)', (rand) => String(Math.floor(rand() * 1e15) * (rand() < 0.5 ? -1 : 1)), true],
  ['beyond 2^53', (rand) => `9007199254740${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`, false],
  ['decimals and exponents', (rand) => pick(rand, ['1.5', '-0.25', '1e3', '999.999', '1000', '-1e-2', '0', '7']), false],
  ['some NULL and malformed', (rand) => pick(rand, ['\\N', '12', 'abc', '', '-3', '12x', '5']), false],
];

function tsvChunk(rand: () => number, n: number, key: Gen): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`${key(rand, i)}\t${pick(rand, ['Gold', 'a\\tb', '\\N', 'é'])}\t${i}\n`);
  return b(lines.join(''));
}

test('sortChunk: both key paths give the stable comparator order', () => {
  const rand = rng(3);
  for (const [name, gen, fast] of KEYS) {
    for (const n of [1, 2, 50, 12_000]) {
      const bytes = tsvChunk(rand, n, gen);
      const ctx = context(TSV, { fields: [0], numeric: [true] }, 3);
      const s = sortChunk(bytes, ctx, new SortScratch(), n);
      if (n >= 50) assert.equal(s.intReader !== undefined, fast, `${name}: fast path`);
      assert.deepEqual([...s.perm], referenceOrder(bytes, ctx), `${name}, n=${n}`);
    }
  }
});

test('sortChunk: keys over a few 2^32 stretches hold their high halves in a byte each (21 bytes a record at most)', () => {
  const n = 12_000;
  const bytes = tsvChunk(rng(9), n, (rand) => String(13_000_000_000 + Math.floor(rand() * 6_000_000_000)));
  const scratch = new SortScratch();
  const s = sortChunk(bytes, context(TSV, { fields: [0], numeric: [true] }, 3), scratch, n);
  assert.deepEqual([...s.perm], referenceOrder(bytes, context(TSV, { fields: [0], numeric: [true] }, 3)));
  // Record ends and lines, the keys' low halves, the radix sort's two arrays: 4 bytes each; the high halves: 1.
  scratch.release();
  assert.ok(scratch.pool.freeBytes <= 21 * n * 1.03 + 64, `${scratch.pool.freeBytes / n} bytes a record`);
});

test('sortChunk: text, composite and csv keys (quotes, embedded newlines)', () => {
  const rand = rng(5);
  const rows = (n: number, f: (i: number) => string): Buffer => b(Array.from({ length: n }, (_, i) => f(i)).join(''));
  const cases: Array<[string, Buffer, KeyContext]> = [
    ['text key', rows(3000, () => `${pick(rand, ['b', 'a', 'ab', 'a\\0', '\\N', 'é', 'B'])}\t${Math.floor(rand() * 9)}\n`), context(TSV, { fields: [0], numeric: [false] }, 2)],
    ['composite (text, int)', rows(3000, () => `${pick(rand, ['x', 'y', 'xy'])}\t${Math.floor(rand() * 50) - 25}\n`), context(TSV, { fields: [0, 1], numeric: [false, true] }, 2)],
    ['composite, long shared prefix', rows(3000, () => `prefix-${pick(rand, ['a', 'b'])}\t${Math.floor(rand() * 9)}\n`), context(TSV, { fields: [0, 1], numeric: [false, true] }, 2)],
    [
      'csv, key after quoted fields with newlines',
      rows(3000, () => `"${pick(rand, ['l1\nl2', 'a,b', 'say ""hi""', 'x\r\ny'])}",${Math.floor(rand() * 100)}\r\n`),
      context(CSV, { fields: [1], numeric: [true] }, 2),
    ],
    ['csv, quoted numeric key', rows(3000, () => `"${Math.floor(rand() * 100)}",z\r\n`), context(CSV, { fields: [0], numeric: [true] }, 2)],
  ];
  for (const [name, bytes, ctx] of cases) {
    const s = sortChunk(bytes, ctx);
    assert.deepEqual([...s.perm], referenceOrder(bytes, ctx), name);
    assert.equal(s.ordered, false, name);
  }
});

test('sortChunk: input already in key order is recognised and kept as it is', () => {
  const bytes = b(Array.from({ length: 1000 }, (_, i) => `${Math.floor(i / 3)}\tv${String(i).padStart(4, '0')}\n`).join(''));
  for (const spec of [{ fields: [0], numeric: [true] }, { fields: [0, 1], numeric: [true, false] }]) {
    const s = sortChunk(bytes, context(TSV, spec, 2));
    assert.equal(s.ordered, true);
    assert.deepEqual([...s.perm], Array.from({ length: 1000 }, (_, i) => i));
  }
  const reversed = b(Array.from({ length: 10 }, (_, i) => `${10 - i}\n`).join(''));
  assert.equal(sortChunk(reversed, context(TSV, { fields: [0], numeric: [true] }, 1)).ordered, false);
});

test('inKeyOrder: the same keys and comparator as the sort, on both paths', () => {
  const ctx = context(TSV, { fields: [0], numeric: [true] }, 2);
  const cases: Array<[string, string, boolean]> = [
    ['empty', '', true],
    ['one record', '5\tx\n', true],
    ['ascending integers with ties', '1\ta\n2\tb\n2\tc\n10\td\n', true],
    ['a drop', '1\ta\n3\tb\n2\tc\n', false],
    ['10 after 9 (numbers, not text)', '9\ta\n10\tb\n', true],
    ['NULL first, then numbers', '\\N\ta\n-5\tb\n7\tc\n', true],
    ['a number after a NULL further on', '1\ta\n\\N\tb\n', false],
    ['fast path, then a decimal in order', '1\ta\n2\tb\n2.5\tc\n3\td\n', true],
    ['fast path, then a decimal out of order', '1\ta\n3\tb\n2.5\tc\n', false],
    ['beyond 2^53', '9007199254740992\ta\n9007199254740993\tb\n', true],
    ['beyond 2^53, down by one', '9007199254740993\ta\n9007199254740992\tb\n', false],
    ['malformed last', '5\ta\nabc\tb\n', true],
  ];
  for (const [name, text, want] of cases) {
    const bytes = b(text);
    assert.equal(inKeyOrder(bytes, ctx), want, name);
    if (bytes.length > 0) assert.equal(sortChunk(bytes, ctx).ordered, want, `${name}: sortChunk agrees`);
  }
});

/** A section of a run file, its blocks decompressed one after the other. */
function section(file: Buffer, at: Float64Array, bytes: number, blockBytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let b = 0; b + 1 < at.length; b++) {
    const expect = Math.min(blockBytes, bytes - b * blockBytes);
    decompressBlockInto(file.subarray(at[b], at[b + 1]), out, b * blockBytes, expect, 'run');
  }
  return out;
}

/** Reads varints from a buffer (putVarint's format). */
function varints(buf: Buffer): { next: () => number; bytes: (n: number) => Buffer; pos: () => number } {
  let p = 0;
  return {
    next() {
      let v = 0;
      for (let shift = 1; ; shift *= 128) {
        const byte = buf[p++]!;
        v += (byte & 0x7f) * shift;
        if (byte < 0x80) return v;
      }
    },
    bytes: (n) => buf.subarray(p, (p += n)),
    pos: () => p,
  };
}

/** Writes the run of `bytes` and checks every section against the records taken one by one in sort order. */
async function checkRun(name: string, bytes: Buffer, ctx: KeyContext, every: number): Promise<void> {
  const s: SortedChunk = sortChunk(bytes, ctx, new SortScratch());
  const dir = mkdtempSync(join(tmpdir(), 'flatload-run-test-'));
  try {
    const term = recordTerminator(ctx.fmt);
    const layout = await writeRun(join(dir, 'run.bin'), bytes, s, every, term, new SortScratch());
    const file = readFileSync(join(dir, 'run.bin'));
    assert.equal(file.length, layout.fileBytes, name);
    const blocks = parseBlocks(file.subarray(layout.recordFileBytes + layout.metaFileBytes + layout.indexBytes), Math.ceil(layout.recordBytes / RUN_BLOCK_BYTES), layout.recordFileBytes);
    const records = section(file, blocks.records, layout.recordBytes, RUN_BLOCK_BYTES);
    const meta = varints(section(file, blocks.meta, layout.metaBytes, META_BLOCK_BYTES));
    const index = parseIndex(file.subarray(layout.recordFileBytes + layout.metaFileBytes, layout.recordFileBytes + layout.metaFileBytes + layout.indexBytes));
    const { ends, lineOffsets } = s.table;
    const n = ends.length;
    assert.equal(index.length, Math.ceil(n / every), `${name}: index entries`);
    let recPos = 0;
    let maxRecord = 0;
    for (let j = 0; j < n; j++) {
      const i = s.perm[j]!;
      const start = i === 0 ? 0 : ends[i - 1]!;
      const record = Buffer.concat([bytes.subarray(start, ends[i]), i === n - 1 && !s.table.terminated ? term : Buffer.alloc(0)]);
      const key = keyOfRecord(s, i);
      if (j % every === 0) {
        assert.deepEqual(index.position(j / every), { ordinal: j, recPos, metaPos: meta.pos() }, `${name}: index entry of record ${j}`);
        assert.deepEqual(index.key(j / every), key, `${name}: index key of record ${j}`);
      }
      assert.deepEqual(records.subarray(recPos, recPos + record.length), record, `${name}: record ${j}`);
      assert.deepEqual([meta.next(), meta.next(), meta.next()], [start, record.length, lineOffsets[i]], `${name}: meta of record ${j}`);
      if (!s.intReader) assert.deepEqual(meta.bytes(meta.next()), key, `${name}: stored key of record ${j}`);
      recPos += record.length;
      maxRecord = Math.max(maxRecord, record.length);
    }
    assert.equal(recPos, layout.recordBytes, `${name}: records section`);
    assert.equal(meta.pos(), layout.metaBytes, `${name}: meta section`);
    assert.equal(layout.maxRecordBytes, maxRecord, `${name}: longest record`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('writeRun: records, meta and index decode to the chunk in key order, across block ends, with long records and an unterminated last record', async () => {
  const rand = rng(11);
  const byInt = context(TSV, { fields: [0], numeric: [true] }, 2);
  const byText = context(TSV, { fields: [1], numeric: [false] }, 2);
  // 64-byte records in reverse key order: whole batches fill each 64 KiB block exactly.
  const exact = b(Array.from({ length: 3000 }, (_, i) => `${String(100_000 - i).padStart(6, '0')}\t${'x'.repeat(56)}\n`).join(''));
  const shuffled = (n: number, long: number[]): string[] =>
    Array.from({ length: n }, (_, i) => `${Math.floor(rand() * 1e9)}\t${long.includes(i) ? 'L'.repeat(70_000 + i) : 'v'.repeat(1 + Math.floor(rand() * 90))}\n`);
  const withLong = b(shuffled(5000, [7, 2500, 2501]).join(''));
  const open = b(shuffled(4000, [100]).join('').slice(0, -1));
  const lines = b(Array.from({ length: 2000 }, (_, i) => `${Math.floor(rand() * 1e6)}\t${i % 3 === 0 ? 'two\\\nlines' : 'one'}\n`).join(''));
  for (const every of [1024, 7, 1]) {
    await checkRun(`exact blocks, every ${every}`, exact, byInt, every);
    await checkRun(`records over a block, every ${every}`, withLong, byInt, every);
    await checkRun(`unterminated last record, every ${every}`, open, byInt, every);
    await checkRun(`text keys, unterminated, every ${every}`, open, byText, every);
    await checkRun(`escaped newlines in records, every ${every}`, lines, byInt, every);
    await checkRun(`already in order, every ${every}`, b(Array.from({ length: 3000 }, (_, i) => `${i}\tv${i % 7}\n`).join('')), byInt, every);
  }
});
