/**
 * How LOAD DATA groups a file's bytes into characters (MariaDB 10.11
 * strings/ctype-mb.inl, ctype-utf8.c). `charlen` has the server's contract:
 * n > 0 a valid n-byte character; ILSEQ (0) a bad sequence; -n "too small:
 * n bytes needed to decide" (MY_CS_TOOSMALLn).
 *
 * It matters in two places: a multi-byte character's trail byte is never an
 * escape, quote or terminator (gbk/big5/sjis trail bytes include 0x5C), and
 * a malformed sequence can swallow the byte after it (a stray utf8 0xE4
 * swallows the next byte, even a newline). See docs/chunking.md.
 */
export const ILSEQ = 0;

export interface CharsetInfo {
  name: string;
  /** mbmaxlen > 1: the server scans text fields character by character. */
  multiByte: boolean;
  /** UTF-8 family: well-formed data (Buffer isUtf8) can be scanned byte-wise. */
  utf8: boolean;
  charlen(buf: Buffer, i: number, end: number): number;
}

const inRange = (b: number, lo: number, hi: number): boolean => b >= lo && b <= hi;
const tooSmall = (n: number): number => -n;

/** ctype-mb.inl's generic charlen, shared by the East Asian double-byte sets. */
function generic(
  name: string,
  isMb2: (b0: number, b1: number) => boolean,
  is8bit?: (b0: number) => boolean,
  isMb3?: (b0: number, b1: number, b2: number) => boolean,
  isPrefix2?: (b0: number, b1: number) => boolean,
): CharsetInfo {
  return {
    name,
    multiByte: true,
    utf8: false,
    charlen(buf, i, end) {
      const b0 = buf[i]!;
      if (b0 < 0x80) return 1;
      if (is8bit?.(b0)) return 1;
      if (i + 2 > end) return tooSmall(2);
      const b1 = buf[i + 1]!;
      if (isMb2(b0, b1)) return 2;
      if (isMb3) {
        if (i + 3 > end) {
          if (isPrefix2 && !isPrefix2(b0, b1)) return ILSEQ;
          return tooSmall(3);
        }
        if (isMb3(b0, b1, buf[i + 2]!)) return 3;
      }
      return ILSEQ;
    },
  };
}

const cont = (b: number): boolean => inRange(b, 0x80, 0xbf);

function utf8(name: string, mb4: boolean): CharsetInfo {
  return {
    name,
    multiByte: true,
    utf8: true,
    charlen(buf, i, end) {
      const c = buf[i]!;
      if (c < 0x80) return 1;
      if (c < 0xc2) return ILSEQ;
      if (c < 0xe0) {
        if (i + 2 > end) return tooSmall(2);
        return cont(buf[i + 1]!) ? 2 : ILSEQ;
      }
      if (c < 0xf0) {
        // The second byte is not looked at until three are there: a stray
        // 0xE4 swallows whatever follows it (my_valid_mbcharlen_utf8mb3).
        if (i + 3 > end) return tooSmall(3);
        const b1 = buf[i + 1]!;
        return cont(b1) && cont(buf[i + 2]!) && (c >= 0xe1 || b1 >= 0xa0) ? 3 : ILSEQ;
      }
      if (!mb4 || c >= 0xf5) return ILSEQ;
      if (i + 4 > end) return tooSmall(4);
      const b1 = buf[i + 1]!;
      return cont(b1) && cont(buf[i + 2]!) && cont(buf[i + 3]!) && (c >= 0xf1 || b1 >= 0x90) && (c <= 0xf3 || b1 <= 0x8f)
        ? 4
        : ILSEQ;
    },
  };
}

const euc = (b: number): boolean => inRange(b, 0xa1, 0xfe);
const kata = (b: number): boolean => inRange(b, 0xa1, 0xdf);
const sjisHead = (b: number): boolean => inRange(b, 0x81, 0x9f) || inRange(b, 0xe0, 0xfc);
const sjisTail = (b: number): boolean => inRange(b, 0x40, 0x7e) || inRange(b, 0x80, 0xfc);
const ujis = (name: string): CharsetInfo =>
  generic(
    name,
    (x, y) => (x === 0x8e && kata(y)) || (euc(x) && euc(y)),
    undefined,
    (x, y, z) => x === 0x8f && euc(y) && euc(z),
    (x, y) => x === 0x8f && euc(y),
  );

const MULTI_BYTE: Record<string, CharsetInfo> = {
  gbk: generic('gbk', (x, y) => inRange(x, 0x81, 0xfe) && (inRange(y, 0x40, 0x7e) || inRange(y, 0x80, 0xfe))),
  big5: generic('big5', (x, y) => inRange(x, 0xa1, 0xf9) && (inRange(y, 0x40, 0x7e) || inRange(y, 0xa1, 0xfe))),
  sjis: generic('sjis', (x, y) => sjisHead(x) && sjisTail(y), kata),
  cp932: generic('cp932', (x, y) => sjisHead(x) && sjisTail(y), kata),
  gb2312: generic('gb2312', (x, y) => inRange(x, 0xa1, 0xf7) && inRange(y, 0xa1, 0xfe)),
  euckr: generic(
    'euckr',
    (x, y) => inRange(x, 0x81, 0xfe) && (inRange(y, 0x41, 0x5a) || inRange(y, 0x61, 0x7a) || inRange(y, 0x81, 0xfe)),
  ),
  ujis: ujis('ujis'),
  eucjpms: ujis('eucjpms'),
  utf8mb3: utf8('utf8mb3', false),
  utf8: utf8('utf8', false),
  utf8mb4: utf8('utf8mb4', true),
};

/** Single-byte character sets: every byte is a character. */
const SINGLE_BYTE = new Set([
  'latin1', 'latin2', 'latin5', 'latin7', 'ascii', 'binary', 'cp1250', 'cp1251', 'cp1256', 'cp1257', 'cp850',
  'cp852', 'cp866', 'dec8', 'hp8', 'koi8r', 'koi8u', 'swe7', 'greek', 'hebrew', 'armscii8', 'geostd8', 'keybcs2',
  'macce', 'macroman', 'tis620',
]);

/** Character sets whose code units are wider than a byte: LOAD DATA accepts them and loads garbage. */
export const WIDE_CHARSETS = new Set(['ucs2', 'utf16', 'utf16le', 'utf32']);

export function charsetInfo(charset: string): CharsetInfo | undefined {
  const name = charset.toLowerCase();
  const mb = MULTI_BYTE[name];
  if (mb) return mb;
  if (SINGLE_BYTE.has(name)) return { name, multiByte: false, utf8: false, charlen: () => 1 };
  return undefined;
}
