import { createRequire } from 'node:module';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { FlatloadError } from '../errors/index.js';

/**
 * The sorted runs' block codec: zstd level 1 (@toondepauw/node-zstd, a
 * prebuilt native addon), each block compressed on its own so a reader can
 * start at any block. docs/ordering.md compares it with deflate and LZ4.
 * Where the addon has no build for the platform, deflate level 1 from
 * node:zlib (larger runs, more CPU, same results); runCodec() names the one
 * in use, so runs of one are never read with the other.
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

interface Coder {
  encodeSync(data: Buffer): Buffer;
  decodeSync(data: Buffer): Buffer;
}

interface Zstd {
  Encoder: new (level: number) => Coder;
  Decoder: new () => Coder;
}

let coders: { name: string; enc: Coder; dec: Coder } | undefined;

const deflate1: Coder = {
  encodeSync: (data) => deflateRawSync(data, { level: 1 }),
  decodeSync: (data) => inflateRawSync(data),
};

function codec(): { name: string; enc: Coder; dec: Coder } {
  if (!coders) {
    try {
      const z = createRequire(import.meta.url)('@toondepauw/node-zstd') as Zstd;
      coders = { name: 'zstd-1', enc: new z.Encoder(1), dec: new z.Decoder() };
    } catch {
      coders = { name: 'deflate-1', enc: deflate1, dec: deflate1 };
    }
  }
  return coders;
}

export function compressBlock(block: Buffer): Buffer {
  return codec().enc.encodeSync(block);
}

/** The block's bytes (a new buffer); `expect` is its uncompressed length, checked. */
export function decompressBlock(packed: Buffer, expect: number, file: string): Buffer {
  let out: Buffer;
  try {
    out = codec().dec.decodeSync(packed);
  } catch (err) {
    throw new FlatloadError('SPILL', `${file} holds a block that does not decompress (changed on disk while sorting?)`, {}, { cause: err });
  }
  if (out.length !== expect) throw new FlatloadError('SPILL', `${file} holds a block of ${out.length} bytes where ${expect} were written`);
  return out;
}
