/**
 * Credentials never leave: for every way of giving a password (--url,
 * DATABASE_URL, .env, --defaults-file [client], --password=, MYSQL_PWD, the
 * -p prompt) and every outcome (success, bad password, refused connection,
 * TLS failure, unknown table, rejected rows with a resume command, --json),
 * neither the password (raw or URL-encoded) nor the connection URL appears
 * on stdout, stderr, in the JSON report or in the bookkeeping tables.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLI, runCli, type CliResult } from '../support/cli.js';
import { adminConnection, createTestDatabase, serverUrl, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let dir: string;
let host: string;
let port: number;
const user = `leak_${randomBytes(3).toString('hex')}`;
// Characters that need URL-encoding, so the raw and the encoded form differ.
const password = `Fl@t:l0ad/S3cr#t%${randomBytes(6).toString('hex')}`;
const wrongPassword = `Wr0ng:p@ss/${randomBytes(6).toString('hex')}`;
const enc = encodeURIComponent;
let goodFile: string;
let badFile: string;
let n = 0;

function url(pw = password, p = port): string {
  return `mysql://${enc(user)}:${enc(pw)}@${host}:${p}/${enc(db.name)}`;
}

/** Every form a secret could take in output. */
function secretForms(): string[] {
  return [password, enc(password), wrongPassword, enc(wrongPassword), url(), url(wrongPassword), `${enc(user)}:${enc(password)}`, `:${enc(password)}@`];
}

function assertClean(r: CliResult, what: string): void {
  for (const s of secretForms()) {
    assert.equal(r.stdout.includes(s), false, `${what}: stdout contains ${JSON.stringify(s)}:\n${r.stdout}`);
    assert.equal(r.stderr.includes(s), false, `${what}: stderr contains ${JSON.stringify(s)}:\n${r.stderr}`);
  }
  // Fragments: no run of 8+ characters of the password anywhere.
  for (let i = 0; i + 8 <= password.length; i++) {
    const frag = password.slice(i, i + 8);
    assert.equal(`${r.stdout}\n${r.stderr}`.includes(frag), false, `${what}: output contains a fragment of the password (${frag})`);
  }
}

async function table(): Promise<string> {
  const name = `t${++n}`;
  await db.conn.query(`CREATE TABLE \`${name}\` (id INT PRIMARY KEY, name VARCHAR(20))`);
  return name;
}

const common = ['--progress', 'none', '--no-defaults'];

before(async () => {
  db = await createTestDatabase('cred');
  dir = mkdtempSync(join(tmpdir(), 'flatload-cred-'));
  const u = new URL(serverUrl());
  host = u.hostname;
  port = Number(u.port || 3306);
  const admin = await adminConnection();
  await admin.query(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, password]);
  await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER ON \`${db.name}\`.* TO ?@'%'`, [user]);
  await admin.end();
  goodFile = join(dir, 'good.tsv');
  writeFileSync(goodFile, '1\talpha\n2\tbeta\n3\tgamma\n');
  badFile = join(dir, 'bad.tsv');
  writeFileSync(badFile, '1\talpha\nnot-a-number\tbeta\n3\tgamma\n');
});
after(async () => {
  const admin = await adminConnection();
  await admin.query(`DROP USER IF EXISTS ?@'%'`, [user]).catch(() => undefined);
  await admin.end();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function expectLoaded(r: CliResult, t: string, what: string): Promise<void> {
  assertClean(r, what);
  assert.equal(r.code, 0, `${what}: ${r.stderr}`);
  const report = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.equal(report['rows'], 3);
  const json = JSON.stringify(report);
  for (const s of secretForms()) assert.equal(json.includes(s), false, `${what}: the JSON report contains a secret`);
  const [rows] = await db.conn.query(`SELECT COUNT(*) AS n FROM \`${t}\``);
  assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 3);
}

describe('a successful load, for each place a password can come from', () => {
  test('--url', async () => {
    const t = await table();
    await expectLoaded(await runCli(['load', goodFile, '--table', t, '--url', url(), '--json', ...common]), t, '--url');
  });
  test('DATABASE_URL in the environment', async () => {
    const t = await table();
    await expectLoaded(await runCli(['load', goodFile, '--table', t, '--json', ...common], { env: { DATABASE_URL: url() } }), t, 'DATABASE_URL');
  });
  test('.env in the working directory', async () => {
    const t = await table();
    const cwd = mkdtempSync(join(dir, 'envdir-'));
    writeFileSync(join(cwd, '.env'), `DATABASE_URL=${url()}\n`);
    await expectLoaded(await runCli(['load', goodFile, '--table', t, '--json', ...common], { cwd }), t, '.env');
  });
  test('--defaults-file [client] (as ~/.my.cnf)', async () => {
    const t = await table();
    const cnf = join(dir, `my-${n}.cnf`);
    writeFileSync(cnf, `[client]\nuser=${user}\npassword="${password}"\nhost=${host}\nport=${port}\ndatabase=${db.name}\n`);
    const r = await runCli(['load', goodFile, '--table', t, '--json', '--defaults-file', cnf, '--progress', 'none']);
    await expectLoaded(r, t, '--defaults-file');
  });
  test(
    '~/.my.cnf through HOME (host=127.0.0.1 there means TCP, whatever socket /etc/mysql/my.cnf names)',
    async () => {
    const t = await table();
    const home = mkdtempSync(join(dir, 'home-'));
    // The socket line keeps a wrongly chosen socket away from any system server: it does not exist.
    writeFileSync(join(home, '.my.cnf'), `[client]\nuser=${user}\npassword=${password}\nhost=${host}\nport=${port}\nsocket=${join(dir, 'no-such.sock')}\n`);
    const r = await runCli(['load', goodFile, '--table', `${db.name}.${t}`, '--json', '--progress', 'none'], { env: { HOME: home } });
    await expectLoaded(r, t, '~/.my.cnf');
    },
  );
  test('--password=… on the command line works and prints the mysql client\'s warning', async () => {
    const t = await table();
    const r = await runCli(['load', goodFile, '--table', t, '--json', '--host', host, '--port', String(port), '--user', user, `--password=${password}`, '--database', db.name, ...common]);
    await expectLoaded(r, t, '--password=');
    assert.match(r.stderr, /Using a password on the command line interface can be insecure/);
  });
  test('MYSQL_PWD', async () => {
    const t = await table();
    const r = await runCli(['load', goodFile, '--table', t, '--json', '--host', host, '--port', String(port), '--user', user, '--database', db.name, ...common], {
      env: { MYSQL_PWD: password },
    });
    await expectLoaded(r, t, 'MYSQL_PWD');
  });
  test(
    '-pSECRET, mysql style, works and does not leak letters of the password',
    async () => {
      const t = await table();
      const r = await runCli(['load', goodFile, '--table', t, '--json', '--host', host, '--port', String(port), '--user', user, `-p${password}`, '--database', db.name, ...common]);
      await expectLoaded(r, t, '-pSECRET');
    },
  );
});

describe('the process list', () => {
  test('ps (/proc/PID/cmdline) shows -p… and a --url password as x', { skip: process.platform !== 'linux' }, async () => {
    const t = await table();
    const env: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k]!;
    // Reading standard input keeps the process alive while we look at it.
    const child = spawn(process.execPath, [CLI, 'load', '-', '--table', t, '--url', url(), `-p${password}`, '--json', ...common], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<number | null>((resolve) => child.on('close', resolve));
    let cmdline = '';
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');
      } catch {
        break;
      }
      if (cmdline.includes('xxxx')) break;
    }
    child.stdin.end('1\talpha\n2\tbeta\n3\tgamma\n');
    const code = await done;
    assert.ok(cmdline.includes('load'), `cmdline: ${JSON.stringify(cmdline)}`);
    for (const s of secretForms()) assert.equal(cmdline.includes(s), false, `the process list shows ${JSON.stringify(s)}: ${JSON.stringify(cmdline)}`);
    assert.match(cmdline, new RegExp(`-p${'x'.repeat(password.length)}`));
    assertClean({ code, signal: null, stdout, stderr }, 'stdin load');
    assert.equal(code, 0, stderr);
  });
});

describe('failures say what went wrong without the password', () => {
  test('bad password: ACCESS_DENIED', async () => {
    const t = await table();
    for (const args of [
      ['--url', url(wrongPassword)],
      ['--url', url(wrongPassword), '--json'],
    ]) {
      const r = await runCli(['load', goodFile, '--table', t, ...args, ...common]);
      assertClean(r, 'bad password');
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, /Access denied for user/);
      assert.match(r.stderr, new RegExp(`connecting to ${user}@`));
    }
    const viaEnv = await runCli(['load', goodFile, '--table', t, ...common], { env: { DATABASE_URL: url(wrongPassword) } });
    assertClean(viaEnv, 'bad password via DATABASE_URL');
    assert.equal(viaEnv.code, 6, viaEnv.stderr);
  });

  test('refused connection', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const r = await runCli(['load', goodFile, '--table', 't', '--url', url(password, closed), '--json', ...common]);
    assertClean(r, 'refused');
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, /connection refused/);
  });

  test('TLS failure (REQUIRED against a server without TLS)', async () => {
    const r = await runCli(['load', goodFile, '--table', 't', '--url', url(), '--ssl-mode', 'REQUIRED', '--json', ...common]);
    assertClean(r, 'TLS');
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, /needs an encrypted connection, but the server does not offer TLS/);
  });

  test('unknown table', async () => {
    const r = await runCli(['load', goodFile, '--table', 'no_such_table', '--url', url(), '--json', ...common]);
    assertClean(r, 'unknown table');
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /no_such_table/);
  });

  test('malformed URL and wrong scheme: the message does not repeat the URL', async () => {
    for (const bad of [`mysql://${user}:${password}@[bad`, `postgres://${user}:${enc(password)}@${host}/${db.name}`]) {
      const r = await runCli(['load', goodFile, '--table', 't', '--url', bad, ...common]);
      assertClean(r, 'bad URL');
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.includes(bad), false);
    }
  });

  test('rejected rows: the resume command and the bookkeeping rows carry no password', async () => {
    const t = await table();
    const r = await runCli(['load', badFile, '--table', t, '--url', url(), '--json', ...common]);
    assertClean(r, 'rejected rows');
    assert.notEqual(r.code, 0);
    const jobs = await db.conn.query(`SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'flatload%'`, [db.name]);
    for (const row of jobs[0] as Array<{ TABLE_NAME: string }>) {
      const [content] = await db.conn.query(`SELECT * FROM \`${row.TABLE_NAME}\``);
      const text = JSON.stringify(content);
      for (const s of secretForms()) assert.equal(text.includes(s), false, `${row.TABLE_NAME} stores a secret: ${text.slice(0, 500)}`);
    }
    const r2 = await runCli(['load', badFile, '--table', t, `--password=${password}`, '--user', user, '--host', host, '--port', String(port), '--database', db.name, '--json', ...common]);
    assertClean(r2, 'rejected rows, --password=');
  });
});

describe('other commands', () => {
  test('plan --json and status (--json) print no secret', async () => {
    const t = await table();
    const p = await runCli(['plan', goodFile, '--table', t, '--url', url(), '--json', ...common]);
    assertClean(p, 'plan --json');
    assert.equal(p.code, 0, p.stderr);
    const p2 = await runCli(['plan', goodFile, '--table', t, ...common], { env: { DATABASE_URL: url() } });
    assertClean(p2, 'plan');
    for (const json of [[], ['--json']]) {
      const s = await runCli(['status', '--url', url(), ...json, '--no-defaults']);
      assertClean(s, `status ${json.join(' ')}`);
      assert.equal(s.code, 0, s.stderr);
    }
  });
});

describe('-p with no value prompts on the terminal without echo', () => {
  test('typed at a pseudo-terminal (script(1)): the load runs, the password is not echoed', { skip: !hasScript() }, async () => {
    const t = await table();
    const args = ['load', goodFile, '--table', t, '--json', '--host', host, '--port', String(port), '--user', user, '--database', db.name, '-p', ...common];
    const r = await runInPty([process.execPath, CLI, ...args], password);
    assertClean({ code: r.code, signal: null, stdout: r.output, stderr: '' }, '-p prompt');
    assert.match(r.output, /Enter password: /);
    assert.equal(r.code, 0, r.output);
    const [rows] = await db.conn.query(`SELECT COUNT(*) AS n FROM \`${t}\``);
    assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 3);
  });

  test('without a terminal: a clear CONFIG error, not a hang', async () => {
    // runCli gives the child no controlling terminal when it runs detached from one; when the test itself runs on a TTY, skip.
    const r = await runCliNoTty(['load', goodFile, '--table', 't', '--host', host, '--port', String(port), '--user', user, '-p', ...common]);
    if (r === undefined) return;
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /-p asks for a password, but there is no terminal to ask on/);
  });
});

function hasScript(): boolean {
  try {
    return spawnSync('script', ['--version']).status === 0;
  } catch {
    return false;
  }
}

/** Runs a command under script(1) (a pseudo-terminal); types `typed` + Enter after "Enter password:" appears. */
function runInPty(cmd: string[], typed: string): Promise<{ code: number | null; output: string }> {
  const quoted = cmd.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k]!;
    const child = spawn('script', ['-qfec', quoted, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let typedIt = false;
    const onOut = (d: Buffer): void => {
      output += d.toString();
      if (!typedIt && output.includes('Enter password: ')) {
        typedIt = true;
        setTimeout(() => child.stdin.write(`${typed}\r`), 100);
      }
    };
    child.stdout.on('data', onOut);
    child.stderr.on('data', onOut);
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** runCli in a new session (setsid), so /dev/tty cannot be opened. */
async function runCliNoTty(args: string[]): Promise<CliResult | undefined> {
  if (spawnSync('setsid', ['--version']).status !== 0) return undefined;
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k]!;
  const r = spawnSync('setsid', ['-w', process.execPath, CLI, ...args], { env, encoding: 'utf8', input: '', timeout: 60_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
