/**
 * The boundary finder against the real server. For nasty generated files
 * (CSV with quoted CR LF/LF and doubled quotes, gbk whose 0x5C/0x7C trail
 * bytes precede tabs and newlines, invalid UTF-8 into VARCHAR, rows with more
 * fields than targets whose extra fields hold quoted newlines, headers with
 * a quoted newline), load the whole file with server-side LOAD DATA INFILE,
 * then cut it with cutChunks at small chunk sizes (7, 64, 1000 bytes: many
 * boundaries), write every chunk to its own file and LOAD DATA INFILE each
 * into a twin table (no IGNORE LINES: the header is already excluded).
 * The two tables must agree: COUNT(*), CHECKSUM TABLE, the rows in file
 * order and the number of warnings; and COUNT(*) must equal the records
 * cutChunks counted.
 */
import { prng as rng } from '../../fixtures/prng.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { cutChunks } from '../../src/chunking/cut.js';
import type { ScanFormat } from '../../src/chunking/scanner.js';
import type { CutChunk, InputSummary } from '../../src/chunking/types.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';


interface Column {
  name: string;
  /** Column type; CHAR/VARCHAR/TEXT are text targets, the rest binary. */
  type: string;
  text: boolean;
}

interface NastyFile {
  name: string;
  data: Buffer;
  charset: string;
  format: ScanFormat;
  /** The LOAD DATA clauses after INTO TABLE, before IGNORE and the column list. */
  clauses: string;
  columns: Column[];
  ignoreLines: number;
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const u = (s: string): Buffer => Buffer.from(s, 'utf8');
const sqlBytes = (x: Buffer): string => `X'${x.toString('hex')}'`;

function clauses(charset: string, f: ScanFormat): string {
  const enc = f.enclosure === -1 ? b('') : Buffer.from([f.enclosure]);
  const esc = f.escape === -1 ? b('') : Buffer.from([f.escape]);
  return (
    `CHARACTER SET ${charset} FIELDS TERMINATED BY ${sqlBytes(f.fieldTerm)} ENCLOSED BY ${enc.length ? sqlBytes(enc) : "''"} ` +
    `ESCAPED BY ${esc.length ? sqlBytes(esc) : "''"} LINES TERMINATED BY ${sqlBytes(f.lineTerm)}`
  );
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** flatload's csv dialect: quoted fields with CR LF, LF, commas, doubled quotes, escapes; empty lines; a 2-line header. */
function csvFile(): NastyFile {
  const r = rng(11);
  const format: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c };
  const words = ['plain', '\u00e9t\u00e9', '\u4e2d\u6587', 'NULL', '', '12'];
  const field = (): Buffer => {
    const k = r();
    if (k < 0.35) return u(pick(r, words));
    if (k < 0.5) return u(`"${pick(r, words)}\r\n${pick(r, words)}"`);
    if (k < 0.6) return u(`"a,\n""b"""`);
    if (k < 0.65) return u(`"x""\r\n""y"`);
    if (k < 0.7) return u(`"esc \\" quote \\\\ and \\\r\n"`);
    if (k < 0.75) return u('\\N');
    if (k < 0.8) return u(`un"quoted"mid`);
    if (k < 0.85) return u(`"ab"cd",`); // a quote followed by data: the field runs on to the next `",`
    if (k < 0.9) return u(`"\r"`);
    return u(String(Math.floor(r() * 1e6)));
  };
  const parts: Buffer[] = [u('"id\r\nwith a newline",name,data\r\n')];
  for (let i = 0; i < 500; i++) {
    if (r() < 0.03) {
      parts.push(b('\r\n')); // an empty line is a record too
      continue;
    }
    const n = 1 + Math.floor(r() * 4);
    parts.push(Buffer.concat(Array.from({ length: n }, (_, k) => (k ? Buffer.concat([b(','), field()]) : field()))), b('\r\n'));
  }
  parts.push(u('last,"line without",terminator'));
  return {
    name: 'csv-crlf',
    data: Buffer.concat(parts),
    charset: 'utf8mb4',
    format,
    clauses: clauses('utf8mb4', format),
    columns: [
      { name: 'a', type: 'VARCHAR(400) CHARACTER SET utf8mb4', text: true },
      { name: 'b', type: 'VARCHAR(400) CHARACTER SET utf8mb4', text: true },
      { name: 'c', type: 'VARBINARY(400)', text: false },
    ],
    ignoreLines: 1,
  };
}

/** Default TSV in gbk: characters whose trail byte is 0x5C or 0x7C right before tabs, newlines and escapes; bad lead bytes. */
function gbkFile(): NastyFile {
  const r = rng(22);
  const format: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
  const gbkChar = (): number[] => [0x81 + Math.floor(r() * 0x7e), pick(r, [0x5c, 0x5c, 0x7c, 0x40, 0x80 + Math.floor(r() * 0x7f)])];
  const field = (): Buffer => {
    const k = r();
    if (k < 0.6) return Buffer.from(Array.from({ length: 1 + Math.floor(r() * 4) }, gbkChar).flat());
    if (k < 0.7) return Buffer.from([...gbkChar(), 0x5c, 0x5c]); // a trail 5C, then an escaped backslash
    if (k < 0.75) return Buffer.from([0x5c, 0x81, 0x5c]); // escape takes the lead byte; the trail 5C is an escape again
    if (k < 0.8) return Buffer.from([0x81]); // a lead byte before the separator: invalid pair, the separator stays
    if (k < 0.85) return Buffer.from([0xff, 0x41]);
    if (k < 0.9) return b('\\N');
    return b(`w${Math.floor(r() * 100)}`);
  };
  const parts: Buffer[] = [];
  for (let i = 0; i < 500; i++) {
    const n = 1 + Math.floor(r() * 4);
    parts.push(Buffer.concat(Array.from({ length: n }, (_, k) => (k ? Buffer.concat([b('\t'), field()]) : field()))), b('\n'));
  }
  return {
    name: 'gbk-5c',
    data: Buffer.concat(parts),
    charset: 'gbk',
    format,
    clauses: clauses('gbk', format),
    columns: [
      { name: 'a', type: 'VARCHAR(200) CHARACTER SET gbk', text: true },
      { name: 'b', type: 'VARBINARY(200)', text: false },
      { name: 'c', type: 'VARCHAR(200) CHARACTER SET gbk', text: true },
    ],
    ignoreLines: 0,
  };
}

/** Default TSV in utf8mb4 with malformed sequences into VARCHAR: a stray E4/F0 swallows the next bytes, a terminator among them. */
function badUtf8File(): NastyFile {
  const r = rng(33);
  const format: ScanFormat = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
  const field = (): Buffer => {
    const k = r();
    if (k < 0.55) return u(pick(r, ['ok', '\u4e2d\u6587', '\u{1F600}', 'caf\u00e9', '']));
    if (k < 0.65) return Buffer.from([0x61, 0xe4]); // swallows the separator after it
    if (k < 0.7) return Buffer.from([0xf0, 0x9f]); // needs 4 bytes: swallows two more
    if (k < 0.75) return Buffer.from([0xc3]); // gives the next byte back
    if (k < 0.8) return Buffer.from([0xe4, 0x5c]); // the escape is swallowed as data
    if (k < 0.85) return Buffer.from([0x80, 0xff]);
    if (k < 0.9) return b('x\\\ty');
    return b('\\N');
  };
  const parts: Buffer[] = [];
  for (let i = 0; i < 900; i++) {
    const n = 1 + Math.floor(r() * 3);
    parts.push(Buffer.concat(Array.from({ length: n }, (_, k) => (k ? Buffer.concat([b('\t'), field()]) : field()))), b('\n'));
  }
  return {
    name: 'utf8-invalid',
    data: Buffer.concat(parts),
    charset: 'utf8mb4',
    format,
    clauses: clauses('utf8mb4', format),
    columns: [
      { name: 'a', type: 'VARCHAR(200) CHARACTER SET utf8mb4', text: true },
      { name: 'b', type: 'VARCHAR(200) CHARACTER SET utf8mb4', text: true },
    ],
    ignoreLines: 0,
  };
}

/** csv-unix, 2 targets, rows of 1-5 fields: past the 2nd field the rest of the line is skipped quote-blind (next_line). */
function extraFieldsFile(): NastyFile {
  const r = rng(44);
  const format: ScanFormat = { fieldTerm: b(','), lineTerm: b('\n'), enclosure: 0x22, escape: 0x5c };
  const field = (): Buffer => {
    const k = r();
    if (k < 0.4) return u(pick(r, ['a', 'b c', '\u00e9', '']));
    if (k < 0.7) return u(`"q\n${pick(r, ['x', ',', '""'])}\n"`); // quoted newlines
    if (k < 0.8) return u(`"\\\n"`);
    if (k < 0.85) return u('x\\\ny'); // an escaped newline
    return u(`"${Math.floor(r() * 1000)}"`);
  };
  const parts: Buffer[] = [u('"header\n",with,"quoted\nnewlines"\n')];
  for (let i = 0; i < 400; i++) {
    const n = 1 + Math.floor(r() * 5);
    parts.push(Buffer.concat(Array.from({ length: n }, (_, k) => (k ? Buffer.concat([b(','), field()]) : field()))), b('\n'));
  }
  return {
    name: 'extra-fields',
    data: Buffer.concat(parts),
    charset: 'utf8mb4',
    format,
    clauses: clauses('utf8mb4', format),
    columns: [
      { name: 'a', type: 'VARCHAR(200) CHARACTER SET utf8mb4', text: true },
      { name: 'b', type: 'VARBINARY(200)', text: false },
    ],
    ignoreLines: 2,
  };
}

/** RFC 4180 style: the escape is the quote itself. */
function rfcFile(): NastyFile {
  const r = rng(55);
  const format: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x22 };
  const field = (): Buffer => u(pick(r, ['a', '"x""y"', '"\r\n"', '"a,b"', 'back\\slash', '""', '""""', '\u4e2d']));
  const parts: Buffer[] = [];
  for (let i = 0; i < 900; i++) {
    const n = 1 + Math.floor(r() * 3);
    parts.push(Buffer.concat(Array.from({ length: n }, (_, k) => (k ? Buffer.concat([b(','), field()]) : field()))), b('\r\n'));
  }
  return {
    name: 'rfc-esc-eq-enc',
    data: Buffer.concat(parts),
    charset: 'utf8mb4',
    format,
    clauses: clauses('utf8mb4', format),
    columns: [
      { name: 'a', type: 'VARCHAR(200) CHARACTER SET utf8mb4', text: true },
      { name: 'b', type: 'VARCHAR(200) CHARACTER SET utf8mb4', text: true },
    ],
    ignoreLines: 0,
  };
}

async function* blocks(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

async function cut(f: NastyFile, chunkSizeBytes: number, blockSize: number): Promise<{ chunks: CutChunk[]; summary: InputSummary }> {
  const chunks: CutChunk[] = [];
  let summary: InputSummary | undefined;
  const cs = charsetInfo(f.charset)!;
  for await (const c of cutChunks(
    blocks(f.data, blockSize),
    {
      format: f.format,
      charset: cs,
      targets: { fields: f.columns.length, textField: f.columns.map((c) => c.text) },
      chunkSizeBytes,
      maxRecordBytes: 1 << 20,
      ignoreLines: f.ignoreLines,
      stripBom: false,
      keepBytes: false,
      file: f.name,
    },
    (s) => (summary = s),
  )) {
    chunks.push(c);
  }
  return { chunks, summary: summary! };
}

async function load(conn: Connection, table: string, path: string, f: NastyFile, ignore: number): Promise<number> {
  const cols = f.columns.map((c) => c.name).join(', ');
  const [res] = await conn.query(`LOAD DATA INFILE ? INTO TABLE ${table} ${f.clauses} ${ignore ? `IGNORE ${ignore} LINES` : ''} (${cols})`, [path]);
  return (res as ResultSetHeader).warningStatus;
}

/**
 * COUNT(*) and CHECKSUM TABLE of the loaded columns (a copy without the
 * AUTO_INCREMENT id: separate statements may leave gaps between their ids).
 */
async function dataDigest(conn: Connection, table: string, f: NastyFile): Promise<{ count: string; checksum: string }> {
  await conn.query(`DROP TABLE IF EXISTS ${table}_data`);
  await conn.query(`CREATE TABLE ${table}_data ENGINE=InnoDB SELECT ${f.columns.map((c) => c.name).join(', ')} FROM ${table}`);
  const d = await tableDigest(conn, `${table}_data`);
  await conn.query(`DROP TABLE ${table}_data`);
  return d;
}

/** The rows in file order (the AUTO_INCREMENT id follows the load order), without the id. */
async function orderedDigest(conn: Connection, table: string, f: NastyFile): Promise<string> {
  const cols = f.columns.map((c) => `IFNULL(HEX(${c.name}), 'NULL')`).join(", ':', ");
  const [rows] = await conn.query(`SELECT MD5(GROUP_CONCAT(CONCAT(${cols}) ORDER BY id SEPARATOR '|')) AS d FROM ${table}`);
  return String((rows as Array<{ d: unknown }>)[0]!.d);
}

const FILES = [csvFile(), gbkFile(), badUtf8File(), extraFieldsFile(), rfcFile()];

describe('chunk boundaries agree with the server', () => {
  let db: TestDatabase;
  let dir: string;
  before(async () => {
    db = await createTestDatabase('chunking');
    dir = mkdtempSync(join(tmpdir(), 'flatload-chunking-'));
    // Warnings, not errors: the files hold invalid strings and short/long rows on purpose.
    await db.conn.query("SET SESSION sql_mode = '', SESSION group_concat_max_len = 1073741824");
  });
  after(async () => {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const f of FILES) {
    test(`${f.name}: whole-file load == chunk-by-chunk loads, at chunk sizes 7, 64 and 1000`, async () => {
      const conn = db.conn;
      const ddl = (t: string): string =>
        `CREATE TABLE ${t} (id INT AUTO_INCREMENT PRIMARY KEY, ${f.columns.map((c) => `${c.name} ${c.type}`).join(', ')}) ENGINE=InnoDB`;
      const whole = `w_${f.name.replace(/-/g, '_')}`;
      await conn.query(`DROP TABLE IF EXISTS ${whole}`);
      await conn.query(ddl(whole));
      const path = join(dir, `${f.name}.txt`);
      writeFileSync(path, f.data);
      const wholeWarnings = await load(conn, whole, path, f, f.ignoreLines);
      const want = await dataDigest(conn, whole, f);
      const wantOrder = await orderedDigest(conn, whole, f);
      assert.ok(Number(want.count) > 100, `${f.name}: only ${want.count} rows`);

      for (const [size, block] of [
        [7, 13],
        [64, 4096],
        [1000, 1 << 20],
      ] as const) {
        const { chunks, summary } = await cut(f, size, block);
        const where = `${f.name}, chunk size ${size}`;
        assert.equal(String(summary.records), want.count, `${where}: records counted by cutChunks vs rows loaded by the server`);
        assert.ok(chunks.length > (size === 1000 ? 3 : 50), `${where}: only ${chunks.length} chunks`);
        const twin = `c_${f.name.replace(/-/g, '_')}_${size}`;
        await conn.query(`DROP TABLE IF EXISTS ${twin}`);
        await conn.query(ddl(twin));
        let warnings = 0;
        for (const ch of chunks) {
          const p = join(dir, `${f.name}-${size}-${ch.index}.txt`);
          writeFileSync(p, f.data.subarray(ch.startByte, ch.endByte));
          const before = Number((await tableDigest(conn, twin)).count);
          warnings += await load(conn, twin, p, f, 0);
          const after = Number((await tableDigest(conn, twin)).count);
          assert.equal(after - before, ch.records, `${where}: chunk ${ch.index} [${ch.startByte}, ${ch.endByte}) loaded ${after - before} rows, cutChunks said ${ch.records}`);
          rmSync(p);
        }
        assert.deepEqual(await dataDigest(conn, twin, f), want, `${where}: COUNT(*) and CHECKSUM TABLE`);
        assert.equal(await orderedDigest(conn, twin, f), wantOrder, `${where}: rows in file order`);
        assert.equal(warnings, wholeWarnings, `${where}: warnings`);
      }
    });
  }
});
