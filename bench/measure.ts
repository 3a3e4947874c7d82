import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, rmSync } from 'node:fs';

export interface Measured {
  wallSeconds: number;
  /** Client process CPU (user + system), when /usr/bin/time could measure it. */
  clientCpuSeconds: number | null;
  clientPeakRssBytes: number | null;
  serverCpuSeconds: number | null;
  stdout: string;
  stderr: string;
  code: number;
}

const CLK_TCK = 100;

/** mariadbd's user+system CPU seconds so far, from /proc. */
export function serverCpuSeconds(pid: number | undefined): number | null {
  if (!pid || !existsSync(`/proc/${pid}/stat`)) return null;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

const GNU_TIME = '/usr/bin/time';

/**
 * Runs a command and measures it: wall time here, client CPU and peak RSS
 * with GNU time (when installed), server CPU from /proc before and after.
 */
export async function measure(cmd: string, args: string[], opts: { serverPid?: number; env?: NodeJS.ProcessEnv; stdinFile?: string; cwd?: string; cpus?: string } = {}): Promise<Measured> {
  // On given CPUs (taskset): the client kept off the cores the server is pinned to.
  if (opts.cpus !== undefined) [cmd, args] = ['taskset', ['-c', opts.cpus, cmd, ...args]];
  const useTime = existsSync(GNU_TIME);
  const timeFile = `/tmp/flatload-bench-time-${process.pid}-${Date.now()}`;
  const argv = useTime ? ['-f', '%U %S %M', '-o', timeFile, cmd, ...args] : args;
  const bin = useTime ? GNU_TIME : cmd;
  const cpu0 = serverCpuSeconds(opts.serverPid);
  const t0 = process.hrtime.bigint();
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(bin, argv, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      stdio: [opts.stdinFile ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    if (opts.stdinFile && child.stdin) {
      child.stdin.on('error', () => undefined);
      createReadStream(opts.stdinFile).pipe(child.stdin);
    }
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = serverCpuSeconds(opts.serverPid);
  let clientCpuSeconds: number | null = null;
  let clientPeakRssBytes: number | null = null;
  if (useTime && existsSync(timeFile)) {
    const last = readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '';
    const [u, s, m] = last.split(' ').map(Number);
    if (u !== undefined && s !== undefined && Number.isFinite(u) && Number.isFinite(s)) clientCpuSeconds = u + s;
    if (m !== undefined && Number.isFinite(m)) clientPeakRssBytes = m * 1024;
    rmSync(timeFile, { force: true });
  }
  return {
    wallSeconds,
    clientCpuSeconds,
    clientPeakRssBytes,
    serverCpuSeconds: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null,
    ...r,
  };
}

