import { isUtf8 } from 'node:buffer';
import { ILSEQ, type CharsetInfo } from './charsets.js';

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

export class RecordScanner {
  /** Records completed so far. */
  records = 0;
  private mode: Mode;
  private field = 0;
  private recordHasBytes = false;
  private recordStartAbs = 0;
  private quoteAbs = -1;
  private fast: boolean;
  private readonly validateUtf8: boolean;
  private readonly lt0: number;
  private readonly ft0: number;
  /** Bytes of lookahead a step may need before it can decide. */
  readonly lookahead: number;

  constructor(
    private readonly fmt: ScanFormat,
    private readonly charset: CharsetInfo,
    private readonly targets: ScanTargets | undefined,
    /** Header mode: every record is one physical line as next_line() reads it (IGNORE n LINES). */
    private readonly linesOnly = false,
  ) {
    this.mode = linesOnly ? Mode.SkipLine : Mode.FieldStart;
    this.lt0 = fmt.lineTerm.length ? fmt.lineTerm[0]! : -1;
    this.ft0 = fmt.fieldTerm.length ? fmt.fieldTerm[0]! : -1;
    this.fast =
      !linesOnly &&
      fmt.enclosure === -1 &&
      fmt.lineTerm.length > 0 &&
      (fmt.escape === -1 || !fmt.lineTerm.includes(fmt.escape)) &&
      (!charset.multiByte || charset.utf8);
    this.validateUtf8 = charset.multiByte && charset.utf8;
    this.lookahead = Math.max(fmt.lineTerm.length, fmt.fieldTerm.length) + 6;
  }

  /** Absolute offset where the record in progress began. */
  get currentRecordStart(): number {
    return this.recordStartAbs;
  }

  /** Whether the scanner is between records. */
  get atRecordStart(): boolean {
    return !this.recordHasBytes;
  }

  /** Whether the byte-jumping fast path is (still) in use. */
  get usingFastPath(): boolean {
    return this.fast;
  }

  /**
   * Scans buf[from..) whose byte 0 is at absolute offset `base`. Stops after
   * the first record end at absolute offset >= stopAt, or where it needs
   * bytes it does not have yet (unless `final`), or at the end. The caller
   * passes the unscanned rest again, followed by more input.
   */
  scan(buf: Buffer, from: number, base: number, final: boolean, stopAt = Number.POSITIVE_INFINITY): ScanStop {
    if (this.fast && !this.recordHasBytes) {
      const r = this.scanFast(buf, from, base, final, stopAt);
      if (r) return r;
      // Malformed UTF-8 ahead: the server's multi-byte rules apply from this record on.
      this.fast = false;
    }
    return this.scanGeneral(buf, from, base, final, stopAt);
  }

  /**
   * At end of input: counts a final record without terminator. Returns the
   * open quote when the input ended inside a quoted field.
   */
  finish(endAbs: number): OpenQuote | undefined {
    const open = this.mode === Mode.Quoted ? { quoteOffset: this.quoteAbs, recordOffset: this.recordStartAbs } : undefined;
    if (this.recordHasBytes) this.endRecord(endAbs);
    return open;
  }

  private endRecord(nextStartAbs: number): void {
    this.records++;
    this.mode = this.linesOnly ? Mode.SkipLine : Mode.FieldStart;
    this.field = 0;
    this.recordHasBytes = false;
    this.recordStartAbs = nextStartAbs;
    this.quoteAbs = -1;
  }

  private startBytes(abs: number): void {
    if (!this.recordHasBytes) {
      this.recordHasBytes = true;
      this.recordStartAbs = abs;
    }
  }

  /**
   * No enclosure and a byte-safe (or well-formed UTF-8) input: records end at
   * every unescaped line terminator, found with indexOf at memory speed. It
   * scans only up to the last line terminator in the buffer, so every call
   * starts at a record boundary; returns undefined (without consuming
   * anything) when that span is not well-formed UTF-8.
   */
  private scanFast(buf: Buffer, from: number, base: number, final: boolean, stopAt: number): ScanStop | undefined {
    const term = this.fmt.lineTerm;
    const esc = this.fmt.escape;
    let end: number;
    if (final) end = buf.length;
    else {
      const last = buf.lastIndexOf(term);
      end = last < from ? from : last + term.length;
    }
    if (this.validateUtf8 && end > from && !isUtf8(buf.subarray(from, end))) return undefined;
    let i = from;
    let recStart = from;
    let nextEsc = esc === -1 ? -1 : buf.indexOf(esc, i);
    while (i < end) {
      if (nextEsc !== -1 && nextEsc < i) nextEsc = buf.indexOf(esc, i);
      const t = buf.indexOf(term, i);
      if (nextEsc !== -1 && nextEsc < end && (t === -1 || nextEsc < t)) {
        // The escape takes the next byte, whatever it is.
        i = Math.min(nextEsc + 2, buf.length);
        nextEsc = buf.indexOf(esc, i);
        continue;
      }
      if (t === -1 || t >= end) break;
      i = t + term.length;
      this.records++;
      this.recordStartAbs = base + i;
      recStart = i;
      if (base + i >= stopAt) return { pos: i, atRecordEnd: true };
    }
    if (final) {
      // What follows the last terminator is a record without one.
      if (recStart < buf.length) this.startBytes(base + recStart);
      return { pos: buf.length, atRecordEnd: false };
    }
    // Stop at the last record boundary, so the next call starts on one.
    return { pos: recStart, atRecordEnd: false };
  }

  private matches(buf: Buffer, i: number, term: Buffer): boolean {
    if (term.length === 0 || i + term.length > buf.length) return false;
    for (let k = 1; k < term.length; k++) if (buf[i + k] !== term[k]) return false;
    return buf[i] === term[0];
  }

  private textField(): boolean {
    if (!this.charset.multiByte) return false;
    const t = this.targets;
    return t === undefined || this.field >= t.fields || t.textField[this.field] === true;
  }

  private scanGeneral(buf: Buffer, from: number, base: number, final: boolean, stopAt: number): ScanStop {
    const { fieldTerm, lineTerm, enclosure, escape } = this.fmt;
    const lt0 = this.lt0;
    const ft0 = this.ft0;
    const end = buf.length;
    const limit = final ? end : end - this.lookahead;
    let i = from;
    let mb = this.textField();
    while (i < end) {
      if (i >= limit && !final) return { pos: i, atRecordEnd: false };
      let c = buf[i]!;
      const mode = this.mode;
      if (mode === Mode.FieldStart) {
        this.startBytes(base + i);
        mb = this.textField();
        if (c === enclosure) {
          this.mode = Mode.Quoted;
          this.quoteAbs = base + i;
          i++;
        } else {
          this.mode = Mode.Unquoted;
        }
        continue;
      }
      if (mode === Mode.SkipLine) {
        this.startBytes(base + i);
        if (this.charset.multiByte && this.charset.charlen(buf, i, i + 1) !== 1) {
          // next_line()'s multi-byte branch: no escape check, only the terminator-prefix check.
          const g = this.skipGroup(buf, i, end);
          {
            if (c === lt0 && g <= lineTerm.length && this.matches(buf, i, lineTerm)) {
              i += lineTerm.length;
              this.endRecord(base + i);
              if (base + i >= stopAt) return { pos: i, atRecordEnd: true };
              continue;
            }
            i += g;
            continue;
          }
        }
        if (c === escape) {
          i += i + 1 < end ? 2 : 1;
          continue;
        }
        if (c === lt0 && this.matches(buf, i, lineTerm)) {
          i += lineTerm.length;
          this.endRecord(base + i);
          if (base + i >= stopAt) return { pos: i, atRecordEnd: true };
          continue;
        }
        i++;
        continue;
      }
      // Inside a field (read_field's loop).
      const quoted = mode === Mode.Quoted;
      if (c === escape) {
        if (i + 1 >= end) {
          i = end; // escape then EOF: the escape byte is data, the record ends at EOF
          continue;
        }
        if (escape !== enclosure || buf[i + 1] === escape) {
          i += 2;
          continue;
        }
        // ESCAPED BY = ENCLOSED BY and not doubled: the byte acts as the enclosure.
        c = enclosure;
      }
      if (!quoted && c === lt0 && this.matches(buf, i, lineTerm)) {
        i += lineTerm.length;
        this.endRecord(base + i);
        if (base + i >= stopAt) return { pos: i, atRecordEnd: true };
        continue;
      }
      if (quoted && c === enclosure) {
        const n = i + 1;
        if (n >= end) {
          // Quote then EOF closes the field and the record.
          this.mode = Mode.Unquoted;
          this.quoteAbs = -1;
          i = n;
          continue;
        }
        const d = buf[n]!;
        if (d === enclosure) {
          i += 2;
          continue;
        }
        if (d === lt0 && this.matches(buf, n, lineTerm)) {
          i = n + lineTerm.length;
          this.endRecord(base + i);
          if (base + i >= stopAt) return { pos: i, atRecordEnd: true };
          continue;
        }
        if (d === ft0 && this.matches(buf, n, fieldTerm)) {
          i = n + fieldTerm.length;
          this.fieldDone();
          continue;
        }
        i = n; // a quote that closes nothing is data; the field stays quoted
        continue;
      }
      if (!quoted && c === ft0 && this.matches(buf, i, fieldTerm)) {
        i += fieldTerm.length;
        this.fieldDone();
        continue;
      }
      i += mb ? this.mbTail(buf, i, end) : 1;
    }
    return { pos: i, atRecordEnd: false };
  }

  /** read_mbtail(): after a data byte, the rest of its character; the byte that makes it invalid is read again. */
  private mbTail(buf: Buffer, i: number, end: number): number {
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

  private fieldDone(): void {
    this.field++;
    this.quoteAbs = -1;
    this.mode = this.targets !== undefined && this.field >= this.targets.fields ? Mode.SkipLine : Mode.FieldStart;
  }
}
