import { createRequire } from 'node:module';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { FlatloadError } from '../errors/index.js';

/**
 * The sorted runs' block codec: zstd level 1, each block compressed on its
 * own so a reader can start at any block. docs/ordering.md compares the
 * codecs and bindings. The first of these that loads is used:
 * - zstd-napi (an optional dependency built from zstd's C sources at
 *   install): reuses one context each way and decompresses straight into
 *   the reader's buffer, about half the CPU of the next;
 * - @toondepauw/node-zstd (a prebuilt addon, for machines that cannot
 *   build one): a new context and a new buffer per block;
 * - deflate level 1 from node:zlib (larger runs, more CPU, same results).
 * Both zstd bindings write and read standard zstd frames, so they share a
 * name: runs written with one are read with the other. runCodec() names the
 * one in use, so runs of zstd are never read with deflate.
 */
export function runCodec(): string {
  return codec().name;
}

/** Uncompressed bytes per block of the records section (a section's last block may be shorter). */
export const RUN_BLOCK_BYTES = 64 << 10;

/**
 * Uncompressed bytes per block of the meta section. A merge holds a block
 * of each section per run, and meta is about a fifth of the records'
 * bytes: smaller blocks keep the merge's windows at ~80 KiB a run, so ~36
 * MB for the ~440 runs of a 7.4 GB input (64 KiB meta blocks: ~60 MB).
 */
export const META_BLOCK_BYTES = 16 << 10;

/** A section's block size. */
export function blockBytesOf(section: 'records' | 'meta'): number {
  return section === 'records' ? RUN_BLOCK_BYTES : META_BLOCK_BYTES;
}

/** One way to pack and unpack a block. */
export interface BlockCodec {
  /** The format: blocks of one name are read by any codec of that name. */
  name: string;
  /** Which library does it (tests and docs). */
  library: string;
  /** The block, compressed, in a buffer of its own. */
  compress(block: Buffer): Buffer;
  /** The block, compressed into dst (at least packedBound(block.length) long); returns its length. Codecs without it compress() and copy. */
  compressInto?(block: Buffer, dst: Buffer): number;
  /** Decompresses packed into dst (its length is the room); returns the bytes written. Throws when it does not decompress or does not fit. */
  decompressInto(packed: Buffer, dst: Buffer): number;
}

/**
 * zstd-napi's parameters over level 1 (the fallback binding takes a level
 * only; its frames read the same). Level 1 on a 64 KiB block seeks matches
 * of 6 bytes in a table of 2^13: matches of 7 in a table of 2^11 (8 KiB)
 * pack key-ordered records a little smaller for less CPU each way (the codec section of docs/ordering.md).
 */
export const ZSTD_RUN_PARAMS = { minMatch: 7, hashLog: 11 } as const;

/** Sets ZSTD_RUN_PARAMS on a zstd-napi compression context (bench/research/runCodecs.ts measures the same). */
export function tuneRunContext(z: ZstdNapi, cctx: InstanceType<ZstdNapi['CCtx']>): void {
  for (const [k, v] of Object.entries(ZSTD_RUN_PARAMS)) cctx.setParameter(z.CParameter[k as keyof typeof ZSTD_RUN_PARAMS], v);
}

/** The part of zstd-napi's binding flatload uses (bench/research/runCodecs.ts measures it too). */
export interface ZstdNapi {
  CCtx: new () => { setParameter(param: number, value: number): void; compress2(dst: Uint8Array, src: Uint8Array): number };
  DCtx: new () => { decompress(dst: Uint8Array, src: Uint8Array): number };
  CParameter: { compressionLevel: number; minMatch: number; hashLog: number };
  compressBound(n: number): number;
}

interface Coder {
  encodeSync(data: Buffer): Buffer;
  decodeSync(data: Buffer): Buffer;
}

function zstdNapi(z: ZstdNapi): BlockCodec {
  const cctx = new z.CCtx();
  cctx.setParameter(z.CParameter.compressionLevel, 1);
  tuneRunContext(z, cctx);
  const dctx = new z.DCtx();
  let out = Buffer.allocUnsafe(z.compressBound(RUN_BLOCK_BYTES));
  return {
    name: 'zstd-1',
    library: 'zstd-napi',
    compress(block) {
      const bound = z.compressBound(block.length);
      if (out.length < bound) out = Buffer.allocUnsafe(bound);
      return Buffer.from(out.subarray(0, cctx.compress2(out, block)));
    },
    compressInto: (block, dst) => cctx.compress2(dst, block),
    decompressInto: (packed, dst) => dctx.decompress(dst, packed),
  };
}

/** A codec whose decoder returns a new buffer: copied into dst. */
function copying(name: string, library: string, coder: Coder): BlockCodec {
  return {
    name,
    library,
    compress: (block) => coder.encodeSync(block),
    decompressInto(packed, dst) {
      const plain = coder.decodeSync(packed);
      if (plain.length > dst.length) throw new FlatloadError('SPILL', `a block of ${plain.length} bytes where ${dst.length} fit`);
      return plain.copy(dst);
    },
  };
}

const deflate1 = copying('deflate-1', 'node:zlib', { encodeSync: (data) => deflateRawSync(data, { level: 1 }), decodeSync: (data) => inflateRawSync(data) });

/** The codecs in order of preference, each loaded on demand; deflate always loads. */
const loaders: Array<() => BlockCodec> = [
  () => zstdNapi(createRequire(import.meta.url)('zstd-napi/binding') as ZstdNapi),
  () => {
    const z = createRequire(import.meta.url)('@toondepauw/node-zstd') as { Encoder: new (level: number) => Coder; Decoder: new () => Coder };
    const enc = new z.Encoder(1);
    const dec = new z.Decoder();
    return copying('zstd-1', '@toondepauw/node-zstd', { encodeSync: (data) => enc.encodeSync(data), decodeSync: (data) => dec.decodeSync(data) });
  },
  () => deflate1,
];

/** The codec of one loader, or undefined where it does not load (not installed, not built, no build for this platform). */
function tryLoad(load: () => BlockCodec): BlockCodec | undefined {
  try {
    return load();
  } catch {
    return undefined;
  }
}

let available: BlockCodec[] | undefined;
let preferred: BlockCodec | undefined;

/** Every codec that loads on this machine, the preferred first (deflate is always there). */
export function blockCodecs(): BlockCodec[] {
  available ??= loaders.map(tryLoad).filter((c): c is BlockCodec => c !== undefined);
  return available;
}

/**
 * The first codec that loads, without loading the rest: the prebuilt
 * fallback's loader spawns `ldd` to tell glibc from musl, in every sorting
 * thread, for nothing when the first one loads.
 */
function codec(): BlockCodec {
  if (!preferred) {
    for (const load of loaders) {
      preferred = tryLoad(load);
      if (preferred) break;
    }
  }
  return preferred!;
}

export function compressBlock(block: Buffer): Buffer {
  return codec().compress(block);
}

/** Room a compressed block of n bytes may need at most, with every codec (zstd's bound is n + n / 256 + 64; deflate's stored blocks add 5 bytes in 64 KiB). */
export function packedBound(n: number): number {
  return n + (n >>> 7) + 1024;
}

/** Compresses a block into dst (at least packedBound(block.length) long), without a buffer of its own; returns the compressed length. */
export function compressBlockInto(block: Buffer, dst: Buffer): number {
  const c = codec();
  if (c.compressInto) return c.compressInto(block, dst);
  const packed = c.compress(block);
  if (packed.length > dst.length) throw new FlatloadError('INTERNAL', `a block compressed to ${packed.length} bytes, over the ${dst.length} of room`);
  return packed.copy(dst);
}

/** Decompresses a block of `expect` bytes into dst at `at`, checking its length. */
export function decompressBlockInto(packed: Buffer, dst: Buffer, at: number, expect: number, file: string): void {
  let n: number;
  try {
    n = codec().decompressInto(packed, dst.subarray(at, at + expect));
  } catch (err) {
    throw new FlatloadError('SPILL', `${file} holds a block that does not decompress to the ${expect} bytes written (changed on disk while sorting?)`, {}, { cause: err });
  }
  if (n !== expect) throw new FlatloadError('SPILL', `${file} holds a block of ${n} bytes where ${expect} were written`);
}
