import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import mysql, { type Connection, type ConnectionOptions as Mysql2Options, type Pool } from 'mysql2/promise';
import type { ConnectionOptions, SslOptions } from '../config/connection.js';
import { describeConnection } from '../config/connection.js';
import { FlatloadError } from '../errors/index.js';
import { toFlatloadError } from './errors.js';

/**
 * A LOCAL INFILE request that flatload did not initiate (a hostile or
 * compromised server can send one in reply to any statement) gets this
 * stream: it fails at once, so nothing from the client's disk is sent.
 * Per-query factories override it for the one chunk flatload is loading.
 */
export function refuseInfileRequest(requestedName: string): Readable {
  const stream = new Readable({ read() {} });
  process.nextTick(() =>
    stream.destroy(
      new FlatloadError('SERVER_ERROR', `the server asked for local file "${requestedName}", which flatload did not offer; refused`),
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

/** mysql2's `ssl` option for a mode; undefined means plain TCP. */
export function tlsConfig(ssl: SslOptions, host: string): Mysql2Options['ssl'] | undefined {
  if (ssl.mode === 'DISABLED') return undefined;
  const verifyCa = ssl.mode === 'VERIFY_CA' || ssl.mode === 'VERIFY_IDENTITY';
  const config: Record<string, unknown> = {
    rejectUnauthorized: verifyCa,
  };
  if (ssl.ca) config['ca'] = readPem(ssl.ca, '--ssl-ca');
  if (ssl.cert) config['cert'] = readPem(ssl.cert, '--ssl-cert');
  if (ssl.key) config['key'] = readPem(ssl.key, '--ssl-key');
  if (ssl.mode === 'VERIFY_CA') {
    // The chain is checked against the CA, the host name is not (mysql client semantics).
    config['checkServerIdentity'] = () => undefined;
  }
  if (ssl.mode === 'VERIFY_IDENTITY') config['servername'] = host;
  return config as Mysql2Options['ssl'];
}

function baseOptions(c: ConnectionOptions, open: OpenOptions, ssl: Mysql2Options['ssl'] | undefined): Mysql2Options {
  const o: Mysql2Options = {
    user: c.user,
    charset: 'utf8mb4',
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    multipleStatements: false,
    connectTimeout: 10_000,
    infileStreamFactory: refuseInfileRequest,
  };
  if (c.socketPath) o.socketPath = c.socketPath;
  else {
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

/** Resolved once per process: whether PREFERRED ended up encrypted. */
export interface Session {
  options: ConnectionOptions;
  ssl: Mysql2Options['ssl'] | undefined;
  encrypted: boolean;
}

/**
 * Opens the first connection and settles the TLS question (PREFERRED falls
 * back to plain TCP only when the server has no TLS at all, as the mysql
 * client does). The returned Session is reused for every later connection.
 */
export async function openSession(c: ConnectionOptions, open: OpenOptions = {}): Promise<{ session: Session; conn: Connection }> {
  const where = `connecting to ${describeConnection(c)}`;
  const ssl = c.socketPath && c.ssl.mode === 'PREFERRED' ? undefined : tlsConfig(c.ssl, c.host);
  try {
    const conn = await mysql.createConnection(baseOptions(c, open, ssl));
    return { session: { options: c, ssl, encrypted: ssl !== undefined }, conn };
  } catch (err) {
    if (c.ssl.mode === 'PREFERRED' && ssl !== undefined && isNoTlsOnServer(err)) {
      try {
        const conn = await mysql.createConnection(baseOptions(c, open, undefined));
        return { session: { options: c, ssl: undefined, encrypted: false }, conn };
      } catch (err2) {
        throw toFlatloadError(err2, where);
      }
    }
    if (c.ssl.mode !== 'DISABLED' && c.ssl.mode !== 'PREFERRED' && isNoTlsOnServer(err)) {
      throw new FlatloadError('TLS', `${where}: --ssl-mode ${c.ssl.mode} but the server does not support TLS`);
    }
    throw toFlatloadError(err, where);
  }
}

export async function openConnection(s: Session, open: OpenOptions = {}): Promise<Connection> {
  try {
    return await mysql.createConnection(baseOptions(s.options, open, s.ssl));
  } catch (err) {
    throw toFlatloadError(err, `connecting to ${describeConnection(s.options)}`);
  }
}

export function openPool(s: Session, size: number, open: OpenOptions = {}): Pool {
  return mysql.createPool({ ...baseOptions(s.options, open, s.ssl), connectionLimit: size, maxIdle: size, waitForConnections: true });
}
