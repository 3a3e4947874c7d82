import { createHash } from 'node:crypto';
import { Blake3Hasher } from '@napi-rs/blake-hash';

/**
 * The digest of an input's bytes (and of the sorted runs) that a resume is
 * checked against. BLAKE3 costs about a quarter of SHA-256's CPU per byte
 * (docs/resume.md#how-a-load-is-identified), and every byte of a multi-GB input
 * passes through it. Jobs started by an older flatload stored bare SHA-256
 * hex; their value says so, and the same digest is taken again to compare.
 */
export type DigestKind = 'blake3' | 'sha256';

export interface Digest {
  update(bytes: Uint8Array): void;
  /** The stored form: `b3:` and 60 hex digits of BLAKE3 (it fits the 64 characters SHA-256 hex took), or SHA-256 hex. */
  digest(): string;
}

const B3 = 'b3:';
/** 30 bytes of BLAKE3's output: a truncated BLAKE3 is BLAKE3 with a shorter output. */
const B3_HEX = 60;

export function contentDigest(kind: DigestKind = 'blake3'): Digest {
  if (kind === 'sha256') {
    const h = createHash('sha256');
    return { update: (b) => void h.update(b), digest: () => h.digest('hex') };
  }
  const h = new Blake3Hasher();
  return { update: (b) => void h.update(b), digest: () => B3 + h.digest('hex').slice(0, B3_HEX) };
}

/** The digest that made a stored value (so a resume takes the same one); BLAKE3 when there is none. */
export function digestKindOf(stored: string | null | undefined): DigestKind {
  return stored && !stored.startsWith(B3) ? 'sha256' : 'blake3';
}

/** The digest of some buffers, taken whole. */
export function digestOf(buffers: readonly Uint8Array[], kind: DigestKind = 'blake3'): string {
  const d = contentDigest(kind);
  for (const b of buffers) d.update(b);
  return d.digest();
}
