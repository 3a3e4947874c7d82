import { appendFileSync, closeSync, fsyncSync, openSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { FlatloadError } from '../errors/index.js';

/**
 * Where rejected rows go: beside the input, named after it
 * (orders.csv → orders.rejects.csv; orders.csv.gz → orders.rejects.csv),
 * or ./<table>.rejects.txt for standard input.
 */
export function defaultRejectPath(input: string, table: string): string {
  if (input === '-') return `${table}.rejects.txt`;
  // A remote input (http(s)://, s3://): in the working directory, named after the object (its query left out).
  const remote = /^[a-z][a-z0-9+.-]*:\/\//i.test(input);
  const object = remote ? input.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').replace(/[?#].*$/, '') : input;
  let name = basename(object).replace(/\.(gz|zst)$/i, '');
  const ext = extname(name);
  name = ext ? name.slice(0, -ext.length) : name;
  if (remote && name === '') return `${table}.rejects.txt`;
  return join(remote ? '.' : dirname(input), `${name}.rejects${ext || '.txt'}`);
}

/**
 * Fails before anything is loaded when rejected rows could not be kept: the
 * reject file (and its .log) must be creatable, or writable regular files.
 * Neither is created here: they exist only once a row is rejected.
 */
export function checkRejectPath(path: string): void {
  for (const p of [path, `${path}.log`]) {
    let existed: boolean;
    try {
      existed = statSync(p).isFile();
      if (!existed) throw rejectPathError(path, `${p} exists and is not a regular file`);
    } catch (err) {
      if (err instanceof FlatloadError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw rejectPathError(path, (err as Error).message);
      existed = false;
    }
    // Permission bits say little (root passes them; /proc refuses anyway): open it for writing, as the load will.
    try {
      closeSync(openSync(p, existed ? 'r+' : 'wx'));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw rejectPathError(path, e.code === 'ENOENT' ? `the directory ${dirname(resolve(p))} does not exist` : `${p}: ${e.message}`);
    }
    if (!existed) unlinkSync(p);
  }
}

function rejectPathError(path: string, why: string): FlatloadError {
  return new FlatloadError('OUTPUT_UNWRITABLE', `cannot write the reject file ${path}: ${why}`, {
    hint: 'give --reject-file a path in a writable directory (rejected rows are kept only there)',
  });
}

/** A row the server would skip or change: its original bytes and why. */
export interface RejectedRow {
  line: number;
  byteOffset: number;
  /** The record's bytes exactly as in the input (terminator included). */
  bytes: Buffer;
  errors: Array<{ code: number; message: string }>;
}

export interface RejectRecord extends RejectedRow {
  chunk: number;
}

/**
 * The reject file holds each rejected record's bytes exactly as they were in
 * the input (after the input's header lines, if it had any), so the same
 * command can load it once fixed. Its companion `<file>.log` has one line
 * per rejected record: line, byte offset, chunk, server error code(s) and
 * message(s), tab-separated. Neither file exists until a row is rejected.
 */
export class RejectFile {
  private started = false;
  private count = 0;

  constructor(
    readonly path: string,
    private readonly header: Buffer,
    private readonly lineTerminator: Buffer,
  ) {}

  get logPath(): string {
    return `${this.path}.log`;
  }

  get rejected(): number {
    return this.count;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    writeFileSync(this.path, this.header);
    writeFileSync(this.logPath, 'line\tbyte_offset\tchunk\tcode\tmessage\n');
  }

  append(rows: readonly RejectRecord[]): void {
    if (rows.length === 0) return;
    this.start();
    const parts: Buffer[] = [];
    const log: string[] = [];
    for (const r of rows) {
      parts.push(r.bytes);
      // The input's last record may lack a terminator; the next reject must not run into it.
      if (this.lineTerminator.length && !r.bytes.subarray(r.bytes.length - this.lineTerminator.length).equals(this.lineTerminator)) {
        parts.push(this.lineTerminator);
      }
      log.push(
        `${r.line}\t${r.byteOffset}\t${r.chunk}\t${r.errors.map((e) => e.code).join(',')}\t${r.errors.map((e) => e.message.replace(/[\t\r\n]+/g, ' ')).join(' | ')}`,
      );
    }
    appendFileSync(this.path, Buffer.concat(parts));
    appendFileSync(this.logPath, `${log.join('\n')}\n`);
    this.count += rows.length;
  }

  /**
   * Rewrites both files in input order (parallel chunks commit out of order)
   * and flushes them to disk: the load is marked done only after this.
   */
  rewrite(rows: readonly RejectRecord[]): void {
    this.started = false;
    this.count = 0;
    const sorted = [...rows].sort((a, b) => a.byteOffset - b.byteOffset);
    if (sorted.length === 0) return;
    this.append(sorted);
    for (const p of [this.path, this.logPath]) {
      const fd = openSync(p, 'r+');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  }
}

/** Rejects as the bookkeeping stores them (JSON, bytes in base64). */
export function encodeRejects(rows: readonly RejectedRow[]): string | null {
  if (rows.length === 0) return null;
  return JSON.stringify(rows.map((r) => ({ line: r.line, byteOffset: r.byteOffset, bytes: r.bytes.toString('base64'), errors: r.errors })));
}

export function decodeRejects(text: string | null, chunk: number): RejectRecord[] {
  if (!text) return [];
  return (JSON.parse(text) as Array<{ line: number; byteOffset: number; bytes: string; errors: Array<{ code: number; message: string }> }>).map((r) => ({
    chunk,
    line: r.line,
    byteOffset: r.byteOffset,
    bytes: Buffer.from(r.bytes, 'base64'),
    errors: r.errors,
  }));
}
