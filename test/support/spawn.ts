import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from './cli.js';

export interface Spawned {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** Starts the built CLI without waiting for it (for kill and interrupt tests). */
export function spawnCli(args: string[], env: Record<string, string>, stdin?: Buffer): Spawned {
  const base: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k];
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.on('error', () => undefined);
  if (stdin) child.stdin.end(stdin);
  else child.stdin.end();
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/** A seeded PRNG, so a failing kill schedule can be replayed. */
export { prng } from '../../fixtures/prng.js';
