import { createReadStream, closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CharsetInfo } from '../chunking/charsets.js';
import { cutChunks } from '../chunking/cut.js';
import { parseRecord } from '../chunking/fields.js';
import { recordTable } from '../chunking/records.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import { FlatloadError } from '../errors/index.js';
import { partitionIndex, type PartitionRule } from '../shard/partition.js';

export interface SplitOptions {
  path: string;
  /** The input as the user named it, for messages. */
  display: string;
  format: ScanFormat;
  charset: CharsetInfo;
  targets: ScanTargets;
  ignoreLines: number;
  stripBom: boolean;
  rule: PartitionRule;
  /** Per partitioning column, its field in a record. */
  fields: number[];
  /** Per partition, the share (backend) that takes its rows. */
  partitionShare: number[];
  /** Per share, a name for its file (the backend's). */
  shareNames: string[];
  /** An empty directory of its own: the shares' files go there, and it is removed by dispose(). */
  dir: string;
}

export interface ShardSplit {
  /** Per share, its file: the input's records for that backend, byte for byte, in input order. */
  paths: string[];
  records: number[];
  bytes: number[];
  dispose(): void;
}

const MiB = 1024 * 1024;

/**
 * Reads the input once and writes each record to the file of the backend
 * its partition rule names. Records are found by the chunking scanner and
 * their fields by the LOAD DATA field reader, so quoted terminators and
 * escapes route as the server would read them. Headers and a byte-order
 * mark are dropped; a last record without a line terminator gets one (it
 * no longer ends its file). A record flatload cannot place stops the split,
 * naming its line and byte offset: nothing has been loaded yet.
 */
export async function splitByShard(o: SplitOptions): Promise<ShardSplit> {
  mkdirSync(o.dir, { recursive: true });
  const shares = o.shareNames.length;
  // The backend's name, made safe for a file name: it shows in messages about the share.
  const paths = o.shareNames.map((n, i) => join(o.dir, `${i}-${n.replace(/[^A-Za-z0-9_.-]/g, '_')}`));
  const dispose = (): void => rmSync(o.dir, { recursive: true, force: true });
  const fds = paths.map((p) => openSync(p, 'w'));
  const records = new Array<number>(shares).fill(0);
  const bytes = new Array<number>(shares).fill(0);
  // Only the fields up to the last partitioning column are read.
  const upTo = Math.max(...o.fields) + 1;
  const targets: ScanTargets = { fields: upTo, textField: o.targets.textField.slice(0, upTo) };
  // Per share, its records of the current chunk, copied end to end (a chunk's worth at most, plus a terminator).
  let out = paths.map(() => Buffer.alloc(0));
  const used = new Array<number>(shares).fill(0);
  const flush = (): void => {
    for (let s = 0; s < shares; s++) {
      if (used[s] === 0) continue;
      writeSync(fds[s]!, out[s]!, 0, used[s]);
      bytes[s]! += used[s]!;
      used[s] = 0;
    }
  };
  try {
    const chunks = cutChunks(createReadStream(o.path, { highWaterMark: MiB }), {
      format: o.format,
      charset: o.charset,
      targets: o.targets,
      chunkSizeBytes: 8 * MiB,
      maxRecordBytes: 64 * MiB,
      ignoreLines: o.ignoreLines,
      stripBom: o.stripBom,
      keepBytes: true,
      file: o.display,
    });
    const values = new Array<Buffer | null | undefined>(o.fields.length);
    for await (const c of chunks) {
      const buf = Buffer.concat(c.buffers ?? []);
      const table = recordTable(buf, o.format, o.charset, o.targets);
      const room = buf.length + o.format.lineTerm.length;
      if (out[0]!.length < room) out = out.map(() => Buffer.allocUnsafe(room));
      for (let i = 0; i < table.ends.length; i++) {
        const start = i === 0 ? 0 : table.ends[i - 1]!;
        const end = table.ends[i]!;
        const rec = parseRecord(buf, start, end, o.format, o.charset, targets);
        for (let k = 0; k < o.fields.length; k++) values[k] = rec.values[o.fields[k]!];
        const p = partitionIndex(o.rule, values);
        if (p === undefined) {
          throw new FlatloadError('INPUT_MALFORMED', `flatload cannot tell which partition of the ${o.rule.method} (${o.rule.expression}) rule this record goes to (not an integer in the column's range, or no partition takes it)`, {
            file: o.display,
            line: c.firstLine + table.lineOffsets[i]!,
            byteOffset: c.startByte + start,
            hint: 'fix the record, or load through the Spider front with --route front (the front then decides, and rejects the row if no partition takes it)',
          });
        }
        const s = o.partitionShare[p]!;
        used[s]! += buf.copy(out[s]!, used[s], start, end);
        if (i === table.ends.length - 1 && !table.terminated) used[s]! += o.format.lineTerm.copy(out[s]!, used[s]);
        records[s]!++;
      }
      flush();
    }
  } catch (err) {
    for (const fd of fds) closeSync(fd);
    dispose();
    throw err;
  }
  for (const fd of fds) closeSync(fd);
  return { paths, records, bytes, dispose };
}
