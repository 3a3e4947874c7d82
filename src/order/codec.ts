import { createRequire } from 'node:module';
import { FlatloadError } from '../errors/index.js';

/**
 * The sorted runs' block codec: zstd level 1 (@toondepauw/node-zstd, a
 * prebuilt native addon), each block compressed on its own so a reader can
 * start at any block. docs/ordering.md compares it with deflate and LZ4.
 */
export const RUN_CODEC = 'zstd-1';

/** Uncompressed bytes per block (a section's last block may be shorter). */
export const RUN_BLOCK_BYTES = 64 << 10;

interface Coder {
  encodeSync(data: Buffer): Buffer;
  decodeSync(data: Buffer): Buffer;
}

interface Zstd {
  Encoder: new (level: number) => Coder;
  Decoder: new () => Coder;
}

let coders: { enc: Coder; dec: Coder } | undefined;

function codec(): { enc: Coder; dec: Coder } {
  if (!coders) {
    try {
      const z = createRequire(import.meta.url)('@toondepauw/node-zstd') as Zstd;
      coders = { enc: new z.Encoder(1), dec: new z.Decoder() };
    } catch (err) {
      throw new FlatloadError('INTERNAL', `cannot load the run codec @toondepauw/node-zstd (${(err as Error).message}): reinstall flatload's dependencies`, {}, { cause: err });
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
