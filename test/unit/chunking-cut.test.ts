/**
 * cutChunks properties, for random inputs, every chunk size from 1 to len+1
 * and block sizes 1..7 and large (lookahead carries across blocks):
 * - the chunks tile [headerEnd, len) with no gap or overlap;
 * - every chunk ends at a true record end (from one whole-input scan), and
 *   chunk k ends at the first record end >= its start + chunkSize;
 * - records add up; firstRecord, firstLine and newlines are right;
 * - the same input and options always give the same chunks, whatever the
 *   blocks; kept bytes are exactly the chunk's bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo, type CharsetInfo } from '../../src/chunking/charsets.js';
import type { ScanFormat, ScanTargets } from '../../src/chunking/scanner.js';
import { chunkPlace } from '../../src/chunking/types.js';
import { countLf, cut, rng, scanWhole } from './chunking-support.js';

interface Dialect {
  name: string;
  format: ScanFormat;
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const DIALECTS: Dialect[] = [
  { name: 'tsv', format: { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c } },
  { name: 'csv-unix', format: { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x5c } },
  { name: 'csv', format: { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c } },
  { name: 'csv-rfc', format: { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x22 } },
  { name: 'csv-noesc', format: { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: -1 } },
  { name: 'pipes', format: { fieldTerm: b('|'), lineTerm: b('||\n'), enclosure: -1, escape: 0x5c } },
  { name: 'crlf-tsv', format: { fieldTerm: b('\t'), lineTerm: b('\r\n'), enclosure: -1, escape: 0x5c } },
];

const PIECES = ['a', 'bc', 'x', ' ', '"', '""', '\\', '\\\\', ',', '\t', '|', '||', '\r', '\n', '\r\n', '\n', 'N', '\u4e2d', '\u00e9'];
const RAW = [0x81, 0x5c, 0xe4, 0xc3, 0xa4, 0xff];

function randomInput(rand: () => number, d: Dialect): Buffer {
  const len = Math.floor(rand() * 48);
  const parts: Buffer[] = [];
  let n = 0;
  while (n < len) {
    const k = rand();
    let p: Buffer;
    if (k < 0.15) p = d.format.lineTerm;
    else if (k < 0.3) p = d.format.fieldTerm;
    else if (k < 0.37) p = Buffer.from([RAW[Math.floor(rand() * RAW.length)]!]);
    else if (k < 0.45) p = Buffer.from(`"${'ab\n,"'[Math.floor(rand() * 6)]}"`, 'utf8');
    else p = Buffer.from(PIECES[Math.floor(rand() * PIECES.length)]!, 'utf8');
    parts.push(p);
    n += p.length;
  }
  return Buffer.concat(parts);
}

const CHARSETS = ['latin1', 'utf8mb4', 'gbk', 'sjis'];
const BLOCKS = [1, 2, 3, 4, 5, 6, 7, 1 << 20];

/** Round `round`'s dialect, and a random charset, target fields and header lines. */
function randomSetting(rand: () => number, round: number): { d: Dialect; cs: CharsetInfo; targets: ScanTargets; ignoreLines: number } {
  const d = DIALECTS[round % DIALECTS.length]!;
  const cs = charsetInfo(CHARSETS[Math.floor(rand() * CHARSETS.length)]!)!;
  const ncols = 1 + Math.floor(rand() * 3);
  const targets: ScanTargets = { fields: ncols, textField: Array.from({ length: ncols }, () => rand() < 0.5) };
  const ignoreLines = rand() < 0.25 ? 1 + Math.floor(rand() * 2) : 0;
  return { d, cs, targets, ignoreLines };
}

test('chunks tile the input at true record ends, for every chunk size and block size', async () => {
  const rand = rng(2024);
  let checked = 0;
  for (let round = 0; round < 100; round++) {
    const { d, cs, targets, ignoreLines } = randomSetting(rand, round);
    const data = randomInput(rand, d);
    const truth = scanWhole(data, d.format, cs, targets, ignoreLines);
    const where = `${d.name} ${cs.name} text=[${targets.textField.join(',')}] ignore=${ignoreLines} data=${JSON.stringify(data.toString('latin1'))}`;
    const ends = new Set(truth.ends);
    let reference: string | undefined;
    for (let size = 1; size <= data.length + 1; size++) {
      for (const block of BLOCKS) {
        const r = await cut(data, { format: d.format, charset: cs, targets, ignoreLines, chunkSizeBytes: size, keepBytes: true }, block);
        const ctx = `${where} size=${size} block=${block}`;
        if (truth.openQuote !== undefined) {
          assert.equal(r.error?.code, 'INPUT_MALFORMED', ctx);
          assert.equal(r.error?.context.byteOffset, truth.openQuote, ctx);
          continue;
        }
        assert.equal(r.error, undefined, `${String(r.error)} ${ctx}`);
        const chunks = r.chunks;
        // Tiling.
        let pos = truth.headerEnd;
        let records = 0;
        for (const [k, ch] of chunks.entries()) {
          assert.equal(ch.index, k, ctx);
          assert.equal(ch.startByte, pos, `gap or overlap before chunk ${k}: ${ctx}`);
          assert.ok(ch.endByte > ch.startByte, ctx);
          assert.ok(ends.has(ch.endByte), `chunk ${k} ends at ${ch.endByte}, not a record end ${JSON.stringify(truth.ends)}: ${ctx}`);
          // Deterministic rule: the first record end at or after start + size.
          const expectedEnd = truth.ends.find((e) => e >= ch.startByte + size) ?? data.length;
          assert.equal(ch.endByte, expectedEnd, `chunk ${k}: ${ctx}`);
          const inChunk = truth.ends.filter((e) => e > ch.startByte && e <= ch.endByte).length;
          assert.equal(ch.records, inChunk, `records of chunk ${k}: ${ctx}`);
          assert.equal(ch.firstRecord, records, ctx);
          assert.equal(ch.firstLine, 1 + countLf(data, 0, ch.startByte), ctx);
          assert.equal(ch.newlines, countLf(data, ch.startByte, ch.endByte), ctx);
          assert.ok(Buffer.concat(ch.buffers ?? []).equals(data.subarray(ch.startByte, ch.endByte)), `kept bytes of chunk ${k}: ${ctx}`);
          records += ch.records;
          pos = ch.endByte;
        }
        assert.equal(pos, Math.max(truth.headerEnd, data.length), `chunks stop short: ${ctx}`);
        assert.equal(records, truth.ends.length, ctx);
        assert.deepEqual(r.summary, {
          totalBytes: data.length,
          headerBytes: truth.headerEnd,
          bomBytes: 0,
          records: truth.ends.length,
          newlines: countLf(data, 0, data.length),
          chunks: chunks.length,
        }, ctx);
        // Determinism: the block size never changes the chunks.
        const key = JSON.stringify(chunks.map(({ buffers: _, ...c }) => c));
        if (block === 1) reference = key;
        else assert.equal(key, reference, `blocks change the chunks: ${ctx}`);
        checked++;
      }
    }
  }
  assert.ok(checked > 5_000, `only ${checked} cuts checked`);
});

test('the same input and options give the same chunks, run after run', async () => {
  const rand = rng(99);
  const d = DIALECTS[1]!;
  const cs = charsetInfo('utf8mb4')!;
  const targets: ScanTargets = { fields: 3, textField: [true, false, true] };
  const data = Buffer.concat(Array.from({ length: 300 }, () => randomInput(rand, d)));
  const runs: string[] = [];
  for (let i = 0; i < 3; i++) {
    for (const block of [7, 4096, 1 << 20]) {
      const r = await cut(data, { format: d.format, charset: cs, targets, chunkSizeBytes: 500 }, block);
      runs.push(JSON.stringify({ chunks: r.chunks, error: r.error?.message }));
    }
  }
  assert.equal(new Set(runs).size, 1);
});

test('blocks read into two buffers in turn (as the file scan reads them) cut exactly as fresh blocks', async () => {
  const rand = rng(7);
  let checked = 0;
  for (let round = 0; round < 60; round++) {
    const { d, cs, targets, ignoreLines } = randomSetting(rand, round);
    // Several random inputs joined: records and quoted fields that span blocks.
    const data = Buffer.concat(Array.from({ length: 6 }, () => randomInput(rand, d)));
    // A small record limit now and then, so the too-long-record error is compared too.
    const maxRecordBytes = rand() < 0.2 ? 4 + Math.floor(rand() * 12) : Number.MAX_SAFE_INTEGER;
    for (const size of [1, 5, 17, data.length + 1]) {
      for (const block of [1, 2, 3, 5, 7, 64]) {
        const opts = { format: d.format, charset: cs, targets, ignoreLines, chunkSizeBytes: size, maxRecordBytes };
        const fresh = await cut(data, opts, block);
        const reused = await cut(data, opts, block, true);
        const view = (r: typeof fresh): string => JSON.stringify({ chunks: r.chunks, summary: r.summary, error: r.error?.message });
        assert.equal(view(reused), view(fresh), `${d.name} ${cs.name} size=${size} block=${block} data=${JSON.stringify(data.toString('latin1'))}`);
        checked++;
      }
    }
  }
  assert.equal(checked, 60 * 4 * 6);
});

test('chunkPlace: a file chunk names its first line and byte; a sorted chunk (records from anywhere) names neither', () => {
  const base = { index: 3, endByte: 900, firstRecord: 10, records: 5, newlines: 5 };
  const cases: Array<[{ firstLine: number; startByte: number }, { line?: number; byteOffset?: number }]> = [
    [{ firstLine: 1, startByte: 0 }, { line: 1, byteOffset: 0 }],
    [{ firstLine: 42, startByte: 800 }, { line: 42, byteOffset: 800 }],
    [{ firstLine: 0, startByte: 800 }, {}],
  ];
  for (const [c, want] of cases) assert.deepEqual(chunkPlace({ ...base, ...c }), want);
});
