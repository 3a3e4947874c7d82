/**
 * The fast path (records found by indexOf, quoted records and malformed
 * UTF-8 handed to the exact rules) against the general path alone, on long
 * random inputs that the small fuzz corpus cannot produce: many records per
 * call, block boundaries, enclosure/escape cursors carried over records,
 * UTF-8 validation pieces. The general path itself is checked against the
 * server's reader by chunking-fuzz.test.ts and chunking-cases.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../../src/chunking/scanner.js';
import { countLf, cut, rng, scanWhole } from './chunking-support.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const FORMATS: Array<[string, ScanFormat]> = [
  ['tsv', { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c }],
  ['csv', { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c }],
  ['csv-unix', { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x5c }],
  ['csv-rfc', { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x22 }],
  ['csv-noesc', { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: -1 }],
  ['pipes', { fieldTerm: b('|'), lineTerm: b('||\n'), enclosure: -1, escape: 0x5c }],
  ['crlf-tsv', { fieldTerm: b('\t'), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c }],
  ['cr', { fieldTerm: b(';'), lineTerm: b('\r'), enclosure: 0x27, escape: 0x5c }],
];

/** Mostly well-formed rows, with rarer traps: quotes that do not close, escapes before terminators, bad UTF-8, extra fields. */
function longInput(rand: () => number, fmt: ScanFormat, bytes: number, wellFormed = false): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  const q = fmt.enclosure === -1 ? b('"') : Buffer.from([fmt.enclosure]);
  const esc = fmt.escape === -1 ? b('\\') : Buffer.from([fmt.escape]);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const words = ['a', 'gold', '12.5', '\u4e2d\u6587', '\u00e9t\u00e9', '\u{1F600}', 'x y', ''];
  while (n < bytes) {
    const fields: Buffer[] = [];
    const nf = 1 + Math.floor(rand() * 5);
    for (let f = 0; f < nf; f++) {
      const k = rand();
      let v: Buffer;
      if (k < 0.55) v = Buffer.from(pick(words), 'utf8');
      else if (k < 0.7) v = Buffer.concat([q, Buffer.from(pick(words), 'utf8'), pick([fmt.fieldTerm, fmt.lineTerm, b('\n'), Buffer.concat([q, q])]), q]);
      else if (k < 0.78) v = Buffer.concat([Buffer.from(pick(words), 'utf8'), esc, pick([fmt.lineTerm, fmt.fieldTerm, esc, b('n')])]);
      else if (k < 0.82) v = Buffer.concat([esc, esc, esc]);
      else if (k < 0.86) v = wellFormed ? b('w') : Buffer.from([pick([0xe4, 0xc3, 0xf0, 0x80, 0xff, 0xed])]);
      else if (k < 0.88) v = wellFormed ? b('o') : Buffer.concat([q, b('open')]); // may run a long way
      else if (k < 0.9) v = Buffer.concat([b('mid'), q, b('quote')]);
      else if (k < 0.92) v = b('\r');
      else v = Buffer.from(String(Math.floor(rand() * 1e6)));
      fields.push(v);
    }
    const row = Buffer.concat([...fields.flatMap((f, i) => (i ? [fmt.fieldTerm, f] : [f])), fmt.lineTerm]);
    parts.push(row);
    n += row.length;
  }
  return Buffer.concat(parts);
}

test('fast path == general path on long inputs: record ends, open quote, newlines', async () => {
  const rand = rng(31337);
  let inputs = 0;
  for (let round = 0; round < 48; round++) {
    const [name, fmt] = FORMATS[round % FORMATS.length]!;
    const cs = charsetInfo(['utf8mb4', 'latin1', 'utf8mb3'][Math.floor(rand() * 3)]!)!;
    const ncols = 1 + Math.floor(rand() * 4);
    const targets: ScanTargets = { fields: ncols, textField: Array.from({ length: ncols }, () => rand() < 0.7) };
    const data = longInput(rand, fmt, 2000 + Math.floor(rand() * 30000));
    const where = `${name} ${cs.name} text=[${targets.textField.join(',')}] round ${round}`;
    for (const ignore of [0, 1]) {
      const general = scanWhole(data, fmt, cs, targets, ignore, false);
      const fast = scanWhole(data, fmt, cs, targets, ignore, true);
      assert.deepEqual(fast.ends, general.ends, where);
      assert.equal(fast.openQuote, general.openQuote, where);
      assert.equal(fast.newlines, general.newlines, where);
      assert.equal(general.newlines, countLf(data, general.headerEnd, data.length), where);
      // One call over everything (many records per call).
      const one = new RecordScanner(fmt, cs, targets);
      const r = one.scan(data, general.headerEnd, 0, true);
      const open = one.finish(data.length);
      assert.equal(r.pos, data.length, where);
      assert.equal(one.records, general.ends.length, where);
      assert.equal(open?.quoteOffset, general.openQuote, where);
      assert.equal(one.newlines, general.newlines, where);
      // The cutter over odd blocks, some chunk sizes.
      for (const [size, block] of [[1, 4099], [500, 1000], [4096, 333], [1 << 20, 65536]] as const) {
        const c = await cut(data, { format: fmt, charset: cs, targets, ignoreLines: ignore, chunkSizeBytes: size }, block);
        const ctx = `${where} ignore ${ignore} size ${size} block ${block}`;
        if (general.openQuote !== undefined) {
          assert.equal(c.error?.context.byteOffset, general.openQuote, ctx);
          continue;
        }
        assert.equal(c.error, undefined, `${String(c.error)} ${ctx}`);
        const ends = new Set(general.ends);
        let pos = general.headerEnd;
        let lines = 0;
        for (const ch of c.chunks) {
          assert.equal(ch.startByte, pos, ctx);
          assert.ok(ends.has(ch.endByte), ctx);
          assert.equal(ch.newlines, countLf(data, ch.startByte, ch.endByte), ctx);
          lines += ch.records;
          pos = ch.endByte;
        }
        assert.equal(lines, general.ends.length, ctx);
        if (size === 1) assert.deepEqual(c.chunks.map((ch) => ch.endByte), general.ends, ctx);
      }
      inputs++;
    }
  }
  assert.equal(inputs, 96);
});

test('the fast path really is taken, and hands over only what it must', () => {
  const tsv = Buffer.from('1\ta\\\tb\tc\n'.repeat(10000), 'utf8');
  const s = new RecordScanner(FORMATS[0]![1], charsetInfo('utf8mb4')!, { fields: 3, textField: [false, true, true] });
  s.scan(tsv, 0, 0, true);
  s.finish(tsv.length);
  assert.equal(s.records, 10000);
  assert.equal(s.fastPathFallbacks, 0);
  assert.ok(s.usingFastPath);
  // Quoted records go through the exact rules one at a time; the others do not.
  const csv = Buffer.from('1,"a,b",c\r\n2,x,y\r\n'.repeat(5000), 'utf8');
  const c = new RecordScanner(FORMATS[1]![1], charsetInfo('utf8mb4')!, { fields: 3, textField: [false, true, true] });
  c.scan(csv, 0, 0, true);
  c.finish(csv.length);
  assert.equal(c.records, 10000);
  assert.equal(c.newlines, 10000);
  assert.ok(c.usingFastPath);
  // Formats whose field terminator could hide a line terminator never use it.
  const hide = new RecordScanner({ fieldTerm: b(',\n'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c }, charsetInfo('latin1')!, undefined);
  assert.equal(hide.usingFastPath, false);
  // Nor do multi-byte sets other than UTF-8 (trail bytes can look like separators).
  assert.equal(new RecordScanner(FORMATS[0]![1], charsetInfo('gbk')!, undefined).usingFastPath, false);
});

test('fast path == general path over many small blocks (hand-overs at block edges)', async () => {
  const rand = rng(4242);
  const pieces = ['a', 'bc', ' ', '"', '""', '\\', '\\\\', ',', '\t', '|', '||', '\r', '\n', '\r\n', 'N', '\u4e2d', '\u00e9'];
  const raw = [0x81, 0x5c, 0xe4, 0xc3, 0xa4, 0xff];
  let checked = 0;
  for (let round = 0; round < 120; round++) {
    const [name, fmt] = FORMATS[round % FORMATS.length]!;
    const cs = charsetInfo(['utf8mb4', 'latin1'][round % 2]!)!;
    const targets: ScanTargets = { fields: 3, textField: [true, false, true] };
    const parts: Buffer[] = [];
    for (let n = 0; n < 400; ) {
      const k = rand();
      const p =
        k < 0.15 ? fmt.lineTerm
        : k < 0.3 ? fmt.fieldTerm
        : k < 0.37 ? Buffer.from([raw[Math.floor(rand() * raw.length)]!])
        : k < 0.45 ? Buffer.from(`"${'ab\n,"'[Math.floor(rand() * 6)]}"`, 'utf8')
        : Buffer.from(pieces[Math.floor(rand() * pieces.length)]!, 'utf8');
      parts.push(p);
      n += p.length;
    }
    const data = Buffer.concat(parts);
    const truth = scanWhole(data, fmt, cs, targets, 0, false);
    for (const block of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 16, 64, 1000]) {
      const r = await cut(data, { format: fmt, charset: cs, targets, chunkSizeBytes: 1 }, block);
      const ctx = `${name} ${cs.name} round ${round} block ${block}: ${JSON.stringify(data.toString('latin1'))}`;
      const ends = r.chunks.map((c) => c.endByte);
      if (truth.openQuote !== undefined) assert.equal(r.error?.context.byteOffset, truth.openQuote, ctx);
      else assert.equal(r.error, undefined, ctx);
      assert.deepEqual(ends, truth.ends.slice(0, truth.openQuote !== undefined ? ends.length : undefined), ctx);
      assert.ok(r.chunks.every((c) => c.records === 1 && c.newlines === countLf(data, c.startByte, c.endByte)), ctx);
      checked++;
    }
  }
  assert.equal(checked, 1800);
});

test('blocks bigger than the carried head: the rest of a block is scanned in place, bytes kept exactly', async () => {
  const rand = rng(777);
  for (const [name, fmt] of [FORMATS[0]!, FORMATS[1]!, FORMATS[3]!]) {
    const cs = charsetInfo('utf8mb4')!;
    const targets: ScanTargets = { fields: 3, textField: [true, false, true] };
    const data = longInput(rand, fmt, 700_000, true);
    const truth = scanWhole(data, fmt, cs, targets, 1, false);
    assert.equal(truth.openQuote, undefined, name);
    assert.ok(truth.ends.length > 10_000, name);
    for (const block of [70_000, 100_003, 1 << 20]) {
      const r = await cut(data, { format: fmt, charset: cs, targets, ignoreLines: 1, chunkSizeBytes: 30_000, keepBytes: true }, block);
      const ctx = `${name} block ${block}`;
      assert.equal(r.error, undefined, `${String(r.error)} ${ctx}`);
      const ends = new Set(truth.ends);
      let pos = truth.headerEnd;
      let records = 0;
      for (const ch of r.chunks) {
        assert.equal(ch.startByte, pos, ctx);
        assert.ok(ends.has(ch.endByte), ctx);
        assert.equal(ch.endByte, truth.ends.find((e) => e >= ch.startByte + 30_000) ?? data.length, ctx);
        assert.ok(Buffer.concat(ch.buffers ?? []).equals(data.subarray(ch.startByte, ch.endByte)), `kept bytes: ${ctx}`);
        assert.equal(ch.newlines, countLf(data, ch.startByte, ch.endByte), ctx);
        records += ch.records;
        pos = ch.endByte;
      }
      assert.equal(pos, data.length, ctx);
      assert.equal(records, truth.ends.length, ctx);
    }
  }
});
