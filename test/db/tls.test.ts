/**
 * TLS with the mysql client's --ssl-mode meanings, against a SEPARATE
 * throwaway MariaDB started with a test CA's server certificate (for
 * 127.0.0.1 and localhost), and against the usual test server (no TLS).
 * Every "encrypted" claim is checked on the server too: its Ssl_accepts
 * counter, and Ssl_cipher of the session.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { connect as netConnect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql, { type Connection } from 'mysql2/promise';
import { resolveConnection } from '../../src/config/connection.js';
import { openSession } from '../../src/db/connect.js';
import { quoteId } from '../../src/db/quote.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
import { runCli, type CliResult } from '../support/cli.js';
import { serverUrl } from '../support/db.js';
import { makeTestPki, serverTlsArgs, type TestPki } from '../support/tls.js';

let pki: TestPki;
let server: ThrowawayServer;
let admin: Connection;
let dir: string;
let file: string;
const DB = 'tlsdb';
let n = 0;
/** A TCP forwarder on 127.0.0.2 to the TLS server: same certificate, an address it does not name. */
let forwarder: Server | undefined;
let forwarderPort = 0;
const forwarded: Socket[] = [];

before(async () => {
  pki = makeTestPki();
  server = await startThrowawayServer({ extraArgs: serverTlsArgs(pki), innodbBufferPoolSize: '128M', innodbLogFileSize: '64M' });
  admin = await mysql.createConnection({ socketPath: server.socketPath, user: 'root', multipleStatements: true });
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.query("CREATE USER 'x509'@'%' REQUIRE X509");
  await admin.query(`GRANT ALL ON ${DB}.* TO 'x509'@'%'`);
  dir = mkdtempSync(join(tmpdir(), 'flatload-tls-'));
  file = join(dir, 'rows.tsv');
  writeFileSync(file, '1\talpha\n2\tbeta\n3\tgamma\n');
  try {
    forwarder = createServer((s) => {
      const up = netConnect(server.port, '127.0.0.1');
      forwarded.push(s, up);
      s.pipe(up);
      up.pipe(s);
      s.on('error', () => up.destroy());
      up.on('error', () => s.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      forwarder!.once('error', reject);
      forwarder!.listen(0, '127.0.0.2', () => resolve());
    });
    forwarderPort = (forwarder.address() as AddressInfo).port;
  } catch {
    forwarder = undefined; // 127.0.0.2 not bindable here: the identity test via another address is skipped
  }
});
after(async () => {
  for (const s of forwarded) s.destroy();
  await new Promise<void>((resolve) => (forwarder ? forwarder.close(() => resolve()) : resolve()));
  await admin?.end().catch(() => undefined);
  await server?.stop();
  pki?.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function sslAccepts(): Promise<number> {
  const [rows] = await admin.query("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'");
  return Number((rows as Array<{ Value: string }>)[0]?.Value ?? 0);
}

async function freshTable(): Promise<string> {
  const t = `t${++n}`;
  await admin.query(`CREATE TABLE ${DB}.${t} (id INT PRIMARY KEY, name VARCHAR(20))`);
  return t;
}

const tlsUrl = (params = '', hostName = '127.0.0.1', port?: number): string => `mysql://root@${hostName}:${port ?? server.port}/${DB}${params}`;

interface Outcome {
  r: CliResult;
  encrypted: boolean | undefined;
  /** TLS handshakes the TLS server accepted during the run. */
  accepts: number;
}

async function load(url: string, args: string[], t?: string): Promise<Outcome> {
  const table = t ?? (await freshTable());
  const before = await sslAccepts();
  const r = await runCli(['load', file, '--table', table, '--url', url, '--json', '--progress', 'none', '--no-defaults', ...args]);
  const accepts = (await sslAccepts()) - before;
  let encrypted: boolean | undefined;
  if (r.code === 0) encrypted = (JSON.parse(r.stdout) as { encrypted: boolean }).encrypted;
  return { r, encrypted, accepts };
}

function ok(o: Outcome, encrypted: boolean): void {
  assert.equal(o.r.code, 0, o.r.stderr);
  assert.equal(o.encrypted, encrypted, `JSON report encrypted=${String(o.encrypted)}`);
  if (encrypted) assert.ok(o.accepts > 0, 'the server accepted no TLS handshake');
  else assert.equal(o.accepts, 0, 'the server saw a TLS handshake on an unencrypted load');
  assert.match(o.r.stderr, encrypted ? /\(TLSv1\.[23], (not )?verified\)/ : /\(unencrypted\)/);
}

function failsWithTls(o: Outcome, re: RegExp): void {
  assert.equal(o.r.code, 6, o.r.stderr);
  assert.match(o.r.stderr, re);
  assert.doesNotMatch(o.r.stderr, /internal error/);
}

describe('--ssl-mode against a server with TLS', () => {
  test('DISABLED: unencrypted', async () => ok(await load(tlsUrl(), ['--ssl-mode', 'DISABLED']), false));
  test('PREFERRED (the default): encrypted', async () => {
    ok(await load(tlsUrl(), []), true);
    ok(await load(tlsUrl(), ['--ssl-mode', 'PREFERRED']), true);
  });
  test('REQUIRED: encrypted, the certificate is not checked (even with a CA that did not sign it)', async () => {
    ok(await load(tlsUrl(), ['--ssl-mode', 'REQUIRED']), true);
    ok(await load(tlsUrl(), ['--ssl-mode', 'REQUIRED', '--ssl-ca', pki.otherCa]), true);
  });
  test('VERIFY_CA: the right CA passes, another CA fails with TLS (exit 6)', async () => {
    ok(await load(tlsUrl(), ['--ssl-mode', 'VERIFY_CA', '--ssl-ca', pki.ca]), true);
    failsWithTls(await load(tlsUrl(), ['--ssl-mode', 'VERIFY_CA', '--ssl-ca', pki.otherCa]), /certificate could not be verified against the CA in --ssl-ca .*other-ca\.pem/);
    failsWithTls(await load(tlsUrl(), ['--ssl-mode', 'VERIFY_CA']), /could not be verified against any CA this machine trusts/);
  });
  test('VERIFY_IDENTITY: 127.0.0.1 and localhost are in the certificate', async () => {
    ok(await load(tlsUrl(), ['--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.ca]), true);
    ok(await load(tlsUrl('', 'localhost'), ['--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.ca]), true);
    failsWithTls(await load(tlsUrl(), ['--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.otherCa]), /could not be verified/);
  });
  test('VERIFY_IDENTITY: an address the certificate does not name fails in the handshake; VERIFY_CA accepts it', async (t) => {
    if (!forwarder) {
      t.skip('127.0.0.2 is not bindable here');
      return;
    }
    const via = tlsUrl('', '127.0.0.2', forwarderPort);
    const o = await load(via, ['--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.ca]);
    failsWithTls(o, /the server's certificate is not for "127\.0\.0\.2" \(Hostname\/IP does not match certificate's altnames: IP: 127\.0\.0\.2 is not in the cert's list: 127\.0\.0\.1\)/);
    // Refused during the handshake, before credentials, not by the after-the-fact check.
    assert.doesNotMatch(o.r.stderr, /found only after connecting/);
    ok(await load(via, ['--ssl-mode', 'VERIFY_CA', '--ssl-ca', pki.ca]), true);
  });
  test('the same settings as URL parameters (ssl-mode, ssl-ca)', async () => {
    ok(await load(tlsUrl(`?ssl-mode=VERIFY_IDENTITY&ssl-ca=${encodeURIComponent(pki.ca)}`), []), true);
    ok(await load(tlsUrl('?sslmode=disabled'), []), false);
    failsWithTls(await load(tlsUrl(`?ssl-mode=VERIFY_CA&ssl-ca=${encodeURIComponent(pki.otherCa)}`), []), /could not be verified/);
  });
  test('a client certificate (--ssl-cert/--ssl-key) for a REQUIRE X509 user', async () => {
    const url = `mysql://x509@127.0.0.1:${server.port}/${DB}`;
    ok(await load(url, ['--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.ca, '--ssl-cert', pki.clientCert, '--ssl-key', pki.clientKey]), true);
    const without = await load(url, ['--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.ca]);
    assert.equal(without.r.code, 6, without.r.stderr);
    assert.match(without.r.stderr, /Access denied for user 'x509'/);
    const bad = await load(url, ['--ssl-mode', 'REQUIRED', '--ssl-cert', pki.clientCert, '--ssl-key', pki.serverKey]);
    assert.equal(bad.r.code, 2);
    assert.match(bad.r.stderr, /cannot use the TLS files/);
  });
});

describe('--ssl-mode against the usual test server (no TLS)', () => {
  const plainUrl = (): string => serverUrl();
  async function plainLoad(args: string[]): Promise<CliResult> {
    const u = new URL(plainUrl());
    const db = `tlsplain_${randomBytes(3).toString('hex')}`;
    const c = await mysql.createConnection({ host: u.hostname, port: Number(u.port), user: decodeURIComponent(u.username || 'root'), password: decodeURIComponent(u.password) });
    await c.query(`CREATE DATABASE ${db}`);
    await c.query(`CREATE TABLE ${db}.t (id INT PRIMARY KEY, name VARCHAR(20))`);
    try {
      return await runCli(['load', file, '--table', `${db}.t`, '--url', plainUrl(), '--json', '--progress', 'none', '--no-defaults', ...args]);
    } finally {
      await c.query(`DROP DATABASE ${db}`);
      await c.end();
    }
  }
  test('PREFERRED falls back to an unencrypted connection, and says so', async () => {
    const r = await plainLoad(['--ssl-mode', 'PREFERRED']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { encrypted: boolean }).encrypted, false);
    assert.match(r.stderr, /\(unencrypted\)/);
  });
  test('DISABLED: unencrypted', async () => {
    const r = await plainLoad(['--ssl-mode', 'DISABLED']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { encrypted: boolean }).encrypted, false);
  });
  for (const mode of ['REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY']) {
    test(`${mode} fails clearly: the server does not offer TLS`, async () => {
      const r = await plainLoad(['--ssl-mode', mode, ...(mode === 'REQUIRED' ? [] : ['--ssl-ca', pki.ca])]);
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, new RegExp(`--ssl-mode ${mode} needs an encrypted connection, but the server does not offer TLS`));
    });
  }
});

describe('Session.encrypted is what the server sees', () => {
  const opts = (mode: string, extra: Record<string, string> = {}) =>
    resolveConnection({ host: '127.0.0.1', port: server.port, user: 'root', database: DB, sslMode: mode, ...extra }, {}, new Map());
  async function serverCipher(c: Connection): Promise<string> {
    const [rows] = await c.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'");
    return String((rows as Array<{ Value: string }>)[0]?.Value ?? '');
  }
  test('DISABLED: encrypted false and the server agrees (Ssl_cipher empty)', async () => {
    const { session, conn } = await openSession(opts('DISABLED'));
    try {
      assert.equal(session.encrypted, false);
      assert.equal(session.tls, undefined);
      assert.equal(await serverCipher(conn), '');
    } finally {
      await conn.end();
    }
  });
  for (const mode of ['PREFERRED', 'REQUIRED', 'VERIFY_IDENTITY']) {
    test(`${mode}: encrypted true, cipher recorded, and the server reports the same cipher`, async () => {
      const { session, conn } = await openSession(opts(mode, mode === 'VERIFY_IDENTITY' ? { sslCa: pki.ca } : {}));
      try {
        assert.equal(session.encrypted, true);
        const cipher = await serverCipher(conn);
        assert.notEqual(cipher, '');
        assert.equal(session.tls?.serverCipher, cipher);
        assert.match(session.tls?.version ?? '', /^TLSv1\.[23]$/);
        assert.ok(session.tls?.cipher);
        assert.equal(session.tls?.verified, mode === 'VERIFY_IDENTITY');
      } finally {
        await conn.end();
      }
    });
  }
  test('a TLS error from openSession is a FlatloadError with code TLS', async () => {
    await assert.rejects(openSession(opts('VERIFY_CA', { sslCa: pki.otherCa })), (e: unknown) => isFlatloadError(e) && e.code === 'TLS');
  });
});

describe('large transfers over TLS (backpressure)', () => {
  async function bigFile(path: string, rows: number): Promise<string> {
    const h = createHash('sha1');
    const out = createWriteStream(path);
    for (let i = 1; i <= rows; i++) {
      const line = `${i}\t${randomBytes(24).toString('base64')}\t${'x'.repeat(i % 50)}\n`;
      h.update(line);
      if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    return h.digest('hex');
  }
  test('~8 MB, in one chunk and in many parallel chunks, arrives exactly', async () => {
    const big = join(dir, 'big.tsv');
    const rows = 130_000;
    await bigFile(big, rows);
    await admin.query(`CREATE TABLE ${DB}.big_ref (id INT PRIMARY KEY, a VARCHAR(40), b VARCHAR(60))`);
    await admin.query(`LOAD DATA INFILE ? INTO TABLE ${DB}.big_ref`, [big]);
    const [ref] = await admin.query(`CHECKSUM TABLE ${DB}.big_ref EXTENDED`);
    for (const [name, args] of [
      ['big_one', ['--chunk-size', '64MiB', '--jobs', '1']],
      ['big_many', ['--chunk-size', '512KiB', '--jobs', '4']],
    ] as const) {
      await admin.query(`CREATE TABLE ${DB}.${quoteId(name)} (id INT PRIMARY KEY, a VARCHAR(40), b VARCHAR(60))`);
      const before = await sslAccepts();
      const r = await runCli(['load', big, '--table', name, '--url', tlsUrl(), '--ssl-mode', 'VERIFY_IDENTITY', '--ssl-ca', pki.ca, '--json', '--progress', 'none', '--no-defaults', ...args], {
        timeoutMs: 300_000,
      });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { rows: number; encrypted: boolean; inputBytes: number; chunks: number };
      assert.equal(report.rows, rows);
      assert.equal(report.encrypted, true);
      assert.ok(report.inputBytes > 7_000_000, `input ${report.inputBytes} bytes`);
      assert.ok((await sslAccepts()) - before > 0);
      const [sum] = await admin.query(`CHECKSUM TABLE ${DB}.${quoteId(name)} EXTENDED`);
      assert.equal((sum as Array<{ Checksum: string }>)[0]!.Checksum, (ref as Array<{ Checksum: string }>)[0]!.Checksum, `${name}: data differs`);
      if (name === 'big_many') assert.ok(report.chunks > 8, `chunks ${report.chunks}`);
    }
  });
});
