import type { CharsetInfo } from '../chunking/charsets.js';
import { locateRecords } from '../chunking/records.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../chunking/scanner.js';
import { parseRecord } from '../chunking/fields.js';
import { openByteStream } from '../input/streams.js';
import type { InputSource } from '../input/source.js';
import type { ColumnTarget } from '../config/loadOptions.js';
import type { InputFacts, TableFacts } from './types.js';

const SAMPLE_BYTES = 1 << 20;
const SAMPLE_RECORDS = 2000;
const NUMERIC = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'float', 'double', 'year']);
const TEMPORAL = new Set(['date', 'datetime', 'timestamp', 'time']);

async function readHead(source: InputSource): Promise<Buffer> {
  const { stream } = await openByteStream(source, 1 << 20);
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const b of stream) {
      parts.push(b as Buffer);
      size += (b as Buffer).length;
      if (size >= SAMPLE_BYTES) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(parts).subarray(0, SAMPLE_BYTES);
}

export interface SampleContext {
  format: ScanFormat;
  charset: CharsetInfo;
  targets: ScanTargets;
  ignoreLines: number;
  columns: ColumnTarget[] | undefined;
  table: TableFacts;
  /** A leading UTF-8 byte-order mark is skipped (as the load will). */
  stripBom: boolean;
}

/**
 * Reads the first MiB of the input (never standard input: that cannot be
 * read twice) and describes it: fields per record, record size, and whether
 * records arrive in clustered-key order.
 */
export async function sampleInput(source: InputSource, ctx: SampleContext): Promise<InputFacts> {
  const facts: InputFacts = {
    path: source.path,
    kind: source.kind,
    compression: source.compression,
    sizeBytes: source.sizeBytes,
    seekable: source.seekable,
    sampleFieldCount: undefined,
    sampleRecords: 0,
    avgRecordBytes: undefined,
    estimatedRecords: undefined,
    keyOrder: 'unknown',
    headerColumns: undefined,
  };
  if (source.kind === 'stdin') return facts;
  const head = await readHead(source);
  return describeSample(head, head.length < SAMPLE_BYTES, facts, ctx);
}

/** Pure part: the facts a sample gives. */
export function describeSample(head: Buffer, complete: boolean, facts: InputFacts, ctx: SampleContext): InputFacts {
  let start = ctx.stripBom && head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  if (ctx.ignoreLines > 0) {
    const h = new RecordScanner(ctx.format, ctx.charset, undefined, true);
    while (h.records < ctx.ignoreLines) {
      const r = h.scan(head, start, 0, complete, start + 1);
      if (!r.atRecordEnd) return facts;
      start = r.pos;
    }
  }
  let records = locateRecords(head.subarray(start), start, 1, ctx.format, ctx.charset, ctx.targets);
  // Without the end of the input the last record may be cut short.
  if (!complete) records = records.slice(0, -1);
  records = records.slice(0, SAMPLE_RECORDS);
  if (records.length === 0) return facts;
  const wide: ScanTargets = { fields: 4096, textField: Array.from({ length: 4096 }, (_, i) => ctx.targets.textField[i] ?? false) };
  const counts = new Map<number, number>();
  let bytes = 0;
  for (const r of records) {
    bytes += r.length;
    const n = parseRecord(head, r.offset, r.offset + r.length, ctx.format, ctx.charset, wide).values.filter((v) => v !== undefined).length;
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  facts.sampleRecords = records.length;
  facts.sampleFieldCount = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  facts.avgRecordBytes = bytes / records.length;
  if (facts.sizeBytes !== undefined && facts.compression === 'none') facts.estimatedRecords = Math.round(facts.sizeBytes / facts.avgRecordBytes);
  facts.keyOrder = keyOrder(head, records, ctx);
  return facts;
}

function keyOrder(head: Buffer, records: Array<{ offset: number; length: number }>, ctx: SampleContext): InputFacts['keyOrder'] {
  const key = ctx.table.clusteredKey;
  if (!key || records.length < 2) return 'unknown';
  const names = ctx.columns ? ctx.columns.map((c) => (c.isVariable ? undefined : c.name.toLowerCase())) : ctx.table.columns.map((c) => c.name.toLowerCase());
  const positions = key.columns.map((k) => names.indexOf(k.toLowerCase()));
  if (positions.some((p) => p < 0)) return 'unknown';
  const types = key.columns.map((k) => ctx.table.columns.find((c) => c.name.toLowerCase() === k.toLowerCase())?.dataType ?? '');
  if (!types.every((t) => NUMERIC.has(t) || TEMPORAL.has(t))) return 'unknown';
  let prev: Array<string | null> | undefined;
  for (const r of records) {
    const values = parseRecord(head, r.offset, r.offset + r.length, ctx.format, ctx.charset, ctx.targets).values;
    const tuple = positions.map((p) => {
      const v = values[p];
      return v === undefined || v === null ? null : v.toString('latin1');
    });
    if (prev && compareTuples(prev, tuple, types) > 0) return 'unsorted';
    prev = tuple;
  }
  return 'sorted';
}

function compareTuples(a: Array<string | null>, b: Array<string | null>, types: string[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    const c = NUMERIC.has(types[i]!) ? compareNumbers(x, y) : x < y ? -1 : 1;
    if (c !== 0) return c;
  }
  return 0;
}

function compareNumbers(x: string, y: string): number {
  if (/^-?\d+$/.test(x) && /^-?\d+$/.test(y)) {
    const a = BigInt(x);
    const b = BigInt(y);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return Number(x) - Number(y);
}
