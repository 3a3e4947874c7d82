import { createReadStream, closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CharsetInfo } from '../chunking/charsets.js';
import { cutChunks } from '../chunking/cut.js';
import type { CutChunk } from '../chunking/types.js';
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
  checkRoom(o);
  try {
    // A run killed before it could clean up left the same directory: split again from scratch.
    rmSync(o.dir, { recursive: true, force: true });
    mkdirSync(o.dir, { recursive: true });
  } catch (err) {
    throw writeError(err, o.dir, o.path);
  }
  // The backend's name, made safe for a file name: it shows in messages about the share.
  const paths = o.shareNames.map((n, i) => join(o.dir, `${i}-${n.replace(/[^A-Za-z0-9_.-]/g, '_')}`));
  const dispose = (): void => removeDir(o.dir);
  const shares = openShares(paths, o, dispose);
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
    for await (const c of chunks) routeChunk(o, c, shares);
  } catch (err) {
    shares.close();
    dispose();
    throw writeError(err, o.dir, o.path);
  }
  shares.close();
  return { paths, records: shares.records, bytes: shares.bytes, dispose };
}

function checkRoom(o: SplitOptions): void {
  const free = freeBytes(dirname(o.dir));
  if (free !== undefined && free < statSync(o.path).size) {
    throw new FlatloadError('OUTPUT_UNWRITABLE', `splitting the input by backend needs about its size (${statSync(o.path).size} bytes) in ${dirname(o.dir)}, which has ${free} bytes free`, {
      hint: 'point --tmpdir at a file system with room for a copy of the input, or load through the Spider front with --route front',
    });
  }
}

function openShares(paths: string[], o: SplitOptions, dispose: () => void): ShareFiles {
  try {
    return new ShareFiles(paths.map((p) => openSync(p, 'w')));
  } catch (err) {
    dispose();
    throw writeError(err, o.dir, o.path);
  }
}

/** The shares' open files, each with its records of the current chunk copied end to end before they are written. */
class ShareFiles {
  readonly records: number[];
  readonly bytes: number[];
  /** A chunk's worth at most, plus a terminator. */
  private out: Buffer[];
  private readonly used: number[];

  constructor(private readonly fds: number[]) {
    this.records = fds.map(() => 0);
    this.bytes = fds.map(() => 0);
    this.used = fds.map(() => 0);
    this.out = fds.map(() => Buffer.alloc(0));
  }

  /** Room for every share to take the whole of a chunk of `room` bytes. */
  reserve(room: number): void {
    if (this.out[0]!.length < room) this.out = this.out.map(() => Buffer.allocUnsafe(room));
  }

  add(s: number, buf: Buffer, start: number, end: number): void {
    this.used[s]! += buf.copy(this.out[s]!, this.used[s], start, end);
    this.records[s]!++;
  }

  addTerminator(s: number, lineTerm: Buffer): void {
    this.used[s]! += lineTerm.copy(this.out[s]!, this.used[s]);
  }

  flush(): void {
    for (let s = 0; s < this.fds.length; s++) {
      if (this.used[s] === 0) continue;
      writeSync(this.fds[s]!, this.out[s]!, 0, this.used[s]);
      this.bytes[s]! += this.used[s]!;
      this.used[s] = 0;
    }
  }

  close(): void {
    for (const fd of this.fds) closeSync(fd);
  }
}

/** Each record of one chunk to its backend's share, then the chunk's shares written. */
function routeChunk(o: SplitOptions, c: CutChunk, shares: ShareFiles): void {
  // Only the fields up to the last partitioning column are read.
  const upTo = Math.max(...o.fields) + 1;
  const targets: ScanTargets = { fields: upTo, textField: o.targets.textField.slice(0, upTo) };
  const values = new Array<Buffer | null | undefined>(o.fields.length);
  const buf = Buffer.concat(c.buffers ?? []);
  const table = recordTable(buf, o.format, o.charset, o.targets);
  shares.reserve(buf.length + o.format.lineTerm.length);
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
    shares.add(s, buf, start, end);
    if (i === table.ends.length - 1 && !table.terminated) shares.addTerminator(s, o.format.lineTerm);
  }
  shares.flush();
}
