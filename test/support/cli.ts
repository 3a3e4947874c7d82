import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
export const CLI = join(root, 'dist/src/cli/main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would, with a clean environment plus `env`. */
export function runCli(
  args: string[],
  opts: { env?: Record<string, string | undefined>; stdin?: Buffer | string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k]!;
    for (const [k, v] of Object.entries(opts.env ?? {})) if (v !== undefined) env[k] = v;
    const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else child.stdin.end();
  });
}
