import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { resolveConnection, type ConnectionFlags, type ConnectionOptions } from '../config/connection.js';
import { clientOptions, defaultOptionFiles, readOptionFiles } from '../config/optionFiles.js';
import { FlatloadError } from '../errors/index.js';
import { promptPassword } from './prompt.js';

export interface ConnectionArgs extends ConnectionFlags {
  defaultsFile?: string | undefined;
  defaultsExtraFile?: string | undefined;
  noDefaults?: boolean | undefined;
  /** yargs' name for --no-defaults when it negates `defaults`. */
  defaults?: boolean | undefined;
}

/** Environment with `.env` from the working directory underneath (the real environment wins). */
export function environment(cwd: string, env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const file = join(cwd, '.env');
  if (!existsSync(file)) return { ...env };
  let parsed: Record<string, string>;
  try {
    parsed = parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (err) {
    throw new FlatloadError('CONFIG', `cannot read ${file}: ${(err as Error).message}`);
  }
  return { ...parsed, ...env };
}

function urlHasPassword(url: string | undefined): boolean {
  if (!url) return false;
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

export interface ResolvedConnection {
  options: ConnectionOptions;
  warnings: string[];
}

/**
 * The CLI edge of connection setup: option files, .env, the password prompt
 * and the mysql client's command-line password warning.
 */
export async function connectionFromArgs(a: ConnectionArgs, cwd: string, env: NodeJS.ProcessEnv): Promise<ResolvedConnection> {
  const warnings: string[] = [];
  let files: string[];
  if (a.noDefaults || a.defaults === false) files = [];
  else if (a.defaultsFile) {
    if (!existsSync(a.defaultsFile)) throw new FlatloadError('CONFIG', `--defaults-file ${a.defaultsFile} does not exist`);
    files = [a.defaultsFile];
  } else files = [...defaultOptionFiles(), ...(a.defaultsExtraFile ? [a.defaultsExtraFile] : [])];
  const optionFile = clientOptions(readOptionFiles(files));
  const flags: ConnectionFlags = { ...a };
  const prompt = a.password === '';
  if (prompt) delete flags.password;
  else if (a.password !== undefined || urlHasPassword(a.url)) warnings.push('Using a password on the command line interface can be insecure.');
  const options = resolveConnection(flags, environment(cwd, env), optionFile);
  if (prompt) {
    options.password = await promptPassword('Enter password: ');
    options.passwordSource = 'prompt';
  }
  return { options, warnings };
}
