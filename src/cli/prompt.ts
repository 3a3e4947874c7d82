import { closeSync, openSync, writeSync } from 'node:fs';
import { ReadStream } from 'node:tty';
import { FlatloadError } from '../errors/index.js';
import { maskUrlCredentials } from '../errors/mask.js';

/** What a key press did to the password being typed. */
export interface PromptState {
  chars: string[];
  done: boolean;
  cancelled: boolean;
}

export function newPromptState(): PromptState {
  return { chars: [], done: false, cancelled: false };
}

/**
 * Applies raw terminal input to the prompt: Enter ends it, Backspace/DEL
 * removes a character, Ctrl-U clears the line, Ctrl-C cancels, Ctrl-D on an
 * empty line ends it (an empty password), other control characters are
 * ignored. Nothing here echoes. Pure, for tests.
 */
export function applyPromptInput(state: PromptState, input: string): PromptState {
  for (const ch of input) {
    if (state.done || state.cancelled) break;
    const code = ch.codePointAt(0)!;
    if (ch === '\r' || ch === '\n') state.done = true;
    else if (code === 0x03) state.cancelled = true;
    else if (code === 0x04) {
      if (state.chars.length === 0) state.done = true;
    } else if (code === 0x7f || code === 0x08) state.chars.pop();
    else if (code === 0x15) state.chars.length = 0;
    else if (code >= 0x20) state.chars.push(ch);
  }
  return state;
}

/**
 * Reads a password from the terminal without echo, as the mysql client does.
 * It talks to /dev/tty, not stdin, because stdin may be the data (`load -`).
 * The terminal is put in raw mode (no echo, no line editing, Ctrl-C arrives
 * as a key) and always put back, also on Ctrl-C.
 */
export async function promptPassword(question: string): Promise<string> {
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'r+');
  } catch {
    throw new FlatloadError('CONFIG', '-p asks for a password, but there is no terminal to ask on', {
      hint: 'give the password in ~/.my.cnf ([client] password=…), DATABASE_URL or .env instead',
    });
  }
  let input: ReadStream;
  try {
    input = new ReadStream(fd);
  } catch {
    closeSync(fd);
    throw new FlatloadError('CONFIG', '-p asks for a password, but /dev/tty is not a terminal');
  }
  const state = newPromptState();
  try {
    input.setRawMode(true);
  } catch {
    input.destroy();
    throw new FlatloadError('CONFIG', '-p asks for a password, but /dev/tty cannot be switched to no-echo mode');
  }
  try {
    writeSync(fd, question);
    await new Promise<void>((resolve, reject) => {
      const onData = (buf: Buffer): void => {
        applyPromptInput(state, buf.toString('utf8'));
        if (state.done || state.cancelled) finish();
      };
      const onEnd = (): void => {
        state.done = true;
        finish();
      };
      const onError = (err: Error): void => {
        input.off('data', onData);
        input.off('end', onEnd);
        reject(new FlatloadError('CONFIG', `reading the password from the terminal failed: ${err.message}`));
      };
      const finish = (): void => {
        input.off('data', onData);
        input.off('end', onEnd);
        input.off('error', onError);
        input.pause();
        resolve();
      };
      input.on('data', onData);
      input.once('end', onEnd);
      input.once('error', onError);
    });
  } finally {
    try {
      input.setRawMode(false);
    } catch {
      // the terminal went away; nothing to restore
    }
    try {
      writeSync(fd, '\n');
    } catch {
      // ditto
    }
    input.destroy(); // closes fd
  }
  if (state.cancelled) throw new FlatloadError('INTERRUPTED', 'interrupted at the password prompt');
  return state.chars.join('');
}

/** Connection options whose short form takes its value attached, as with the mysql client (-uroot, -h127.0.0.1). */
const ATTACHED_SHORT: Record<string, string> = { u: 'user', h: 'host', P: 'port', S: 'socket', D: 'database' };

/**
 * Rewrites argv to the mysql client's password rules before yargs sees it:
 * `-pSECRET` and `--password=SECRET` give a password; `-p` and `--password`
 * alone prompt, and never take the next argument as the password (it is the
 * file, or another option). Also `-uNAME`, `-hHOST`, `-PPORT`, `-SPATH`,
 * `-DDB`. As with mysql, everything attached is the value (`-p=x` is the
 * password "=x"). Without this, yargs reads `-pSECRET` as the flags -p -S -E -C -R -E -T
 * and prints the letters of the password in its "Unknown arguments" error.
 * Arguments after `--` are left alone.
 */
export function normalizeMysqlStyleArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  let rest = false;
  for (const a of argv) {
    if (rest || a === '--') {
      rest = true;
      out.push(a);
      continue;
    }
    if (a === '-p' || a === '--password') out.push('--password=');
    else if (a.startsWith('-p') && !a.startsWith('--')) out.push(`--password=${a.slice(2)}`);
    else if (/^-[uhPSD]./.test(a)) out.push(`--${ATTACHED_SHORT[a[1]!]!}=${a.slice(2)}`);
    else out.push(a);
  }
  return out;
}

/** The password of a mysql:// or http(s):// URL (also `--backend NAME=URL`'s), and its credential parameters, masked with `x` (same length). */
function maskUrl(text: string): string {
  // The longest NAME= (none for a bare URL, whose query may hold another URL) that a URL of these schemes follows; the
  // URL's password found as its parser finds it.
  const prefix = /^(?:mysql|mariadb|https?):\/\//i.test(text) ? '' : /^(?:\S*=)?(?=(?:mysql|mariadb|https?):\/\/)/i.exec(text)?.[0];
  return prefix === undefined ? text : `${prefix}${maskUrlCredentials(text.slice(prefix.length), { whole: true, mask: (secret) => 'x'.repeat(secret.length) })}`;
}

/**
 * argv with every password replaced by `x`s of the same length: values of
 * -p/--password, the password in a --url, and a URL input's password and
 * credential parameters (a presigned URL's signature). What hidePasswordsFromProcessList
 * shows in `ps`.
 */
export function maskPasswordArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  let nextIsUrl = false;
  for (const a of argv) {
    if (nextIsUrl) {
      out.push(maskUrl(a));
      nextIsUrl = false;
      continue;
    }
    const pw = /^(--password=|-p=?)(.+)$/.exec(a);
    if (pw) {
      out.push(`${pw[1]!}${'x'.repeat(pw[2]!.length)}`);
    } else if (a.startsWith('--url=')) out.push(`--url=${maskUrl(a.slice(6))}`);
    else if (a === '--url') {
      out.push(a);
      nextIsUrl = true;
    } else out.push(maskUrl(a));
  }
  return out;
}

/**
 * Overwrites the process title so `ps` and /proc/PID/cmdline show the
 * command line with passwords masked, as the mysql client does. (Between
 * exec and this call the password is visible; prefer -p with no value, an
 * option file or DATABASE_URL.) Returns whether anything was masked.
 */
export function hidePasswordsFromProcessList(argv: readonly string[] = process.argv.slice(1)): boolean {
  const masked = maskPasswordArgs(argv);
  if (masked.every((m, i) => m === argv[i])) return false;
  try {
    process.title = [process.argv0, ...masked].join(' ');
    return true;
  } catch {
    return false;
  }
}
