import { FlatloadError, type ErrorContext } from '../errors/index.js';

/** The parts of a mysql2 error we look at. */
export interface ServerErrorLike {
  code?: string;
  errno?: number;
  sqlMessage?: string;
  message?: string;
  fatal?: boolean;
}

export function asServerError(err: unknown): ServerErrorLike | undefined {
  return typeof err === 'object' && err !== null ? (err) : undefined;
}

/** Lost-connection family: the chunk's transaction is gone; retry on a new connection. */
const CONNECTION_LOST_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ECONNREFUSED',
]);
const CONNECTION_LOST_ERRNOS = new Set([2006, 2013, 1053, 1927, 1317, 4031]);

export function isConnectionLost(err: unknown): boolean {
  const e = asServerError(err);
  if (!e) return false;
  return (
    (e.code !== undefined && CONNECTION_LOST_CODES.has(e.code)) ||
    (e.errno !== undefined && CONNECTION_LOST_ERRNOS.has(e.errno)) ||
    // mysql2's message when a command is queued on a connection that already died.
    /connection is in closed state/i.test(e.message ?? '')
  );
}

/**
 * Galera: the node is not in the primary component, or not yet synced
 * (1047), or lost the primary component under a running statement (1180
 * "Not connected to Primary Component"): another node, or this one later,
 * takes the statement. Other 1180s (wsrep_max_ws_rows exceeded) are final.
 */
export function isNodeNotReady(err: unknown): boolean {
  const e = asServerError(err);
  return e?.errno === 1047 || (e?.errno === 1180 && /primary component/i.test(e.sqlMessage ?? e.message ?? ''));
}

/** Deadlock (1213) and lock wait timeout (1205): the chunk rolled back (we roll back 1205 ourselves) and can be retried. */
export function isRetryableLock(err: unknown): boolean {
  const e = asServerError(err);
  return e?.errno === 1213 || e?.errno === 1205;
}

/**
 * Maps a connection-time or statement error to the one error vocabulary, with
 * a message a DBA can act on. `where` says what we were doing.
 */
export function toFlatloadError(err: unknown, where: string, context: ErrorContext = {}): FlatloadError {
  // The error's own context (its exact line, say) wins over the caller's coarser one.
  if (err instanceof FlatloadError) return new FlatloadError(err.code, err.message, { ...context, ...err.context }, { cause: err.cause });
  const e = asServerError(err) ?? {};
  const msg = e.sqlMessage ?? e.message ?? String(err);
  const ctx: ErrorContext = { ...context };
  const fsPath = (err as { path?: unknown }).path;
  if (typeof fsPath === 'string' && (err as { syscall?: unknown }).syscall !== 'connect') {
    // A local file operation (the reject file, a spool), not the server: an input/output error naming the file.
    return new FlatloadError('OUTPUT_UNWRITABLE', `${where}: cannot write ${fsPath}: ${msg}`, ctx);
  }
  if (e.errno !== undefined && e.errno < 2000 + 1000 && e.sqlMessage) ctx.serverErrno = e.errno;
  switch (e.code) {
    case 'ECONNREFUSED':
      return new FlatloadError('CONNECTION_REFUSED', `${where}: connection refused (${msg})`, {
        ...ctx,
        hint: 'is the server running, and are --host/--port/--socket right?',
      });
    case 'ENOENT':
      return new FlatloadError('CONNECTION_REFUSED', `${where}: no server socket at that path (${msg})`, ctx);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new FlatloadError('CONNECTION_REFUSED', `${where}: host not found (${msg})`, ctx);
    case 'ER_DBACCESS_DENIED_ERROR':
      // 1044 at login is "no access to this database"; after login it is a missing privilege.
      if (!where.startsWith('connecting')) return new FlatloadError('MISSING_PRIVILEGE', `${where}: ${msg}`, ctx);
      return new FlatloadError('ACCESS_DENIED', `${where}: ${msg}`, { ...ctx, hint: 'check the user, password and database' });
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
      return new FlatloadError('ACCESS_DENIED', `${where}: ${msg}`, { ...ctx, hint: 'check the user and password' });
    case 'ER_BAD_DB_ERROR':
      return new FlatloadError('UNKNOWN_DATABASE', `${where}: ${msg}`, ctx);
    case 'ER_NO_SUCH_TABLE':
      return new FlatloadError('UNKNOWN_TABLE', `${where}: ${msg}`, ctx);
    case 'ER_BAD_FIELD_ERROR':
      return new FlatloadError('UNKNOWN_COLUMN', `${where}: ${msg}`, ctx);
    case 'ER_TABLEACCESS_DENIED_ERROR':
    case 'ER_COLUMNACCESS_DENIED_ERROR':
    case 'ER_SPECIFIC_ACCESS_DENIED_ERROR':
      return new FlatloadError('MISSING_PRIVILEGE', `${where}: ${msg}`, ctx);
    default:
      break;
  }
  if (e.errno === 1148 || e.errno === 3948 || e.errno === 4166 || /local (data|infile).*disabled|not allowed with this MariaDB version/i.test(msg)) {
    return new FlatloadError('LOCAL_INFILE_DISABLED', `${where}: the server refuses LOAD DATA LOCAL INFILE (${msg})`, {
      ...ctx,
      hint: "enable it with SET GLOBAL local_infile=1 (or local_infile=1 under [mysqld]), or load with --strategy insert",
    });
  }
  if (isConnectionLost(err)) return new FlatloadError('CONNECTION_LOST', `${where}: lost the connection to the server (${msg})`, ctx);
  if (e.errno === 1114 || e.errno === 1021 || e.errno === 1030 || /disk full|no space left|is full/i.test(msg)) {
    return new FlatloadError('SERVER_ERROR', `${where}: the server ran out of space (${msg})`, {
      ...ctx,
      hint: 'free disk space or raise the table/tablespace limit on the server, then rerun the same command to resume',
    });
  }
  if (/ssl|tls|certificate|self.signed|hostname\/ip does not match/i.test(msg) || /^ERR_TLS|^CERT_|^DEPTH_ZERO|^UNABLE_TO/.test(e.code ?? '')) {
    return new FlatloadError('TLS', `${where}: TLS error: ${msg}`, ctx);
  }
  return new FlatloadError('SERVER_ERROR', `${where}: ${msg}`, ctx, { cause: err });
}
