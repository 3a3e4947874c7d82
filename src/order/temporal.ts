/**
 * DATE and DATETIME key values in the one form the server stores them in,
 * so that values the server calls equal ('7300-1-5' and '7300-01-05',
 * '73010101' and '7301-01-01') are equal bytes, and canonical text orders as
 * the dates do. Only the forms the server reads without a warning are
 * accepted (MariaDB's str_to_datetime: a number of 6, 8, 12 or 14 digits, or
 * parts split by '-', '/' or '.', a space or 'T', then ':'); a value read with
 * a warning is a rejected row, so it takes no part in which duplicate wins.
 * Anything else is undefined: the caller keeps its bytes apart from every date.
 */

function digitsAt(v: Uint8Array, s: number, e: number): number {
  let i = s;
  while (i < e && v[i]! >= 0x30 && v[i]! <= 0x39) i++;
  return i - s;
}

function num(v: Uint8Array, s: number, n: number): number {
  let x = 0;
  for (let i = s; i < s + n; i++) x = x * 10 + (v[i]! - 0x30);
  return x;
}

/** Two-digit years: 00-69 are 2000-2069, 70-99 are 1970-1999 (the server's rule). */
function fullYear(y: number, digits: number): number {
  if (digits > 2) return y;
  return y < 70 ? 2000 + y : 1900 + y;
}

function daysIn(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

interface Parts {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  /** Fraction digits as written, '' when none. */
  frac: string;
  hasTime: boolean;
}

const isDateDelimiter = (c: number | undefined): boolean => c === 0x2d || c === 0x2f || c === 0x2e;

/** YYYYMMDD[HHMMSS[.f]] or YYMMDD[HHMMSS[.f]]. */
function compact(v: Uint8Array, s: number, e: number, n: number): Parts | undefined {
  const yd = n === 8 || n === 14 ? 4 : n === 6 || n === 12 ? 2 : 0;
  if (yd === 0) return undefined;
  const p: Parts = { y: fullYear(num(v, s, yd), yd), mo: num(v, s + yd, 2), d: num(v, s + yd + 2, 2), h: 0, mi: 0, s: 0, frac: '', hasTime: n > 8 };
  if (p.hasTime) {
    const t = s + yd + 4;
    p.h = num(v, t, 2);
    p.mi = num(v, t + 2, 2);
    p.s = num(v, t + 4, 2);
  }
  let i = s + n;
  if (i < e && v[i] === 0x2e && p.hasTime) {
    const f = digitsAt(v, i + 1, e);
    p.frac = Buffer.from(v.subarray(i + 1, i + 1 + f)).toString('latin1');
    i += 1 + f;
  }
  return i === e ? p : undefined;
}

/** Y-M-D[( |T)H:M:S[.f]] with 1-2 digit parts (2 or 4 for the year). */
function delimited(v: Uint8Array, s: number, e: number): Parts | undefined {
  let i = s;
  const yd = digitsAt(v, i, e);
  if (yd !== 2 && yd !== 4) return undefined;
  const y = fullYear(num(v, i, yd), yd);
  i += yd;
  const part = (max: number): number | undefined => {
    const n = digitsAt(v, i, e);
    if (n < 1 || n > max) return undefined;
    const x = num(v, i, n);
    i += n;
    return x;
  };
  if (!isDateDelimiter(v[i])) return undefined;
  const delim = v[i++];
  const mo = part(2);
  if (mo === undefined || v[i] !== delim) return undefined;
  i++;
  const d = part(2);
  if (d === undefined) return undefined;
  const p: Parts = { y, mo, d, h: 0, mi: 0, s: 0, frac: '', hasTime: false };
  if (i === e) return p;
  if (v[i] !== 0x20 && v[i] !== 0x54) return undefined;
  i++;
  const h = part(2);
  if (h === undefined || v[i++] !== 0x3a) return undefined;
  const mi = part(2);
  if (mi === undefined || v[i++] !== 0x3a) return undefined;
  const sec = part(2);
  if (sec === undefined) return undefined;
  Object.assign(p, { h, mi, s: sec, hasTime: true });
  if (i < e && v[i] === 0x2e) {
    const f = digitsAt(v, i + 1, e);
    p.frac = Buffer.from(v.subarray(i + 1, i + 1 + f)).toString('latin1');
    i += 1 + f;
  }
  return i === e ? p : undefined;
}

const p2 = (x: number): string => String(x).padStart(2, '0');

/**
 * The canonical text of a DATE (fsp undefined) or DATETIME(fsp) value:
 * 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS[.f…]' with exactly fsp fraction digits;
 * undefined for a value the server would not read as it is without a warning
 * (an impossible date, a time on a DATE, more fraction digits than fsp that
 * are not zeros, a form not listed above).
 */
export function canonicalTemporal(v: Uint8Array, start: number, end: number, fsp: number | undefined): Buffer | undefined {
  let s = start;
  let e = end;
  while (s < e && (v[s] === 0x20 || (v[s]! >= 0x09 && v[s]! <= 0x0d))) s++;
  while (e > s && (v[e - 1] === 0x20 || (v[e - 1]! >= 0x09 && v[e - 1]! <= 0x0d))) e--;
  const n = digitsAt(v, s, e);
  const p = n >= 6 && (s + n === e || v[s + n] === 0x2e) ? compact(v, s, e, n) : delimited(v, s, e);
  if (!p) return undefined;
  if (p.mo > 12 || p.d > 31 || (p.mo > 0 && p.d > daysIn(p.y, p.mo))) return undefined;
  if (p.h > 23 || p.mi > 59 || p.s > 59) return undefined;
  const date = `${String(p.y).padStart(4, '0')}-${p2(p.mo)}-${p2(p.d)}`;
  if (fsp === undefined) return p.hasTime || p.frac ? undefined : Buffer.from(date, 'latin1');
  let frac = p.frac.slice(0, fsp);
  if (/[^0]/.test(p.frac.slice(fsp))) return undefined;
  frac = frac.padEnd(fsp, '0');
  return Buffer.from(`${date} ${p2(p.h)}:${p2(p.mi)}:${p2(p.s)}${fsp > 0 ? `.${frac}` : ''}`, 'latin1');
}
