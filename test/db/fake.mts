import mysql from 'mysql2';
import mysqlp from 'mysql2/promise';
import type { AddressInfo } from 'node:net';

export interface FakeServer { port: number; url: string; raw: Buffer[]; infileRequests: string[]; infileReceived: Buffer[]; queries: string[]; close(): Promise<void>; }
type Hostile = (sql: string) => string | undefined;
interface ServerConn {
  serverHandshake(a: object): void; on(ev: string, f: (...a: any[]) => void): void; writeOk(a?: object): void; writeError(a: object): void;
  writeColumns(c: unknown[]): void; writeTextRow(r: unknown[]): void; writeEof(w?: number, s?: number): void; write(b: Buffer): void;
  sequenceId: number; handlePacket: (p: any) => void; stream: import('node:net').Socket; close(): void;
}
const CAPS = 0xffffff & ~(0x20 | 0x800 | 0x800000);
export async function startFake(hostile: Hostile, upstream?: mysqlp.ConnectionOptions): Promise<FakeServer> {
  const raw: Buffer[] = []; const infileRequests: string[] = []; const infileReceived: Buffer[] = []; const queries: string[] = [];
  const conns: ServerConn[] = [];
  let nextId = 1;
  const server = mysql.createServer((c0) => {
    const conn = c0 as unknown as ServerConn;
    conns.push(conn);
    conn.stream.on('data', (b: Buffer) => raw.push(Buffer.from(b)));
    conn.stream.on('error', () => undefined);
    conn.serverHandshake({ protocolVersion: 10, serverVersion: '10.11.99-MariaDB-fake', connectionId: nextId++, statusFlags: 2, characterSet: 45, capabilityFlags: CAPS });
    let up: Promise<mysqlp.Connection> | undefined;
    const upstreamConn = () => (up ??= mysqlp.createConnection({ ...upstream!, rowsAsArray: true, dateStrings: true, supportBigNumbers: true, bigNumberStrings: true, charset: 'utf8mb4', flags: ['-LOCAL_FILES'] }));
    let infile: { chunks: Buffer[]; done: (b: Buffer) => void } | null = null;
    const orig = conn.handlePacket.bind(conn);
    conn.handlePacket = (packet: any) => {
      if (infile && packet) {
        conn.sequenceId = (packet.sequenceId + 1) % 256;
        const payload = Buffer.from(packet.buffer.subarray(packet.start + 4, packet.end));
        if (payload.length === 0) { const f = infile; infile = null; f.done(Buffer.concat(f.chunks)); }
        else infile.chunks.push(payload);
        return;
      }
      orig(packet);
    };
    const writeRaw = (payload: Buffer) => {
      const h = Buffer.alloc(4); h.writeUIntLE(payload.length, 0, 3); h[3] = conn.sequenceId; conn.sequenceId = (conn.sequenceId + 1) % 256;
      conn.write(Buffer.concat([h, payload]));
    };
    const handle = async (sql: string) => {
      queries.push(sql);
      const wanted = hostile(sql);
      if (wanted !== undefined) {
        infileRequests.push(wanted);
        infile = { chunks: [], done: (b) => { infileReceived.push(b); conn.writeOk({ affectedRows: 0 }); } };
        writeRaw(Buffer.concat([Buffer.from([0xfb]), Buffer.from(wanted, 'utf8')]));
        return;
      }
      if (!upstream) { conn.writeOk(); return; }
      try {
        const [rows, fields] = await (await upstreamConn()).query(sql);
        if (Array.isArray(rows) && fields) {
          conn.writeColumns(fields as unknown[]);
          for (const r of rows as unknown[][]) conn.writeTextRow(r.map((v) => (v === null ? null : Buffer.isBuffer(v) ? v.toString('utf8') : String(v))));
          conn.writeEof(0, 2);
        } else {
          const h = rows as mysqlp.ResultSetHeader;
          conn.writeOk({ affectedRows: h.affectedRows, insertId: Number(h.insertId), warningCount: h.warningStatus, serverStatus: 2 });
        }
      } catch (e) {
        const err = e as { sqlMessage?: string; message: string; errno?: number };
        conn.writeError({ message: err.sqlMessage ?? err.message, code: err.errno ?? 1105 });
      }
    };
    conn.on('query', (sql: string) => void handle(sql));
    conn.on('stmt_prepare', (sql: string) => void handle(sql)); // mysql2's server routes SET … here
    conn.on('init_db', () => conn.writeOk());
    conn.on('ping', () => conn.writeOk());
    conn.on('quit', () => { conn.stream.end(); void up?.then((u) => u.end()).catch(() => undefined); });
    conn.on('error', () => undefined);
  });
  const inner = (server as unknown as { _server: import('node:net').Server })._server;
  await new Promise<void>((res) => inner.listen(0, '127.0.0.1', () => res()));
  const port = (inner.address() as AddressInfo).port;
  return {
    port, url: `mysql://root@127.0.0.1:${port}/`, raw, infileRequests, infileReceived, queries,
    close: () => new Promise<void>((res) => { for (const c of conns) c.stream.destroy(); inner.close(() => res()); }),
  };
}
