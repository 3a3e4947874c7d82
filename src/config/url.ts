import { FlatloadError } from '../errors/index.js';

/** What a connection URL can say. Unset fields are left to other sources. */
export interface UrlParts {
  host?: string;
  port?: number;
  /** Every node when the URL lists several (`h1:3306,h2:3306`); host/port are the first. */
  nodes?: HostPort[];
  user?: string;
  password?: string;
  database?: string;
  socketPath?: string;
  params: Record<string, string>;
}

/** One server of a list; port undefined when the entry named none. */
export interface HostPort {
  host: string;
  port?: number;
}

function parsePort(text: string, sourceName: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port <= 0 || port > 65535) throw new FlatloadError('USAGE', `${sourceName}: "${text}" is not a valid TCP port`);
  return port;
}

/**
 * `h1,h2:3307,[::1]:3308` as MariaDB's connectors take a list of nodes:
 * comma-separated, each `host`, `host:port` or `[ipv6]:port`.
 */
export function parseHostList(text: string, sourceName: string): HostPort[] {
  const entries = text.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) throw new FlatloadError('USAGE', `${sourceName}: empty entry in the host list "${text}"`);
  return entries.map((e) => {
    const m = /^\[([^\]]+)\](?::(.*))?$/.exec(e) ?? /^([^:]+)(?::(.*))?$/.exec(e);
    // A bare IPv6 address (several colons, no brackets) is one host without a port.
    if (!m) return { host: e };
    return m[2] === undefined ? { host: m[1]! } : { host: m[1]!, port: parsePort(m[2], sourceName) };
  });
}

/**
 * `scheme://user:pass@hosts/rest` in pieces, without a URL parser (which
 * refuses a list of hosts): userinfo is everything before the last `@` of
 * the authority ('' when none).
 */
function splitAuthority(text: string): { scheme: string; userinfo: string; hosts: string; rest: string } | undefined {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(text);
  if (!m) return undefined;
  const at = m[2]!.lastIndexOf('@');
  return { scheme: m[1]!, userinfo: at >= 0 ? m[2]!.slice(0, at) : '', hosts: m[2]!.slice(at + 1), rest: m[3]! };
}

/** The URL with its password replaced by `mask` ('' drops it with its colon); the hosts may be a list. */
export function maskUrlPassword(text: string, mask: string): string | undefined {
  const a = splitAuthority(text);
  if (!a) return undefined;
  const colon = a.userinfo.indexOf(':');
  if (colon < 0) return text;
  const user = a.userinfo.slice(0, colon);
  return `${a.scheme}${user}${mask === '' ? '' : `:${mask}`}@${a.hosts}${a.rest}`;
}

/** `user@h1:p1,h2:p2` → the authority with the first node only, and the list (undefined for one node). */
function splitNodeList(text: string, sourceName: string): { text: string; nodes: HostPort[] | undefined } {
  const a = splitAuthority(text);
  if (!a || !a.hosts.includes(',')) return { text, nodes: undefined };
  const nodes = parseHostList(a.hosts, sourceName);
  const first = nodes[0]!;
  const shown = first.host.includes(':') ? `[${first.host}]` : first.host;
  return { text: `${a.scheme}${a.userinfo === '' ? '' : `${a.userinfo}@`}${shown}${first.port !== undefined ? `:${first.port}` : ''}${a.rest}`, nodes };
}

/**
 * Parses `mysql://user:pass@host:port/db?ssl-mode=REQUIRED&socket=/path`
 * (also `mariadb://`), and a list of nodes `mysql://user@h1:3306,h2:3306/db`.
 * Percent-escapes in user and password are decoded. Error messages never
 * repeat the URL, which may carry a password.
 */
export function parseConnectionUrl(text: string, sourceName: string): UrlParts {
  let u: URL;
  const list = splitNodeList(text, sourceName);
  try {
    u = new URL(list.text);
  } catch {
    throw new FlatloadError('USAGE', `${sourceName} is not a valid URL (expected mysql://user:password@host:port/database)`);
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') {
    throw new FlatloadError('USAGE', `${sourceName} must start with mysql:// or mariadb://, not ${u.protocol}//`);
  }
  const parts: UrlParts = { params: {} };
  if (u.hostname) parts.host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (u.port) parts.port = Number(u.port);
  if (list.nodes) parts.nodes = list.nodes;
  if (u.username) parts.user = safeDecode(u.username);
  if (u.password) parts.password = safeDecode(u.password);
  const db = u.pathname.replace(/^\//, '');
  if (db) parts.database = safeDecode(db);
  for (const [k, v] of u.searchParams) {
    const key = k.toLowerCase().replace(/_/g, '-');
    if (key === 'socket') parts.socketPath = v;
    else parts.params[key === 'sslmode' ? 'ssl-mode' : key] = v;
  }
  return parts;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The URL with the password replaced, for messages and reports. */
export function redactUrl(text: string): string {
  try {
    const u = new URL(text);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    // A list of nodes is no URL to the parser, but its password is masked all the same.
    return text.includes(',') ? (maskUrlPassword(text, '***') ?? '<unparseable URL>') : '<unparseable URL>';
  }
}
