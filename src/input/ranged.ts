import { open } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import { readInto, type RemoteObject } from './remote.js';
import { readRange } from './streams.js';

/** A plain input: a local file, or a remote object read by byte range. */
export interface RangedInput {
  path: string;
  remote?: RemoteObject | undefined;
}

/** Reads at a position, as a file handle does (fewer bytes than asked only near the end, or for a file, as the OS gives them). */
export interface PositionalReader {
  read(buf: Buffer, offset: number, length: number, position: number): Promise<number>;
  close(): Promise<void>;
}

export async function openPositional(input: RangedInput): Promise<PositionalReader> {
  const remote = input.remote;
  if (remote) return { read: (buf, offset, length, position) => readInto(remote, buf, offset, length, position), close: () => Promise.resolve() };
  const fh = await open(input.path, 'r');
  return { read: async (buf, offset, length, position) => (await fh.read(buf, offset, length, position)).bytesRead, close: () => fh.close() };
}

/** Bytes [startByte, endByte) of the input as a stream (a file's pieces of about `highWaterMark`). */
export function openByteRange(input: RangedInput, startByte: number, endByte: number, highWaterMark: number): Readable {
  if (!input.remote) return readRange(input.path, startByte, endByte, highWaterMark);
  if (endByte <= startByte) {
    const empty = new PassThrough();
    empty.end();
    return empty;
  }
  return input.remote.read(startByte, endByte);
}

/** Reads [position, position + length) into buf[offset…]; resolves to the bytes read (fewer only at the end of the input). */
export async function readFully(reader: PositionalReader, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const n = await reader.read(buf, offset + got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}
