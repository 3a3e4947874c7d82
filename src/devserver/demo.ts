#!/usr/bin/env node
/**
 * `npm run demo`: a throwaway MariaDB (or DATABASE_URL's server), ~1M
 * generated user_summary rows, one flatload load, the report, cleanup.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { ddl, generateToFile } from '../../fixtures/generate.js';
import { formatError } from '../errors/index.js';
import { startThrowawayServer, type ThrowawayServer } from './server.js';

const rows = Number(process.env['DEMO_ROWS'] ?? 1_000_000);
const cli = fileURLToPath(new URL('../cli/main.js', import.meta.url));

async function main(): Promise<number> {
  let server: ThrowawayServer | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'flatload-demo-'));
  try {
    let url = process.env['DATABASE_URL'];
    if (!url) {
      process.stderr.write('starting a throwaway MariaDB…\n');
      server = await startThrowawayServer({ innodbBufferPoolSize: '2G' });
      url = server.url;
    }
    const file = join(dir, 'user_summary.tsv');
    process.stderr.write(`generating ${rows.toLocaleString('en-US')} user_summary rows…\n`);
    const gen = await generateToFile(file, { table: 'user_summary', rows, seed: 1 });
    process.stderr.write(`  ${file}: ${(gen.bytes / 1e6).toFixed(1)} MB\n`);

    const admin = await mysql.createConnection({ uri: url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    await admin.query('CREATE DATABASE IF NOT EXISTS flatload_demo');
    await admin.query('DROP TABLE IF EXISTS flatload_demo.user_summary');
    await admin.query(`USE flatload_demo; ${ddl('user_summary')}`);
    await admin.end();

    const args = [cli, 'load', file, '--table', 'flatload_demo.user_summary', '--progress', process.stderr.isTTY ? 'bar' : 'lines'];
    process.stderr.write(`\n$ flatload ${args.slice(1).join(' ')}\n`);
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, args, { stdio: 'inherit', env: { ...process.env, DATABASE_URL: url } });
      child.on('exit', (c) => resolve(c ?? 1));
    });
    return code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (server) await server.stop();
  }
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
