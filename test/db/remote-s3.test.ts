import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as net from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ddl, generateToFile, loadDataOptions } from '../../fixtures/generate.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';
import { openS3 } from '../../src/input/s3.js';
import { startCuttingProxy } from '../support/http.js';
import { startS3, type S3Server } from '../support/s3.js';
import { prng, spawnCli } from '../support/spawn.js';

let db: TestDatabase;
let dir: string;
let s3: S3Server;
let tsv: string;

before(async () => {
  db = await createTestDatabase('s3');
  dir = mkdtempSync(join(tmpdir(), 'flatload-s3t-'));
  tsv = join(dir, 'us.tsv');
  await generateToFile(tsv, { table: 'user_summary', rows: 20_000, seed: 31 });
  await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE ref'));
  await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ref ${loadDataOptions('tsv')}`, [tsv]);
  s3 = await startS3(['exports']);
  await s3.put('exports', 'nightly/us.tsv', readFileSync(tsv));
  await s3.put('exports', 'nightly/us.tsv.gz', gzipSync(readFileSync(tsv)));
  // A whole export under a prefix: two tables with their CREATE TABLE files, one of them split in two parts (one gzipped).
  const bytes = readFileSync(tsv);
  const half = bytes.indexOf(0x0a, bytes.length >> 1) + 1;
  await s3.put('exports', 'night/us.sql', Buffer.from(`${ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE us')};\n`));
  await s3.put('exports', 'night/us.txt', bytes);
  await s3.put('exports', 'night/us2.sql', Buffer.from(`${ddl('user_summary').replace('CREATE TABLE user_summary', 'CREATE TABLE us2')};\n`));
  await s3.put('exports', 'night/us2.000.txt.gz', gzipSync(bytes.subarray(0, half)));
  await s3.put('exports', 'night/us2.001.txt', bytes.subarray(half));
  await s3.put('exports', 'night/notes.md', Buffer.from('not data'));
});
after(async () => {
  await s3.stop();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function freshTable(name: string): Promise<void> {
  await db.conn.query(`DROP TABLE IF EXISTS ${name}`);
  await db.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${name}`));
}

/** Rows of `table` that are not rows of ref (all columns compared): any is a row misread. */
async function rowsNotInRef(table: string): Promise<number> {
  const cols = ['user_id', 'weight', 'level', 'beat_rate', 'level_num'].map((c) => `r.${c} <=> t.${c}`).join(' AND ');
  const [r] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${table} t LEFT JOIN ref r ON ${cols} WHERE r.user_id IS NULL`);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

function load(url: string, table: string, env: Record<string, string>, extra: string[] = []): ReturnType<typeof runCli> {
  return runCli(['load', url, '--table', table, '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none', '--json', ...extra], { env: { DATABASE_URL: db.url, ...env } });
}

/**
 * A TCP proxy in front of the S3 server that forwards the first `budget`
 * bytes of answers (all connections together), then nothing more, keeping
 * every connection open: an endpoint that stalls, mid-body or before any
 * answer, without a reset the client would see.
 */
async function startStallingProxy(targetPort: number, budget: number): Promise<{ base: string; forwarded(): number; stop(): Promise<void> }> {
  let forwarded = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => (client.destroy(), upstream.destroy()));
    }
    client.on('data', (d: Buffer) => upstream.write(d));
    upstream.on('data', (d: Buffer) => {
      const take = Math.max(0, Math.min(d.length, budget - forwarded));
      forwarded += take;
      if (take > 0) client.write(d.subarray(0, take));
    });
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  return {
    base: `http://127.0.0.1:${port}`,
    forwarded: () => forwarded,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('S3 sources (s3rver)', () => {
  // The timeout is 1 s here (FLATLOAD_TEST_REMOTE_TIMEOUT_MS), 60 s in use: a stall costs each test seconds.
  for (const [where, budget] of [
    ['before any answer (HeadObject)', 0],
    ['in the middle of a body', 300_000],
  ] as const) {
    test(`an endpoint that stalls ${where} fails the load in bounded time, naming the object`, { timeout: 90_000 }, async () => {
      const proxy = await startStallingProxy(s3.port, budget);
      try {
        await freshTable('t_stall');
        const began = Date.now();
        const r = await runCli(['load', 's3://exports/nightly/us.tsv', '--table', 't_stall', '--chunk-size', '64KiB', '--jobs', '2', '--progress', 'none'], {
          env: { DATABASE_URL: db.url, ...s3.env(), AWS_ENDPOINT_URL_S3: proxy.base, FLATLOAD_TEST_REMOTE_TIMEOUT_MS: '1000' },
          timeoutMs: 80_000,
        });
        const took = Date.now() - began;
        assert.equal(r.signal, null, `the load hung (killed after ${took} ms): ${r.stderr}`);
        assert.equal(r.code, 5, r.stderr);
        assert.match(r.stderr, /cannot read s3:\/\/exports\/nightly\/us\.tsv/);
        assert.ok(took < 60_000, `the load took ${took} ms to fail`);
        if (budget > 0) {
          assert.equal(proxy.forwarded(), budget, 'the stall came after the answers began');
          assert.match(r.stderr, /attempts in a row/);
        }
        assert.equal(await rowsNotInRef('t_stall'), 0);
      } finally {
        await proxy.stop();
      }
    });
  }

  test('a GetObject answer for other bytes than the Range asked is refused (checked through its ContentRange)', { timeout: 30_000 }, async () => {
    // s3rver answers ranges truthfully: the answer is replaced in flight by a proxy that moves the Content-Range start.
    const proxy = net.createServer((client) => {
      const upstream = net.connect(s3.port, '127.0.0.1');
      for (const s of [client, upstream]) s.on('error', () => undefined).on('close', () => (client.destroy(), upstream.destroy()));
      client.on('data', (d: Buffer) => upstream.write(d));
      upstream.on('data', (d: Buffer) => client.write(Buffer.from(d.toString('latin1').replace(/(content-range: bytes )1000-/i, '$1999-'), 'latin1')));
    });
    const port = await new Promise<number>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve((proxy.address() as net.AddressInfo).port)));
    try {
      const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } = s3.env();
      Object.assign(process.env, { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY });
      const obj = await openS3('s3://exports/nightly/us.tsv', { endpoint: `http://127.0.0.1:${port}` });
      // A range elsewhere passes untouched.
      const parts: Buffer[] = [];
      for await (const b of obj.read(500, 900)) parts.push(b as Buffer);
      assert.ok(Buffer.concat(parts).equals(readFileSync(tsv).subarray(500, 900)));
      await assert.rejects(
        async () => {
          for await (const _ of obj.read(1000, 2000)) void _;
        },
        (err: Error & { code?: string }) => err.code === 'INPUT_UNREADABLE' && err.message.includes('s3://exports/nightly/us.tsv answered bytes=1000-1999 with Content-Range "bytes 999-1999/'),
      );
    } finally {
      proxy.close();
    }
  });

  test('a plain object is read by parallel byte ranges (path-style, through AWS_ENDPOINT_URL_S3)', async () => {
    const proxy = await startCuttingProxy(s3.port, { seed: 1, minBytes: 1, maxBytes: 2, maxCuts: 0 });
    try {
      await freshTable('t_plain');
      const r = await load('s3://exports/nightly/us.tsv', 't_plain', { ...s3.env(), AWS_ENDPOINT_URL_S3: proxy.base }, ['--order', 'file']);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { rows: number; chunks: number };
      assert.equal(report.rows, 20_000);
      assert.deepEqual(await tableDigest(db.conn, 't_plain'), await tableDigest(db.conn, 'ref'));
      const gets = proxy.requests().filter((q) => q.line.startsWith('GET /exports/nightly/us.tsv'));
      assert.ok(gets.every((q) => q.range.startsWith('bytes=')), 'every GET asks for a range');
      assert.ok(gets.length >= report.chunks, `${gets.length} range requests for ${report.chunks} chunks`);
    } finally {
      await proxy.stop();
    }
  });

  test('--s3-endpoint: a gzip object is streamed once and loads exactly', async () => {
    await freshTable('t_gz');
    const { AWS_ENDPOINT_URL_S3: _unused, ...env } = s3.env();
    const r = await load('s3://exports/nightly/us.tsv.gz', 't_gz', env, ['--s3-endpoint', s3.endpoint]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rows: number }).rows, 20_000);
    assert.deepEqual(await tableDigest(db.conn, 't_gz'), await tableDigest(db.conn, 'ref'));
  });

  test('connections cut at random moments: the load completes, exact', async () => {
    const proxy = await startCuttingProxy(s3.port, { seed: 5, minBytes: 20_000, maxBytes: 300_000, maxCuts: 10 });
    try {
      await freshTable('t_cut');
      const r = await load('s3://exports/nightly/us.tsv', 't_cut', { ...s3.env(), AWS_ENDPOINT_URL_S3: proxy.base });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(proxy.cuts() >= 3, `only ${proxy.cuts()} connections were cut`);
      assert.deepEqual(await tableDigest(db.conn, 't_cut'), await tableDigest(db.conn, 'ref'));
    } finally {
      await proxy.stop();
    }
  });

  test('an object replaced while it is read stops the read, naming the change (s3rver ignores If-Match: the answer\'s ETag is compared)', async () => {
    // This test opens the object in its own process: the SDK's chain finds the key in the environment.
    const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } = s3.env();
    Object.assign(process.env, { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY });
    await s3.put('exports', 'moving/us.tsv', readFileSync(tsv));
    const obj = await openS3('s3://exports/moving/us.tsv', { endpoint: s3.endpoint });
    assert.ok(obj.etag);
    await s3.put('exports', 'moving/us.tsv', Buffer.concat([readFileSync(tsv), Buffer.from('1\t2\n')]));
    await assert.rejects(
      async () => {
        for await (const _ of obj.read(0, 1000)) void _;
      },
      (err: Error & { code?: string }) => err.code === 'INPUT_CHANGED' && /ETag/.test(err.message),
    );
    assert.ok(obj.changed);
  });

  test('credentials S3 refuses are a connection error (exit 6), the secret printed nowhere; a missing object is exit 5', async () => {
    await freshTable('t_auth');
    // s3rver checks the access key id, not the SigV4 signature: an unknown key is what it can refuse.
    const secret = 'wr0ng-s3cret-value';
    const r = await load('s3://exports/nightly/us.tsv', 't_auth', s3.env({ id: 'AKIANOSUCHKEY', secret }));
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, /InvalidAccessKeyId|403/);
    assert.doesNotMatch(r.stderr + r.stdout, new RegExp(secret));
    assert.doesNotMatch(r.stderr, /Warning/, 'no SDK warning on Node 20');
    const missing = await load('s3://exports/nightly/none.tsv', 't_auth', s3.env());
    assert.equal(missing.code, 5, missing.stderr);
    assert.match(missing.stderr, /s3:\/\/exports\/nightly\/none\.tsv/);
  });

  test('an export interrupted after its tables loaded, one object uploaded again: the same bytes are already loaded, others stop it (exit 2)', { timeout: 120_000 }, async () => {
    const x = await createTestDatabase('s3r');
    try {
      const bytes = readFileSync(tsv);
      const rows = bytes.subarray(0, bytes.indexOf(0x0a, 4096) + 1);
      await s3.put('exports', 'again/ra.txt', rows);
      await s3.put('exports', 'again/rb.txt', rows);
      for (const t of ['ra', 'rb']) await x.conn.query(ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${t}`).replace('UNIQUE KEY', 'KEY'));
      const env = { DATABASE_URL: x.url, ...s3.env() };
      const args = ['load', 's3://exports/again/', '--progress', 'none', '--json'];
      const counts = async (): Promise<number[]> => {
        const [r] = await x.conn.query('SELECT (SELECT COUNT(*) FROM ra) AS a, (SELECT COUNT(*) FROM rb) AS b');
        const o = (r as Array<{ a: unknown; b: unknown }>)[0]!;
        return [Number(o.a), Number(o.b)];
      };
      const first = await runCli(args, { env });
      assert.equal(first.code, 0, first.stderr);
      const loaded = await counts();
      // Killed after every table loaded, before the export was marked done.
      await x.conn.query("UPDATE flatload_exports SET state = 'interrupted', phase = 'prepared'");
      await new Promise((r) => setTimeout(r, 1100)); // Last-Modified has whole seconds
      await s3.put('exports', 'again/ra.txt', Buffer.concat([rows.subarray(0, rows.length - 2), Buffer.from('9\n')]));
      const other = await runCli(args, { env });
      assert.equal(other.code, 2, other.stderr);
      assert.match(other.stderr, /ra\.txt .*its contents changed since/);
      assert.deepEqual(await counts(), loaded);
      await s3.put('exports', 'again/ra.txt', rows);
      const same = await runCli(args, { env });
      assert.equal(same.code, 0, same.stderr);
      assert.deepEqual(await counts(), loaded);
      const report = JSON.parse(same.stdout) as { notes: string[] };
      assert.ok(report.notes.some((n) => /ra\.txt has a new modification time but the same bytes/.test(n)), report.notes.join('\n'));
    } finally {
      await x.drop();
    }
  });

  test('a whole export under a prefix, killed three times at random moments and resumed with the same command: exact', { timeout: 240_000 }, async () => {
    const x = await createTestDatabase('s3x');
    try {
      const env = { DATABASE_URL: x.url, ...s3.env() };
      const args = ['load', 's3://exports/night/', '--create-tables', '--jobs', '2', '--chunk-size', '16KiB', '--keep-history', '--progress', 'none', '--json'];
      const committed = async (): Promise<number> => {
        const [t] = await x.conn.query("SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'flatload_chunks'");
        if (Number((t as Array<{ n: unknown }>)[0]!.n) === 0) return 0;
        const [c] = await x.conn.query('SELECT COUNT(*) AS n FROM flatload_chunks');
        return Number((c as Array<{ n: unknown }>)[0]!.n);
      };
      const rnd = prng(2828);
      let killed = 0;
      let last = '';
      for (let run = 1; run <= 12; run++) {
        const s = spawnCli(args, env);
        let exited = false;
        void s.done.then(() => (exited = true));
        if (killed < 3) {
          const target = (await committed()) + 2 + Math.floor(rnd() * 8);
          const until = Date.now() + 60_000;
          while (!exited && Date.now() < until && (await committed()) < target) await new Promise((r) => setTimeout(r, 3));
          await new Promise((r) => setTimeout(r, Math.floor(rnd() * 20)));
          if (!exited) s.child.kill('SIGKILL');
        }
        const r = await s.done;
        if (r.signal === 'SIGKILL') {
          killed++;
          continue;
        }
        assert.equal(r.code, 0, `run ${run}: ${r.stderr}`);
        last = r.stdout;
        break;
      }
      assert.equal(killed, 3, 'three runs were killed mid-load');
      const report = JSON.parse(last) as { status: string; tables: Array<{ table: string; resumedChunks: number }> };
      assert.equal(report.status, 'ok');
      assert.deepEqual(report.tables.map((t) => t.table).sort(), [`${x.name}.us`, `${x.name}.us2`]);
      assert.ok(report.tables.some((t) => t.resumedChunks > 0), 'the last run resumed a table part-way');
      for (const t of ['us', 'us2']) assert.deepEqual(await tableDigest(x.conn, t), await tableDigest(db.conn, 'ref'), t);
    } finally {
      await x.drop();
    }
  });
});
