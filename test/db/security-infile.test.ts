/**
 * Local file safety against a hostile server. A FAKE SERVER built with
 * mysql2's server API (mysql.createServer) answers queries — by itself, or by
 * passing them to the real test server — except that it replies to chosen
 * statements with a LOCAL INFILE request (0xFB + file name) for a file
 * flatload never offered. Everything the client sends is captured, to prove
 * that no byte of the requested file reaches the server.
 *
 * (a) an ordinary query (introspection) answered with a request for /etc/passwd;
 * (b) flatload's LOAD DATA answered with a request for another path than its chunk token.
 * Driven through src/db/connect.ts + src/load/loadData.ts and end to end through the CLI.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2';
import mysqlp, { type ConnectionOptions as UpstreamOptions, type ResultSetHeader } from 'mysql2/promise';
import { resolveConnection } from '../../src/config/connection.js';
import { openPool, openSession } from '../../src/db/connect.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { runLoadData } from '../../src/load/loadData.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/db.js';

// ------------------------------------------------------------------ the fake server

/** The parts of mysql2's server-side connection this test uses (not in its typings). */
interface ServerConn {
  serverHandshake(a: object): void;
  on(ev: string, f: (...a: never[]) => void): void;
  writeOk(a?: object): void;
  writeError(a: object): void;
  writeColumns(c: unknown[]): void;
  writeTextRow(r: unknown[]): void;
  writeEof(warnings?: number, status?: number): void;
  write(b: Buffer): void;
  sequenceId: number;
  handlePacket: (p: RawPacket | undefined) => void;
  stream: Socket;
}
interface RawPacket {
  buffer: Buffer;
  start: number;
  end: number;
  sequenceId: number;
}

interface FakeSession {
  /** Client capability flags from its handshake response. */
  clientFlags: number | undefined;
  queries: string[];
}

interface FakeServer {
  port: number;
  /** Every byte any client sent, in order. */
  raw: Buffer[];
  sessions: FakeSession[];
  /** File names the fake asked for. */
  requested: string[];
  /** What came back for each request (file content packets, concatenated). */
  received: Buffer[];
  close(): Promise<void>;
}

const CLIENT_LOCAL_FILES = 0x80;
/** All capabilities in the first three bytes except COMPRESS, SSL and SESSION_TRACK (the fake speaks none of them). */
const CAPABILITIES = 0xffffff & ~(0x20 | 0x800 | 0x800000);

/**
 * `hostile(sql)` returns the file name to ask for, or undefined to answer the
 * query normally: from `upstream` (the real server) when given, else with OK.
 */
async function startFakeServer(hostile: (sql: string) => string | undefined, upstream?: UpstreamOptions): Promise<FakeServer> {
  const raw: Buffer[] = [];
  const sessions: FakeSession[] = [];
  const requested: string[] = [];
  const received: Buffer[] = [];
  const sockets: Socket[] = [];
  const upstreams: Array<Promise<mysqlp.Connection>> = [];
  let nextId = 1;
  const server = mysql.createServer((c) => {
    const conn = c as unknown as ServerConn;
    const session: FakeSession = { clientFlags: undefined, queries: [] };
    sessions.push(session);
    sockets.push(conn.stream);
    conn.stream.on('data', (b: Buffer) => raw.push(Buffer.from(b)));
    conn.stream.on('error', () => undefined);
    conn.on('error', () => undefined);
    conn.serverHandshake({
      protocolVersion: 10,
      serverVersion: '10.11.99-MariaDB-fake',
      connectionId: nextId++,
      statusFlags: 2,
      characterSet: 45,
      capabilityFlags: CAPABILITIES,
    });
    let up: Promise<mysqlp.Connection> | undefined;
    const upstreamConn = (): Promise<mysqlp.Connection> => {
      if (!up) {
        up = mysqlp.createConnection({
          ...upstream!,
          rowsAsArray: true,
          dateStrings: true,
          supportBigNumbers: true,
          bigNumberStrings: true,
          charset: 'utf8mb4',
          flags: ['-LOCAL_FILES'],
        });
        upstreams.push(up);
      }
      return up;
    };

    // Packets that answer our LOCAL INFILE request bypass mysql2's command dispatch.
    let infile: { chunks: Buffer[] } | undefined;
    const dispatch = conn.handlePacket.bind(conn);
    conn.handlePacket = (packet) => {
      if (!packet) return dispatch(packet);
      const payload = packet.buffer.subarray(packet.start + 4, packet.end);
      if (session.clientFlags === undefined && packet.sequenceId === 1 && payload.length >= 4) session.clientFlags = payload.readUInt32LE(0);
      if (infile) {
        conn.sequenceId = (packet.sequenceId + 1) % 256;
        if (payload.length > 0) {
          infile.chunks.push(Buffer.from(payload));
          return;
        }
        received.push(Buffer.concat(infile.chunks));
        infile = undefined;
        conn.writeOk({ affectedRows: 0 });
        return;
      }
      // mysql2's server side does not restart the sequence at a new command; clients always do.
      conn.sequenceId = packet.sequenceId;
      dispatch(packet);
    };
    const writeRaw = (payload: Buffer): void => {
      const header = Buffer.alloc(4);
      header.writeUIntLE(payload.length, 0, 3);
      header[3] = conn.sequenceId;
      conn.sequenceId = (conn.sequenceId + 1) % 256;
      conn.write(Buffer.concat([header, payload]));
    };
    const handle = async (sql: string): Promise<void> => {
      session.queries.push(sql);
      const wanted = hostile(sql);
      if (wanted !== undefined) {
        requested.push(wanted);
        infile = { chunks: [] };
        writeRaw(Buffer.concat([Buffer.from([0xfb]), Buffer.from(wanted, 'utf8')]));
        return;
      }
      if (!upstream) {
        conn.writeOk();
        return;
      }
      try {
        const [rows, fields] = await (await upstreamConn()).query(sql);
        if (Array.isArray(rows) && fields) {
          conn.writeColumns(fields);
          for (const r of rows as unknown[][]) {
            conn.writeTextRow(r.map((v) => (v === null ? null : Buffer.isBuffer(v) ? v.toString('utf8') : String(v as string | number | bigint))));
          }
          conn.writeEof(0, 2);
        } else {
          const h = rows as ResultSetHeader;
          conn.writeOk({ affectedRows: h.affectedRows, insertId: Number(h.insertId), warningCount: h.warningStatus, serverStatus: 2 });
        }
      } catch (e) {
        const err = e as { sqlMessage?: string; message: string; errno?: number };
        conn.writeError({ message: err.sqlMessage ?? err.message, code: err.errno ?? 1105 });
      }
    };
    conn.on('query', (sql: string) => void handle(sql));
    conn.on('stmt_prepare', (sql: string) => void handle(sql)); // mysql2's server routes SET and PREPARE here
    conn.on('init_db', () => conn.writeOk());
    conn.on('ping', () => conn.writeOk());
    conn.on('quit', () => conn.stream.end());
  });
  const inner = (server as unknown as { _server: NetServer })._server;
  await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (inner.address() as AddressInfo).port,
    raw,
    sessions,
    requested,
    received,
    close: async () => {
      for (const s of sockets) s.destroy();
      for (const u of upstreams) await u.then((c) => c.end()).catch(() => undefined);
      await new Promise<void>((resolve) => inner.close(() => resolve()));
    },
  };
}

// ------------------------------------------------------------------ fixtures

let dir: string;
let db: TestDatabase;
let dataFile: string;
let secretFile: string;
let secretMarker: string;
let upstream: UpstreamOptions;
const passwd = existsSync('/etc/passwd') ? readFileSync('/etc/passwd') : Buffer.from('root:x:0:0:root:/root:/bin/bash\n');

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flatload-infile-'));
  dataFile = join(dir, 'data.tsv');
  writeFileSync(dataFile, '1\talpha\n2\tbeta\n3\tgamma\n');
  secretMarker = `TOP-SECRET-${randomBytes(12).toString('hex')}`;
  secretFile = join(dir, 'id_rsa');
  writeFileSync(secretFile, `-----BEGIN KEY-----\n${secretMarker}\n-----END KEY-----\n`);
  db = await createTestDatabase('infile');
  await db.conn.query('CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))');
  const u = new URL(serverUrl());
  upstream = { host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username || 'root'), password: decodeURIComponent(u.password), database: db.name };
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Asserts that nothing of /etc/passwd, the secret file or the data file reached the fake. */
function assertNothingLeaked(fake: FakeServer, opts: { dataMayBeSent?: boolean } = {}): void {
  const all = Buffer.concat(fake.raw);
  assert.equal(all.includes(passwd), false, '/etc/passwd reached the server');
  for (const line of passwd.toString('utf8').split('\n').filter((l) => l.length >= 12)) {
    assert.equal(all.includes(Buffer.from(line)), false, `a line of /etc/passwd reached the server: ${line}`);
  }
  assert.equal(all.includes(Buffer.from(secretMarker)), false, 'the secret file reached the server');
  if (!opts.dataMayBeSent) assert.equal(all.includes(Buffer.from('gamma')), false, 'the data file reached the server');
  for (const r of fake.received) if (!opts.dataMayBeSent) assert.equal(r.length, 0, `the client answered a file request with ${r.length} bytes`);
}

function directOptions(port: number) {
  return resolveConnection({ host: '127.0.0.1', port, user: 'root', sslMode: 'DISABLED' }, {}, new Map());
}

// ------------------------------------------------------------------ (a) ordinary queries

describe('(a) a LOCAL INFILE request in reply to an ordinary query is refused', () => {
  test('control connection (introspection): refused, and it never offered LOCAL_FILES', async () => {
    const fake = await startFakeServer(() => '/etc/passwd');
    try {
      const { conn } = await openSession(directOptions(fake.port), { localInfile: false });
      try {
        await assert.rejects(conn.query("SHOW SESSION VARIABLES LIKE 'local_infile'"), (e: unknown) => {
          assert.ok(isFlatloadError(e), String(e));
          assert.match((e as Error).message, /asked for local file "\/etc\/passwd", which flatload did not offer; refused/);
          return true;
        });
        // The connection is still usable and still refuses.
        await assert.rejects(conn.query('SELECT 1'), /did not offer/);
      } finally {
        conn.destroy();
      }
      assert.deepEqual(fake.requested, ['/etc/passwd', '/etc/passwd']);
      assert.equal((fake.sessions[0]!.clientFlags! & CLIENT_LOCAL_FILES) !== 0, false, 'a non-loading connection must not offer LOCAL_FILES');
      assertNothingLeaked(fake);
    } finally {
      await fake.close();
    }
  });

  test('loading (pool) connection: a request in reply to anything but its own LOAD DATA is refused', async () => {
    const fake = await startFakeServer(() => '/etc/passwd');
    try {
      const opts = directOptions(fake.port);
      const { session, conn } = await openSession(opts, { localInfile: false });
      conn.destroy();
      const pool = openPool(session, 1, { localInfile: true });
      try {
        const pc = await pool.getConnection();
        await assert.rejects(pc.query('SET SESSION max_error_count = 65535'), /asked for local file "\/etc\/passwd".*refused/);
        await assert.rejects(pc.query('START TRANSACTION'), /refused/);
        pc.release();
      } finally {
        await pool.end();
      }
      assert.equal((fake.sessions[1]!.clientFlags! & CLIENT_LOCAL_FILES) !== 0, true, 'a loading connection offers LOCAL_FILES');
      assertNothingLeaked(fake);
    } finally {
      await fake.close();
    }
  });

  test('through the CLI: the first introspection query asks for /etc/passwd; flatload stops with a clear error', async () => {
    const fake = await startFakeServer(() => '/etc/passwd');
    try {
      const r = await runCli(['load', dataFile, '--table', `${db.name}.t`, '--url', `mysql://root@127.0.0.1:${fake.port}/`, '--no-defaults', '--progress', 'none', '--json'], {
        env: {},
      });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /the server asked for local file "\/etc\/passwd", which flatload did not offer; refused \(nothing was sent\)/);
      assert.doesNotMatch(r.stderr, /internal error|at .*\.js:\d+/);
      assert.ok(fake.requested.length >= 1);
      assertNothingLeaked(fake);
    } finally {
      await fake.close();
    }
  });
});

// ------------------------------------------------------------------ (b) the LOAD DATA itself

describe('(b) a LOAD DATA answered with a request for another file', () => {
  async function loadVia(fake: FakeServer, opened: { count: number }) {
    const { session, conn } = await openSession(directOptions(fake.port), { localInfile: false });
    conn.destroy();
    const pool = openPool(session, 1, { localInfile: true });
    const pc = await pool.getConnection();
    try {
      return await runLoadData({
        conn: pc,
        sql: "LOAD DATA LOCAL INFILE 'flatload-chunk-0' INTO TABLE `t`",
        fileToken: 'flatload-chunk-0',
        open: () => {
          opened.count++;
          return createReadStream(dataFile);
        },
        onBytes: () => undefined,
        maxWarnings: 10,
      });
    } finally {
      pc.release();
      await pool.end();
    }
  }

  for (const wanted of ['/etc/passwd', 'SECRET', 'DATAFILE', 'flatload-chunk-0 ', 'FLATLOAD-CHUNK-0', '../flatload-chunk-0', '/tmp/flatload-chunk-0']) {
    test(`server asks for ${JSON.stringify(wanted)}: refused, the chunk is not opened, nothing is sent`, async () => {
      const name = wanted === 'SECRET' ? secretFile : wanted === 'DATAFILE' ? dataFile : wanted;
      const fake = await startFakeServer((sql) => (/^LOAD DATA/i.test(sql) ? name : undefined));
      try {
        const opened = { count: 0 };
        await assert.rejects(loadVia(fake, opened), (e: unknown) => {
          assert.ok(isFlatloadError(e), String(e));
          assert.match((e as Error).message, /which flatload did not offer; refused/);
          assert.ok((e as Error).message.includes(JSON.stringify(name)));
          return true;
        });
        assert.equal(opened.count, 0, 'the chunk must not even be opened for a wrong name');
        assert.deepEqual(fake.requested, [name]);
        assert.deepEqual(fake.received.map((b) => b.length), [0]);
        assertNothingLeaked(fake);
      } finally {
        await fake.close();
      }
    });
  }

  test('control: asked for its own token, the chunk (and only the chunk) is sent — the capture would see a leak', async () => {
    const fake = await startFakeServer((sql) => (/^LOAD DATA/i.test(sql) ? 'flatload-chunk-0' : undefined));
    try {
      const opened = { count: 0 };
      const res = await loadVia(fake, opened);
      assert.equal(res.bytesSent, readFileSync(dataFile).length);
      assert.equal(opened.count, 1);
      assert.deepEqual(fake.received, [readFileSync(dataFile)]);
      assertNothingLeaked(fake, { dataMayBeSent: true });
    } finally {
      await fake.close();
    }
  });

  for (const target of ['/etc/passwd', 'SECRET']) {
    test(`through the CLI against a proxy of the real server: LOAD DATA answered with ${target}`, async () => {
      const name = target === 'SECRET' ? secretFile : target;
      const fake = await startFakeServer((sql) => (/^\s*LOAD\s+DATA/i.test(sql) ? name : undefined), upstream);
      try {
        const r = await runCli(
          ['load', dataFile, '--table', `${db.name}.t`, '--url', `mysql://root@127.0.0.1:${fake.port}/`, '--no-defaults', '--progress', 'none', '--json', '--restart'],
          { env: {} },
        );
        assert.notEqual(r.code, 0, r.stderr);
        assert.match(r.stderr, /the server asked for local file ".*", which flatload did not offer; refused/);
        assert.ok(r.stderr.includes(JSON.stringify(name)), r.stderr);
        assert.doesNotMatch(r.stderr, /internal error/);
        if (r.stdout.trim()) {
          const report = JSON.parse(r.stdout) as { status: string; rows: number };
          assert.equal(report.status, 'stopped');
          assert.equal(report.rows, 0);
        }
        assert.ok(fake.requested.length >= 1, 'the fake must have been asked to run LOAD DATA');
        assert.ok(fake.requested.every((x) => x === name));
        assertNothingLeaked(fake);
        const [rows] = await db.conn.query('SELECT COUNT(*) AS n FROM t');
        assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 0);
      } finally {
        await fake.close();
      }
    });
  }
});
