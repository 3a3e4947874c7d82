/**
 * The server's hash for PARTITION BY [LINEAR] KEY, reproduced for the cases
 * verified against MariaDB 10.11 (docs/scale-out.md has the method and the
 * counts). Pure: values in, a 32-bit hash or undefined out.
 *
 * ha_partition::calculate_key_hash_value starts from nr1 = 1, nr2 = 4 and
 * feeds each partitioning column in order: a NULL flips nr1
 * (`nr1 ^= (nr1 << 1) | 1`), anything else goes through the hash_sort of the
 * column's collation over the column's stored bytes, which applies
 * MY_HASH_ADD (`nr1 ^= (((nr1 & 63) + nr2) * v) + (nr1 << 8); nr2 += 3`) to
 * one value v per byte (or per weight byte). The partition uses the low 32
 * bits of nr1. The server does this in 64-bit `ulong`, but carries only move
 * upwards in those operations, so the low 32 bits of nr1 depend only on the
 * low 32 bits of nr1 and nr2: 32-bit arithmetic gives the same result.
 *
 * Integer columns are hashed over their little-endian record bytes:
 * - ALGORITHM=2 (the default) through the latin1_swedish_ci collation
 *   (numbers have the server's "numeric" charset, latin1): each byte is
 *   mapped through latin1_swedish_ci's sort order and trailing bytes that
 *   sort like a space are dropped first;
 * - ALGORITHM=1 (MySQL 5.1 compatibility) through my_hash_sort_bin: raw bytes.
 */

export type KeyAlgorithm = 1 | 2;

/** A partitioning column as far as hashing it needs to know. */
export type KeyColumn =
  | { kind: 'int'; bytes: 1 | 2 | 3 | 4 | 8; unsigned: boolean }
  | {
      kind: 'string';
      /** Collation name as the server reports it, e.g. utf8mb4_general_ci. */
      collation: string;
      /** CHAR(n)/VARCHAR(n): n characters; longer values are not what the server stores. */
      maxChars: number;
    }
  | { kind: 'binary'; maxBytes: number; /** BINARY(n): zero-padded to n bytes. */ fixed: boolean };

/**
 * latin1_swedish_ci weights (the sort_order_latin1 table of MariaDB's
 * strings/ctype-latin1.c), read back from the server with
 * `SELECT HEX(WEIGHT_STRING(CHAR(n) COLLATE latin1_swedish_ci))` for n = 0..255.
 */
// prettier-ignore
export const LATIN1_SWEDISH_CI_WEIGHTS = Uint8Array.from([
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
  32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
  64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
  96, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 123, 124, 125, 126, 127,
  128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159,
  160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191,
  65, 65, 65, 65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73, 68, 78, 79, 79, 79, 79, 93, 215, 216, 85, 85, 85, 89, 89, 222, 223,
  65, 65, 65, 65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73, 68, 78, 79, 79, 79, 79, 93, 247, 216, 85, 85, 85, 89, 89, 222, 255,
]);

/** The hash state: nr1 and nr2, low 32 bits each (see the header for why that suffices). */
class KeyHasher {
  nr1 = 1;
  nr2 = 4;

  add(v: number): void {
    const a = this.nr1;
    this.nr1 = (a ^ ((Math.imul(((a & 63) + this.nr2) | 0, v) + (a << 8)) | 0)) >>> 0;
    this.nr2 = (this.nr2 + 3) | 0;
  }

  addNull(): void {
    this.nr1 = (this.nr1 ^ ((this.nr1 << 1) | 1)) >>> 0;
  }
}

const MIN: Record<number, bigint> = { 1: -(1n << 7n), 2: -(1n << 15n), 3: -(1n << 23n), 4: -(1n << 31n), 8: -(1n << 63n) };

/**
 * The integer LOAD DATA would store for a field, or undefined when the text
 * is not a plain decimal integer in the column's range (the server would
 * convert it with a warning or an error; flatload does not guess how).
 * A Number when it is a safe integer (the common case, and the fast one:
 * routing evaluates this per record), else a BigInt.
 */
export function parseIntText(value: Buffer, bytes: 1 | 2 | 3 | 4 | 8, unsigned: boolean): number | bigint | undefined {
  const len = value.length;
  if (len === 0 || len > 21) return undefined;
  let i = 0;
  let negative = false;
  if (value[0] === 0x2d || value[0] === 0x2b) {
    negative = value[0] === 0x2d;
    i = 1;
  }
  if (i === len) return undefined;
  if (len - i <= 15) {
    let n = 0;
    for (; i < len; i++) {
      const d = value[i]! - 0x30;
      if (d < 0 || d > 9) return undefined;
      n = n * 10 + d;
    }
    if (negative) n = n === 0 ? 0 : -n;
    if (bytes === 8) return unsigned && n < 0 ? undefined : n;
    const bits = bytes * 8;
    const [lo, hi] = unsigned ? [0, 2 ** bits - 1] : [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1];
    return n < lo || n > hi ? undefined : n;
  }
  let n = 0n;
  for (; i < len; i++) {
    const d = value[i]! - 0x30;
    if (d < 0 || d > 9) return undefined;
    n = n * 10n + BigInt(d);
  }
  if (negative) n = -n;
  const bits = BigInt(bytes * 8);
  const [lo, hi] = unsigned ? [0n, (1n << bits) - 1n] : [MIN[bytes]!, -MIN[bytes]! - 1n];
  if (n < lo || n > hi) return undefined;
  return Number.isSafeInteger(Number(n)) ? Number(n) : n;
}

/** parseIntText as a BigInt, for callers that compare with BigInt bounds. */
export function parseIntField(value: Buffer, bytes: 1 | 2 | 3 | 4 | 8, unsigned: boolean): bigint | undefined {
  const n = parseIntText(value, bytes, unsigned);
  return n === undefined ? undefined : BigInt(n);
}

/** Scratch for an integer's record bytes (hashing is synchronous, so one buffer serves every call). */
const intScratch = new Uint8Array(8);

/** Writes an integer's record bytes (little-endian two's complement) to intScratch. */
function intBytes(n: number | bigint, bytes: number): Uint8Array {
  if (typeof n === 'number') {
    // ToUint32 keeps the low 32 bits of any safe integer, negative ones as two's complement.
    const lo = n >>> 0;
    const hi = Math.floor(n / 4294967296) >>> 0;
    for (let k = 0; k < bytes; k++) intScratch[k] = k < 4 ? (lo >>> (8 * k)) & 0xff : (hi >>> (8 * (k - 4))) & 0xff;
    return intScratch;
  }
  let v = BigInt.asUintN(bytes * 8, n);
  for (let k = 0; k < bytes; k++) {
    intScratch[k] = Number(v & 0xffn);
    v >>= 8n;
  }
  return intScratch;
}

function isAscii(b: Buffer): boolean {
  for (const c of b) if (c > 0x7f) return false;
  return true;
}

/** Length without trailing spaces: PAD SPACE collations hash 'a ' like 'a'. */
function trimSpaces(b: Buffer): number {
  let end = b.length;
  while (end > 0 && b[end - 1] === 0x20) end--;
  return end;
}

/** Collations whose hash flatload reproduces, for ASCII values. Others: undefined. */
function collationFamily(collation: string): 'general_ci' | 'latin1_ci' | 'bin' | undefined {
  const c = collation.toLowerCase();
  if (/^utf8(mb3|mb4)?_general_ci$/.test(c)) return 'general_ci';
  if (c === 'latin1_swedish_ci') return 'latin1_ci';
  if (/^(utf8(mb3|mb4)?|latin1|ascii)_bin$/.test(c)) return 'bin';
  return undefined;
}

function addColumn(h: KeyHasher, col: KeyColumn, value: Buffer | null, algorithm: KeyAlgorithm): boolean {
  if (value === null) {
    h.addNull();
    return true;
  }
  switch (col.kind) {
    case 'int': {
      const n = parseIntText(value, col.bytes, col.unsigned);
      if (n === undefined) return false;
      const raw = intBytes(n, col.bytes);
      if (algorithm === 1) {
        for (let k = 0; k < col.bytes; k++) h.add(raw[k]!);
        return true;
      }
      let end = col.bytes;
      while (end > 0 && LATIN1_SWEDISH_CI_WEIGHTS[raw[end - 1]!] === LATIN1_SWEDISH_CI_WEIGHTS[0x20]) end--;
      for (let k = 0; k < end; k++) h.add(LATIN1_SWEDISH_CI_WEIGHTS[raw[k]!]!);
      return true;
    }
    case 'string': {
      const family = collationFamily(col.collation);
      // Non-ASCII text would need the collation's full weight tables (and the
      // conversion from the file's charset): not evaluated.
      if (!family || !isAscii(value) || value.length > col.maxChars) return false;
      const end = trimSpaces(value);
      for (let k = 0; k < end; k++) {
        const c = value[k]!;
        if (family === 'bin') h.add(c);
        else if (family === 'latin1_ci') h.add(LATIN1_SWEDISH_CI_WEIGHTS[c]!);
        else {
          // utf8mb*_general_ci: each character's 16-bit weight, low byte then high byte (0 for ASCII).
          h.add(c >= 0x61 && c <= 0x7a ? c - 0x20 : c);
          h.add(0);
        }
      }
      return true;
    }
    case 'binary': {
      if (value.length > col.maxBytes) return false;
      for (const c of value) h.add(c);
      if (col.fixed) for (let k = value.length; k < col.maxBytes; k++) h.add(0);
      return true;
    }
  }
}

/**
 * The 32-bit value PARTITION BY KEY takes modulo the partition count (or
 * masks, for LINEAR KEY), or undefined when a value cannot be evaluated
 * exactly (then the row must go through the server).
 */
export function keyHash(columns: readonly KeyColumn[], values: ReadonlyArray<Buffer | null | undefined>, algorithm: KeyAlgorithm = 2): number | undefined {
  if (columns.length === 0 || columns.length !== values.length) return undefined;
  const h = new KeyHasher();
  for (let i = 0; i < columns.length; i++) {
    const v = values[i];
    if (v === undefined || !addColumn(h, columns[i]!, v, algorithm)) return undefined;
  }
  return h.nr1;
}
