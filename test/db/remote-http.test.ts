import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { openHttp } from '../../src/input/http.js';
import { runCli } from '../support/cli.js';
import { countRows, createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { NGINX, startCuttingProxy, startNginx, type Nginx } from '../support/http.js';
import { pollUntil } from '../support/poll.js';
import { spawnCli } from '../support/spawn.js';
import { makeTestPki, type TestPki } from '../support/tls.js';

const skip = NGINX ? false : 'nginx is not installed (apt-get install -y nginx-light)';
const PASSWORD = 'pa55-s3cret';
const hasZstd = spawnSync('zstd', ['--version']).status === 0;

let db: TestDatabase;
let dir: string;
let web: Nginx;
let tsv: string;

before(async () => {
  if (skip) return;
  db = await createTestDatabase('remote');
  dir = mkdtempSync(join(tmpdir(), 'flatload-http-'));
  mkdirSync(join(dir, 'exports'));
  mkdirSync(join(dir, 'private'));
  tsv = join(dir, 'exports', 'us.tsv');
  await generateToFile(tsv, { table: 'user_summary', rows: 20_000, seed: 28 });
  writeFileSync(join(dir, 'exports', 'us.tsv.gz'), gzipSync(readFileSync(tsv)));
  writeFileSync(join(dir, 'private', 'us.tsv'), readFileSync(tsv));
  writeFileSync(join(dir, 'private', 'us.tsv.gz'), gzipSync(readFileSync(tsv)));
  mkdirSync(join(dir, 'private', 'dump'));
  writeFileSync(join(dir, 'private', 'dump', 'orders.sql'), `${ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE orders')};\n`);
  writeFileSync(join(dir, 'private', 'dump', 'orders.txt.gz'), gzipSync(readFileSync(tsv)));
  writeFileSync(join(dir, 'private', 'dump', 'users.txt'), readFileSync(tsv));
  await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE ref'));
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ref ${loadDataOptions('tsv')}`, [tsv]);
  web = await startNginx(dir, { user: 'reader', password: PASSWORD });
});
after(async () => {
  if (skip) return;
  await web.stop();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function freshTable(name: string): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS ${name}`);
  await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${name}`));
}

/** A generated file at `path`, `table` empty, and `${table}_ref` holding the server's own LOAD DATA of the file. */
async function fileAndReference(path: string, table: string, seed: number): Promise<void> {
  await generateToFile(path, { table: 'user_summary', rows: 60_000, seed });
  await freshTable(table);
  await freshTable(`${table}_ref`);
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${table}_ref ${loadDataOptions('tsv')}`, [path]);
}

/**
 * A small server with the file's bytes, answering HEAD and Range GETs as
 * nginx does (206, ETag, Accept-Ranges) except for one fault: `rounded`
 * answers a range from its start rounded down to 64 KiB (truthfully, in
 * Content-Range), `rounded-once` does so the first time each range is asked;
 * `gzip` gzips every answer (HEAD included) regardless of Accept-Encoding,
 * `gzip-get` only the GETs. It records each request's Range and Accept-Encoding.
 */
async function startFaultyServer(bytes: Buffer, fault: 'rounded' | 'rounded-once' | 'gzip' | 'gzip-get'): Promise<{ base: string; requests: Array<{ method: string; range: string; acceptEncoding: string }>; stop(): Promise<void> }> {
  const requests: Array<{ method: string; range: string; acceptEncoding: string }> = [];
  const asked = new Set<string>();
  const server = http.createServer((req, res) => {
    const range = req.headers.range ?? '-';
    requests.push({ method: req.method ?? '', range, acceptEncoding: req.headers['accept-encoding'] ?? '-' });
    const headers: Record<string, string | number> = { etag: '"v1"', 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (fault === 'gzip' || (fault === 'gzip-get' && req.method === 'GET')) headers['content-encoding'] = 'gzip';
    const m = /^bytes=(\d+)-(\d+)$/.exec(range);
    if (req.method === 'HEAD' || !m) {
      res.writeHead(200, { ...headers, 'content-length': bytes.length });
      res.end(req.method === 'HEAD' ? undefined : bytes);
      return;
    }
    let from = Number(m[1]);
    const to = Math.min(Number(m[2]), bytes.length - 1);
    if (fault === 'rounded' || (fault === 'rounded-once' && !asked.has(range))) from -= from % 65_536;
    asked.add(range);
    let body = bytes.subarray(from, to + 1);
    if (headers['content-encoding'] === 'gzip') body = gzipSync(body);
    res.writeHead(206, { ...headers, 'content-range': `bytes ${from}-${to}/${bytes.length}`, 'content-length': body.length });
    res.end(body);
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Rows of `table` that are not rows of ref (all columns compared): any is a row misread. */
async function rowsNotInRef(table: string): Promise<number> {
  const cols = ['user_id', 'weight', 'level', 'beat_rate', 'level_num'].map((c) => `r.${c} <=> t.${c}`).join(' AND ');
  const [r] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${table} t LEFT JOIN ref r ON ${cols} WHERE r.user_id IS NULL`);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

function load(url: string, table: string, extra: string[] = []): Promise<ReturnType<typeof runCli> extends Promise<infer R> ? R : never> {
  return runCli(['load', url, '--table', table, '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none', '--json', ...extra], { env: { DATABASE_URL: db.url } });
}

describe('HTTP sources (nginx)', { skip }, () => {
  test('a plain file is read by byte ranges, in parallel chunks, never fetched whole', async () => {
    await freshTable('t_plain');
    const before = web.requests().length;
    // In file order: a key-ordered load of a file this small would sort it in memory, reading it once.
    const r = await load(`${web.base}/exports/us.tsv`, 't_plain', ['--order', 'file']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { rows: number; chunks: number };
    assert.equal(report.rows, 20_000);
    assert.ok(report.chunks > 5, `chunks: ${report.chunks}`);
    assert.deepEqual(await tableDigest(db.conn, 't_plain'), await tableDigest(db.conn, 'ref'));
    const gets = web.requests().slice(before).filter((q) => q.method === 'GET' && q.uri === '/exports/us.tsv');
    const ranged = gets.filter((q) => q.status === 206 && q.range.startsWith('bytes='));
    assert.equal(ranged.length, gets.length, `every GET asks for a range: ${JSON.stringify(gets.filter((q) => q.status !== 206))}`);
    // One range per chunk to load, besides the scan's and the sample's.
    assert.ok(ranged.length >= report.chunks, `${ranged.length} range requests for ${report.chunks} chunks`);
  });

  test('a gzip is streamed once as it loads (after a sample of its start) and loads exactly', async () => {
    await freshTable('t_gz');
    const plan = await runCli(['plan', `${web.base}/exports/us.tsv.gz`, '--table', 't_gz', '--json'], { env: { DATABASE_URL: db.url } });
    assert.equal(plan.code, 0, plan.stderr);
    // Decompressed once as it is read: no spool of the whole input, only the sort's runs in --tmpdir.
    const source = (JSON.parse(plan.stdout) as { plan: { source: { source: string; over: string; read: string } } }).plan.source;
    assert.deepEqual({ source: source.source, over: source.over, read: source.read }, { source: `${web.base}/exports/us.tsv.gz`, over: 'http', read: 'streamed' });
    const before = web.requests().length;
    const r = await load(`${web.base}/exports/us.tsv.gz`, 't_gz');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { rows: number; inputBytes: number; inputBytesCompressed: number | null };
    assert.equal(report.rows, 20_000);
    assert.equal(report.inputBytes, readFileSync(tsv).length);
    assert.ok(report.inputBytesCompressed !== null && report.inputBytesCompressed < report.inputBytes);
    assert.deepEqual(await tableDigest(db.conn, 't_gz'), await tableDigest(db.conn, 'ref'));
    const size = readFileSync(`${tsv}.gz`).length;
    const gets = web.requests().slice(before).filter((q) => q.method === 'GET' && q.uri === '/exports/us.tsv.gz');
    // Its first 4 bytes (to see the compression), its start for the sample (the whole of a file this small: the
    // sample reads 1 MiB decompressed, then stops), then the one pass that loads it.
    assert.deepEqual(gets.map((q) => q.range), ['bytes=0-3', `bytes=0-${size - 1}`, `bytes=0-${size - 1}`], `GETs: ${JSON.stringify(gets)}`);
  });

  test('a zstd file is streamed once through the zstd program (or Node\'s own) and loads exactly', { skip: hasZstd ? false : 'the zstd program is not installed' }, async () => {
    execFileSync('zstd', ['-q', '-f', '-o', join(dir, 'exports', 'us.tsv.zst'), tsv]);
    await freshTable('t_zst');
    const r = await load(`${web.base}/exports/us.tsv.zst`, 't_zst');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rows: number }).rows, 20_000);
    assert.deepEqual(await tableDigest(db.conn, 't_zst'), await tableDigest(db.conn, 'ref'));
  });

  for (const [kind, file] of [['plain', 'us.tsv'], ['gzip', 'us.tsv.gz']] as const) {
    test(`connections cut at random moments: the ${kind} load completes, exact`, async () => {
      const proxy = await startCuttingProxy(web.port, { seed: kind === 'plain' ? 7 : 8, minBytes: kind === 'plain' ? 20_000 : 4_000, maxBytes: kind === 'plain' ? 400_000 : 60_000, maxCuts: 12 });
      try {
        const t = `t_cut_${kind}`;
        await freshTable(t);
        const r = await load(`${proxy.base}/exports/${file}`, t);
        assert.equal(r.code, 0, r.stderr);
        assert.ok(proxy.cuts() >= 3, `only ${proxy.cuts()} connections were cut`);
        assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'));
      } finally {
        await proxy.stop();
      }
    });
  }

  test('503 answers and cut connections are retried from the byte reached: the bytes read are the file\'s, exactly', async () => {
    const proxy = await startCuttingProxy(web.port, { seed: 11, minBytes: 10_000, maxBytes: 100_000, maxCuts: 8, unavailable: 3 });
    try {
      const obj = await openHttp(`${proxy.base}/exports/us.tsv`);
      const parts: Buffer[] = [];
      for await (const b of obj.read(0, obj.sizeBytes)) parts.push(b as Buffer);
      assert.ok(Buffer.concat(parts).equals(readFileSync(tsv)), 'the bytes read equal the file');
      assert.ok(proxy.cuts() >= 3, `only ${proxy.cuts()} connections were cut`);
      assert.equal(proxy.unavailableServed(), 3);
    } finally {
      await proxy.stop();
    }
  });

  test('a 206 whose Content-Range starts before the byte asked for stops the load naming both ranges; nothing misread is loaded', { timeout: 120_000 }, async () => {
    const server = await startFaultyServer(readFileSync(tsv), 'rounded');
    try {
      await freshTable('t_rounded');
      const r = await load(`${server.base}/us.tsv`, 't_rounded', ['--order', 'file']);
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, new RegExp(`${server.base}/us\\.tsv answered bytes=(\\d+)-\\d+ with Content-Range .*bytes \\d+-\\d+/\\d+`));
      assert.match(r.stderr, /6 attempts in a row/);
      assert.equal(await rowsNotInRef('t_rounded'), 0);
      // In-process, a read at a position the server rounds is refused the same way.
      const obj = await openHttp(`${server.base}/us.tsv`);
      await assert.rejects(
        async () => {
          for await (const _ of obj.read(70_000, 80_000)) void _;
        },
        (err: Error & { code?: string }) => err.code === 'INPUT_UNREADABLE' && err.message.includes('answered bytes=70000-79999 with Content-Range "bytes 65536-79999/'),
      );
    } finally {
      await server.stop();
    }
  });

  test('a 206 for the wrong range once, the right one when asked again: the load completes, exact', { timeout: 120_000 }, async () => {
    const server = await startFaultyServer(readFileSync(tsv), 'rounded-once');
    try {
      await freshTable('t_rounded_once');
      const r = await load(`${server.base}/us.tsv`, 't_rounded_once', ['--order', 'file']);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(server.requests.some((q) => q.range !== '-' && !q.range.startsWith('bytes=0-')), 'ranges after the start were asked');
      assert.deepEqual(await tableDigest(db.conn, 't_rounded_once'), await tableDigest(db.conn, 'ref'));
    } finally {
      await server.stop();
    }
  });

  for (const fault of ['gzip', 'gzip-get'] as const) {
    test(`a server that gzips its answers anyway (${fault === 'gzip' ? 'HEAD and GET' : 'GET only'}) is refused, naming the encoding; nothing is loaded`, { timeout: 60_000 }, async () => {
      const server = await startFaultyServer(readFileSync(tsv), fault);
      try {
        await freshTable('t_encoded');
        const r = await load(`${server.base}/us.tsv`, 't_encoded');
        assert.equal(r.code, 5, r.stderr);
        assert.match(r.stderr, /Content-Encoding: gzip though flatload asked for none \(Accept-Encoding: identity\)/);
        assert.equal(await countRows(db.conn, 't_encoded'), 0);
        assert.ok(server.requests.length > 0 && server.requests.every((q) => q.acceptEncoding === 'identity'), JSON.stringify(server.requests));
      } finally {
        await server.stop();
      }
    });
  }

  test('an object replaced while it is read stops the read (If-Match), naming the change', async () => {
    const path = join(dir, 'exports', 'moving.tsv');
    writeFileSync(path, readFileSync(tsv));
    const obj = await openHttp(`${web.base}/exports/moving.tsv`);
    assert.ok(obj.etag, 'nginx sends an ETag');
    writeFileSync(path, Buffer.concat([readFileSync(tsv), Buffer.from('1\t2\n')]));
    const buf = Buffer.alloc(1000);
    await assert.rejects(
      async () => {
        for await (const _ of obj.read(0, 1000)) void buf;
      },
      (err: Error & { code?: string }) => err.code === 'INPUT_CHANGED' && /replaced|bytes now/.test(err.message),
    );
    assert.ok(obj.changed);
  });

  test('the object replaced between a killed run and its rerun: the resume is refused, naming the change', async () => {
    const path = join(dir, 'exports', 'replaced.tsv');
    await generateToFile(path, { table: 'user_summary', rows: 30_000, seed: 29 });
    await freshTable('t_repl');
    const args = ['load', `${web.base}/exports/replaced.tsv`, '--table', 't_repl', '--chunk-size', '16KiB', '--jobs', '1', '--progress', 'none'];
    const s = spawnCli(args, { DATABASE_URL: db.url });
    let exited = false;
    void s.done.then(() => (exited = true));
    for (let i = 0; i < 400 && !exited; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const [c] = await db.conn.query('SELECT COUNT(*) AS n FROM t_repl');
      if (Number((c as Array<{ n: number }>)[0]!.n) > 3000) break;
    }
    s.child.kill('SIGKILL');
    const first = await s.done;
    assert.equal(first.signal, 'SIGKILL', `the first run was to be killed mid-load: ${first.stderr}`);
    // A new version of the object, one second later (Last-Modified has whole seconds).
    await new Promise((r) => setTimeout(r, 1100));
    await generateToFile(path, { table: 'user_summary', rows: 30_001, seed: 29 });
    const refused = await runCli(args, { env: { DATABASE_URL: db.url } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /unfinished load .* differs/);
    assert.match(refused.stderr, /input size/);
    assert.match(refused.stderr, /ETag/);
  });

  test('credentials: wrong ones are a connection error (exit 6), right ones load; the password is printed nowhere', async () => {
    await freshTable('t_auth');
    const wrong = await load(`http://reader:wrong-${PASSWORD}@127.0.0.1:${web.port}/private/us.tsv`, 't_auth');
    assert.equal(wrong.code, 6, wrong.stderr);
    assert.match(wrong.stderr, /401/);
    assert.doesNotMatch(wrong.stderr + wrong.stdout, new RegExp(PASSWORD));
    const right = await load(`http://reader:${PASSWORD}@127.0.0.1:${web.port}/private/us.tsv`, 't_auth', ['--keep-history']);
    assert.equal(right.code, 0, right.stderr);
    assert.doesNotMatch(right.stderr + right.stdout, new RegExp(PASSWORD));
    assert.deepEqual(await tableDigest(db.conn, 't_auth'), await tableDigest(db.conn, 'ref'));
    const plan = await runCli(['plan', `http://reader:${PASSWORD}@127.0.0.1:${web.port}/private/us.tsv`, '--table', 't_auth'], { env: { DATABASE_URL: db.url } });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /source: +http:\/\/reader:\*\*\*@127\.0\.0\.1:\d+\/private\/us\.tsv \(http\): read by byte ranges in parallel over HTTP/);
    assert.doesNotMatch(plan.stdout + plan.stderr, new RegExp(PASSWORD));
    const [jobs] = await db.conn.query('SELECT * FROM flatload_jobs');
    assert.doesNotMatch(JSON.stringify(jobs), new RegExp(PASSWORD), 'the bookkeeping holds no password');
    // A compressed object decompressed as it loads, in file order: its note names it masked too.
    await freshTable('t_auth_gz');
    const gz = await load(`http://reader:${PASSWORD}@127.0.0.1:${web.port}/private/us.tsv.gz`, 't_auth_gz', ['--order', 'file']);
    assert.equal(gz.code, 0, gz.stderr);
    assert.match(gz.stderr, /decompressing http:\/\/reader:\*\*\*@127\.0\.0\.1:\d+\/private\/us\.tsv\.gz \(gzip\) once as it is loaded/);
    assert.doesNotMatch(gz.stderr + gz.stdout, new RegExp(PASSWORD));
    assert.deepEqual(await tableDigest(db.conn, 't_auth_gz'), await tableDigest(db.conn, 'ref'));
  });

  test('a load from a password URL that fails on its input prints the URL masked, in text and in JSON', async () => {
    // The header names a column the table lacks: the error's context carries the input as the user named it.
    writeFileSync(join(dir, 'private', 'badhead.tsv'), 'no_such_column\tother\n1\t2\n');
    await freshTable('t_badhead');
    const url = `http://reader:${PASSWORD}@127.0.0.1:${web.port}/private/badhead.tsv`;
    for (const extra of [[], ['--json']]) {
      const r = await runCli(['load', url, '--table', 't_badhead', '--columns', 'header', '--progress', 'none', ...extra], { env: { DATABASE_URL: db.url } });
      assert.notEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, /reader:\*\*\*@127\.0\.0\.1/);
      assert.doesNotMatch(r.stderr + r.stdout, new RegExp(PASSWORD));
    }
  });

  test('a directory URL the server lists as JSON (nginx autoindex) is a whole export; credentials masked in its report', async () => {
    const x = await createTestDatabase('httpx');
    try {
      await x.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE users'));
      const r = await runCli(['load', `http://reader:${PASSWORD}@127.0.0.1:${web.port}/private/dump/`, '--create-tables', '--jobs', '2', '--chunk-size', '64KiB', '--progress', 'none', '--json'], { env: { DATABASE_URL: x.url } });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, new RegExp(PASSWORD));
      const report = JSON.parse(r.stdout) as { status: string; tables: Array<{ table: string; files: string[] }> };
      assert.equal(report.status, 'ok');
      assert.deepEqual(report.tables.map((t) => t.table).sort(), [`${x.name}.orders`, `${x.name}.users`]);
      assert.ok(report.tables.every((t) => t.files.every((f) => f.startsWith('http://reader:***@'))), JSON.stringify(report.tables));
      for (const t of ['orders', 'users']) assert.deepEqual(await tableDigest(x.conn, t), await tableDigest(db.conn, 'ref'), t);
      const plainIndex = await runCli(['load', `${web.base}/`, '--progress', 'none'], { env: { DATABASE_URL: x.url } });
      assert.notEqual(plainIndex.code, 0);
    } finally {
      await x.drop();
    }
  });
});

/**
 * The redirects of the tests below, as a server block's locations: relative
 * Locations (`absolute_redirect off` sends them as written) and absolute ones
 * (nginx's default), every status a client follows, a loop, an endless chain,
 * and redirects to `other`, a second nginx on another port: another origin.
 */
function redirectLocations(other: number): string {
  const rel = (from: string, status: number, to: string): string => `location = ${from} { absolute_redirect off; return ${status} ${to}; }`;
  return [
    rel('/r/plain', 302, '/exports/us.tsv'),
    rel('/r/gz', 302, '../exports/us.tsv.gz'),
    // A chain through all five statuses, relative and absolute Locations mixed.
    'location = /r/a { return 301 /r/b; }',
    rel('/r/b', 307, 'c'),
    'location = /r/c { return 308 /r/d; }',
    rel('/r/d', 303, '/r/e'),
    rel('/r/e', 302, '/exports/us.tsv'),
    rel('/r/loop1', 302, '/r/loop2'),
    rel('/r/loop2', 302, '/r/loop1'),
    'location ~ ^/r/deep/([0-9/]+)$ { absolute_redirect off; return 302 /r/deep/$1/0; }',
    rel('/r/private', 302, '/private/us.tsv'),
    rel('/r/missing', 302, '/exports/no-such.tsv'),
    rel('/r/dump/', 302, '/private/dump/'),
    `location = /r/elsewhere { return 302 http://127.0.0.1:${other}/exports/us.tsv; }`,
    `location = /r/elsewhere-private { return 302 http://127.0.0.1:${other}/private/us.tsv; }`,
    // Served over TLS too: from https to plain http.
    `location = /r/downgrade { return 302 http://127.0.0.1:${other}/exports/us.tsv; }`,
  ].join('\n    ');
}

describe('HTTP redirects (nginx)', { skip }, () => {
  let front: Nginx;
  let other: Nginx;
  let pki: TestPki;
  const auth = { user: 'reader', password: PASSWORD };
  before(async () => {
    if (skip) return;
    pki = makeTestPki();
    other = await startNginx(dir, auth);
    front = await startNginx(dir, auth, { locations: redirectLocations(other.port), tls: { cert: pki.serverCert, key: pki.serverKey } });
  });
  after(async () => {
    if (skip) return;
    await front.stop();
    await other.stop();
    pki.remove();
  });

  test('a relative redirect is followed for the HEAD and for every ranged GET, each time from the URL named; the job is the named URL with the target\'s version', async () => {
    await freshTable('t_redir');
    const before = front.requests().length;
    const r = await load(`${front.base}/r/plain`, 't_redir', ['--order', 'file']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rows: number }).rows, 20_000);
    assert.deepEqual(await tableDigest(db.conn, 't_redir'), await tableDigest(db.conn, 'ref'));
    const seen = front.requests().slice(before);
    const redirected = seen.filter((q) => q.uri === '/r/plain' && q.status === 302);
    const ranged = seen.filter((q) => q.uri === '/exports/us.tsv' && q.method === 'GET' && q.status === 206);
    assert.ok(seen.some((q) => q.method === 'HEAD' && q.uri === '/exports/us.tsv' && q.status === 200), 'the HEAD followed the redirect');
    assert.ok(ranged.length > 5, `ranged GETs: ${ranged.length}`);
    // One redirect per request: the HEAD and each GET started at the URL named.
    assert.equal(redirected.length, ranged.length + 1, JSON.stringify(seen.map((q) => `${q.method} ${q.uri} ${q.status}`)));
    const [rows] = await db.conn.query(`SELECT input_path, identity FROM flatload_jobs WHERE target = ?`, [`${db.name}.t_redir`]);
    const job = (rows as Array<{ input_path: string; identity: string | { input: { etag?: string } } }>)[0]!;
    assert.equal(job.input_path, `${front.base}/r/plain`);
    const identity = typeof job.identity === 'string' ? (JSON.parse(job.identity) as { input: { etag?: string } }) : job.identity;
    const head = await fetch(`${front.base}/exports/us.tsv`, { method: 'HEAD' });
    assert.equal(identity.input.etag, head.headers.get('etag'), 'the identity holds the ETag of the object the redirect led to');
  });

  test('a chain through 301, 307, 308, 303 and 302, relative and absolute Locations: the gzip behind it loads exactly', async () => {
    await freshTable('t_chain');
    const r = await load(`${front.base}/r/a`, 't_chain');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest(db.conn, 't_chain'), await tableDigest(db.conn, 'ref'));
    await freshTable('t_chain_gz');
    const gz = await load(`${front.base}/r/gz`, 't_chain_gz');
    assert.equal(gz.code, 0, gz.stderr);
    assert.deepEqual(await tableDigest(db.conn, 't_chain_gz'), await tableDigest(db.conn, 'ref'));
  });

  test('a redirect loop and an endless chain stop with exit 5, naming the URLs; a missing target names both URLs', async () => {
    await freshTable('t_loop');
    const loop = await load(`${front.base}/r/loop1`, 't_loop');
    assert.equal(loop.code, 5, loop.stderr);
    assert.ok(loop.stderr.includes(`redirect loop: ${front.base}/r/loop1 → ${front.base}/r/loop2 → ${front.base}/r/loop1`), loop.stderr);
    const deep = await load(`${front.base}/r/deep/1`, 't_loop');
    assert.equal(deep.code, 5, deep.stderr);
    assert.match(deep.stderr, /more than 10 redirects: .*\/r\/deep\/1 → .*\/r\/deep\/1\/0 → /);
    const missing = await load(`${front.base}/r/missing`, 't_loop');
    assert.equal(missing.code, 5, missing.stderr);
    assert.ok(missing.stderr.includes(`HTTP 404 Not Found from ${front.base}/r/missing (redirected to ${front.base}/exports/no-such.tsv)`), missing.stderr);
    assert.equal(await countRows(db.conn, 't_loop'), 0);
  });

  test('credentials go with a redirect on the same origin, never to another one (another port); unprotected objects there load', async () => {
    await freshTable('t_same');
    const same = await load(`http://reader:${PASSWORD}@127.0.0.1:${front.port}/r/private`, 't_same');
    assert.equal(same.code, 0, same.stderr);
    assert.deepEqual(await tableDigest(db.conn, 't_same'), await tableDigest(db.conn, 'ref'));
    const otherBefore = other.requests().length;
    await freshTable('t_other');
    const refused = await load(`http://reader:${PASSWORD}@127.0.0.1:${front.port}/r/elsewhere-private`, 't_other');
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /HTTP 401 .*redirected to http:\/\/127\.0\.0\.1:\d+\/private\/us\.tsv/);
    assert.match(refused.stderr, /go only to the server it names/);
    assert.doesNotMatch(refused.stderr + refused.stdout, new RegExp(PASSWORD));
    const asked = other.requests().slice(otherBefore);
    assert.ok(asked.length > 0 && asked.every((q) => q.user === '-'), `the other origin was sent no user: ${JSON.stringify(asked)}`);
    const open = await load(`http://reader:${PASSWORD}@127.0.0.1:${front.port}/r/elsewhere`, 't_other');
    assert.equal(open.code, 0, open.stderr);
    assert.deepEqual(await tableDigest(db.conn, 't_other'), await tableDigest(db.conn, 'ref'));
    assert.ok(other.requests().slice(otherBefore).every((q) => q.user === '-'), 'still no user sent to the other origin');
  });

  test('a directory listing behind a redirect: its names are relative to where the redirect led, with the credentials of that origin', async () => {
    const x = await createTestDatabase('httpr');
    try {
      await x.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE users'));
      const r = await runCli(['load', `http://reader:${PASSWORD}@127.0.0.1:${front.port}/r/dump/`, '--create-tables', '--progress', 'none', '--json'], { env: { DATABASE_URL: x.url } });
      assert.equal(r.code, 0, r.stderr);
      for (const t of ['orders', 'users']) assert.deepEqual(await tableDigest(x.conn, t), await tableDigest(db.conn, 'ref'), t);
    } finally {
      await x.drop();
    }
  });

  test('https redirected to plain http is refused (exit 5), naming both; https to https is followed', async () => {
    const env = { DATABASE_URL: db.url, NODE_EXTRA_CA_CERTS: pki.ca };
    await freshTable('t_tls');
    const args = (url: string): string[] => ['load', url, '--table', 't_tls', '--progress', 'none'];
    const down = await runCli(args(`${front.tlsBase!}/r/downgrade`), { env });
    assert.equal(down.code, 5, down.stderr);
    assert.ok(down.stderr.includes(`redirected from https to plain http (${front.tlsBase!}/r/downgrade → http://127.0.0.1:${other.port}/exports/us.tsv)`), down.stderr);
    assert.equal(await countRows(db.conn, 't_tls'), 0);
    const up = await runCli(args(`${front.tlsBase!}/r/plain`), { env });
    assert.equal(up.code, 0, up.stderr);
    assert.deepEqual(await tableDigest(db.conn, 't_tls'), await tableDigest(db.conn, 'ref'));
  });
});

describe('signed URLs (nginx)', { skip }, () => {
  // nginx serves a static file whatever its query: these stand for an S3 presigned URL, signed twice.
  const KEY_ID = 'AKIAFLATLOADTEST';
  const SIG = ['c0ffee'.repeat(10) + 'aaaa', 'deadbeef'.repeat(8)];
  const sign = (date: string, sig: string): string =>
    `${web.base}/exports/signed.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${KEY_ID}%2F${date.slice(0, 8)}%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=${date}&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=${sig}`;
  const secretIn = (text: string): string | undefined => [KEY_ID, ...SIG].find((s) => text.includes(s));

  test('the signature is printed nowhere (ps, resume command, status, bookkeeping, errors); a freshly signed URL resumes the load exactly', { timeout: 180_000 }, async () => {
    const path = join(dir, 'exports', 'signed.tsv');
    await fileAndReference(path, 't_signed', 31);
    const env = { DATABASE_URL: db.url };
    const args = (url: string): string[] => ['load', url, '--table', 't_signed', '--chunk-size', '16KiB', '--jobs', '1', '--progress', 'none'];
    const s = spawnCli(args(sign('20261203T010203Z', SIG[0]!)), env);
    let cmdline = '';
    await pollUntil('3,000 rows loaded', async () => {
      if (cmdline === '' || !cmdline.includes('xxxx')) cmdline = readFileSync(`/proc/${s.child.pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      return (await countRows(db.conn, 't_signed')) > 3000;
    }, { process: s, everyMs: 25 });
    s.child.kill('SIGINT');
    const stopped = await s.done;
    assert.equal(stopped.code, 4, stopped.stderr);
    assert.equal(secretIn(stopped.stderr + stopped.stdout), undefined, stopped.stderr);
    assert.equal(secretIn(cmdline), undefined, `ps: ${cmdline}`);
    assert.match(cmdline, /X-Amz-Signature=x{64}/);
    // The resume command: the URL with *** for what is not repeated, and a note to put a fresh one in its place.
    const resume = /resume with: (.*)/.exec(stopped.stderr)?.[1] ?? '';
    assert.match(resume, /flatload load 'http:\/\/127\.0\.0\.1:\d+\/exports\/signed\.tsv\?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=\*\*\*&X-Amz-Date=\*\*\*&X-Amz-Expires=\*\*\*&X-Amz-SignedHeaders=host&X-Amz-Signature=\*\*\*' --table t_signed/);
    assert.match(resume, /# \*\*\* marks what is not repeated: put a freshly signed URL of the same object in place of the input URL$/);
    for (const extra of [[], ['--json']]) {
      const st = await runCli(['status', '--table', 't_signed', ...extra], { env });
      assert.equal(st.code, 0, st.stderr);
      assert.ok(st.stdout.includes('X-Amz-Signature=***'), st.stdout);
      assert.equal(secretIn(st.stdout + st.stderr), undefined, st.stdout);
    }
    const [jobs] = await db.conn.query('SELECT * FROM flatload_jobs WHERE target = ?', [`${db.name}.t_signed`]);
    assert.equal(secretIn(JSON.stringify(jobs)), undefined, 'the bookkeeping holds no signature');
    // Pasted as printed: refused before any request, saying what to do.
    const asPrinted = /'(http:[^']*)'/.exec(resume)![1]!;
    const pasted = await runCli(args(asPrinted), { env });
    assert.equal(pasted.code, 2, pasted.stderr);
    assert.match(pasted.stderr, /X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-Signature are \*\*\*, the placeholder a printed resume command shows/);
    // A fresh signature, a day later: the same input, so the same job, resumed.
    const again = await runCli(args(sign('20261204T235959Z', SIG[1]!)), { env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /resuming job/);
    assert.equal(secretIn(again.stdout + again.stderr), undefined, again.stdout);
    assert.deepEqual(await tableDigest(db.conn, 't_signed'), await tableDigest(db.conn, 't_signed_ref'));
    // An error names the URL masked, in text and in JSON.
    for (const extra of [[], ['--json']]) {
      const missing = await runCli([...args(sign('20261205T000000Z', SIG[0]!).replace('signed.tsv', 'no-such.tsv')), ...extra], { env });
      assert.equal(missing.code, 5, missing.stderr);
      assert.ok((missing.stderr + missing.stdout).includes('no-such.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***'), missing.stderr + missing.stdout);
      assert.equal(secretIn(missing.stderr + missing.stdout), undefined, missing.stderr);
    }
  });
});

/**
 * Servers that refuse HEAD, as S3 and Google Cloud Storage do for a URL signed
 * for GET (the signature covers the method): 403, 405 or 501 to HEAD in its own
 * location, the GET served as nginx serves it; and a location that refuses
 * every method.
 */
function headRefusingLocations(): string {
  return [
    ...[403, 405, 501].map((s) => `location /nohead${s}/ { if ($request_method = HEAD) { return ${s}; } }`),
    // Without byte ranges too (max_ranges 0: a Range is answered 200 with the whole file).
    'location /noheadnoranges/ { max_ranges 0; if ($request_method = HEAD) { return 405; } }',
    'location /denied/ { return 403; }',
  ].join('\n    ');
}

describe('servers that refuse HEAD (nginx)', { skip }, () => {
  let nohead: Nginx;
  before(async () => {
    if (skip) return;
    for (const d of ['nohead403', 'nohead405', 'nohead501', 'noheadnoranges', 'denied']) {
      mkdirSync(join(dir, d));
      writeFileSync(join(dir, d, 'us.tsv'), readFileSync(tsv));
    }
    writeFileSync(join(dir, 'noheadnoranges', 'us.tsv.gz'), gzipSync(readFileSync(tsv)));
    writeFileSync(join(dir, 'nohead403', 'users.txt'), readFileSync(tsv));
    writeFileSync(join(dir, 'nohead403', 'orders.txt'), readFileSync(tsv));
    nohead = await startNginx(dir, undefined, { locations: headRefusingLocations() });
  });
  after(async () => {
    if (skip) return;
    await nohead.stop();
  });
  const requestsFor = (uri: string, since: number): ReturnType<Nginx['requests']> => nohead.requests().slice(since).filter((q) => q.uri === uri);
  const show = (qs: ReturnType<Nginx['requests']>): string => JSON.stringify(qs.map((q) => `${q.method} ${q.status} ${q.range}`));

  for (const status of [403, 405, 501]) {
    test(`HEAD answered ${status}: the size and version come from a GET of the first byte, and the load is exact`, async () => {
      const t = `t_nohead${status}`;
      await freshTable(t);
      const since = nohead.requests().length;
      const r = await load(`${nohead.base}/nohead${status}/us.tsv`, t);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'));
      const seen = requestsFor(`/nohead${status}/us.tsv`, since);
      // The HEAD once, refused; then the probe: GET bytes=0-0 answered 206; no HEAD again.
      assert.deepEqual(seen.slice(0, 2).map((q) => `${q.method} ${q.status} ${q.range}`), [`HEAD ${status} -`, 'GET 206 bytes=0-0'], show(seen));
      assert.equal(seen.filter((q) => q.method === 'HEAD').length, 1, show(seen));
      assert.ok(seen.slice(1).every((q) => q.method === 'GET' && q.status === 206), show(seen));
    });
  }

  test('HEAD refused by a server without byte ranges: the probe\'s 200 is cut off, the file streamed once as such a server\'s is; plain and gzip exact', async () => {
    for (const file of ['us.tsv', 'us.tsv.gz']) {
      const t = `t_noranges_${file.replace(/\./g, '_')}`;
      await freshTable(t);
      const since = nohead.requests().length;
      const r = await load(`${nohead.base}/noheadnoranges/${file}`, t);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, 'ref'), file);
      const seen = requestsFor(`/noheadnoranges/${file}`, since);
      assert.deepEqual(seen.slice(0, 2).map((q) => `${q.method} ${q.status} ${q.range}`), ['HEAD 405 -', 'GET 200 bytes=0-0'], show(seen));
      // After the probe, whole reads without a Range (a server that ignores them is not asked for one).
      assert.ok(seen.length > 2 && seen.slice(2).every((q) => q.method === 'GET' && q.status === 200 && q.range === '-'), show(seen));
    }
  });

  test('an export of URLs whose HEAD is refused: each is asked HEAD once, its later opens go straight to GET', async () => {
    const x = await createTestDatabase('nohead');
    try {
      for (const t of ['users', 'orders']) await x.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${t}`));
      const since = nohead.requests().length;
      const r = await runCli(['load', `${nohead.base}/nohead403/users.txt`, `${nohead.base}/nohead403/orders.txt`, '--jobs', '2', '--chunk-size', '64KiB', '--progress', 'none', '--json'], { env: { DATABASE_URL: x.url } });
      assert.equal(r.code, 0, r.stderr);
      for (const t of ['users', 'orders']) {
        assert.deepEqual(await tableDigest(x.conn, t), await tableDigest(db.conn, 'ref'), t);
        const seen = requestsFor(`/nohead403/${t}.txt`, since);
        // Opened twice (the export's discovery, then the table's load): a probe each time, a HEAD the first time only.
        assert.equal(seen.filter((q) => q.method === 'HEAD').length, 1, show(seen));
        assert.equal(seen[0]!.method, 'HEAD', show(seen));
        assert.ok(seen.filter((q) => q.method === 'GET' && q.range === 'bytes=0-0').length >= 2, show(seen));
      }
    } finally {
      await x.drop();
    }
  });

  test('interrupted over a URL whose HEAD is refused, then run again: the load resumes, exact', { timeout: 180_000 }, async () => {
    const path = join(dir, 'nohead405', 'resumed.tsv');
    await fileAndReference(path, 't_nohead_resume', 37);
    const env = { DATABASE_URL: db.url };
    const args = ['load', `${nohead.base}/nohead405/resumed.tsv`, '--table', 't_nohead_resume', '--chunk-size', '16KiB', '--jobs', '1', '--progress', 'none'];
    const since = nohead.requests().length;
    const s = spawnCli(args, env);
    await pollUntil('3,000 rows loaded', async () => (await countRows(db.conn, 't_nohead_resume')) > 3000, { process: s, everyMs: 25 });
    s.child.kill('SIGINT');
    const stopped = await s.done;
    assert.equal(stopped.code, 4, stopped.stderr);
    const rerunSince = nohead.requests().length;
    const again = await runCli(args, { env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /resuming job/);
    assert.deepEqual(await tableDigest(db.conn, 't_nohead_resume'), await tableDigest(db.conn, 't_nohead_resume_ref'));
    // Each run: one HEAD, refused, as its first request; GETs after it.
    for (const seen of [requestsFor('/nohead405/resumed.tsv', since).slice(0, rerunSince - since), requestsFor('/nohead405/resumed.tsv', rerunSince)]) {
      assert.deepEqual(seen.filter((q) => q.method === 'HEAD').map((q) => q.status), [405], show(seen));
      assert.equal(seen[0]!.method, 'HEAD', show(seen));
    }
  });

  test('a URL signed for GET (S3 SigV4, Google V4) is never asked HEAD: its signature would refuse it', async () => {
    const sigs = ['X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAFLATLOAD%2F20261203%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261203T010203Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=' + 'ab'.repeat(32), 'X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=loader%40p.iam.gserviceaccount.com%2F20261203%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20261203T010203Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=' + 'cd'.repeat(64)];
    for (const query of sigs) {
      const since = nohead.requests().length;
      const obj = await openHttp(`${nohead.base}/nohead403/us.tsv?${query}`);
      const parts: Buffer[] = [];
      for await (const b of obj.read(0, obj.sizeBytes)) parts.push(b as Buffer);
      assert.ok(Buffer.concat(parts).equals(readFileSync(tsv)), 'the bytes read equal the file');
      const seen = requestsFor('/nohead403/us.tsv', since);
      assert.deepEqual(seen.slice(0, 1).map((q) => `${q.method} ${q.status} ${q.range}`), ['GET 206 bytes=0-0'], show(seen));
      assert.ok(seen.every((q) => q.method === 'GET'), show(seen));
    }
  });

  test('refused to every method: exit 6 naming the 403, with the hint (credentials, or the signature for a signed URL); nothing loaded', async () => {
    await freshTable('t_denied');
    for (const [query, hint] of [
      ['', /check the user and password in the URL/],
      ['?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261203T010203Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=' + 'ef'.repeat(32), /signature .*expired/],
    ] as const) {
      const since = nohead.requests().length;
      const r = await load(`${nohead.base}/denied/us.tsv${query}`, 't_denied');
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, /HTTP 403 Forbidden from http:\/\/127\.0\.0\.1:\d+\/denied\/us\.tsv/);
      assert.match(r.stderr, hint);
      assert.doesNotMatch(r.stderr, /efefefef/);
      const seen = requestsFor('/denied/us.tsv', since);
      assert.ok(seen.some((q) => q.method === 'GET' && q.status === 403), `the GET was asked too: ${show(seen)}`);
    }
    assert.equal(await countRows(db.conn, 't_denied'), 0);
  });
});
