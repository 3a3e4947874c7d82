import { selectOne } from './rows.js';
import { readFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { checkServerIdentity, createSecureContext, TLSSocket } from 'node:tls';
import mysql, { type Connection, type ConnectionOptions as Mysql2Options, type Pool, type PoolConnection } from 'mysql2/promise';
import type { ConnectionOptions, Endpoint, SslOptions } from '../config/connection.js';
import { describeConnection } from '../config/connection.js';
import { FlatloadError } from '../errors/index.js';
import { toFlatloadError } from './errors.js';
import { ER } from './errnos.js';
import { NodeRouter } from './nodes.js';

/**
 * A LOCAL INFILE request that flatload did not initiate (a hostile or
 * compromised server can send one in reply to any statement) gets this
 * stream: it fails at once, so nothing from the client's disk is sent.
 * Per-query factories override it for the one chunk flatload is loading.
 * The requested name is only quoted in the message, never opened.
 */
export function refuseInfileRequest(requestedName: string): Readable {
  const stream = new Readable({ read() {} });
  const shown = JSON.stringify(requestedName.length > 200 ? `${requestedName.slice(0, 200)}…` : requestedName);
  process.nextTick(() =>
    stream.destroy(
      new FlatloadError('SERVER_ERROR', `the server asked for local file ${shown}, which flatload did not offer; refused (nothing was sent)`, {
        hint: 'a server only asks for a file it was not given when it is misbehaving or compromised; check what you are connected to',
      }),
    ),
  );
  return stream;
}

export interface OpenOptions {
  /** Whether this connection may answer LOAD DATA LOCAL at all (only loaders need to). */
  localInfile?: boolean;
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new FlatloadError('CONFIG', `cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

/** mysql2's `ssl` object as flatload builds it (mysql2 reads `verifyIdentity`, not Node's checkServerIdentity). */
export interface TlsSettings {
  rejectUnauthorized: boolean;
  verifyIdentity: boolean;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/**
 * mysql2's `ssl` option for a mode (the mysql client's --ssl-mode meanings);
 * undefined means plain TCP.
 * - PREFERRED, REQUIRED: encrypt, do not check the certificate.
 * - VERIFY_CA: the chain must lead to --ssl-ca (or, without it, to a CA
 *   Node trusts); the host name is not checked.
 * - VERIFY_IDENTITY: VERIFY_CA plus the host name (or IP) connected to must
 *   be in the certificate.
 * Certificate files are read and checked here, so a bad file is a CONFIG
 * error before anything is sent.
 */
export function tlsConfig(ssl: SslOptions, _host?: string): TlsSettings | undefined {
  if (ssl.mode === 'DISABLED') return undefined;
  const verifyCa = ssl.mode === 'VERIFY_CA' || ssl.mode === 'VERIFY_IDENTITY';
  const config: TlsSettings = { rejectUnauthorized: verifyCa, verifyIdentity: ssl.mode === 'VERIFY_IDENTITY' };
  if (Boolean(ssl.cert) !== Boolean(ssl.key)) {
    throw new FlatloadError('CONFIG', ssl.cert ? '--ssl-cert needs --ssl-key (the client certificate\'s private key)' : '--ssl-key needs --ssl-cert');
  }
  if (ssl.ca) {
    config.ca = readPem(ssl.ca, '--ssl-ca');
    if (!config.ca.includes('-----BEGIN CERTIFICATE-----')) {
      throw new FlatloadError('CONFIG', `--ssl-ca ${ssl.ca} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    }
  }
  if (ssl.cert) config.cert = readPem(ssl.cert, '--ssl-cert');
  if (ssl.key) config.key = readPem(ssl.key, '--ssl-key');
  try {
    createSecureContext({ ca: config.ca, cert: config.cert, key: config.key });
  } catch (err) {
    const files = [ssl.ca && `--ssl-ca ${ssl.ca}`, ssl.cert && `--ssl-cert ${ssl.cert}`, ssl.key && `--ssl-key ${ssl.key}`].filter(Boolean).join(', ');
    throw new FlatloadError('CONFIG', `cannot use the TLS files (${files}): ${(err as Error).message}`, {
      hint: 'they must be PEM files, and --ssl-key must be the key of --ssl-cert',
    });
  }
  return config;
}

/**
 * Opens the TCP (or Unix) socket for mysql2. Node checks a server
 * certificate's names against `servername || host || socket._host`; mysql2
 * passes neither servername nor host when the host is an IP address, and Node
 * records `_host` only for names it looked up, so an IP would be checked as
 * "localhost". Recording the address here makes VERIFY_IDENTITY check the
 * address actually connected to, before any credentials are sent.
 */
function socketFactory(c: ConnectionOptions, router: NodeRouter): () => Socket {
  return () => {
    if (c.socketPath) return netConnect(c.socketPath);
    // Each new connection goes to the router's current node; one that cannot be reached moves the router on.
    const node = router.current;
    const s = netConnect({ host: node.host, port: node.port });
    s.setNoDelay(true);
    let reached = false;
    s.once('connect', () => {
      reached = true;
      s.setKeepAlive(true);
      router.connected(node);
    });
    s.once('error', () => {
      if (!reached) router.failed(node);
    });
    (s as unknown as { _host: string | null })._host = node.host;
    socketNodes.set(s, node);
    return s;
  };
}

/** The node each socket was opened to (a connection's node, for the router and the report). */
const socketNodes = new WeakMap<object, Endpoint>();

/** The node a connection was opened to, or undefined for a Unix socket. */
export function nodeOf(conn: Connection | PoolConnection): Endpoint | undefined {
  const sock = socketOf(conn);
  return typeof sock === 'object' && sock !== null ? socketNodes.get(sock) : undefined;
}

/** Every connection's character set, set in the handshake. */
export const CONNECTION_CHARSET = 'utf8mb4';

function baseOptions(c: ConnectionOptions, open: OpenOptions, ssl: TlsSettings | undefined, router: NodeRouter): Mysql2Options {
  const o: Mysql2Options = {
    user: c.user,
    charset: CONNECTION_CHARSET,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    multipleStatements: false,
    connectTimeout: 10_000,
    infileStreamFactory: refuseInfileRequest,
    stream: socketFactory(c, router),
  };
  if (c.socketPath) o.socketPath = c.socketPath;
  else {
    // Still given: mysql2 uses them for the SNI name and its TLS session cache.
    o.host = c.host;
    o.port = c.port;
  }
  if (c.password !== undefined) o.password = c.password;
  if (c.database !== undefined) o.database = c.database;
  if (!open.localInfile) o.flags = ['-LOCAL_FILES'];
  if (ssl !== undefined) o.ssl = ssl;
  return o;
}

/** mysql2 raises this when TLS was asked for and the server has none. */
function isNoTlsOnServer(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'HANDSHAKE_NO_SSL_SUPPORT' || /does not support secure connection/i.test(String((err as Error).message));
}

function isTlsHandshakeError(err: unknown): boolean {
  const code = String((err as { code?: string }).code ?? '');
  return code === 'HANDSHAKE_SSL_ERROR' || /^ERR_(TLS|SSL)_|^CERT_|^UNABLE_TO_|^DEPTH_ZERO|SELF_SIGNED/.test(code);
}

/** A connect-time TLS failure in words that say which check failed and what to do. */
function tlsFailure(err: unknown, c: ConnectionOptions, where: string): FlatloadError {
  const msg = String((err as Error).message ?? err);
  const mode = c.ssl.mode;
  const ca = c.ssl.ca ? `the CA in --ssl-ca ${c.ssl.ca}` : 'any CA this machine trusts (no --ssl-ca was given)';
  if (/altnames|does not match|Hostname\/IP/i.test(msg)) {
    return new FlatloadError('TLS', `${where}: the server's certificate is not for "${c.host}" (${msg})`, {
      hint: `--ssl-mode ${mode} checks that the certificate names the host you connect to; connect with a name or IP address the certificate lists, or use --ssl-mode VERIFY_CA to check only the CA`,
    });
  }
  if (/self[- ]signed|unable to (get|verify)|issuer|certificate signature|chain/i.test(msg)) {
    return new FlatloadError('TLS', `${where}: the server's certificate could not be verified against ${ca} (${msg})`, {
      hint: `--ssl-mode ${mode} needs --ssl-ca to name the CA certificate that signed the server's certificate`,
    });
  }
  if (/expired|not yet valid/i.test(msg)) {
    return new FlatloadError('TLS', `${where}: the server's certificate is not valid now (${msg})`);
  }
  return new FlatloadError('TLS', `${where}: the TLS handshake failed (${msg})`, { hint: `--ssl-mode is ${mode}` });
}

function connectError(err: unknown, c: ConnectionOptions, where: string): FlatloadError {
  if (err instanceof FlatloadError) return err;
  if (isNoTlsOnServer(err)) {
    return new FlatloadError('TLS', `${where}: --ssl-mode ${c.ssl.mode} needs an encrypted connection, but the server does not offer TLS`, {
      hint: 'give the server ssl_cert and ssl_key (SHOW VARIABLES LIKE \'have_ssl\' says YES when it has them), or use --ssl-mode PREFERRED or DISABLED',
    });
  }
  if (isTlsHandshakeError(err)) return tlsFailure(err, c, where);
  return toFlatloadError(err, where);
}

/** What the TLS layer of a connection really is. */
export interface TlsInfo {
  /** e.g. "TLSv1.3". */
  version: string;
  /** Cipher suite as the client socket negotiated it, e.g. "TLS_AES_256_GCM_SHA384". */
  cipher: string;
  /** `SHOW SESSION STATUS LIKE 'Ssl_cipher'`: the server's view; null when it could not be read. */
  serverCipher: string | null;
  /** The certificate chain was verified (VERIFY_CA / VERIFY_IDENTITY). */
  verified: boolean;
}

/** Resolved once per process: whether PREFERRED ended up encrypted. */
export interface Session {
  options: ConnectionOptions;
  /** Which node of --host/--url new connections go to (one entry for a single server). */
  router: NodeRouter;
  ssl: TlsSettings | undefined;
  /**
   * The connection really is TLS: the client socket is a TLS socket and the
   * server reports a cipher for the session (Ssl_cipher), or could not be
   * asked. Never merely "TLS was requested".
   */
  encrypted: boolean;
  tls: TlsInfo | undefined;
}

function socketOf(conn: Connection): unknown {
  return (conn as unknown as { connection?: { stream?: unknown } }).connection?.stream;
}

/**
 * Checks the first connection's transport and reads the server's view of it.
 * Throws when TLS was configured but the socket is not TLS, or when a
 * verifying mode's checks did not hold (defence in depth: mysql2 and Node
 * already refuse those during the handshake).
 */
async function inspectTls(conn: Connection, c: ConnectionOptions, ssl: TlsSettings | undefined, where: string): Promise<TlsInfo | undefined> {
  const sock = socketOf(conn);
  const isTls = sock instanceof TLSSocket && sock.encrypted === true;
  if (ssl !== undefined && !isTls) {
    throw new FlatloadError('TLS', `${where}: TLS was negotiated but the connection is not encrypted; refusing to continue`);
  }
  if (!isTls) return undefined;
  if (ssl?.rejectUnauthorized && !sock.authorized) {
    throw new FlatloadError('TLS', `${where}: the server's certificate was not verified (${String(sock.authorizationError)})`);
  }
  if (ssl?.verifyIdentity && !c.socketPath) {
    // The handshake already checked this (see socketFactory); reaching here with a mismatch means that check was skipped.
    const err = checkServerIdentity(c.host, sock.getPeerCertificate());
    if (err) {
      throw new FlatloadError('TLS', `${where}: the server's certificate is not for "${c.host}" (${err.message}); found only after connecting`, {
        hint: 'this is a flatload bug (the TLS handshake should have refused it): please report it',
      });
    }
  }
  let serverCipher: string | null;
  try {
    const value = (await selectOne<{ Value?: string | null }>(conn, "SHOW SESSION STATUS LIKE 'Ssl_cipher'"))?.Value;
    serverCipher = value === undefined ? null : (value ?? '');
  } catch {
    serverCipher = null;
  }
  return {
    version: sock.getProtocol() ?? 'unknown',
    cipher: sock.getCipher()?.standardName ?? sock.getCipher()?.name ?? 'unknown',
    serverCipher,
    verified: Boolean(ssl?.rejectUnauthorized),
  };
}

/**
 * Opens the first connection and settles the TLS question (PREFERRED falls
 * back to plain TCP only when the server has no TLS at all, as the mysql
 * client does). The returned Session is reused for every later connection.
 */
export async function openSession(c: ConnectionOptions, open: OpenOptions = {}): Promise<{ session: Session; conn: Connection }> {
  // As with the mysql client, PREFERRED over a Unix socket does not try TLS (the socket is local).
  const ssl = c.socketPath && c.ssl.mode === 'PREFERRED' ? undefined : tlsConfig(c.ssl, c.host);
  const router = new NodeRouter(c.nodes.length > 0 ? c.nodes : [{ host: c.host, port: c.port }]);
  // A node of a list that cannot be reached is skipped; the last one's error is the one reported.
  for (let tries = 1; ; tries++) {
    try {
      return await overLimitRetried(() => openSessionOn(c, open, ssl, router));
    } catch (err) {
      const reachable = !(err instanceof FlatloadError) || err.code !== 'CONNECTION_REFUSED';
      if (reachable || tries >= router.nodes.length) throw err;
    }
  }
}

/**
 * A connection over the account's MAX_USER_CONNECTIONS is tried again after
 * 0.1, 0.2 and 0.3 s: one this process has just closed may not have ended
 * on the server yet (mysql2's end() does not wait for it).
 */
async function overLimitRetried<T>(connect: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (err) {
      if (!(err instanceof FlatloadError && err.context.serverErrno === ER.USER_LIMIT_REACHED) || attempt >= 4) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

async function openSessionOn(c: ConnectionOptions, open: OpenOptions, ssl: TlsSettings | undefined, router: NodeRouter): Promise<{ session: Session; conn: Connection }> {
  const node = router.current;
  // The node's own address: messages name it, and VERIFY_IDENTITY checks its certificate against it.
  const at: ConnectionOptions = { ...c, host: node.host, port: node.port };
  const where = `connecting to ${describeConnection(at)}`;
  let conn: Connection;
  let used = ssl;
  try {
    conn = await mysql.createConnection(baseOptions(c, open, ssl, router));
  } catch (err) {
    if (c.ssl.mode === 'PREFERRED' && ssl !== undefined && isNoTlsOnServer(err)) {
      used = undefined;
      try {
        conn = await mysql.createConnection(baseOptions(c, open, undefined, router));
      } catch (err2) {
        throw connectError(err2, at, where);
      }
    } else {
      throw connectError(err, at, where);
    }
  }
  try {
    const tls = await inspectTls(conn, at, used, where);
    // A server that says it has no cipher for a TLS socket is behind something that terminated TLS: not end to end.
    const encrypted = tls !== undefined && tls.serverCipher !== '';
    return { session: { options: c, router, ssl: used, encrypted, tls }, conn };
  } catch (err) {
    conn.destroy();
    throw connectError(err, at, where);
  }
}

export async function openConnection(s: Session, open: OpenOptions = {}): Promise<Connection> {
  return overLimitRetried(async () => {
    try {
      return await mysql.createConnection(baseOptions(s.options, open, s.ssl, s.router));
    } catch (err) {
      throw connectError(err, s.options, `connecting to ${describeConnection({ ...s.options, ...s.router.current })}`);
    }
  });
}

/** A connection to one given node of the list, whatever the router's current node (to read each node in turn). */
export async function openConnectionTo(s: Session, node: Endpoint): Promise<Connection> {
  try {
    return await mysql.createConnection(baseOptions({ ...s.options, host: node.host, port: node.port }, {}, s.ssl, new NodeRouter([node])));
  } catch (err) {
    throw connectError(err, s.options, `connecting to ${describeConnection({ ...s.options, ...node })}`);
  }
}

export function openPool(s: Session, size: number, open: OpenOptions = {}): Pool {
  const pool = mysql.createPool({ ...baseOptions(s.options, open, s.ssl, s.router), connectionLimit: size, maxIdle: size, waitForConnections: true });
  if (s.ssl !== undefined) {
    // mysql2 already refuses to go on without TLS when `ssl` is set; a pooled connection that is somehow plain is dropped.
    pool.pool.on('connection', (c) => {
      const sock = (c as unknown as { stream?: unknown }).stream;
      if (!(sock instanceof TLSSocket)) c.destroy();
    });
  }
  return pool;
}
