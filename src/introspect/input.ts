import type { CharsetInfo } from '../chunking/charsets.js';
import { locateRecords } from '../chunking/records.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../chunking/scanner.js';
import { parseRecord } from '../chunking/fields.js';
import { inKeyOrder } from '../order/sortChunk.js';
import { clusteredKeyInFile } from './keySpec.js';
import { headerNames } from './header.js';
import { sampleRunRatio } from './runRatio.js';
import { openByteStream } from '../input/streams.js';
import type { InputSource } from '../input/source.js';
import type { ColumnTarget } from '../config/loadOptions.js';
import type { IndexFacts, InputFacts, TableFacts } from './types.js';

const SAMPLE_BYTES = 1 << 20;
const SAMPLE_RECORDS = 2000;

/** The first MiB of each source read, so `--columns header` and the sample read it once between them. */
const heads = new WeakMap<InputSource, Promise<Buffer>>();

function readHead(source: InputSource): Promise<Buffer> {
  let head = heads.get(source);
  if (!head) heads.set(source, (head = readHeadOnce(source)));
  return head;
}

async function readHeadOnce(source: InputSource): Promise<Buffer> {
  // A look at the start: standard input keeps these bytes for the load's one pass.
  const { stream } = await openByteStream(source, 1 << 20, false);
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
 * Reads the first MiB of the input (standard input only when its start is kept
 * for the load's pass, see StdinReplay) and describes it: fields per record, record size, and whether
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
    uniqueKeyOrder: {},
    spillFreeBytes: undefined,
    headerColumns: undefined,
  };
  // Standard input is sampled only when its start can be read again (not once it was spooled: its copy is sampled).
  if (source.kind === 'stdin' && !source.replay) return facts;
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
  // The whole MiB, as a run holds it: the ratio the planner scales the runs' size by.
  facts.sampleRunRatio = sampleRunRatio(head, records);
  records = records.slice(0, SAMPLE_RECORDS);
  if (records.length === 0) return facts;
  // Fields are counted with room for a few more than the targets; only a record that overflows
  // that is parsed again with room for 4096 (parseRecord fills every target it is given).
  const widen = (fields: number): ScanTargets => ({ fields, textField: Array.from({ length: fields }, (_, i) => ctx.targets.textField[i] ?? false) });
  const roomy = widen(ctx.targets.fields + 4);
  let wide: ScanTargets | undefined;
  const fieldCount = (r: { offset: number; length: number }): number => {
    let parsed = parseRecord(head, r.offset, r.offset + r.length, ctx.format, ctx.charset, roomy);
    if (parsed.extraData) parsed = parseRecord(head, r.offset, r.offset + r.length, ctx.format, ctx.charset, (wide ??= widen(4096)));
    let n = 0;
    for (const v of parsed.values) if (v !== undefined) n++;
    return n;
  };
  const counts = new Map<number, number>();
  let bytes = 0;
  for (const r of records) {
    bytes += r.length;
    const n = fieldCount(r);
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  facts.sampleRecords = records.length;
  facts.sampleFieldCount = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  facts.avgRecordBytes = bytes / records.length;
  if (facts.sizeBytes !== undefined && facts.compression === 'none') facts.estimatedRecords = Math.round(facts.sizeBytes / facts.avgRecordBytes);
  facts.keyOrder = keyOrder(head, records, ctx, ctx.table.clusteredKey);
  for (const ix of ctx.table.indexes) {
    if (!ix.unique) continue;
    const order = keyOrder(head, records, ctx, ix);
    if (order !== 'unknown') facts.uniqueKeyOrder[ix.name] = order;
  }
  return facts;
}

function keyOrder(head: Buffer, records: Array<{ offset: number; length: number }>, ctx: SampleContext, index: IndexFacts | undefined): InputFacts['keyOrder'] {
  const key = clusteredKeyInFile(ctx.table, ctx.columns, index);
  if (!key || records.length < 2) return 'unknown';
  const first = records[0]!;
  const last = records[records.length - 1]!;
  // The sort's own comparator on the sampled records (numbers exactly; text byte-wise).
  const sorted = inKeyOrder(head.subarray(first.offset, last.offset + last.length), { spec: key, fmt: ctx.format, cs: ctx.charset, targets: ctx.targets });
  return sorted ? 'sorted' : 'unsorted';
}

/**
 * `--columns header`: the first record's field names and where it starts
 * (after a byte-order mark the load skips). Undefined for an empty input.
 */
export async function readHeader(source: InputSource, format: ScanFormat, charset: CharsetInfo, stripBom: boolean): Promise<{ names: string[]; byteOffset: number } | undefined> {
  const head = await readHead(source);
  const start = stripBom && head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const names = headerNames(head, start, head.length < SAMPLE_BYTES, format, charset);
  return names && { names, byteOffset: start };
}
