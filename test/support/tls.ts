/**
 * Throwaway X.509 material for the TLS tests, made with the `openssl` CLI in
 * a temp dir: a CA, a server certificate for 127.0.0.1/localhost (SAN), a
 * client certificate, and the things that must fail — a second, unrelated CA
 * and a server certificate that names only "db.example".
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  /** The CA that signed server and client certificates. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed nothing the server presents. */
  otherCa: string;
  /** Signed by `ca`, but for DNS:db.example only (no IP, no localhost). */
  wrongHostCert: string;
  wrongHostKey: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.error) throw new Error(`openssl is needed for the TLS tests: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

function makeCa(dir: string, name: string, cn: string): void {
  openssl(dir, [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650',
    '-keyout', `${name}.key`, '-out', `${name}.pem`, '-subj', `/CN=${cn}`,
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

function makeLeaf(dir: string, name: string, ca: string, cn: string, extensions: string): void {
  writeFileSync(join(dir, `${name}.ext`), `${extensions}\n`);
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  openssl(dir, [
    'x509', '-req', '-sha256', '-days', '3650', '-in', `${name}.csr`,
    '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial',
    '-out', `${name}.pem`, '-extfile', `${name}.ext`,
  ]);
}

/** Generates everything (a second or two of RSA key generation). */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'flatload-pki-'));
  makeCa(dir, 'ca', 'flatload test CA');
  makeCa(dir, 'other-ca', 'some other CA');
  makeLeaf(
    dir,
    'server',
    'ca',
    'flatload test server',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost',
  );
  makeLeaf(
    dir,
    'client',
    'ca',
    'flatload test client',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth',
  );
  makeLeaf(
    dir,
    'wrong-host',
    'ca',
    'db.example',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:db.example',
  );
  const p = (f: string): string => join(dir, f);
  return {
    dir,
    ca: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    otherCa: p('other-ca.pem'),
    wrongHostCert: p('wrong-host.pem'),
    wrongHostKey: p('wrong-host.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** mariadbd flags that turn TLS on with the given certificate. */
export function serverTlsArgs(pki: TestPki, which: 'server' | 'wrong-host' = 'server'): string[] {
  const cert = which === 'server' ? pki.serverCert : pki.wrongHostCert;
  const key = which === 'server' ? pki.serverKey : pki.wrongHostKey;
  return [`--ssl-ca=${pki.ca}`, `--ssl-cert=${cert}`, `--ssl-key=${key}`];
}
