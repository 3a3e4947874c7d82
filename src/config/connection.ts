import { userInfo } from 'node:os';
import { FlatloadError } from '../errors/index.js';
import { parseConnectionUrl, parseHostList, type HostPort, type UrlParts } from './url.js';

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

/** One server of the list flatload may connect to. */
export interface Endpoint {
  host: string;
  port: number;
}

export interface ConnectionOptions {
  host: string;
  port: number;
  /**
   * Every node given (`--host h1,h2,h3`, `mysql://u@h1:3306,h2:3306/db`), in
   * order; the first is host/port. One entry for a single server.
   */
  nodes: Endpoint[];
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
  /** A list of nodes, when the source named several. */
  nodes?: HostPort[] | undefined;
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
    // In a list, an entry without a port means 3306 (as the connectors read it), not the first entry's port.
    port: u.nodes ? undefined : u.port,
    nodes: u.nodes,
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
  const hostList = flags.host !== undefined && flags.host.includes(',') ? parseHostList(flags.host, '--host') : undefined;
  const levels: Level[] = [
    {
      name: 'command line',
      host: hostList ? hostList[0]!.host : flags.host,
      port: flags.port === undefined || (flags.port as unknown) === '' ? undefined : Number(flags.port),
      nodes: hostList,
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
  // An entry of a list without its own port takes the source's port (--port, or the URL's first), else 3306.
  const listPort = target?.nodes?.[0]?.port;
  const port = (target?.nodes ? listPort : undefined) ?? target?.port ?? 3306;
  const nodes: Endpoint[] = (target?.nodes ?? [{ host: target?.host ?? 'localhost', port }]).map((n) => ({ host: n.host, port: n.port ?? target?.port ?? 3306 }));
  const host = nodes[0]!.host;
  for (const n of [{ port }, ...nodes]) {
    if (!Number.isInteger(n.port) || n.port <= 0 || n.port > 65535) {
      throw new FlatloadError('USAGE', `port ${String(n.port)} from ${target?.name ?? 'defaults'} is not a valid TCP port`);
    }
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
    port: nodes[0]!.port,
    nodes,
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

/** `host:port` (IPv6 in brackets), as node lists and reports show an endpoint. */
export function endpointText(e: Endpoint): string {
  return `${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;
}
