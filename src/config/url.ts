import { FlatloadError } from '../errors/index.js';

/** What a connection URL can say. Unset fields are left to other sources. */
export interface UrlParts {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  socketPath?: string;
  params: Record<string, string>;
}

/**
 * Parses `mysql://user:pass@host:port/db?ssl-mode=REQUIRED&socket=/path`
 * (also `mariadb://`). Percent-escapes in user and password are decoded.
 * Error messages never repeat the URL, which may carry a password.
 */
export function parseConnectionUrl(text: string, sourceName: string): UrlParts {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new FlatloadError('USAGE', `${sourceName} is not a valid URL (expected mysql://user:password@host:port/database)`);
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') {
    throw new FlatloadError('USAGE', `${sourceName} must start with mysql:// or mariadb://, not ${u.protocol}//`);
  }
  const parts: UrlParts = { params: {} };
  if (u.hostname) parts.host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (u.port) parts.port = Number(u.port);
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
    return '<unparseable URL>';
  }
}
