import { createHash } from 'node:crypto';
import { Blake3Hasher } from '@napi-rs/blake-hash';

/**
 * The digest of an input's bytes (and of the sorted runs, and of each chunk
 * of a streamed input) that a resume is checked against. BLAKE3 costs about a
 * quarter of SHA-256's CPU per byte (docs/resume.md#how-a-load-is-identified),
 * and every byte of a multi-GB input passes through it. Jobs started by an
 * older flatload stored bare hex of another digest (SHA-256 of the input,
 * SHA-1 of a chunk); their value says so, and the same digest is taken again
 * to compare.
 */
export type DigestKind = 'blake3' | 'sha256' | 'sha1';

/** Where a digest is kept: how many hex digits of BLAKE3 fit behind `b3:`, and what an older flatload kept there instead. */
export interface DigestSlot {
  hexDigits: number;
  legacy: 'sha256' | 'sha1';
}

/** The input's (flatload_jobs.input_sha256 CHAR(64)) and the run files': 30 bytes of BLAKE3, 63 characters. */
export const INPUT_DIGEST: DigestSlot = { hexDigits: 60, legacy: 'sha256' };
/** A streamed chunk's (flatload_chunks.sha1 CHAR(40)): 37 hex digits (148 bits) of BLAKE3, 40 characters. */
export const CHUNK_DIGEST: DigestSlot = { hexDigits: 37, legacy: 'sha1' };

export interface Digest {
  update(bytes: Uint8Array): void;
  /** The stored form: `b3:` and the slot's hex digits of BLAKE3, or the older digest's bare hex. */
  digest(): string;
}

const B3 = 'b3:';

/** A truncated BLAKE3 is BLAKE3 with a shorter output, so one hasher serves every slot. */
export function contentDigest(kind: DigestKind = 'blake3', slot: DigestSlot = INPUT_DIGEST): Digest {
  if (kind !== 'blake3') {
    const h = createHash(kind);
    return { update: (b) => void h.update(b), digest: () => h.digest('hex') };
  }
  const h = new Blake3Hasher();
  // The binding takes Buffers: a view over the same bytes, not a copy.
  const update = (b: Uint8Array): void => void h.update(Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  return { update, digest: () => B3 + h.digest('hex').slice(0, slot.hexDigits) };
}

/** The digest that made a stored value (so a resume takes the same one); BLAKE3 when there is none. */
export function digestKindOf(stored: string | null | undefined, slot: DigestSlot = INPUT_DIGEST): DigestKind {
  return stored && !stored.startsWith(B3) ? slot.legacy : 'blake3';
}

/** The digest of some buffers, taken whole. */
export function digestOf(buffers: readonly Uint8Array[], kind: DigestKind = 'blake3', slot: DigestSlot = INPUT_DIGEST): string {
  const d = contentDigest(kind, slot);
  for (const b of buffers) d.update(b);
  return d.digest();
}
