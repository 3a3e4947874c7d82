#!/usr/bin/env node
/**
 * `npm run demo`: a throwaway MariaDB (or DATABASE_URL's server), ~1M
 * generated user_summary rows, one flatload load, the report, cleanup.
 * `npm run demo -- --galera`: the same into a throwaway 3-node Galera
 * cluster given to flatload as a list of nodes, with --verify.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { ddl, generateToFile } from '../fixtures/generate.js';
import { formatError } from '../src/errors/index.js';
import { startGaleraCluster, type GaleraCluster } from './galera.js';
import { startThrowawayServer, type ThrowawayServer } from '../src/devserver/server.js';

const galera = process.argv.includes('--galera');
const rows = Number(process.env['DEMO_ROWS'] ?? (galera ? 300_000 : 1_000_000));
const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

async function main(): Promise<number> {
  let server: ThrowawayServer | undefined;
  let cluster: GaleraCluster | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'flatload-demo-'));
  try {
    let url = process.env['DATABASE_URL'];
    if (galera) {
      process.stderr.write('starting a throwaway 3-node Galera cluster (nodes one after another)…\n');
      cluster = await startGaleraCluster();
      url = cluster.url;
    } else if (!url) {
      process.stderr.write('starting a throwaway MariaDB…\n');
      server = await startThrowawayServer({ innodbBufferPoolSize: '2G' });
      url = server.url;
    }
    const file = join(dir, 'user_summary.tsv');
    process.stderr.write(`generating ${rows.toLocaleString('en-US')} user_summary rows…\n`);
    const gen = await generateToFile(file, { table: 'user_summary', rows, seed: 1 });
    process.stderr.write(`  ${file}: ${(gen.bytes / 1e6).toFixed(1)} MB\n`);

    // mysql2 takes one server: on a cluster, the first node (the table replicates to the others).
    const admin = cluster ? await cluster.connect(0, { multipleStatements: true }) : await mysql.createConnection({ uri: url, multipleStatements: true, flags: ['-LOCAL_FILES'] });
    await admin.query('CREATE DATABASE IF NOT EXISTS flatload_demo');
    await admin.query('DROP TABLE IF EXISTS flatload_demo.user_summary');
    await admin.query(`USE flatload_demo; ${ddl('user_summary')}`);
    await admin.end();

    const args = [cli, 'load', file, '--table', 'flatload_demo.user_summary', '--progress', process.stderr.isTTY ? 'bar' : 'lines', ...(cluster ? ['--verify'] : [])];
    process.stderr.write(`\n$ flatload ${args.slice(1).join(' ')}\n`);
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, args, { stdio: 'inherit', env: { ...process.env, DATABASE_URL: url } });
      child.on('exit', (c) => resolve(c ?? 1));
    });
    return code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (server) await server.stop();
    if (cluster) await cluster.stop();
  }
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(`${formatError(err)}\n`);
  process.exitCode = 1;
}
