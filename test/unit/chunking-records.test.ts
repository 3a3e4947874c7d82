/**
 * recordTable's newline path (records found by their terminator's newline,
 * no scanner call per record) against the scanner's general path alone: the
 * same ends, lines and last-record flag on tricky inputs (escape runs before
 * terminators, CRLF, terminators of three bytes, enclosures, an unterminated
 * last record, malformed UTF-8) and on long random ones. Formats the path
 * does not take (a terminator without a newline at its end, multi-byte
 * sets other than UTF-8) must give the same tables too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetInfo, type CharsetInfo } from '../../src/chunking/charsets.js';
import { recordTable } from '../../src/chunking/records.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../../src/chunking/scanner.js';
import { countLf, rng, scanWhole } from './chunking-support.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const TSV: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const FORMATS: Record<string, ScanFormat> = {
  tsv: TSV,
  'tsv-noesc': { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: -1 },
  csv: { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c },
  'csv-unix': { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x5c },
  'csv-rfc': { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x22 },
  pipes: { fieldTerm: b('|'), lineTerm: b('||\n'), enclosure: -1, escape: 0x5c },
  cr: { fieldTerm: b(';'), lineTerm: b('\r'), enclosure: 0x27, escape: 0x5c },
  'lf-in-middle': { fieldTerm: b(','), lineTerm: b('\n;'), enclosure: -1, escape: 0x5c },
};
const UTF8 = charsetInfo('utf8mb4')!;
const TARGETS: ScanTargets = { fields: 2, textField: [false, true] };

/** The general path's table (no fast path), with each record's line counted byte by byte. */
function reference(data: Buffer, fmt: ScanFormat, cs: CharsetInfo, targets: ScanTargets): { ends: number[]; lines: number[]; terminated: boolean } {
  const whole = scanWhole(data, fmt, cs, targets, 0, false);
  const lines = whole.ends.map((_, i) => countLf(data, 0, i === 0 ? 0 : whole.ends[i - 1]!));
  // The last record is terminated when the scanner ends it at the end of the input with one more byte after it.
  const more = scanWhole(Buffer.concat([data, b('x')]), fmt, cs, targets, 0, false);
  return { ends: whole.ends, lines, terminated: whole.ends.length === 0 || more.ends.includes(data.length) };
}

function check(data: Buffer, fmt: ScanFormat, cs: CharsetInfo, targets: ScanTargets, where: string): { ends: number[]; lines: number[] } {
  const want = reference(data, fmt, cs, targets);
  for (const into of [undefined, { ends: new Uint32Array(1), lineOffsets: new Uint32Array(1) }]) {
    const t = recordTable(data, fmt, cs, targets, into);
    assert.deepEqual([...t.ends], want.ends, `${where}: ends`);
    assert.deepEqual([...t.lineOffsets], want.lines, `${where}: lines`);
    assert.equal(t.terminated, want.terminated, `${where}: terminated`);
  }
  return want;
}

test('recordTable on tricky inputs: the general path\'s ends and lines, and the ones worked out by hand', () => {
  // [format, input, ends, line offsets]: the expected tables are written out, not computed.
  const cases: Array<[string, string, number[], number[]]> = [
    ['tsv', 'a\tb\nc\td\n', [4, 8], [0, 1]],
    ['tsv', 'a\\\nb\nc', [5, 6], [0, 2]], // an escaped newline is data; the last record has no terminator
    ['tsv', 'a\\\\\nb\n', [4, 6], [0, 1]], // an even run of escapes: the newline ends the record
    ['tsv', 'a\\\\\\\nb\n', [7], [0]], // an odd run: it does not
    ['tsv', '\\\n\n', [3], [0]], // the escape at the record's first byte
    ['tsv', '\n\n\\', [1, 2, 3], [0, 1, 2]], // empty records; an escape then the end of input
    ['tsv', '1\t"a\nb"\n', [5, 8], [0, 1]], // no enclosure in this format: the quote is data
    ['tsv-noesc', 'a\\\nb\n', [3, 5], [0, 1]], // no escape byte: the backslash is data
    ['csv', 'a,b\r\nc\nd\r\n\r\n', [5, 10, 12], [0, 1, 3]], // a newline without its carriage return is data
    ['csv', 'a\\\r\nb\r\n', [7], [0]], // the escape takes the carriage return
    ['csv', '1,"x\r\ny"\r\n2,z\r\n', [10, 15], [0, 2]], // a quoted terminator is data
    ['csv', '1,"x\r\n', [6], [0]], // an open quote runs to the end
    ['csv-unix', '1,"a\\"b\n",c\n2\n', [12, 14], [0, 2]], // an escaped quote does not close the field
    ['csv-rfc', '1,"a""\n"\n2,"\n', [9, 13], [0, 2]], // doubled quotes; the last record quoted and unterminated
    ['pipes', 'a|b||\nc||x\n||\n', [6, 14], [0, 1]], // a newline the terminator does not end with is data
    ['pipes', 'a\\||\nb||\n', [9], [0]], // the escape takes the terminator's first byte
    ['lf-in-middle', 'a\n;b\nc\n;', [3, 8], [0, 1]], // a terminator with its newline first: the scanner's path
    ['cr', "a\rb\nc\r'x\r'\r", [2, 6, 11], [0, 0, 1]], // a terminator without a newline: the scanner's path
  ];
  for (const [name, input, ends, lines] of cases) {
    const where = `${name} ${JSON.stringify(input)}`;
    const want = check(b(input), FORMATS[name]!, UTF8, TARGETS, where);
    assert.deepEqual(want.ends, ends, `${where}: the general path`);
    assert.deepEqual(want.lines, lines, `${where}: the general path's lines`);
  }
  // Malformed UTF-8 can swallow a terminator (next_line after the target fields): the table follows the exact rules.
  for (const input of [b('1\t2\t\xe4\nx\n'), b('1\t\xf0\x9f\x98\n2\n'), b('1\t2\t\xe4\\\nx\n'), b('\xc3\n\xc3')]) {
    check(input, TSV, UTF8, { fields: 2, textField: [false, true] }, `malformed ${input.toString('hex')}`);
  }
});

test('recordTable == the general path on long random inputs, for every format and some charsets', () => {
  const rand = rng(90210);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  let checked = 0;
  for (let round = 0; round < 64; round++) {
    const name = pick(Object.keys(FORMATS));
    const fmt = FORMATS[name]!;
    const cs = charsetInfo(pick(['utf8mb4', 'latin1', 'utf8mb3', 'gbk']))!;
    const ncols = 1 + Math.floor(rand() * 3);
    const targets: ScanTargets = { fields: ncols, textField: Array.from({ length: ncols }, () => rand() < 0.6) };
    const enc = Buffer.from([fmt.enclosure === -1 ? 0x22 : fmt.enclosure]);
    const esc = Buffer.from([fmt.escape === -1 ? 0x5c : fmt.escape]);
    const pieces = [b('a'), b('12'), Buffer.from('\u00e9\u4e2d', 'utf8'), fmt.fieldTerm, fmt.lineTerm, fmt.lineTerm, b('\n'), b('\r'), esc, Buffer.concat([esc, esc]), enc, Buffer.concat([enc, enc])];
    const parts: Buffer[] = [];
    const quoted = rand() < 0.5; // half the inputs with no enclosure byte at all (the newline path's common case)
    const malformed = rand() < 0.3;
    for (let n = 0; n < 3000; ) {
      let p = pick(pieces);
      if (!quoted && p.includes(enc[0]!)) p = b('q');
      if (malformed && rand() < 0.02) p = Buffer.from([pick([0xe4, 0xc3, 0xf0, 0x80, 0xff])]);
      parts.push(p);
      n += p.length;
    }
    if (rand() < 0.5) parts.push(fmt.lineTerm); // else the last record may run to the end
    const where = `${name} ${cs.name} text=[${targets.textField.join(',')}] round ${round}`;
    const want = check(Buffer.concat(parts), fmt, cs, targets, where);
    assert.ok(want.ends.length > 20, where);
    checked++;
  }
  assert.equal(checked, 64);
});

test('the newline path is the one a TSV or CSV ending in a newline takes, not one with a terminator elsewhere', () => {
  const fast = (fmt: ScanFormat, cs = UTF8): boolean => new RecordScanner(fmt, cs, TARGETS).endsAtNewline;
  assert.equal(fast(FORMATS.tsv!), true);
  assert.equal(fast(FORMATS.csv!), true);
  assert.equal(fast(FORMATS.pipes!), true);
  assert.equal(fast(FORMATS['lf-in-middle']!), false);
  assert.equal(fast(FORMATS.cr!), false);
  assert.equal(fast(FORMATS.tsv!, charsetInfo('gbk')), false);
  assert.equal(fast({ ...TSV, escape: 0x0a }), false); // the escape inside the terminator
});
