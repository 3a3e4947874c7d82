import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { ddl, generateToFile } from '../fixtures/generate.js';
import { startThrowawayServer } from '../src/devserver/server.js';
import { writeDocSection } from './doc.js';
import { session } from './quiet.js';

interface MemRun {
  input: string;
  chunkMiB: number;
  jobs: number;
  seconds: number;
  peakRssMiB: number;
  boundMiB: number;
  rows: number;
  ok: boolean;
}

/** Runs the CLI under GNU time and returns its peak RSS (the load's JSON report on stdout). */
function runCli(root: string, args: string[], env: NodeJS.ProcessEnv, stdinFile?: string): Promise<{ code: number; peakRssKiB: number; stdout: string; stderr: string; seconds: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn('/usr/bin/time', ['-f', '%M', process.execPath, join(root, 'dist/src/cli/main.js'), ...args], {
      env,
      stdio: [stdinFile ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    if (stdinFile && child.stdin) {
      child.stdin.on('error', () => undefined);
      createReadStream(stdinFile).pipe(child.stdin);
    }
    child.on('close', (code) => {
      const last = stderr.trim().split('\n').pop() ?? '';
      resolve({ code: code ?? 1, peakRssKiB: Number(last), stdout, stderr, seconds: (Date.now() - t0) / 1000 });
    });
  });
}

/**
 * Peak RSS of flatload on a multi-GB file, from a plain file (chunks re-read
 * by range) and from standard input (chunks held in memory), against the
 * bound chunk size × (jobs + 1) + a fixed overhead.
 */
export async function runMemoryBench(gb: number, root: string, write: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flatload-mem-'));
  const server = await startThrowawayServer({ innodbBufferPoolSize: '4G', innodbLogFileSize: '1G' });
  try {
    const rows = Math.ceil((gb * 1e9) / 37.4);
    const file = join(dir, 'big.tsv');
    process.stderr.write(`generating ${rows.toLocaleString('en-US')} rows (~${gb} GB)…\n`);
    await generateToFile(file, { table: 'user_summary', rows, seed: 3 });
    const size = statSync(file).size;
    const admin = await mysql.createConnection({ uri: server.url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    await admin.query('CREATE DATABASE mem');
    const runs: MemRun[] = [];
    const chunkMiB = 64;
    const jobs = 2;
    for (const input of ['plain file', 'standard input'] as const) {
      await admin.query(`DROP TABLE IF EXISTS mem.user_summary; USE mem; ${ddl('user_summary')}`);
      process.stderr.write(`loading ${(size / 1e9).toFixed(2)} GB from ${input}…\n`);
      const args = ['load', input === 'plain file' ? file : '-', '--table', 'mem.user_summary', '--chunk-size', `${chunkMiB}MiB`, '--jobs', String(jobs), '--progress', 'none', '--json'];
      const load1 = await session.quietStart(`memory: ${input}`);
      process.stderr.write(`  [load ${load1.toFixed(2)} at start]\n`);
      const r = await runCli(root, args, { ...process.env, DATABASE_URL: server.url }, input === 'standard input' ? file : undefined);
      const report = r.code === 0 ? (JSON.parse(r.stdout) as { rows: number }) : { rows: 0 };
      runs.push({
        input,
        chunkMiB,
        jobs,
        seconds: r.seconds,
        peakRssMiB: r.peakRssKiB / 1024,
        boundMiB: chunkMiB * (jobs + 1),
        rows: report.rows,
        ok: r.code === 0 && report.rows === rows,
      });
      process.stderr.write(`  peak RSS ${(r.peakRssKiB / 1024).toFixed(0)} MiB, ${r.seconds.toFixed(0)} s, exit ${r.code}\n`);
    }
    await admin.end();
    const table = [
      '| input | size | chunk | jobs | rows loaded | seconds | flatload peak RSS | chunk × (jobs + 1) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...runs.map(
        (r) =>
          `| ${r.input}${r.ok ? '' : ' (FAILED)'} | ${(size / 1e9).toFixed(2)} GB | ${r.chunkMiB} MiB | ${r.jobs} | ${r.rows.toLocaleString('en-US')} | ${r.seconds.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} MiB | ${r.boundMiB} MiB |`,
      ),
    ].join('\n');
    const text = `## Memory on a multi-GB file

Produced by \`npm run bench -- --memory --memory-gb ${gb}\` (${new Date().toISOString().slice(0, 10)}): one generated
user_summary file loaded into an empty InnoDB table, once as a plain file and once through
standard input (\`flatload load - < file\`), where chunks are cut on the fly and held in memory
until loaded. Peak RSS is GNU time's maximum resident set size of the flatload process. One run per input (peak RSS does
not move with the machine's load); load average at the runs' start: ${session.starts.map((s) => s.load1.toFixed(2)).join(', ')}.

${table}
`;
    process.stdout.write(`\n${text}\n`);
    if (write) writeDocSection(join(root, 'docs/benchmarks.md'), 'memory', text);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
