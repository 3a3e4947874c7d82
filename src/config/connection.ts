import { userInfo } from 'node:os';
import { FlatloadError } from '../errors/index.js';
import { parseConnectionUrl, type UrlParts } from './url.js';

export const SSL_MODES = ['DISABLED', 'PREFERRED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const;
export type SslMode = (typeof SSL_MODES)[number];

export interface SslOptions {
  mode: SslMode;
  ca?: string;
  cert?: string;
  key?: string;
}

/** Connection flags as given; undefined = not given. */
export interface ConnectionFlags {
  url?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  user?: string | undefined;
  password?: string | undefined;
  socket?: string | undefined;
  database?: string | undefined;
  sslMode?: string | undefined;
  sslCa?: string | undefined;
  sslCert?: string | undefined;
  sslKey?: string | undefined;
}

export type PasswordSource = 'command line' | '--url' | 'DATABASE_URL' | 'option file' | 'MYSQL_PWD' | 'prompt' | 'none';

export interface ConnectionOptions {
  host: string;
  port: number;
  socketPath: string | undefined;
  user: string;
  password: string | undefined;
  database: string | undefined;
  ssl: SslOptions;
  passwordSource: PasswordSource;
  /** Where the server address came from, for messages. */
  targetSource: string;
}

interface Level {
  name: string;
  host?: string | undefined;
  port?: number | undefined;
  socketPath?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
  database?: string | undefined;
  sslMode?: string | undefined;
  sslCa?: string | undefined;
  sslCert?: string | undefined;
  sslKey?: string | undefined;
}

function fromUrl(name: string, u: UrlParts): Level {
  return {
    name,
    host: u.host,
    port: u.port,
    socketPath: u.socketPath,
    user: u.user,
    password: u.password,
    database: u.database,
    sslMode: u.params['ssl-mode'],
    sslCa: u.params['ssl-ca'],
    sslCert: u.params['ssl-cert'],
    sslKey: u.params['ssl-key'],
  };
}

function fromOptionFile(opts: ReadonlyMap<string, string>): Level {
  const port = opts.get('port');
  let sslMode = opts.get('ssl-mode');
  // MariaDB option files say `ssl` / `ssl-verify-server-cert` rather than ssl-mode.
  if (sslMode === undefined && opts.has('ssl-verify-server-cert')) sslMode = 'VERIFY_IDENTITY';
  else if (sslMode === undefined && opts.has('ssl') && opts.get('ssl') !== '0') sslMode = 'REQUIRED';
  return {
    name: 'option file',
    host: opts.get('host'),
    port: port !== undefined && port !== '' ? Number(port) : undefined,
    socketPath: opts.get('socket'),
    user: opts.get('user'),
    password: opts.get('password'),
    database: opts.get('database'),
    sslMode,
    sslCa: opts.get('ssl-ca'),
    sslCert: opts.get('ssl-cert'),
    sslKey: opts.get('ssl-key'),
  };
}

/**
 * Merges every connection source with the mysql client's precedence:
 * command-line flags, then --url, then DATABASE_URL (environment or .env),
 * then option files. The server address (host/port/socket) is taken as a
 * unit from the first source that names one, so a socket from ~/.my.cnf
 * never redirects a URL that named a host.
 */
export function resolveConnection(
  flags: ConnectionFlags,
  env: Readonly<Record<string, string | undefined>>,
  optionFile: ReadonlyMap<string, string>,
): ConnectionOptions {
  const levels: Level[] = [
    {
      name: 'command line',
      host: flags.host,
      port: flags.port,
      socketPath: flags.socket,
      user: flags.user,
      password: flags.password,
      database: flags.database,
      sslMode: flags.sslMode,
      sslCa: flags.sslCa,
      sslCert: flags.sslCert,
      sslKey: flags.sslKey,
    },
  ];
  if (flags.url) levels.push(fromUrl('--url', parseConnectionUrl(flags.url, '--url')));
  const envUrl = env['DATABASE_URL'];
  if (envUrl) levels.push(fromUrl('DATABASE_URL', parseConnectionUrl(envUrl, 'DATABASE_URL')));
  levels.push(fromOptionFile(optionFile));

  const first = <K extends keyof Level>(key: K): { value: Level[K]; level: Level } | undefined => {
    for (const l of levels) if (l[key] !== undefined && l[key] !== '') return { value: l[key], level: l };
    return undefined;
  };

  const target = levels.find((l) => l.host !== undefined || l.port !== undefined || l.socketPath !== undefined);
  const host = target?.host ?? 'localhost';
  const port = target?.port ?? 3306;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new FlatloadError('USAGE', `port ${String(target?.port)} from ${target?.name ?? 'defaults'} is not a valid TCP port`);
  }
  // As with the mysql client, "localhost" (or no host) means the socket when one is known.
  const socketPath = target?.socketPath ?? undefined;

  const pw = first('password');
  let password = pw?.value;
  let passwordSource: PasswordSource = pw ? (pw.level.name as PasswordSource) : 'none';
  if (password === undefined && env['MYSQL_PWD'] !== undefined) {
    password = env['MYSQL_PWD'];
    passwordSource = 'MYSQL_PWD';
  }

  const modeText = (first('sslMode')?.value ?? 'PREFERRED').toUpperCase().replace(/-/g, '_');
  if (!(SSL_MODES as readonly string[]).includes(modeText)) {
    throw new FlatloadError('USAGE', `--ssl-mode: "${modeText}" is not one of ${SSL_MODES.join(', ')}`);
  }
  const ssl: SslOptions = { mode: modeText as SslMode };
  const ca = first('sslCa')?.value;
  const cert = first('sslCert')?.value;
  const key = first('sslKey')?.value;
  if (ca) ssl.ca = ca;
  if (cert) ssl.cert = cert;
  if (key) ssl.key = key;

  return {
    host,
    port,
    // As the mysql client: a host other than localhost means TCP, whatever socket an option file names.
    socketPath: socketPath && host === 'localhost' ? socketPath : undefined,
    user: first('user')?.value ?? safeUserName(),
    password,
    database: first('database')?.value,
    ssl,
    passwordSource,
    targetSource: target?.name ?? 'defaults',
  };
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'root';
  }
}

/** `user@host:port` or `user@localhost via socket`, never the password. */
export function describeConnection(c: ConnectionOptions): string {
  return c.socketPath ? `${c.user}@localhost (socket ${c.socketPath})` : `${c.user}@${c.host}:${c.port}`;
}
