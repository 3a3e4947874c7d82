import { createReadStream, closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CharsetInfo } from '../chunking/charsets.js';
import { cutChunks } from '../chunking/cut.js';
import { parseRecord } from '../chunking/fields.js';
import { recordStart, recordTable } from '../chunking/records.js';
import type { ScanFormat, ScanTargets } from '../chunking/scanner.js';
import { FlatloadError } from '../errors/index.js';
import { freeBytes } from '../input/spool.js';
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

/** Removes a share directory; one that cannot be removed (never created, say) is left as it is. */
export function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // nothing of ours to remove
  }
}

/** A file system error on the shares' side (an error reading the input passes through as it is). */
function writeError(err: unknown, dir: string, input: string): unknown {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof FlatloadError || typeof e.code !== 'string' || e.path === input) return err;
  return new FlatloadError('OUTPUT_UNWRITABLE', `cannot write the backends' shares into ${dir}: ${e.message}`, { hint: 'point --tmpdir at a writable file system with room for a copy of the input' });
}

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
  const free = freeBytes(dirname(o.dir));
  if (free !== undefined && free < statSync(o.path).size) {
    throw new FlatloadError('OUTPUT_UNWRITABLE', `splitting the input by backend needs about its size (${statSync(o.path).size} bytes) in ${dirname(o.dir)}, which has ${free} bytes free`, {
      hint: 'point --tmpdir at a file system with room for a copy of the input, or load through the Spider front with --route front',
    });
  }
  try {
    // A run killed before it could clean up left the same directory: split again from scratch.
    rmSync(o.dir, { recursive: true, force: true });
    mkdirSync(o.dir, { recursive: true });
  } catch (err) {
    throw writeError(err, o.dir, o.path);
  }
  const shares = o.shareNames.length;
  // The backend's name, made safe for a file name: it shows in messages about the share.
  const paths = o.shareNames.map((n, i) => join(o.dir, `${i}-${n.replace(/[^A-Za-z0-9_.-]/g, '_')}`));
  const dispose = (): void => removeDir(o.dir);
  let fds: number[];
  try {
    fds = paths.map((p) => openSync(p, 'w'));
  } catch (err) {
    dispose();
    throw writeError(err, o.dir, o.path);
  }
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
        const start = recordStart(table.ends, i);
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
    throw writeError(err, o.dir, o.path);
  }
  for (const fd of fds) closeSync(fd);
  return { paths, records, bytes, dispose };
}
