/**
 * Boundary-finding speed, in memory (no disk, no server): cutChunks over
 * ~200 MB of generated user_summary-like data, 64 MiB chunks, 4 MiB blocks,
 * as a plain-file load scans it.
 *
 * - TSV: FIELDS TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n',
 *   utf8mb4, a few escaped characters: the indexOf fast path (with UTF-8
 *   validation).
 * - CSV: flatload's `csv` dialect (',' OPTIONALLY ENCLOSED BY '"' ESCAPED BY
 *   '\\' LINES TERMINATED BY '\r\n'), utf8mb4, ~20% of records with a quoted
 *   field holding a comma, a CR LF or doubled quotes: plain records by the
 *   fast path, quoted ones by the exact rules, byte-wise.
 * - CSV in gbk with text columns: the general path reading characters
 *   (trail bytes 0x5C and 0x7C included).
 *
 *   npm run build:dev && node dist/bench/research/scan.js [megabytes]
 */
import { prng } from '../../fixtures/prng.js';
import { pathToFileURL } from 'node:url';
import { charsetInfo, type CharsetInfo } from '../../src/chunking/charsets.js';
import { cutChunks } from '../../src/chunking/cut.js';
import type { ScanFormat, ScanTargets } from '../../src/chunking/scanner.js';

export interface ScanSpeed {
  tsvMBps: number;
  csvMBps: number;
  csvGbkMBps?: number;
  details: string;
}

const CHUNK_BYTES = 64 << 20;
const BLOCK_BYTES = 4 << 20;
/** Generated once, then repeated to the requested size (the scan cannot tell). */
const PATTERN_BYTES = 4 << 20;


const LEVELS = ['bronze', 'silver', 'gold', 'platinum', 'diamond', 'master', 'grandmaster', '\u9752\u94dc', '\u767d\u91d1'];

function repeatTo(pattern: Buffer, bytes: number): Buffer {
  const out = Buffer.allocUnsafe(Math.max(bytes, pattern.length));
  let o = 0;
  while (o < out.length) o += pattern.copy(out, o, 0, Math.min(pattern.length, out.length - o));
  return out;
}

/** user_summary rows: user_id, weight, level, beat_rate, level_num; ~1% with an escaped tab, backslash or \N. */
function userSummaryTsv(bytes: number): Buffer {
  const r = prng(1);
  const lines: string[] = [];
  let size = 0;
  let id = 10_000_000;
  while (size < Math.min(bytes, PATTERN_BYTES)) {
    id += 1 + Math.floor(r() * 9);
    let level = LEVELS[Math.floor(r() * LEVELS.length)]!;
    const k = r();
    if (k < 0.004) level = `${level}\\t2`;
    else if (k < 0.008) level = `a\\\\b`;
    else if (k < 0.01) level = '\\N';
    const line = `${id}\t${(r() * 100).toFixed(2)}\t${level}\t${r().toFixed(6)}\t${Math.floor(r() * 100)}\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  return repeatTo(Buffer.from(lines.join(''), 'utf8'), bytes);
}

/** The same rows in the csv dialect; ~20% of levels quoted with a comma, a CR LF or doubled quotes in them. */
function userSummaryCsv(bytes: number): Buffer {
  const r = prng(2);
  const lines: string[] = [];
  let size = 0;
  let id = 10_000_000;
  while (size < Math.min(bytes, PATTERN_BYTES)) {
    id += 1 + Math.floor(r() * 9);
    let level = LEVELS[Math.floor(r() * LEVELS.length)]!;
    const k = r();
    if (k < 0.07) level = `"${level}, the ${LEVELS[Math.floor(r() * LEVELS.length)]!}"`;
    else if (k < 0.14) level = `"${level}\r\nsecond line"`;
    else if (k < 0.2) level = `"say ""${level}"""`;
    else if (k < 0.21) level = `"back\\\\slash"`;
    else if (k < 0.22) level = '\\N';
    const line = `${id},${(r() * 100).toFixed(2)},${level},${r().toFixed(6)},${Math.floor(r() * 100)}\r\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  return repeatTo(Buffer.from(lines.join(''), 'utf8'), bytes);
}

/** CSV whose text fields are gbk characters, many with trail byte 0x5C or 0x7C; some quoted. */
function gbkCsv(bytes: number): Buffer {
  const r = prng(3);
  const parts: Buffer[] = [];
  let size = 0;
  let id = 1;
  const gbkChar = (): number[] => {
    const lead = 0x81 + Math.floor(r() * 0x7e);
    const k = r();
    const trail = k < 0.15 ? 0x5c : k < 0.2 ? 0x7c : 0x80 + Math.floor(r() * 0x7f);
    return [lead, trail];
  };
  while (size < Math.min(bytes, PATTERN_BYTES)) {
    const name: number[] = [];
    const n = 2 + Math.floor(r() * 6);
    for (let i = 0; i < n; i++) name.push(...gbkChar());
    const quoted = r() < 0.3;
    const field = quoted ? [0x22, ...name, 0x2c, ...gbkChar(), 0x22] : name;
    const line = Buffer.concat([Buffer.from(`${id++},`), Buffer.from(field), Buffer.from(`,${Math.floor(r() * 1000)}\r\n`)]);
    parts.push(line);
    size += line.length;
  }
  return repeatTo(Buffer.concat(parts), bytes);
}

interface Case {
  data: Buffer;
  format: ScanFormat;
  charset: CharsetInfo;
  targets: ScanTargets;
}

async function timeCut(c: Case): Promise<{ seconds: number; records: number; chunks: number }> {
  async function* blocks(): AsyncGenerator<Buffer> {
    for (let i = 0; i < c.data.length; i += BLOCK_BYTES) yield c.data.subarray(i, i + BLOCK_BYTES);
  }
  let records = 0;
  let chunks = 0;
  const t0 = process.cpuUsage();
  for await (const ch of cutChunks(blocks(), {
    format: c.format,
    charset: c.charset,
    targets: c.targets,
    chunkSizeBytes: CHUNK_BYTES,
    maxRecordBytes: CHUNK_BYTES,
    ignoreLines: 0,
    stripBom: false,
    keepBytes: false,
    file: 'bench',
  })) {
    records += ch.records;
    chunks++;
  }
  const cpu = process.cpuUsage(t0);
  return { seconds: (cpu.user + cpu.system) / 1e6, records, chunks };
}

/**
 * Best of `runs` (the first run also warms up the JIT). Timed in CPU seconds
 * of this (single-threaded) process, so other load on the machine does not
 * count; on an idle machine that is the wall time.
 */
async function mbps(c: Case, runs: number): Promise<{ mbps: number; records: number; chunks: number }> {
  let best = Number.POSITIVE_INFINITY;
  let last = { seconds: 0, records: 0, chunks: 0 };
  for (let i = 0; i < runs; i++) {
    last = await timeCut(c);
    best = Math.min(best, last.seconds);
  }
  return { mbps: c.data.length / 1e6 / best, records: last.records, chunks: last.chunks };
}

export async function measureScanSpeed(opts?: { bytes?: number }): Promise<ScanSpeed> {
  const bytes = opts?.bytes ?? 200e6;
  const b = (s: string): Buffer => Buffer.from(s, 'latin1');
  const utf8 = charsetInfo('utf8mb4')!;
  const gbk = charsetInfo('gbk')!;
  const userSummary: ScanTargets = { fields: 5, textField: [false, true, true, true, false] };
  const runs = 5;

  const tsv = await mbps(
    { data: userSummaryTsv(bytes), format: { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c }, charset: utf8, targets: userSummary },
    runs,
  );
  const csvFormat: ScanFormat = { fieldTerm: b(','), lineTerm: b('\r\n'), enclosure: 0x22, escape: 0x5c };
  const csv = await mbps({ data: userSummaryCsv(bytes), format: csvFormat, charset: utf8, targets: userSummary }, runs);
  const gbkBytes = Math.min(bytes, 100e6);
  const csvGbk = await mbps({ data: gbkCsv(gbkBytes), format: csvFormat, charset: gbk, targets: { fields: 3, textField: [false, true, false] } }, runs);
  const mb = (n: number): string => `${(n / 1e6).toFixed(0)} MB`;
  const details =
    `cutChunks over ${mb(bytes)} in memory, 64 MiB chunks, 4 MiB blocks, best of ${runs} in CPU time: ` +
    `TSV (indexOf fast path + UTF-8 validation) ${tsv.mbps.toFixed(0)} MB/s, ${tsv.records} records; ` +
    `CSV (fast path; quoted records read byte-wise by the exact rules) ${csv.mbps.toFixed(0)} MB/s, ${csv.records} records; ` +
    `gbk CSV with text columns (general path, character by character) ${csvGbk.mbps.toFixed(0)} MB/s over ${mb(gbkBytes)}.`;
  return { tsvMBps: tsv.mbps, csvMBps: csv.mbps, csvGbkMBps: csvGbk.mbps, details };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const mbArg = Number(process.argv[2]);
  const s = await measureScanSpeed(Number.isFinite(mbArg) && mbArg > 0 ? { bytes: mbArg * 1e6 } : undefined);
  process.stdout.write(`TSV ${s.tsvMBps.toFixed(0)} MB/s, CSV ${s.csvMBps.toFixed(0)} MB/s, gbk CSV ${s.csvGbkMBps?.toFixed(0)} MB/s\n${s.details}\n`);
}
