import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng } from './spawn.js';

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for the server to take). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on the port; fails at the deadline or when `alive` says the server died. */
async function waitForPort(port: number, alive: () => boolean, deadlineMs: number, log: () => string): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (!alive()) throw new Error(`the server exited before it listened:\n${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1');
      c.once('connect', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`the server did not listen on ${port} within ${deadlineMs} ms:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

export interface Nginx {
  /** http://127.0.0.1:PORT */
  base: string;
  port: number;
  /** https://127.0.0.1:TLSPORT, the same server over TLS, when started with `tls`. */
  tlsBase: string | undefined;
  /** The directory it serves. */
  root: string;
  /** One line per request: `METHOD URI STATUS RANGE BYTES_SENT USER` (RANGE, USER `-` when none; USER the basic-auth user sent). */
  requests(): Array<{ method: string; uri: string; status: number; range: string; bytes: number; user: string }>;
  stop(): Promise<void>;
}

/**
 * Debian's nginx as a child process (no daemon, no master) with a generated
 * config in a temporary prefix, serving `root` on a free port: static files
 * with byte ranges, ETag and If-Match as nginx gives them, directory listings
 * as JSON (autoindex_format json), and /private/ behind basic auth.
 * `locations`: more of the server block (a test's own `location`s, say);
 * `tls`: a certificate and key for a second, https listener.
 */
export async function startNginx(
  root: string,
  auth: { user: string; password: string } = { user: 'reader', password: 'pa55-s3cret' },
  more: { locations?: string; tls?: { cert: string; key: string } } = {},
): Promise<Nginx> {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install -y nginx-light)');
  const prefix = mkdtempSync(join(tmpdir(), 'flatload-nginx-'));
  mkdirSync(join(prefix, 'tmp'));
  const port = await freePort();
  const tlsPort = more.tls ? await freePort() : undefined;
  const tls = more.tls ? `listen 127.0.0.1:${tlsPort} ssl;\n    ssl_certificate ${more.tls.cert};\n    ssl_certificate_key ${more.tls.key};` : '';
  writeFileSync(join(prefix, 'htpasswd'), `${auth.user}:{PLAIN}${auth.password}\n`);
  const conf = `daemon off;
master_process off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log info;
events { worker_connections 256; }
http {
  log_format req '$request_method $uri $status $http_range $body_bytes_sent $remote_user';
  access_log ${prefix}/access.log req;
  client_body_temp_path ${prefix}/tmp/body;
  proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi;
  uwsgi_temp_path ${prefix}/tmp/uwsgi;
  scgi_temp_path ${prefix}/tmp/scgi;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port};
    ${tls}
    root ${root};
    autoindex on;
    autoindex_format json;
    location /private/ { auth_basic "exports"; auth_basic_user_file ${prefix}/htpasswd; }
    ${more.locations ?? ''}
  }
}
`;
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  const child: ChildProcess = spawn(NGINX, ['-p', prefix, '-e', join(prefix, 'error.log'), '-c', join(prefix, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let alive = true;
  void exited.then(() => (alive = false));
  await waitForPort(port, () => alive, 10_000, () => stderr);
  if (tlsPort !== undefined) await waitForPort(tlsPort, () => alive, 10_000, () => stderr);
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    tlsBase: tlsPort === undefined ? undefined : `https://127.0.0.1:${tlsPort}`,
    root,
    requests: () => {
      const path = join(prefix, 'access.log');
      if (!existsSync(path)) return [];
      return readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => {
          const [method, uri, status, range, bytes, user] = l.split(' ');
          return { method: method!, uri: uri!, status: Number(status), range: range!, bytes: Number(bytes), user: user! };
        });
    },
    stop: async () => {
      if (alive) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (alive) child.kill('SIGKILL');
      }
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

export interface CuttingProxy {
  base: string;
  /** Connections cut so far. */
  cuts(): number;
  /** Connections answered 503. */
  unavailableServed(): number;
  /** Each request's first line and Range header (`-` when none), as the client sent them. */
  requests(): Array<{ line: string; range: string }>;
  stop(): Promise<void>;
}

/**
 * A TCP proxy in front of a server that cuts each connection after a random
 * number of response bytes (seeded, so a failing schedule replays): a
 * connection reset in the middle of a transfer, at a moment the test does
 * not choose. After `maxCuts` it forwards without cutting. The first
 * `unavailable` connections are answered 503 instead.
 */
export async function startCuttingProxy(targetPort: number, opts: { seed: number; minBytes: number; maxBytes: number; maxCuts: number; unavailable?: number }): Promise<CuttingProxy> {
  /** Connections still to be answered 503 (the first ones), as an overloaded server or gateway would. */
  let unavailable = opts.unavailable ?? 0;
  const rnd = prng(opts.seed);
  let cuts = 0;
  const seen: Array<{ line: string; range: string }> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (unavailable > 0) {
      unavailable--;
      client.on('error', () => undefined);
      client.once('data', () => client.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const budget = cuts < opts.maxCuts ? opts.minBytes + Math.floor(rnd() * (opts.maxBytes - opts.minBytes)) : Infinity;
    let sent = 0;
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (d: Buffer) => {
      // Request heads only (the tests send no bodies through it): one line per request in the packet.
      for (const m of d.toString('latin1').matchAll(/^(GET|HEAD|PUT|POST|DELETE) ([^\r\n]*)\r\n((?:[^\r\n]+\r\n)*)/gm)) {
        seen.push({ line: `${m[1]} ${m[2]}`, range: /^range: *(.*)$/im.exec(m[3] ?? '')?.[1]?.trim() ?? '-' });
      }
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (sent + d.length > budget && cuts < opts.maxCuts) {
        client.write(d.subarray(0, budget - sent));
        cuts++;
        // A reset, not a clean close: what a dropped connection looks like to the client.
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      sent += d.length;
      client.write(d);
    });
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  return {
    base: `http://127.0.0.1:${port}`,
    cuts: () => cuts,
    unavailableServed: () => (opts.unavailable ?? 0) - unavailable,
    requests: () => seen,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
