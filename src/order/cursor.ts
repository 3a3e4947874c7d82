import type { FileHandle } from 'node:fs/promises';
import { FlatloadError } from '../errors/index.js';
import { ByteSink, plainInteger, putInteger, type PlainIntegerReader } from './key.js';
import { viewOf } from './copy.js';
import { readAt, type RunBlocks, type RunPosition } from './runFile.js';
import { blockBytesOf, decompressBlockInto, RUN_BLOCK_BYTES } from './codec.js';

/** The layout facts a cursor needs (a manifest run entry has them). */
export interface RunShape {
  file: string;
  records: number;
  /** Uncompressed sizes of the records and meta sections. */
  recordBytes: number;
  metaBytes: number;
  /** Compressed sizes of the records and meta sections, and of the whole file. */
  recordFileBytes: number;
  metaFileBytes: number;
  fileBytes: number;
  maxRecordBytes: number;
  maxKeyBytes: number;
  intKeys: boolean;
}

/** advance(): a record is current / the cursor is past its last record / a buffer must be refilled first. */
const READY = 1;
export const END = 0;
export const REFILL = -1;

function corrupt(file: string): FlatloadError {
  return new FlatloadError('SPILL', `${file} is shorter than its manifest says (removed or truncated while sorting?)`);
}


/** Where the last varintAt() stopped. */
let varintEnd = 0;

/** An unsigned LEB128 varint (uint32) at buf[p]. */
function varintAt(buf: Buffer, p: number): number {
  let v = 0;
  let shift = 0;
  let b: number;
  do {
    b = buf[p++]!;
    v |= (b & 0x7f) << shift;
    shift += 7;
  } while (b >= 0x80);
  varintEnd = p;
  return v >>> 0;
}

/**
 * A fast-path record's key when it is the first field: the sort read it with
 * plainInteger, so it is '-'? and 1-15 digits followed by a terminator, and
 * this reads the same number (never -0) without checking that again. The
 * terminators must have no digit (leadKeys), or the digits could run on.
 */
function leadInteger(b: Buffer, s: number): number {
  const neg = b[s] === 0x2d;
  let i = neg ? s + 1 : s;
  let v = 0;
  for (let c = b[i]!; c >= 0x30 && c <= 0x39; c = b[++i]!) v = v * 10 + (c - 0x30);
  return neg ? 0 - v : v;
}

/** Whether leadInteger reads the keys: the first field, and no digit in a terminator to read on into. */
function leadKeys(r: PlainIntegerReader): boolean {
  const digit = (c: number): boolean => c >= 0x30 && c <= 0x39;
  return r.field === 0 && !r.ft.some(digit) && !r.lt.some(digit);
}

/** Records a fast-path cursor decodes ahead at a time: their bytes stay in cache until the merge copies them. */
const INT_BATCH = 256;

/** Decoded records: record j is at [ends[j], ends[j + 1]) of the records window, its meta entry at metas[j], its key keys[j]; the current one is at. */
interface IntBatch {
  ends: Uint32Array;
  metas: Uint32Array;
  keys: Float64Array;
  at: number;
  count: number;
}

function intBatch(n: number): IntBatch {
  return { ends: new Uint32Array(n + 1), metas: new Uint32Array(n), keys: new Float64Array(n), at: 0, count: 0 };
}

/** The smallest window that always has room for a whole block beside the longest entry it keeps. */
export function windowBytes(want: number, maxEntry: number, block: number): number {
  return Math.max(want, block + maxEntry);
}

/**
 * Room for compressed blocks read from a file. The cursors of one merge
 * refill one at a time, so they share one: a window then costs only its
 * uncompressed bytes.
 */
export class PackedBuffer {
  private buf = Buffer.allocUnsafe(0);
  private block = Buffer.allocUnsafe(0);

  take(n: number): Buffer {
    if (this.buf.length < n) this.buf = Buffer.allocUnsafe(Math.max(n, RUN_BLOCK_BYTES));
    return this.buf;
  }

  /** Room for one uncompressed block (a window entered mid-block). */
  plain(n: number): Buffer {
    if (this.block.length < n) this.block = Buffer.allocUnsafe(Math.max(n, RUN_BLOCK_BYTES));
    return this.block;
  }
}

/** One sequential reader of a section: a window of its uncompressed bytes in a buffer, filled block by block. */
class Window {
  buf: Buffer;
  view: DataView;
  /** Section position of buf[0]. */
  filePos: number;
  /** Valid bytes in buf. */
  fill = 0;
  /** Next unread byte in buf. */
  head = 0;

  constructor(
    size: number,
    start: number,
    /** The section's uncompressed length. */
    readonly sectionEnd: number,
    readonly file: string,
    /** Where the section's blocks are in the file. */
    private readonly blockAt: Float64Array,
    /** The section's uncompressed block size. */
    private readonly block: number,
    private readonly packed: PackedBuffer,
  ) {
    this.buf = Buffer.allocUnsafe(size);
    this.view = viewOf(this.buf);
    this.filePos = start;
  }

  get atEnd(): boolean {
    return this.filePos + this.head >= this.sectionEnd;
  }

  /** Whether n bytes from head are in the buffer (or the section ends before). */
  has(n: number): boolean {
    return this.fill - this.head >= n || this.filePos + this.fill >= this.sectionEnd;
  }

  /** Keeps the unread bytes and decompresses as many whole blocks after them as fit (at least one). */
  async refill(fh: FileHandle): Promise<void> {
    const keep = this.fill - this.head;
    if (this.head > 0) this.buf.copyWithin(0, this.head, this.fill);
    this.filePos += this.head;
    this.head = 0;
    this.fill = keep;
    const at = this.filePos + keep;
    if (at >= this.sectionEnd) return;
    const first = Math.floor(at / this.block);
    const skip = at - first * this.block;
    const room = this.buf.length - keep;
    let last = first;
    let bytes = this.blockLength(first) - skip;
    while (last + 1 < this.blockAt.length - 1 && bytes + this.blockLength(last + 1) <= room) bytes += this.blockLength(++last);
    if (bytes > room) throw new FlatloadError('INTERNAL', `a run window of ${this.buf.length} bytes has no room for a block of ${this.file}`);
    const from = this.blockAt[first]!;
    const span = this.blockAt[last + 1]! - from;
    const packed = this.packed.take(span);
    if ((await readAt(fh, packed, 0, span, from)) < span) throw corrupt(this.file);
    for (let b = first; b <= last; b++) {
      const block = packed.subarray(this.blockAt[b]! - from, this.blockAt[b + 1]! - from);
      const len = this.blockLength(b);
      if (b === first && skip > 0) {
        // Entered mid-block (a seek): the whole block, then only its bytes from skip.
        const plain = this.packed.plain(len);
        decompressBlockInto(block, plain, 0, len, this.file);
        this.fill += plain.copy(this.buf, this.fill, skip, len);
      } else {
        decompressBlockInto(block, this.buf, this.fill, len, this.file);
        this.fill += len;
      }
    }
  }

  private blockLength(b: number): number {
    return Math.min(this.block, this.sectionEnd - b * this.block);
  }
}

/**
 * Reads a run's records in key order from a position up to a limit
 * ordinal, through two small windows (records, meta). advance() is
 * synchronous and says REFILL when a window must be read first; the
 * current record (bytes, input position, key) stays valid until the next
 * advance().
 */
export class RunCursor {
  /** Ordinal of the current record (before the first advance(): one before the start). */
  ordinal: number;
  /** The current record: recBuf[recStart, recStart + recLen) (recView: a DataView of recBuf). */
  recBuf: Buffer;
  recView: DataView;
  recStart = 0;
  recLen = 0;
  /** Its offset in the input chunk and newlines before it there. */
  relOffset = 0;
  relLine = 0;
  /** Its key as a number (fast-path runs). */
  num = 0;
  /** Its encoded key: keyBuf[keyStart, keyEnd) (the meta window, or this cursor's own buffer for fast-path runs); keyView a DataView of keyBuf. */
  keyBuf: Buffer;
  keyView: DataView;
  keyStart = 0;
  keyEnd = 0;
  /** Where the current record's meta entry starts in the meta window (position() adds the window's place). */
  private metaStart = 0;

  private readonly rec: Window;
  private readonly meta: Window;
  private readonly ownKey: ByteSink | undefined;
  private readonly metaMax: number;
  /** Bytes the next record needs in the records window. */
  private wantRec = 0;
  /** The integer key is the record's first field (read without plainInteger's checks). */
  private readonly leadKey: boolean;
  /** Fast-path runs in a merge of fast-path runs only: records decoded ahead (advanceInt). */
  private readonly batch: IntBatch | undefined;

  constructor(
    private readonly fh: FileHandle,
    readonly run: RunShape,
    blocks: RunBlocks,
    from: RunPosition,
    /** Ordinal the cursor stops before. */
    readonly limit: number,
    bufferBytes: number,
    private readonly intReader: PlainIntegerReader | undefined,
    /** Fast-path runs: also encode each key (a merge with runs off the fast path compares bytes). */
    encodeInts: boolean,
    /** Read only the meta entries (where records came from), not the records nor their keys. */
    private readonly metaOnly = false,
    /** Shared with other cursors that never refill at the same time (default: this cursor's own). */
    packed = new PackedBuffer(),
  ) {
    this.ordinal = from.ordinal - 1;
    const recBlock = blockBytesOf('records');
    const metaBlock = blockBytesOf('meta');
    this.rec = new Window(metaOnly ? 1 : windowBytes(bufferBytes, run.maxRecordBytes, recBlock), from.recPos, run.recordBytes, run.file, blocks.records, recBlock, packed);
    this.metaMax = 20 + run.maxKeyBytes;
    this.meta = new Window(windowBytes(bufferBytes >>> 2, 2 * this.metaMax, metaBlock), from.metaPos, run.metaBytes, run.file, blocks.meta, metaBlock, packed);
    this.recBuf = this.rec.buf;
    this.recView = this.rec.view;
    this.keyBuf = this.meta.buf;
    this.keyView = this.meta.view;
    this.ownKey = run.intKeys && encodeInts ? new ByteSink(32) : undefined;
    if (run.intKeys && !intReader && !metaOnly) throw new FlatloadError('INTERNAL', 'a fast-path run needs the integer key reader');
    this.leadKey = intReader !== undefined && leadKeys(intReader);
    this.batch = run.intKeys && !encodeInts && !metaOnly ? intBatch(INT_BATCH) : undefined;
  }

  /** Where the current record starts in the run: valid after advance() returned READY, until the next refill(). */
  position(): RunPosition {
    return { ordinal: this.ordinal, recPos: this.rec.filePos + this.recStart, metaPos: this.meta.filePos + this.metaStart };
  }

  /** Moves to the next record. */
  advance(): number {
    if (this.batch) return this.advanceInt();
    if (this.ordinal + 1 >= this.limit) return END;
    const m = this.meta;
    if (!m.has(this.metaMax)) return REFILL;
    const mb = m.buf;
    const relOffset = varintAt(mb, m.head);
    const len = varintAt(mb, varintEnd);
    const r = this.rec;
    if (r.fill - r.head < len && !this.metaOnly) {
      this.wantRec = len;
      return REFILL;
    }
    const relLine = varintAt(mb, varintEnd);
    let p = varintEnd;
    this.metaStart = m.head;
    if (!this.run.intKeys) {
      const kLen = varintAt(mb, p);
      p = varintEnd;
      this.keyBuf = mb;
      this.keyView = m.view;
      this.keyStart = p;
      this.keyEnd = p + kLen;
      p += kLen;
    }
    m.head = p;
    this.ordinal++;
    this.relOffset = relOffset;
    this.relLine = relLine;
    this.recBuf = r.buf;
    this.recStart = r.head;
    this.recLen = len;
    if (this.metaOnly) return READY;
    r.head += len;
    if (this.run.intKeys) {
      this.num = plainInteger(r.buf, this.recStart, this.recStart + len, this.intReader!);
      if (this.ownKey) {
        this.ownKey.length = 0;
        putInteger(this.ownKey, this.num);
        if (this.keyBuf !== this.ownKey.bytes) this.keyView = viewOf(this.ownKey.bytes);
        this.keyBuf = this.ownKey.bytes;
        this.keyStart = 0;
        this.keyEnd = this.ownKey.length;
      }
    }
    return READY;
  }

  /**
   * advance() for a merge of fast-path runs only (the cursor was made with
   * encodeInts false): the record and its key (num), from a batch decoded
   * ahead, not its input position. Returns READY, END or REFILL.
   */
  advanceInt(): number {
    const b = this.batch!;
    let j = b.at + 1;
    if (j >= b.count) {
      const s = this.decodeBatch(b);
      if (s !== READY) return s;
      j = 0;
    }
    b.at = j;
    const start = b.ends[j]!;
    this.recStart = start;
    this.recLen = b.ends[j + 1]! - start;
    this.metaStart = b.metas[j]!;
    this.num = b.keys[j]!;
    this.ordinal++;
    return READY;
  }

  /**
   * Decodes the meta entries and keys of the next records whose entry and
   * bytes are both in the windows, up to a batch: one tight pass over
   * sequential bytes, where a merge would take them one at a time from
   * every run in turn. Called when the batch is used up (the windows' heads
   * are past it, so a refill keeps nothing of it).
   */
  private decodeBatch(b: IntBatch): number {
    const done = this.ordinal + 1;
    const max = Math.min(b.keys.length, this.limit - done);
    if (max <= 0) return END;
    const m = this.meta;
    const r = this.rec;
    const mb = m.buf;
    const rb = r.buf;
    // An entry that starts at or below safe is whole in the window (all of them once the section's end is in).
    const safe = m.filePos + m.fill >= m.sectionEnd ? m.fill : m.fill - this.metaMax;
    const rFill = r.fill;
    let p = m.head;
    let q = r.head;
    let n = 0;
    b.ends[0] = q;
    while (n < max && p <= safe) {
      const entry = p;
      while (mb[p++]! >= 0x80); // the input offset: only locate() needs it
      let len = mb[p++]!;
      if (len >= 0x80) {
        len = varintAt(mb, p - 1);
        p = varintEnd;
      }
      if (rFill - q < len) {
        if (n === 0) this.wantRec = len;
        p = entry;
        break;
      }
      while (mb[p++]! >= 0x80); // the line: only locate() needs it
      b.metas[n] = entry;
      b.keys[n] = this.leadKey ? leadInteger(rb, q) : plainInteger(rb, q, q + len, this.intReader!);
      q += len;
      b.ends[++n] = q;
    }
    m.head = p;
    r.head = q;
    b.at = 0;
    b.count = n;
    return n > 0 ? READY : REFILL;
  }

  /** Reads what advance() found missing. */
  async refill(): Promise<void> {
    const m = this.meta;
    if (!m.has(this.metaMax)) await m.refill(this.fh);
    const r = this.rec;
    if (r.fill - r.head < this.wantRec) {
      if (r.filePos + r.fill >= r.sectionEnd) throw corrupt(this.run.file);
      await r.refill(this.fh);
    }
    this.wantRec = 0;
  }

  /** advance(), refilling as needed. */
  async next(): Promise<boolean> {
    for (;;) {
      const s = this.advance();
      if (s !== REFILL) return s === READY;
      await this.refill();
    }
  }

  /** The current record's key as a new Buffer. */
  keyCopy(): Buffer {
    return Buffer.from(this.keyBuf.subarray(this.keyStart, this.keyEnd));
  }
}
