import { maskUrlSecrets } from './mask.js';
import { EXIT, type ErrorContext, type ExitCode, type FlatloadError, isFlatloadError } from './codes.js';

/** Where in the input, as "file F, line L, byte offset B, chunk C". */
export function describeLocation(err: FlatloadError): string {
  const c = err.context;
  const parts: string[] = [];
  if (c.file !== undefined) parts.push(`file ${maskUrlSecrets(c.file)}`);
  if (c.line !== undefined) parts.push(`line ${c.line}`);
  if (c.byteOffset !== undefined) parts.push(`byte offset ${c.byteOffset}`);
  if (c.chunk !== undefined) parts.push(`chunk ${c.chunk}`);
  return parts.join(', ');
}

/**
 * The only place errors become text. One line for the error, then optional
 * hint and resume lines; never a stack trace for an expected failure.
 */
export function formatError(err: unknown): string {
  if (!isFlatloadError(err)) {
    const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
    return maskUrlSecrets(`flatload: internal error (please report): ${text}`);
  }
  const where = describeLocation(err);
  const errno = err.context.serverErrno !== undefined ? ` [server error ${err.context.serverErrno}]` : '';
  const lines = [`flatload: ${err.message}${where ? ` (${where})` : ''}${errno}`];
  if (err.context.hint) lines.push(`  hint: ${err.context.hint}`);
  if (err.context.resumeCommand) lines.push(`  resume with: ${err.context.resumeCommand}`);
  // Contexts carry the input as the user named it (a URL with its password, say): nothing printed shows a secret.
  return maskUrlSecrets(lines.join('\n'));
}

/** The one JSON object `--json` prints when a command fails before it printed its report. */
export interface ErrorReport {
  status: 'failed';
  exitCode: ExitCode;
  error: { code: string; message: string; exitCode: ExitCode } & ErrorContext;
}

export function errorReport(err: unknown): ErrorReport {
  if (!isFlatloadError(err)) {
    const message = maskUrlSecrets(`internal error (please report): ${err instanceof Error ? err.message : String(err)}`);
    return { status: 'failed', exitCode: EXIT.internal, error: { code: 'INTERNAL', message, exitCode: EXIT.internal } };
  }
  const context = Object.fromEntries(Object.entries(err.context).map(([k, v]) => [k, typeof v === 'string' ? maskUrlSecrets(v) : v])) as ErrorContext;
  return { status: 'failed', exitCode: err.exitCode, error: { code: err.code, message: maskUrlSecrets(err.message), exitCode: err.exitCode, ...context } };
}
