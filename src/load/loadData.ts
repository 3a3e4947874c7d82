import { selectRows } from '../db/rows.js';
import type { PoolConnection, ResultSetHeader } from 'mysql2/promise';
import { Readable, type Writable } from 'node:stream';
import { refuseInfileRequest } from '../db/connect.js';
import { packetConnectionOf, sendPieces } from '../db/infilePackets.js';
import { parseLoadInfo, type LoadInfo, type ServerWarning } from './warnings.js';

export interface LoadDataRun {
  conn: PoolConnection;
  /** LOAD DATA LOCAL INFILE '<fileToken>' ... */
  sql: string;
  /** The only file name this statement may ask for. */
  fileToken: string;
  open: () => Readable;
  onBytes: (bytes: number) => void;
  /** Warnings the session keeps (max_error_count). */
  maxWarnings: number;
}

export interface LoadDataResult {
  info: LoadInfo;
  affectedRows: number;
  warnings: ServerWarning[];
  /** More warnings were raised than the server kept. */
  warningsTruncated: boolean;
  bytesSent: number;
}

/**
 * A LOAD DATA of `records` records that the server stopped at a bad row
 * (refusedRow: --on-duplicate replace), as if that row alone had warned: the
 * caller's warning path then names it, and every other bad row, as it names
 * a warned row.
 */
export function refusedResult(records: number, refused: ServerWarning): LoadDataResult {
  return { info: { records, deleted: 0, skipped: 0, warnings: 1 }, affectedRows: 0, warnings: [refused], warningsTruncated: false, bytesSent: 0 };
}

/** The warnings of the session's last statement (at most `limit`: the server keeps max_error_count). */
export async function showWarnings(conn: PoolConnection, limit: number): Promise<ServerWarning[]> {
  const rows = await selectRows<{ Level: string; Code: number; Message: string }>(conn, `SHOW WARNINGS LIMIT ${limit}`);
  return rows.map((w) => ({ level: w.Level, code: Number(w.Code), message: w.Message }));
}

/**
 * One LOAD DATA LOCAL statement streaming one chunk. The factory answers only
 * the request for this chunk's token: whatever other name the server asks
 * for gets a stream that fails, so no other client file is ever sent.
 * Transaction control is the caller's: the chunk's rows and its bookkeeping
 * commit together.
 */
export async function runLoadData(run: LoadDataRun): Promise<LoadDataResult> {
  let bytesSent = 0;
  let opened = false;
  let stop: (() => void) | undefined;
  const counted = (n: number): void => {
    bytesSent += n;
    run.onBytes(n);
  };
  const packets = packetConnectionOf(run.conn);
  const [res] = await run.conn
    .query<ResultSetHeader>({
      sql: run.sql,
      infileStreamFactory: (requested: string): Readable => {
        if (requested !== run.fileToken || opened) return refuseInfileRequest(requested);
        opened = true;
        if (packets) {
          const sending = sendPieces(run.open(), packets, counted);
          stop = sending.stop;
          return sending.stream;
        }
        const stream = pacedBySocket(run.open(), socketOf(run.conn));
        stream.on('data', (b: Buffer) => counted(b.length));
        return stream;
      },
    })
    .finally(() => stop?.());
  const info = parseLoadInfo(res.info) ?? { records: res.affectedRows, deleted: 0, skipped: 0, warnings: res.warningStatus };
  const warnings = info.warnings > 0 || res.warningStatus > 0 ? await showWarnings(run.conn, run.maxWarnings) : [];
  const raised = Math.max(info.warnings, res.warningStatus);
  return { info, affectedRows: res.affectedRows, warnings, warningsTruncated: raised > warnings.length, bytesSent };
}

/** The connection's socket, where mysql2 keeps it (undefined if it ever does not). */
function socketOf(conn: PoolConnection): Writable | undefined {
  const stream = (conn as unknown as { connection?: { stream?: Writable } }).connection?.stream;
  return stream && typeof stream.writableNeedDrain === 'boolean' ? stream : undefined;
}

/**
 * mysql2 writes each piece of a LOCAL INFILE stream to the socket as it comes
 * (it pauses the stream only when the socket stops reading), so a chunk would
 * sit whole, copied into packets, in the socket's queue. Each piece waits
 * until the queue has drained: one piece in flight per connection.
 */
export function pacedBySocket(src: Readable, socket: Writable | undefined): Readable {
  if (!socket) return src;
  return Readable.from(
    (async function* paced(): AsyncGenerator<Buffer> {
      for await (const piece of src as AsyncIterable<Buffer>) {
        if (socket.writableNeedDrain && !socket.destroyed) await drained(socket);
        yield piece;
      }
    })(),
    { objectMode: false },
  );
}

function drained(socket: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}
