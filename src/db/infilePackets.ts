/**
 * LOCAL INFILE data written to the connection's socket here rather than by
 * mysql2, which copies every piece into a new buffer behind its 4-byte packet
 * header: a second copy of all the data sent, in fresh memory for the kernel
 * to fault in and the collector to free (docs/strategies.md#sending-the-data).
 */
import { Readable, type Writable } from 'node:stream';
import { FlatloadError } from '../errors/index.js';

/** The parts of mysql2's connection object the writer needs; another mysql2 without them gets the driver's own path. */
export interface PacketConnection {
  stream: Writable;
  /** The next packet's sequence number, and the driver's way to move it on (it wraps at 256). */
  sequenceId: number;
  _bumpSequenceId(packets: number): void;
  config?: { compress?: boolean };
}

/** A packet's payload is below 2^24 - 1 bytes: one that long would need an empty packet after it. */
export const MAX_PAYLOAD = 0xffffff - 1;

/** The connection behind a mysql2 (promise) connection, when its packets can be written here. */
export function packetConnectionOf(conn: unknown): PacketConnection | undefined {
  const c = (conn as { connection?: Partial<PacketConnection> } | undefined)?.connection;
  if (!c || typeof c._bumpSequenceId !== 'function' || typeof c.sequenceId !== 'number') return undefined;
  // The compressed protocol wraps packets again, in the driver's own writer.
  if (c.config?.compress) return undefined;
  const s = c.stream;
  if (!s || typeof s.write !== 'function' || typeof s.cork !== 'function' || typeof s.writableNeedDrain !== 'boolean') return undefined;
  return c as PacketConnection;
}

/** Writes one packet; resolves once the kernel has its bytes, so the payload's memory may be reused. */
export function writePacket(c: PacketConnection, payload: Buffer): Promise<void> {
  const socket = c.stream;
  if (socket.destroyed) return Promise.reject(new FlatloadError('CONNECTION_LOST', 'the connection closed while the data was being sent'));
  const n = payload.length;
  const header = Buffer.from([n & 0xff, (n >>> 8) & 0xff, n >>> 16, c.sequenceId]);
  c._bumpSequenceId(1);
  return new Promise((resolve, reject) => {
    socket.cork();
    socket.write(header);
    socket.write(payload, (err) => (err ? reject(err) : resolve()));
    socket.uncork();
  });
}

/**
 * Sends src's pieces as the file's packets and returns the stream to give
 * mysql2 instead: it carries no data, and ends (or fails) once src has been
 * sent (or failed), when mysql2 writes the empty packet that ends the file.
 * A piece is in the kernel before the next is taken from src: one piece in
 * flight per connection, and a source may reuse a piece's memory once the
 * next is taken. After stop() nothing more is written (the statement ended).
 */
export function sendPieces(src: Readable, c: PacketConnection, onPiece: (bytes: number) => void): { stream: Readable; stop: () => void } {
  const out = new Readable({ read() {} });
  let stopped = false;
  const pump = async (): Promise<void> => {
    for await (const piece of src as AsyncIterable<Buffer>) {
      // An empty piece would be the empty packet that ends the file.
      for (let at = 0; at < piece.length && !stopped; at += MAX_PAYLOAD) await writePacket(c, piece.subarray(at, at + MAX_PAYLOAD));
      if (stopped) return;
      onPiece(piece.length);
    }
  };
  // Stopped, the stream neither ends nor fails: either would make mysql2 write the empty packet after the statement.
  pump().then(
    () => (stopped ? out.destroy() : out.push(null)),
    (err: unknown) => out.destroy(stopped ? undefined : err instanceof Error ? err : new FlatloadError('INTERNAL', String(err))),
  );
  return {
    stream: out,
    stop: () => {
      stopped = true;
      src.destroy();
    },
  };
}
