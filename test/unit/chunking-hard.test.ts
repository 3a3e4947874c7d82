/**
 * The named hard cases for the boundary finder and the cutter. Expected
 * record ends are MariaDB 10.11's (checked with the emulator
 * tools/chunking_emu.py, and for the numbered ones on a real server).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo, type CharsetInfo } from '../../src/chunking/charsets.js';
import { locateRecords } from '../../src/chunking/records.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../../src/chunking/scanner.js';
import { countLf, cut, scanWhole } from './chunking-support.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const CSV_UNIX: ScanFormat = { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x5c };
const CSV: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c };
const latin1 = charsetInfo('latin1')!;
const utf8 = charsetInfo('utf8mb4')!;
const gbk = charsetInfo('gbk')!;
const text = (n: number): ScanTargets => ({ fields: n, textField: Array.from({ length: n }, () => true) });
const binary = (n: number): ScanTargets => ({ fields: n, textField: Array.from({ length: n }, () => false) });

interface Expect {
  data: Buffer;
  format: ScanFormat;
  charset: CharsetInfo;
  targets: ScanTargets;
  ignore?: number;
  headerEnd?: number;
  ends: number[];
}

/** The whole-input scan and cutChunks (every chunk size, odd and big blocks) must all give `ends`. */
async function expectEnds(e: Expect, what: string): Promise<void> {
  const ignore = e.ignore ?? 0;
  const whole = scanWhole(e.data, e.format, e.charset, e.targets, ignore);
  assert.deepEqual(whole.ends, e.ends, `${what}: whole scan`);
  assert.equal(whole.openQuote, undefined, what);
  if (e.headerEnd !== undefined) assert.equal(whole.headerEnd, e.headerEnd, `${what}: header end`);
  const set = new Set(e.ends);
  for (const block of [1, 2, 3, 5, 7, 64, 1 << 20]) {
    for (let size = 1; size <= e.data.length + 1; size++) {
      const r = await cut(e.data, { format: e.format, charset: e.charset, targets: e.targets, ignoreLines: ignore, chunkSizeBytes: size }, block);
      assert.equal(r.error, undefined, `${what}: ${String(r.error)}`);
      for (const ch of r.chunks) assert.ok(set.has(ch.endByte), `${what}: size ${size} block ${block}: chunk ends at ${ch.endByte}, not in ${JSON.stringify(e.ends)}`);
      assert.equal(r.summary?.records, e.ends.length, `${what}: size ${size} block ${block}`);
      if (size === 1) assert.deepEqual(r.chunks.map((c) => c.endByte), e.ends, `${what}: block ${block}`);
    }
  }
}

test('CSV with embedded newlines at and around every boundary', async () => {
  // "a<LF>b",c | "<LF>",d | ,"<LF><LF>" | "x""<LF>y",z | <empty line> | "e",<LF>
  const data = b('"a\nb",c\n"\n",d\n,"\n\n"\n"x""\ny",z\n\n"e",\n');
  await expectEnds({ data, format: CSV_UNIX, charset: latin1, targets: binary(2), ends: [8, 14, 20, 30, 31, 36] }, 'csv-unix');
  // The same records repeated: chunk sizes hit every byte of every record.
  const many = Buffer.concat(Array.from({ length: 5 }, () => data));
  const ends = Array.from({ length: 5 }, (_, k) => [8, 14, 20, 30, 31, 36].map((e) => e + k * data.length)).flat();
  await expectEnds({ data: many, format: CSV_UNIX, charset: utf8, targets: text(2), ends }, 'csv-unix x5');
});

test('CRLF: quoted CR LF is data, a lone CR or LF does not end a line, escaped CR does not either', async () => {
  const data = b('a,"b\r\nc"\r\nd\ne,f\r\n"g\r",h\r\ni\\\r\nj\r\n');
  // records: a,"b CRLF c" | d LF e,f | "g CR",h | i \CR LF j
  await expectEnds({ data, format: CSV, charset: utf8, targets: text(2), ends: [10, 17, 25, 32] }, 'csv crlf');
  // A CRLF file read with LINES TERMINATED BY '\n': the CR stays in the last field, records still end at LF.
  await expectEnds({ data: b('a,b\r\nc,d\r\n'), format: CSV_UNIX, charset: latin1, targets: binary(2), ends: [5, 10] }, 'crlf file, lf terminator');
});

test('a UTF-8 byte-order mark is stripped: the first chunk starts after it, in any block size', async () => {
  const data = Buffer.concat([hex('efbbbf'), Buffer.from('id\tname\n1\t\u00e9\n2\tx\n', 'utf8')]);
  for (const block of [1, 2, 3, 4, 1 << 20]) {
    for (const ignoreLines of [0, 1]) {
      const r = await cut(data, { format: TSV, charset: utf8, targets: text(2), ignoreLines, stripBom: true, chunkSizeBytes: 1 }, block);
      const first = ignoreLines ? 11 : 3;
      assert.equal(r.chunks[0]?.startByte, first, `block ${block} ignore ${ignoreLines}`);
      assert.equal(r.chunks[0]?.firstLine, 1 + ignoreLines);
      assert.deepEqual(r.chunks.map((c) => c.endByte), ignoreLines ? [16, 20] : [11, 16, 20], `block ${block}`);
      assert.equal(r.summary?.bomBytes, 3);
      assert.equal(r.summary?.headerBytes, first);
      assert.equal(r.summary?.records, ignoreLines ? 2 : 3);
    }
    // Not stripped: the mark is part of the first record.
    const kept = await cut(data, { format: TSV, charset: utf8, targets: text(2), chunkSizeBytes: 1 }, block);
    assert.equal(kept.chunks[0]?.startByte, 0);
    assert.equal(kept.summary?.bomBytes, 0);
  }
  // A file that is only (part of) a mark.
  for (const d of [hex('efbbbf'), hex('efbb')]) {
    const r = await cut(d, { format: TSV, charset: utf8, targets: text(2), stripBom: true }, 1);
    assert.equal(r.chunks.length, d.length === 3 ? 0 : 1);
  }
});

test('multi-byte UTF-8 straddling block boundaries, valid and invalid', async () => {
  const line = '\u4e2d\u6587\t\u{1F600}x\t\u00e9\n';
  const data = b(''.concat(Buffer.from(line.repeat(3), 'utf8').toString('latin1')));
  const n = Buffer.byteLength(line, 'utf8');
  await expectEnds({ data, format: TSV, charset: utf8, targets: text(3), ends: [n, 2 * n, 3 * n] }, 'valid utf8 tsv');
  const csv = Buffer.from('"\u4e2d\n\u6587",\u00e9\n\u{1F600},"\u00e9"\n', 'utf8');
  await expectEnds({ data: csv, format: CSV_UNIX, charset: utf8, targets: text(2), ends: [13, csv.length] }, 'valid utf8 csv');
  // A stray E4 in a text field swallows the next two bytes, the LF among them (spec case 63).
  await expectEnds({ data: hex('61 e4 0a 62 0a 63 0a'), format: TSV, charset: utf8, targets: text(2), ends: [5, 7] }, 'utf8 e4 lf');
  // Into a binary column, no swallowing (case 69).
  await expectEnds({ data: hex('61 e4 0a 62 0a 63 0a'), format: TSV, charset: utf8, targets: binary(2), ends: [3, 5, 7] }, 'utf8 e4 lf bin');
  // A C3 before LF gives the LF back (case 65).
  await expectEnds({ data: hex('61 c3 0a 62 0a'), format: TSV, charset: utf8, targets: text(2), ends: [3, 5] }, 'utf8 c3 lf');
});

test('a last line without terminator is a record; a trailing terminator is not an extra one', async () => {
  await expectEnds({ data: b('a\tb\nc\td'), format: TSV, charset: latin1, targets: binary(2), ends: [4, 7] }, 'tsv');
  await expectEnds({ data: b('a,"b"\r\nc,"d\r\n"'), format: CSV, charset: latin1, targets: binary(2), ends: [7, 14] }, 'csv');
  await expectEnds({ data: b('a\tb\n\n'), format: TSV, charset: latin1, targets: binary(2), ends: [4, 5] }, 'blank last line');
});

test('--ignore-lines skips physical lines like the server: quotes do not count, escapes do', async () => {
  // Case 42: the quoted newline ends the header line; the rest of the quoted field is the first record.
  await expectEnds(
    { data: b('"h\n1",h2\na,b\n'), format: CSV_UNIX, charset: latin1, targets: binary(2), ignore: 1, headerEnd: 3, ends: [9, 13] },
    'quoted header',
  );
  // Case 43: an escaped newline does not end the header line.
  await expectEnds({ data: b('h\\\nh\na,b\n'), format: CSV_UNIX, charset: latin1, targets: binary(2), ignore: 1, headerEnd: 5, ends: [9] }, 'escaped header');
  // Case 44.
  await expectEnds(
    { data: b('"h\n1",h2\n"x\ny",z\na,b\n'), format: CSV_UNIX, charset: latin1, targets: binary(2), ignore: 2, headerEnd: 9, ends: [17, 21] },
    'two header lines',
  );
  // Case 71: a stray C3 before the header's LF swallows it (next_line reads the file charset).
  await expectEnds({ data: b('h\xc3\nrow1\nrow2\n'), format: TSV, charset: utf8, targets: text(2), ignore: 1, headerEnd: 8, ends: [13] }, 'utf8 header');
  // Line numbers of the chunks count the header's lines.
  const r = await cut(b('"h\n1",h2\na,b\n'), { format: CSV_UNIX, charset: latin1, targets: binary(2), ignoreLines: 1, chunkSizeBytes: 1 }, 4);
  assert.deepEqual(r.chunks.map((c) => [c.startByte, c.firstLine, c.newlines]), [[3, 2, 1], [9, 3, 1]]);
  // A header longer than the input: no chunks.
  const all = await cut(b('h1\nh2'), { format: TSV, charset: latin1, targets: binary(2), ignoreLines: 3 }, 2);
  assert.deepEqual(all.chunks, []);
  assert.equal(all.summary?.headerBytes, 5);
});

test('an escape at EOF keeps its byte and ends the record', async () => {
  await expectEnds({ data: b('a,b\\'), format: CSV_UNIX, charset: latin1, targets: binary(2), ends: [4] }, 'csv');
  await expectEnds({ data: b('a\tb\n\\'), format: TSV, charset: utf8, targets: text(2), ends: [4, 5] }, 'tsv');
});

test('escape runs before a terminator: odd escapes it, even does not (fast path parity)', async () => {
  for (let run = 0; run <= 6; run++) {
    const data = b(`a${'\\'.repeat(run)}\nb\n`);
    const escaped = run % 2 === 1;
    const ends = escaped ? [data.length] : [run + 2, data.length];
    await expectEnds({ data, format: TSV, charset: latin1, targets: binary(2), ends }, `run ${run}`);
    await expectEnds({ data, format: TSV, charset: utf8, targets: text(2), ends }, `run ${run} utf8`);
    const crlf = b(`a${'\\'.repeat(run)}\r\nb\r\n`);
    const fmt = { ...TSV, lineTerm: b('\r\n') };
    await expectEnds({ data: crlf, format: fmt, charset: latin1, targets: binary(1), ends: escaped ? [crlf.length] : [run + 3, crlf.length] }, `crlf run ${run}`);
  }
});

test('an unterminated quote at EOF is INPUT_MALFORMED at the quote', async () => {
  const data = b('a,b\n"c,d\ne,f\n');
  for (const block of [1, 3, 1 << 20]) {
    const r = await cut(data, { format: CSV_UNIX, charset: latin1, targets: binary(2), chunkSizeBytes: 1 }, block);
    assert.equal(r.error?.code, 'INPUT_MALFORMED');
    assert.equal(r.error?.context.byteOffset, 4);
    assert.match(r.error?.message ?? '', /unterminated quoted field.*byte 4/);
    assert.deepEqual(r.chunks.map((c) => c.endByte), [4]);
  }
  // "ab" followed by a space is not a closing quote either (case 10): runs to EOF.
  const r = await cut(b('x,y\n"ab" ,x\ny,z\n'), { format: CSV_UNIX, charset: latin1, targets: binary(2) }, 5);
  assert.equal(r.error?.context.byteOffset, 4);
  // Closing quote right at EOF is fine (case 12).
  await expectEnds({ data: b('x,"abc"'), format: CSV_UNIX, charset: latin1, targets: binary(2), ends: [7] }, 'quote at eof');
});

test('an oversize record is INPUT_MALFORMED, at the record (or at its runaway quote)', async () => {
  const long = b(`a\tb\n${'x'.repeat(40)}\nc\n`);
  for (const block of [1, 7, 16, 1 << 20]) {
    const r = await cut(long, { format: TSV, charset: utf8, targets: text(2), chunkSizeBytes: 8, maxRecordBytes: 20 }, block);
    assert.equal(r.error?.code, 'INPUT_MALFORMED', `block ${block}`);
    assert.equal(r.error?.context.byteOffset, 4, `block ${block}`);
  }
  const quoted = b(`a,b\nc,"${'y\n'.repeat(30)}`);
  for (const block of [1, 7, 16, 1 << 20]) {
    const r = await cut(quoted, { format: CSV_UNIX, charset: utf8, targets: text(2), chunkSizeBytes: 8, maxRecordBytes: 20 }, block);
    assert.equal(r.error?.code, 'INPUT_MALFORMED', `block ${block}`);
    assert.equal(r.error?.context.byteOffset, 6, `block ${block}`);
    assert.match(r.error?.message ?? '', /quote at byte 6/);
  }
  // Exactly at the limit is fine.
  const ok = await cut(b(`${'x'.repeat(19)}\n`), { format: TSV, charset: utf8, targets: text(2), maxRecordBytes: 20 }, 3);
  assert.equal(ok.error, undefined);
});

test('gbk: a 0x5C trail byte before a tab or newline is not an escape in a text field', async () => {
  // Cases 45/46: 81 5C is one character in a text field; in a binary field 5C escapes the LF.
  const data = hex('81 5c 0a 62 0a a4 5c 09 63 0a');
  await expectEnds({ data, format: TSV, charset: gbk, targets: text(2), ends: [3, 5, 10] }, 'gbk text');
  await expectEnds({ data, format: TSV, charset: gbk, targets: binary(2), ends: [5, 10] }, 'gbk binary');
  // Mixed: the first field is text, the second binary.
  const mixed = hex('61 09 81 5c 0a 62 0a');
  await expectEnds({ data: mixed, format: TSV, charset: gbk, targets: { fields: 2, textField: [true, false] }, ends: [7] }, 'gbk mixed');
  await expectEnds({ data: mixed, format: TSV, charset: gbk, targets: { fields: 2, textField: [false, true] }, ends: [5, 7] }, 'gbk mixed 2');
  // Many gbk records whose characters end in 5C, cut everywhere.
  const row = hex('d6 d0 b9 fa 5c 09 81 5c 0a');
  const rows = Buffer.concat(Array.from({ length: 8 }, () => row));
  await expectEnds({ data: rows, format: TSV, charset: gbk, targets: text(2), ends: Array.from({ length: 8 }, (_, k) => (k + 1) * row.length) }, 'gbk rows');
  // Case 55: an escape takes only the lead byte; the trail 5C then escapes the LF.
  await expectEnds({ data: hex('5c 81 5c 0a 62 0a'), format: TSV, charset: gbk, targets: text(2), ends: [6] }, 'gbk escape lead');
});

test('invalid UTF-8: the fast path falls back to the exact rules around it, then resumes', async () => {
  const good = (k: number): string => `row${k}\t\u4e2d\u6587\\\\x\\\t\n`;
  const parts: Buffer[] = [];
  const ends: number[] = [];
  let pos = 0;
  for (let k = 0; k < 3000; k++) {
    let p: Buffer;
    if (k === 1000) p = hex('62 61 64 e4 0a'); // swallows its LF: merges with the next line
    else if (k === 2000) p = hex('62 61 64 c3 0a'); // gives the LF back
    else p = Buffer.from(good(k), 'utf8');
    parts.push(p);
    pos += p.length;
    if (k !== 1000) ends.push(pos);
  }
  const data = Buffer.concat(parts);
  // The oracle: a scanner without a fast path (an enclosure that never occurs forces the general path).
  const general = scanWhole(data, { ...TSV, enclosure: 0x01 }, utf8, text(2), 0);
  assert.deepEqual(general.ends, ends);
  const s = new RecordScanner(TSV, utf8, text(2));
  assert.ok(s.usingFastPath);
  const whole = scanWhole(data, TSV, utf8, text(2), 0);
  assert.deepEqual(whole.ends, ends);
  // Through the cutter with big and odd blocks.
  for (const block of [1 << 20, 4096, 777]) {
    const r = await cut(data, { format: TSV, charset: utf8, targets: text(2), chunkSizeBytes: 1000 }, block);
    const set = new Set(ends);
    assert.ok(r.chunks.every((c) => set.has(c.endByte)), `block ${block}`);
    assert.equal(r.summary?.records, ends.length);
  }
  // One scan over the whole buffer: two fallbacks, and the fast path is back at the end.
  const one = new RecordScanner(TSV, utf8, text(2));
  const r = one.scan(data, 0, 0, true);
  one.finish(data.length);
  assert.equal(r.pos, data.length);
  assert.equal(one.records, ends.length);
  assert.equal(one.fastPathFallbacks, 2);
  assert.ok(one.usingFastPath);
});

test('a field terminator that can hide a line terminator disables the fast path (case 19)', async () => {
  const fmt: ScanFormat = { fieldTerm: b(',\n'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
  await expectEnds({ data: b('a,b,\nc\n'), format: fmt, charset: latin1, targets: binary(2), ends: [7] }, 'fterm contains lterm');
  const pipes: ScanFormat = { fieldTerm: b('||'), lineTerm: b('||\n'), enclosure: -1, escape: 0x5c };
  // At the first '|': '|||' is not LT, FT '||' matches and hides the LT starting at the 2nd '|'.
  await expectEnds({ data: b('a|||\nb||\n'), format: pipes, charset: latin1, targets: binary(1), ends: [9] }, 'fterm prefix of lterm');
});

test('locateRecords gives offsets and lines of each record', () => {
  const data = b('"a\nb",c\nd,e\n"x"\n');
  const recs = locateRecords(data.subarray(3), 3, 2, CSV_UNIX, latin1, binary(2));
  // Starting mid-file at byte 3 ("\nb",c...): the scanner only sees what it is given.
  assert.ok(recs.length > 0);
  const whole = locateRecords(data, 100, 1, CSV_UNIX, latin1, binary(2));
  assert.deepEqual(whole, [
    { offset: 100, length: 8, line: 1 },
    { offset: 108, length: 4, line: 3 },
    { offset: 112, length: 4, line: 4 },
  ]);
  assert.equal(countLf(data, 0, data.length), 4);
  // The fast path too, with many records.
  const tsv = Buffer.from('a\tb\n'.repeat(1000));
  const t = locateRecords(tsv, 0, 1, TSV, utf8, text(2));
  assert.equal(t.length, 1000);
  assert.deepEqual(t[999], { offset: 3996, length: 4, line: 1000 });
});
