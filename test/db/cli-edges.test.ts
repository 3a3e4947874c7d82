import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Connection } from 'mysql2/promise';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { thisProcess } from '../../src/input/owner.js';
import { CLI, runCli, type CliResult } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';

/**
 * The command line's edges: --json when the command fails before it starts,
 * a reader of stdout or stderr that goes away mid-load, SIGHUP, and the
 * scratch directories a killed process leaves in --tmpdir.
 */
let dir: string;
let file: string;
let db: TestDatabase;
const ROWS = 60_000;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flatload-edges-'));
  file = join(dir, 'us.tsv');
  await generateToFile(file, { table: 'user_summary', rows: ROWS, seed: 7 });
  db = await createTestDatabase('edges');
});
after(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function count(conn: Connection, table: string): Promise<number> {
  const [r] = await conn.query(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number((r as Array<{ n: number }>)[0]!.n);
}

async function pair(name: string): Promise<void> {
  for (const t of [name, `${name}_ref`]) {
    await db.conn.query(`DROP TABLE IF EXISTS ${t}`);
    await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${t}`));
  }
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${name}_ref ${loadDataOptions('tsv')}`, [file]);
}

/** The one JSON object on stdout. */
function oneObject(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `exactly one line on stdout: ${JSON.stringify(r.stdout)} (stderr: ${r.stderr})`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('--json when the command fails before it starts: one object with the error', () => {
  test('connection refused, unknown table, missing file, bad option, unknown flag, status, an export: one object, exit code unchanged', { timeout: 120_000 }, async () => {
    await pair('jsonok');
    const refused = 'mysql://root@127.0.0.1:1/x';
    const cases: Array<[name: string, args: string[], env: Record<string, string>, code: number, errorCode: string]> = [
      ['connection refused', ['load', file, '--table', 'jsonok', '--json'], { DATABASE_URL: refused }, 6, 'CONNECTION_REFUSED'],
      ['unknown table', ['load', file, '--table', 'no_such_table', '--json'], { DATABASE_URL: db.url }, 7, 'UNKNOWN_TABLE'],
      ['missing file', ['load', join(dir, 'missing.tsv'), '--table', 'jsonok', '--json'], { DATABASE_URL: db.url }, 5, 'INPUT_NOT_FOUND'],
      ['bad option value', ['load', file, '--table', 'jsonok', '--jobs', 'many', '--json'], { DATABASE_URL: db.url }, 2, 'USAGE'],
      ['unknown flag (yargs)', ['load', file, '--table', 'jsonok', '--no-such-flag', '--json'], { DATABASE_URL: db.url }, 2, 'USAGE'],
      ['status, connection refused', ['status', '--json'], { DATABASE_URL: refused }, 6, 'CONNECTION_REFUSED'],
      ['an export, missing table', ['load', file, '--json'], { DATABASE_URL: db.url }, 7, 'UNKNOWN_TABLE'],
    ];
    for (const [name, args, env, code, errorCode] of cases) {
      const r = await runCli(args, { env });
      assert.equal(r.code, code, `${name}: ${r.stderr}`);
      const o = oneObject(r) as { status: string; exitCode: number; error: { code: string; message: string; exitCode: number } };
      assert.equal(o.status, 'failed', name);
      assert.equal(o.exitCode, code, name);
      assert.equal(o.error.code, errorCode, `${name}: ${o.error.message}`);
      assert.equal(o.error.exitCode, code, name);
      assert.ok(o.error.message.length > 0 && r.stderr.includes(o.error.message), `${name}: the same message as on stderr`);
    }
    // The file is named in the context of an input error.
    const missing = oneObject(await runCli(['load', join(dir, 'missing.tsv'), '--table', 'jsonok', '--json'], { env: { DATABASE_URL: db.url } })) as { error: { file?: string } };
    assert.match(missing.error.file ?? '', /missing\.tsv$/);
  });

  test('a load that stops after it started still prints its one report, not a second object', { timeout: 60_000 }, async () => {
    await db.conn.query('DROP TABLE IF EXISTS jsonstop');
    await db.conn.query('CREATE TABLE jsonstop (a INT PRIMARY KEY)');
    const bad = join(dir, 'bad.tsv');
    writeFileSync(bad, '1\n2\nnot a number\n');
    const r = await runCli(['load', bad, '--table', 'jsonstop', '--json', '--progress', 'none'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 4, r.stderr);
    const o = oneObject(r) as { status: string; error: { code: string } };
    assert.equal(o.status, 'stopped');
    assert.equal(o.error.code, 'ROWS_REJECTED');
  });
});

describe('a reader that goes away: the load goes on', () => {
  test('stderr closed before the first progress line: the load finishes, exit 0, the job done', { timeout: 120_000 }, async () => {
    await pair('eperr');
    const s = spawnCli(['load', file, '--table', 'eperr', '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'lines', '--json'], { DATABASE_URL: db.url });
    s.child.stderr!.destroy();
    const r = await s.done;
    assert.equal(r.code, 0, `exit ${r.code} ${r.signal}: ${r.stdout}`);
    assert.equal((oneObject(r) as { status: string; rows: number }).rows, ROWS);
    assert.deepEqual(await tableDigest(db.conn, 'eperr'), await tableDigest(db.conn, 'eperr_ref'));
    const [j] = await db.conn.query('SELECT state FROM flatload_jobs WHERE target = ?', [`${db.name}.eperr`]);
    assert.deepEqual(j, [{ state: 'done' }]);
  });

  test('stdout closed (| head -0): the summary is dropped, the load finishes with its own exit code', { timeout: 120_000 }, async () => {
    await pair('epout');
    const s = spawnCli(['load', file, '--table', 'epout', '--chunk-size', '64KiB', '--progress', 'lines'], { DATABASE_URL: db.url });
    s.child.stdout!.destroy();
    const r = await s.done;
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /internal error/);
    assert.deepEqual(await tableDigest(db.conn, 'epout'), await tableDigest(db.conn, 'epout_ref'));
  });
});

describe('SIGHUP and the scratch directories of processes that are gone', () => {
  test('SIGHUP mid-load stops like SIGTERM: message, resume line, exit 4, no spill directory left; the rerun completes', { timeout: 180_000 }, async () => {
    await pair('hup');
    const tmp = join(dir, 'hup-tmp');
    mkdirSync(tmp);
    const args = ['load', file, '--table', 'hup', '--chunk-size', '32KiB', '--jobs', '1', '--order', 'key', '--sort-memory', '0', '--tmpdir', tmp, '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    await pollUntil('a spill directory', async () => readdirSync(tmp).some((n) => n.startsWith('flatload-order-')), { process: s, everyMs: 25 });
    await pollUntil('rows committed', async () => (await count(db.conn, 'hup').catch(() => 0)) > 2000, { process: s, everyMs: 25 });
    s.child.kill('SIGHUP');
    const r = await s.done;
    assert.equal(r.code, 4, `exit ${r.code} ${r.signal}: ${r.stderr}`);
    assert.match(r.stderr, /SIGHUP: finishing the chunks in flight/);
    assert.match(r.stderr, /interrupted/);
    assert.match(r.stderr, /resume with: .*flatload load/);
    assert.deepEqual(readdirSync(tmp), [], 'the spill directory is removed');
    const again = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await tableDigest(db.conn, 'hup'), await tableDigest(db.conn, 'hup_ref'));
  });

  test('a spool left by kill -9 is removed by the next run; a live process\'s directory and one without a marker stay', { timeout: 120_000 }, async () => {
    await pair('spool');
    const tmp = join(dir, 'spool-tmp');
    mkdirSync(tmp);
    // A load from standard input whose writer never finishes: its spool is on disk, then it is killed -9.
    const child = spawn(process.execPath, [CLI, 'load', '-', '--table', 'spool', '--spool', '--tmpdir', tmp, '--progress', 'none'], { env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: db.url }, stdio: ['pipe', 'ignore', 'ignore'] });
    let ended = false;
    const exited = new Promise<void>((resolve) => child.on('close', () => ((ended = true), resolve())));
    child.stdin.on('error', () => undefined);
    child.stdin.write(readFileSync(file).subarray(0, 1 << 20));
    const spoolOf = (): string | undefined => readdirSync(tmp).find((n) => n.startsWith('flatload-spool-'));
    await pollUntil('the spooled copy', async () => spoolOf() !== undefined && existsSync(join(tmp, spoolOf()!, 'input')), { alive: () => !ended, everyMs: 25 });
    const killed = spoolOf()!;
    child.kill('SIGKILL');
    await exited;
    assert.ok(existsSync(join(tmp, killed)), 'kill -9 leaves the spool behind');
    // A live process's spool (this test's) and a directory without a marker must stay.
    const live = join(tmp, 'flatload-spool-live');
    mkdirSync(live);
    writeFileSync(join(live, '.flatload-owner'), JSON.stringify(thisProcess()));
    mkdirSync(join(tmp, 'flatload-spool-unmarked'));
    // A sort's spill directory of a process that exited.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const spill = join(tmp, 'flatload-order-otherjob');
    mkdirSync(spill);
    writeFileSync(join(spill, '.flatload-owner'), JSON.stringify({ ...thisProcess(), pid: gone, start: '1' }));
    const r = await runCli(['load', file, '--table', 'spool', '--tmpdir', tmp, '--progress', 'lines'], { env: { DATABASE_URL: db.url } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /removed 2 spooled input\(s\) or spill director\(ies\) of flatload processes that are gone/);
    assert.deepEqual(readdirSync(tmp).sort(), ['flatload-spool-live', 'flatload-spool-unmarked']);
    assert.deepEqual(await tableDigest(db.conn, 'spool'), await tableDigest(db.conn, 'spool_ref'));
  });
});
