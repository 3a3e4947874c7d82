import { isUtf8 } from 'node:buffer';
import { ILSEQ, type CharsetInfo } from './charsets.js';
import { countNewlines } from './newlines.js';

/**
 * Finds record boundaries exactly as MariaDB's LOAD DATA reader does
 * (sql_load.cc READ_INFO: read_field, read_mbtail, next_line), without
 * building field values. Pure: bytes in, offsets and counts out. The rules,
 * with the server cases that pin them, are in docs/chunking.md.
 *
 * - A field is quoted only when its first byte is the enclosure byte.
 * - The escape byte takes exactly the next byte as data, wherever it is.
 * - Outside quotes the line terminator ends the record (it is tried before
 *   the field terminator); inside quotes it is data. A quote inside quotes
 *   closes the field only when followed by the field terminator, the line
 *   terminator or EOF; doubled it is data; otherwise it is data and the
 *   field stays open.
 * - After the statement's N target fields, the rest of the line is skipped
 *   by next_line(), which honours escapes but not quotes.
 * - Text fields of a multi-byte character set are read character by
 *   character (a trail byte is never special; a malformed sequence can
 *   swallow a terminator); binary, numeric and temporal targets byte by byte.
 *   next_line() always uses the file's character set.
 * - FIELDS TERMINATED BY equal to LINES TERMINATED BY drops the line
 *   terminator (READ_INFO's constructor); without a line terminator a record
 *   is exactly N fields.
 */
export interface ScanFormat {
  fieldTerm: Buffer;
  lineTerm: Buffer;
  /** Enclosure byte, or -1. */
  enclosure: number;
  /** Escape byte, or -1. */
  escape: number;
}

export interface ScanTargets {
  /** N: fields the statement reads per record (columns and @variables). */
  fields: number;
  /** Per target field: does the server scan it as text in the file's character set? */
  textField: readonly boolean[];
}

const enum Mode {
  FieldStart,
  Unquoted,
  Quoted,
  SkipLine,
}

export interface ScanStop {
  /** Index in the buffer where scanning stopped. */
  pos: number;
  /** True when it stopped right after a record end at or beyond `stopAt`. */
  atRecordEnd: boolean;
}

export interface OpenQuote {
  /** Absolute offset of the opening enclosure byte. */
  quoteOffset: number;
  /** Absolute offset where that record began. */
  recordOffset: number;
}

/** Fast-path result: `resumeAt` set when the general path must read on from `pos` until a record ends at or after it. */
interface FastStop extends ScanStop {
  resumeAt?: number;
}

/** Malformed UTF-8 is located by validating pieces of about this size (only after a whole span failed). */
const UTF8_PIECE = 16 * 1024;

const EMPTY = Buffer.alloc(0);

/** term occurs at buf[i] (bounds-checked). */
function matchAt(buf: Buffer, i: number, term: Buffer): boolean {
  const n = term.length;
  if (n === 0 || i + n > buf.length) return false;
  for (let k = 0; k < n; k++) if (buf[i + k] !== term[k]) return false;
  return true;
}

/**
 * Whether matching FT can hide a line terminator or an escape from a plain
 * search: FT is matched at a top-level byte (after LT failed there) and
 * consumes |FT| bytes raw, so an LT starting inside it (`FT=',\n' LT='\n'`:
 * `a,\n` has no line end) or an escape byte inside it is never seen.
 */
function fieldTermHides(ft: Buffer, lt: Buffer, esc: number): boolean {
  for (let k = 1; k < ft.length; k++) {
    if (ft[k] === esc) return true;
    const m = Math.min(ft.length - k, lt.length);
    if (m > 0 && ft.subarray(k, k + m).equals(lt.subarray(0, m))) return true;
  }
  return false;
}

const isAscii = (b: Buffer): boolean => b.every((x) => x < 0x80);

/** Where the last lfRun stopped. */
let runEnd = 0;

/** Whether the byte at t is escaped: an odd run of escape bytes, within the record (from recStart), precedes it. */
export function escapedAt(buf: Buffer, t: number, recStart: number, esc: number): boolean {
  if (esc === -1 || t <= recStart || buf[t - 1] !== esc) return false;
  let k = t - 1;
  while (k > recStart && buf[k - 1] === esc) k--;
  return ((t - k) & 1) === 1;
}

/**
 * Records ending at '\n' from `i` (a record start): each ends at the next
 * newline, while that newline is before `limit`, not preceded by the escape
 * byte (the caller works out escape runs), the record is at most `maxRecord`
 * bytes and the previous record ended before `stopRel`. Returns how many;
 * runEnd is where the last one ended.
 */
function lfRun(buf: Buffer, i: number, limit: number, esc: number, maxRecord: number, stopRel: number): number {
  let n = 0;
  while (i < stopRel) {
    const t = buf.indexOf(0x0a, i);
    if (t === -1 || t >= limit || (t > i && buf[t - 1] === esc) || t + 1 - i > maxRecord) break;
    i = t + 1;
    n++;
  }
  runEnd = i;
  return n;
}

const PAIRS = new WeakMap<CharsetInfo, Uint8Array | null>();

/**
 * For a set whose characters are at most two bytes and where any lead byte
 * asks for exactly one more (ctype-mb.inl without IS_MB3_CHAR), charlen() of
 * every pair, so read_mbtail and next_line become one lookup. Undefined for
 * other sets (UTF-8, ujis/eucjpms).
 */
function pairTable(cs: CharsetInfo, lead: Uint8Array): Uint8Array | undefined {
  if (!cs.multiByte || cs.utf8) return undefined;
  let t = PAIRS.get(cs);
  if (t === undefined) {
    t = new Uint8Array(65536);
    const two = Buffer.alloc(2);
    const one = Buffer.alloc(1);
    check: for (let b0 = 0; b0 < 256; b0++) {
      if (lead[b0] === 0) continue;
      one[0] = b0;
      if (cs.charlen(one, 0, 1) !== -2) {
        t = null;
        break;
      }
      two[0] = b0;
      for (let b1 = 0; b1 < 256; b1++) {
        two[1] = b1;
        const n = cs.charlen(two, 0, 2);
        if (n === 2) t[(b0 << 8) | b1] = 1;
        else if (n !== ILSEQ) {
          t = null;
          break check;
        }
      }
    }
    PAIRS.set(cs, t);
  }
  return t ?? undefined;
}

export class RecordScanner {
  /** Records completed so far. */
  records = 0;
  /** Newline (0x0A) bytes in everything scanned so far (a quoted field can span lines). */
  newlines = 0;
  /** Times the fast path met malformed UTF-8 and handed a stretch to the general path. */
  fastPathFallbacks = 0;
  /** A record longer than this stops the scan right after it, with oversizeRecord set. */
  maxRecordBytes = Number.POSITIVE_INFINITY;
  /** The first completed record longer than maxRecordBytes. */
  oversizeRecord: { offset: number; length: number } | undefined;
  private mode: Mode;
  private field = 0;
  private recordHasBytes = false;
  private recordStartAbs = 0;
  private quoteAbs = -1;
  /** The record-jumping fast path applies to this format (see scanFast). */
  private readonly fast: boolean;
  /** The line terminator ends with its only newline byte: the fast path finds it by its newline. */
  private readonly lfMode: boolean;
  /** The fast path is suspended (a quoted record, malformed UTF-8) until a record ends at or after this offset. */
  private fastResumeAbs = 0;
  private readonly validateUtf8: boolean;
  /** Cache of the last UTF-8 validation: buf[vFrom, vTo) of vBuf is well-formed; vBad ends the piece that is not. */
  private vBuf: Buffer | undefined;
  private vFrom = 0;
  private vTo = 0;
  private vBad = -1;
  /** Next enclosure / escape byte at or after the scan position in cBuf (buf.length: none; stale when behind). */
  private cBuf: Buffer | undefined;
  /** Where the last scan of cBuf stopped: the cursors hold for scans that start there or later. */
  private cPos = 0;
  private cEnc = -1;
  private cEsc = -1;
  private readonly lineTerm: Buffer;
  private readonly fieldTerm: Buffer;
  private readonly lt0: number;
  private readonly ft0: number;
  private readonly nFields: number;
  /** Per field index < nFields: read as multi-byte text. */
  private readonly fieldMb: Uint8Array;
  /** Per byte: non-zero when it is special in that state (tables for the skip loops). */
  private readonly tUnquoted: Uint8Array;
  private readonly tUnquotedMb: Uint8Array;
  private readonly tQuotedMb: Uint8Array;
  private readonly tSkip: Uint8Array;
  /** Per byte: the file charset's charlen() of that byte alone is not 1 (a multi-byte lead, or ILSEQ). */
  private readonly lead: Uint8Array;
  /** Double-byte sets (gbk, big5, sjis, ...): per (lead << 8 | next), 1 when the pair is one character. */
  private readonly pairs: Uint8Array | undefined;
  /** Bytes of lookahead a step may need before it can decide. */
  readonly lookahead: number;

  constructor(
    private readonly fmt: ScanFormat,
    private readonly charset: CharsetInfo,
    private readonly targets: ScanTargets | undefined,
    /** Header mode: every record is one physical line as next_line() reads it (IGNORE n LINES). */
    private readonly linesOnly = false,
    /** fastPath: false reads every record with the general path (a reference for tests). */
    options: { fastPath?: boolean } = {},
  ) {
    this.mode = linesOnly ? Mode.SkipLine : Mode.FieldStart;
    this.fieldTerm = fmt.fieldTerm;
    // READ_INFO: if (m_field_term.eq(m_line_term)) m_line_term.reset();
    this.lineTerm = fmt.lineTerm.length && fmt.lineTerm.equals(fmt.fieldTerm) ? EMPTY : fmt.lineTerm;
    this.lt0 = this.lineTerm.length ? this.lineTerm[0]! : -1;
    this.ft0 = this.fieldTerm.length ? this.fieldTerm[0]! : -1;
    this.nFields = targets ? targets.fields : Number.POSITIVE_INFINITY;
    const esc = fmt.escape;
    this.fast =
      options.fastPath !== false &&
      !linesOnly &&
      this.lineTerm.length > 0 &&
      (esc === -1 || !this.lineTerm.includes(esc)) &&
      !fieldTermHides(this.fieldTerm, this.lineTerm, esc) &&
      (!charset.multiByte || (charset.utf8 && isAscii(this.lineTerm) && isAscii(this.fieldTerm) && esc < 0x80));
    this.lfMode = this.lineTerm.length > 0 && this.lineTerm.indexOf(0x0a) === this.lineTerm.length - 1;
    this.validateUtf8 = charset.multiByte && charset.utf8;
    this.lookahead = Math.max(this.lineTerm.length, this.fieldTerm.length) + 6;
    this.fieldMb = new Uint8Array(targets ? targets.fields : 0);
    for (let f = 0; f < this.fieldMb.length; f++) this.fieldMb[f] = charset.multiByte && targets!.textField[f] === true ? 1 : 0;

    this.lead = new Uint8Array(256);
    if (charset.multiByte) {
      const one = Buffer.alloc(1);
      for (let b = 0; b < 256; b++) {
        one[0] = b;
        if (charset.charlen(one, 0, 1) !== 1) this.lead[b] = 1;
      }
    }
    this.pairs = pairTable(charset, this.lead);
    const table = (bytes: number[], withLead: boolean): Uint8Array => {
      const t = withLead ? Uint8Array.from(this.lead) : new Uint8Array(256);
      for (const b of bytes) if (b >= 0) t[b] = 1;
      return t;
    };
    this.tUnquoted = table([esc, this.lt0, this.ft0], false);
    this.tUnquotedMb = table([esc, this.lt0, this.ft0], true);
    this.tQuotedMb = table([esc, fmt.enclosure], true);
    this.tSkip = table([esc, this.lt0], true);
  }

  /** Absolute offset where the record in progress began. */
  get currentRecordStart(): number {
    return this.recordStartAbs;
  }

  /** Whether the scanner is between records. */
  get atRecordStart(): boolean {
    return !this.recordHasBytes;
  }

  /** Absolute offset of the opening quote while inside a quoted field. */
  get openQuoteOffset(): number | undefined {
    return this.mode === Mode.Quoted ? this.quoteAbs : undefined;
  }

  /**
   * Whether a record with no enclosure byte up to its end ends at the first
   * line terminator that is not escaped, the terminator ending in its only
   * newline, for well-formed UTF-8 (scanFast's rule): recordTable then finds
   * a chunk's records by its newlines, without a call per record.
   */
  get endsAtNewline(): boolean {
    return this.fast && this.lfMode;
  }

  /** Whether the record-jumping fast path is in use (not suspended by a quoted record or malformed UTF-8). */
  get usingFastPath(): boolean {
    return this.fast && this.recordStartAbs >= this.fastResumeAbs;
  }

  /**
   * Scans buf[from..) whose byte 0 is at absolute offset `base`. Stops after
   * the first record end at absolute offset >= stopAt, or where it needs
   * bytes it does not have yet (unless `final`), or at the end. The caller
   * passes the unscanned rest again, followed by more input.
   */
  scan(buf: Buffer, from: number, base: number, final: boolean, stopAt = Number.POSITIVE_INFINITY): ScanStop {
    if (this.linesOnly && this.lineTerm.length === 0) {
      // No line terminator (FT == LT): next_line() returns at once, so IGNORE n LINES skips nothing.
      this.records++;
      return { pos: from, atRecordEnd: true };
    }
    if (!this.fast) return this.scanGeneral(buf, from, base, final, stopAt);
    let pos = from;
    for (;;) {
      if (!this.recordHasBytes && base + pos >= this.fastResumeAbs) {
        const r = this.scanFast(buf, pos, base, final, stopAt);
        if (r.resumeAt === undefined) return r;
        // A record the fast path cannot vouch for: the exact rules take it.
        this.fastResumeAbs = r.resumeAt;
        pos = r.pos;
      }
      const g = this.scanGeneral(buf, pos, base, final, Math.min(stopAt, this.fastResumeAbs));
      if (!g.atRecordEnd || base + g.pos >= stopAt) return g;
      pos = g.pos;
    }
  }

  /**
   * At end of input: counts a final record without terminator. Returns the
   * open quote when the input ended inside a quoted field.
   */
  finish(endAbs: number): OpenQuote | undefined {
    const open = this.mode === Mode.Quoted ? { quoteOffset: this.quoteAbs, recordOffset: this.recordStartAbs } : undefined;
    if (this.recordHasBytes) {
      this.records++;
      this.mode = this.linesOnly ? Mode.SkipLine : Mode.FieldStart;
      this.field = 0;
      this.recordHasBytes = false;
      this.recordStartAbs = endAbs;
      this.quoteAbs = -1;
    }
    return open;
  }

  /**
   * Every byte is a character (single-byte charset, or well-formed UTF-8 with
   * ASCII separators) and the field terminator cannot hide a line terminator
   * or an escape: then a record in which no enclosure byte occurs at or
   * before the first line terminator ends at the first line terminator that is not
   * escaped, whatever N is (read_field and next_line agree on it). Found with
   * indexOf, one call per record; an occurrence is escaped iff an odd run of
   * escape bytes precedes it (the run's first byte is always read at top
   * level), so escapes cost nothing unless they touch a terminator.
   *
   * A record with an enclosure byte is read by the exact rules on the spot:
   * byteRecord (byte-wise, jumping between quotes) when the whole record is
   * in the buffer, else scanGeneral. With the line terminator '\n' (or
   * ending in its only '\n'), newlines are counted by the same search.
   *
   * Scans only up to the last line terminator in the buffer (all of it when
   * `final`), so every call starts and ends at a record boundary. Returns
   * `resumeAt` when the record at `pos` needs the general path: UTF-8 is
   * malformed ahead (resumeAt = the end of the malformed piece), or the
   * unterminated last record has an enclosure byte.
   */
  private scanFast(buf: Buffer, from: number, base: number, final: boolean, stopAt: number): FastStop {
    const term = this.lineTerm;
    const L = term.length;
    const t0 = this.lt0;
    const esc = this.fmt.escape;
    const enc = this.fmt.enclosure;
    const lfMode = this.lfMode;
    let end: number;
    if (final) end = buf.length;
    else {
      const last = L === 1 ? buf.lastIndexOf(t0) : buf.lastIndexOf(term);
      end = last < from ? from : last + L;
    }
    let validEnd = end;
    let badEnd = -1;
    if (this.validateUtf8 && end > from) {
      const cached = this.vBuf === buf && this.vFrom <= from && from <= this.vTo && (this.vTo >= end || this.vBad !== -1);
      if (!cached) this.validate(buf, from, end);
      if (this.vTo < end) {
        validEnd = this.vTo;
        badEnd = Math.min(this.vBad, end);
      }
    }
    if (this.cBuf !== buf || from < this.cPos) {
      this.cBuf = buf;
      this.cEnc = -1;
      this.cEsc = -1;
    }
    // Quoted records are read byte-wise up to here (well-formed, and enough lookahead).
    const byteLimit = Math.min(validEnd, final ? buf.length : buf.length - this.lookahead);
    let nextEnc = enc === -1 ? Number.POSITIVE_INFINITY : this.cEnc;
    const maxRecord = this.maxRecordBytes;
    let i = from; // terminator occurrences are looked for from here
    let recStart = from;
    let records = this.records;
    let lf = 0; // lfMode: newlines before recStart not yet added to this.newlines
    let lfPending = 0; // lfMode: newlines seen in the record in progress
    let s = from; // lfMode: next byte to look at for a newline
    let nextLf = -2; // lfMode: the newline at or after s, when already found (-1: none; -2: not looked for)
    let segFrom = from; // otherwise: newlines of [segFrom, recStart) not yet counted
    let stopped = false;
    const plainLf = lfMode && L === 1;
    for (;;) {
      if (plainLf && nextLf === -2 && s === i && i === recStart) {
        // The common case, in a small loop V8 compiles tightly: plain records, one indexOf each.
        let lim = validEnd;
        if (nextEnc < lim) {
          if (nextEnc < recStart) nextEnc = this.nextByte(buf, enc, recStart);
          if (nextEnc < lim) lim = nextEnc;
        }
        const n = lfRun(buf, i, lim, esc, maxRecord, stopAt - base);
        if (n > 0) {
          records += n;
          lf += n;
          i = s = recStart = runEnd;
          if (base + i >= stopAt) {
            stopped = true;
            break;
          }
        }
      }
      let t: number;
      let tl = -1;
      if (lfMode) {
        // Look for the terminator's newline: every newline is seen, so counting them is free.
        tl = nextLf === -2 ? buf.indexOf(0x0a, s) : nextLf;
        nextLf = -2;
        if (tl === -1 || tl >= validEnd) break;
        s = tl + 1;
        t = tl - L + 1;
        if (t < i || (L > 1 && !matchAt(buf, t, term))) {
          lfPending++; // a newline that is not (the end of) a terminator
          continue;
        }
      } else {
        t = buf.indexOf(t0, i);
        if (L > 1) while (t !== -1 && !matchAt(buf, t, term)) t = buf.indexOf(t0, t + 1);
        if (t === -1 || t + L > validEnd) break;
      }
      let e: number; // where this record ends
      if (nextEnc <= t && (nextEnc >= recStart || (nextEnc = this.nextByte(buf, enc, recStart)) <= t)) {
        // An enclosure in this record: the exact rules read it, byte-wise when they can.
        e = this.byteRecord(buf, recStart, byteLimit);
        if (e === -1) {
          this.records = records;
          this.recordStartAbs = base + recStart;
          this.newlines += lfMode ? lf : countNewlines(buf, segFrom, recStart);
          lf = lfPending = 0;
          // byteRecord moved the cursors past bytes the general path reads again: start them afresh.
          this.cPos = recStart;
          this.cEnc = -1;
          this.cEsc = -1;
          const g = this.scanGeneral(buf, recStart, base, final, base + recStart + 1);
          if (!g.atRecordEnd) {
            // Out of input (or oversize) inside it: the general path goes on from here on the next call.
            this.fastResumeAbs = base + recStart + 1;
            return g;
          }
          records = this.records;
          i = s = segFrom = recStart = g.pos;
          if (base + i >= stopAt) {
            stopped = true;
            break;
          }
          continue;
        }
        if (lfMode) {
          // The record's newlines from the first one found on.
          let k = tl;
          while (k !== -1 && k < e) {
            lfPending++;
            k = buf.indexOf(0x0a, k + 1);
          }
          nextLf = k;
          s = e;
        }
      } else {
        if (escapedAt(buf, t, recStart, esc)) {
          i = t + 1; // the escape takes the terminator's first byte
          if (lfMode) lfPending++;
          continue;
        }
        e = t + L;
        if (lfMode) lfPending++;
      }
      i = e;
      records++;
      lf += lfPending;
      lfPending = 0;
      if (i - recStart > maxRecord) {
        this.oversizeRecord = { offset: base + recStart, length: i - recStart };
        this.records = records;
        this.recordStartAbs = base + i;
        this.newlines += lfMode ? lf : countNewlines(buf, segFrom, i);
        return { pos: i, atRecordEnd: false };
      }
      recStart = i;
      if (base + i >= stopAt) {
        stopped = true;
        break;
      }
    }
    this.cPos = recStart;
    if (enc !== -1) this.cEnc = nextEnc;
    this.records = records;
    this.recordStartAbs = base + recStart;
    this.newlines += lfMode ? lf : countNewlines(buf, segFrom, recStart);
    if (stopped) return { pos: recStart, atRecordEnd: true };
    if (badEnd !== -1) {
      if (recStart >= badEnd) return { pos: recStart, atRecordEnd: false, resumeAt: base + recStart + 1 }; // validate afresh
      this.fastPathFallbacks++;
      return { pos: recStart, atRecordEnd: false, resumeAt: base + badEnd };
    }
    if (final) {
      if (recStart < buf.length) {
        // What follows the last terminator is a record without one; an enclosure in it needs the exact rules.
        if (enc !== -1 && buf.indexOf(enc, recStart) !== -1) return { pos: recStart, atRecordEnd: false, resumeAt: base + buf.length };
        this.recordHasBytes = true;
        this.newlines += countNewlines(buf, recStart, buf.length);
      }
      return { pos: buf.length, atRecordEnd: false };
    }
    // Stop at the last record boundary, so the next call starts on one.
    return { pos: recStart, atRecordEnd: false };
  }

  /** indexOf, with "none" as buf.length. */
  private nextByte(buf: Buffer, byte: number, from: number): number {
    const j = buf.indexOf(byte, from);
    return j === -1 ? buf.length : j;
  }

  /**
   * The exact rules (read_field N times, then next_line) for one record
   * starting at `from`, byte by byte: valid where every byte is a character
   * (single-byte charset, or well-formed UTF-8 with ASCII separators). Quoted
   * fields jump from enclosure to enclosure. Returns the record's end, or -1
   * when it needs bytes at or past `limit` (end of input, an open quote, a
   * record longer than the buffer): the general path then reads it.
   */
  private byteRecord(buf: Buffer, from: number, limit: number): number {
    const lineTerm = this.lineTerm;
    const fieldTerm = this.fieldTerm;
    const enc = this.fmt.enclosure;
    const esc = this.fmt.escape;
    const lt0 = this.lt0;
    const ft0 = this.ft0;
    const LL = lineTerm.length;
    const FL = fieldTerm.length;
    const nFields = this.nFields;
    const tU = this.tUnquoted;
    let i = from;
    let field = 0;
    fields: for (;;) {
      if (i >= limit) return -1;
      if (buf[i] === enc) {
        i++;
        for (;;) {
          let q = this.cEnc;
          if (q < i) this.cEnc = q = this.nextByte(buf, enc, i);
          if (esc !== -1 && esc !== enc) {
            let x = this.cEsc;
            if (x < i) this.cEsc = x = this.nextByte(buf, esc, i);
            if (x < q) {
              if (x + 1 >= limit) return -1;
              i = x + 2; // an escaped byte is data
              continue;
            }
          }
          const n = q + 1;
          if (n >= limit) return -1;
          const d = buf[n]!;
          if (d === enc) {
            i = n + 1; // doubled: one literal enclosure
            continue;
          }
          if (d === lt0 && (LL === 1 || matchAt(buf, n, lineTerm))) return n + LL;
          if (d === ft0 && (FL === 1 || matchAt(buf, n, fieldTerm))) {
            i = n + FL;
            if (++field >= nFields) break fields;
            continue fields;
          }
          i = n; // a quote that closes nothing is data; still quoted
        }
      }
      for (;;) {
        while (i < limit && tU[buf[i]!] === 0) i++;
        if (i >= limit) return -1;
        const c = buf[i]!;
        if (c === esc) {
          if (i + 1 >= limit) return -1;
          if (esc !== enc || buf[i + 1] === esc) {
            i += 2;
            continue;
          }
        }
        if (c === lt0 && (LL === 1 || matchAt(buf, i, lineTerm))) return i + LL;
        if (c === ft0 && (FL === 1 || matchAt(buf, i, fieldTerm))) {
          i += FL;
          if (++field >= nFields) break fields;
          continue fields;
        }
        i++;
      }
    }
    // next_line(): the rest of the line, quote-blind, escape-aware.
    for (;;) {
      while (i < limit) {
        const c = buf[i]!;
        if (c === esc || c === lt0) break;
        i++;
      }
      if (i >= limit) return -1;
      if (buf[i] === esc) {
        if (i + 1 >= limit) return -1;
        i += 2;
        continue;
      }
      if (LL === 1 || matchAt(buf, i, lineTerm)) return i + LL;
      i++;
    }
  }

  /** Validates buf[from, end) as UTF-8, piece by piece (cut after line terminators) when it is not all well-formed. */
  private validate(buf: Buffer, from: number, end: number): void {
    this.vBuf = buf;
    this.vFrom = from;
    this.vBad = -1;
    if (isUtf8(buf.subarray(from, end))) {
      this.vTo = end;
      return;
    }
    // Cutting right after an ASCII terminator never splits a character, so
    // the pieces are well-formed iff their concatenation is.
    const term = this.lineTerm;
    let p = from;
    while (p < end) {
      const t = buf.indexOf(term, Math.min(p + UTF8_PIECE, end));
      const q = t === -1 || t + term.length > end ? end : t + term.length;
      if (!isUtf8(buf.subarray(p, q))) {
        this.vTo = p;
        this.vBad = q;
        return;
      }
      p = q;
    }
    this.vTo = end; // not reached: the whole span was malformed
  }

  /** Whether field `field` is read as multi-byte text (fields past N are skipped by next_line, file charset). */
  private isText(field: number): boolean {
    if (!this.charset.multiByte) return false;
    return field >= this.fieldMb.length ? this.targets === undefined : this.fieldMb[field] === 1;
  }

  /**
   * read_field() N times, then next_line(), exactly. Runs of ordinary bytes
   * are skipped by a table lookup (unquoted fields, next_line) or by indexOf
   * for the enclosure and the escape (quoted byte-wise fields); only special
   * bytes (escape, terminator first bytes, enclosure, multi-byte lead bytes
   * of a text field) take the exact slow steps.
   */
  private scanGeneral(buf: Buffer, from: number, base: number, final: boolean, stopAt: number): ScanStop {
    const lineTerm = this.lineTerm;
    const fieldTerm = this.fieldTerm;
    const enc = this.fmt.enclosure;
    const esc = this.fmt.escape;
    const lt0 = this.lt0;
    const ft0 = this.ft0;
    const LL = lineTerm.length;
    const FL = fieldTerm.length;
    const linesOnly = this.linesOnly;
    const nFields = this.nFields;
    const csMb = this.charset.multiByte;
    const lead = this.lead;
    const tSkip = this.tSkip;
    const end = buf.length;
    const stop = final ? end : end - this.lookahead;
    const maxRecord = this.maxRecordBytes;
    // Up to byteUntil the fast path found well-formed UTF-8 (and the separators are ASCII): there a
    // text field read byte by byte ends exactly where it does read character by character.
    const byteUntil = enc < 0x80 && this.vBuf === buf && this.vFrom <= from && from < this.vTo ? this.vTo : -1;

    let mode = this.mode;
    let field = this.field;
    let hasBytes = this.recordHasBytes;
    let recStart = this.recordStartAbs;
    let quoteAbs = this.quoteAbs;
    let records = this.records;
    let mbField = this.isText(field);
    let mb = mbField && from >= byteUntil;
    // Cursors: next enclosure / escape at or after i (end: none; behind i: stale).
    const same = this.cBuf === buf && from >= this.cPos;
    let nEnc = enc === -1 ? end : same ? this.cEnc : -1;
    let nEsc = esc === -1 ? end : same ? this.cEsc : -1;
    let atRecordEnd = false;
    let i = from;

    loop: while (i < stop) {
      let recordEnd = false;
      switch (mode) {
        case Mode.FieldStart: {
          if (!hasBytes) {
            hasBytes = true;
            recStart = base + i;
          }
          mbField = csMb && this.isText(field);
          mb = mbField && i >= byteUntil;
          if (buf[i] === enc) {
            mode = Mode.Quoted;
            quoteAbs = base + i;
            i++;
          } else {
            mode = Mode.Unquoted;
          }
          continue loop;
        }
        case Mode.Unquoted: {
          const t = mb ? this.tUnquotedMb : this.tUnquoted;
          const lim = mbField && !mb && byteUntil < stop ? byteUntil : stop;
          while (i < lim && t[buf[i]!] === 0) i++;
          if (i >= lim) {
            if (lim === stop) break loop;
            mb = true; // past the well-formed stretch: characters again
            continue loop;
          }
          const c = buf[i]!;
          if (c === esc) {
            if (i + 1 >= end) {
              i = end; // escape then EOF: the escape byte is data, the record ends at EOF
              break loop;
            }
            if (esc !== enc || buf[i + 1] === esc) {
              i += 2;
              continue loop;
            }
            // ESCAPED BY = ENCLOSED BY and not doubled: the byte is an (unquoted, so data) enclosure.
          }
          if (c === lt0 && (LL === 1 || matchAt(buf, i, lineTerm))) {
            i += LL;
            recordEnd = true;
            break;
          }
          if (c === ft0 && (FL === 1 || matchAt(buf, i, fieldTerm))) {
            i += FL;
            field++;
            quoteAbs = -1;
            if (field < nFields) mode = Mode.FieldStart;
            else if (LL === 0) recordEnd = true; // no lines: a record is N fields
            else mode = Mode.SkipLine;
            break;
          }
          i += mb ? this.mbTail(buf, i, end) : 1;
          continue loop;
        }
        case Mode.Quoted: {
          if (mb) {
            const t = this.tQuotedMb;
            while (i < stop && t[buf[i]!] === 0) i++;
          } else {
            // Byte-wise: only the enclosure and the escape matter; jump to the nearer.
            if (nEnc < i) {
              nEnc = buf.indexOf(enc, i);
              if (nEnc === -1) nEnc = end;
            }
            if (nEsc < i) {
              nEsc = buf.indexOf(esc, i);
              if (nEsc === -1) nEsc = end;
            }
            const j = nEnc < nEsc ? nEnc : nEsc;
            if (mbField && j > byteUntil) {
              if (byteUntil >= stop) {
                i = stop;
                break loop;
              }
              i = byteUntil; // past the well-formed stretch: characters again
              mb = true;
              continue loop;
            }
            i = j > stop ? stop : j;
          }
          if (i >= stop) break loop;
          const c = buf[i]!;
          if (c === esc) {
            if (i + 1 >= end) {
              i = end;
              break loop;
            }
            if (esc !== enc || buf[i + 1] === esc) {
              i += 2;
              continue loop;
            }
            // ESCAPED BY = ENCLOSED BY and not doubled: the byte acts as the enclosure.
          }
          if (c === enc) {
            const n = i + 1;
            if (n >= end) {
              // Quote then EOF closes the field and the record.
              mode = Mode.Unquoted;
              quoteAbs = -1;
              i = n;
              break loop;
            }
            const d = buf[n]!;
            if (d === enc) {
              i += 2;
              continue loop;
            }
            if (d === lt0 && (LL === 1 || matchAt(buf, n, lineTerm))) {
              i = n + LL;
              recordEnd = true;
              break;
            }
            if (d === ft0 && (FL === 1 || matchAt(buf, n, fieldTerm))) {
              i = n + FL;
              field++;
              quoteAbs = -1;
              if (field < nFields) mode = Mode.FieldStart;
              else if (LL === 0) recordEnd = true;
              else mode = Mode.SkipLine;
              break;
            }
            // A quote that closes nothing is data; the field stays quoted.
          }
          i += mb ? this.mbTail(buf, i, end) : 1;
          continue loop;
        }
        case Mode.SkipLine: {
          // next_line(): quote-blind, escape-aware, multi-byte in the file's charset.
          if (!hasBytes) {
            hasBytes = true;
            recStart = base + i;
          }
          while (i < stop && tSkip[buf[i]!] === 0) i++;
          if (i >= stop) break loop;
          const c = buf[i]!;
          if (csMb && lead[c] === 1) {
            // Its bytes are taken while the sequence is "too small", and never given back.
            const g = this.skipGroup(buf, i, end);
            if (c === lt0 && g <= LL && matchAt(buf, i, lineTerm)) {
              i += LL;
              recordEnd = true;
              break;
            }
            i += g;
            continue loop;
          }
          if (c === esc) {
            i += i + 1 < end ? 2 : 1;
            continue loop;
          }
          if (c === lt0 && (LL === 1 || matchAt(buf, i, lineTerm))) {
            i += LL;
            recordEnd = true;
            break;
          }
          i++;
          continue loop;
        }
      }
      if (recordEnd) {
        records++;
        mode = linesOnly ? Mode.SkipLine : Mode.FieldStart;
        field = 0;
        hasBytes = false;
        if (base + i - recStart > maxRecord) {
          this.oversizeRecord = { offset: recStart, length: base + i - recStart };
          recStart = base + i;
          break loop;
        }
        recStart = base + i;
        quoteAbs = -1;
        if (base + i >= stopAt) {
          atRecordEnd = true;
          break loop;
        }
      }
    }
    this.mode = mode;
    this.field = field;
    this.recordHasBytes = hasBytes;
    this.recordStartAbs = recStart;
    this.quoteAbs = quoteAbs;
    this.records = records;
    this.cBuf = buf;
    this.cPos = i;
    this.cEnc = nEnc;
    this.cEsc = nEsc;
    if (i > from) this.newlines += countNewlines(buf, from, i);
    return { pos: i, atRecordEnd };
  }

  /** read_mbtail(): after a data byte, the rest of its character; the byte that makes it invalid is read again. */
  private mbTail(buf: Buffer, i: number, end: number): number {
    const b0 = buf[i]!;
    if (this.lead[b0] === 0) return 1;
    const pairs = this.pairs;
    if (pairs !== undefined) {
      if (i + 1 >= end) return end - i;
      return pairs[(b0 << 8) | buf[i + 1]!] === 1 ? 2 : 1;
    }
    const cs = this.charset;
    let chlen = cs.charlen(buf, i, i + 1);
    if (chlen === 1 || chlen === ILSEQ) return 1;
    let k = 1;
    while (chlen < 0) {
      if (i + k >= end) return end - i; // EOF inside a character
      k++;
      chlen = cs.charlen(buf, i, i + k);
      if (chlen === ILSEQ) return k - 1;
    }
    return k;
  }

  /** next_line(): a character's bytes are taken while the sequence is "too small", and never given back. */
  private skipGroup(buf: Buffer, i: number, end: number): number {
    if (this.pairs !== undefined && this.lead[buf[i]!] === 1) return i + 1 < end ? 2 : end - i;
    const cs = this.charset;
    let chlen = cs.charlen(buf, i, i + 1);
    let k = 1;
    while (chlen < 0) {
      if (i + k >= end) return end - i;
      k++;
      chlen = cs.charlen(buf, i, i + k);
    }
    return k;
  }
}
