/**
 * Pure security pieces: identifier/literal quoting, qualified-name parsing,
 * the TLS option mapping, the LOCAL INFILE refusal stream, the password
 * prompt's key handling and the mysql-style argv rules.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { SslOptions } from '../../src/config/connection.js';
import { applyPromptInput, maskPasswordArgs, newPromptState, normalizeMysqlStyleArgs } from '../../src/cli/prompt.js';
import { resumeCommandLine } from '../../src/cli/resumeCommand.js';
import { refuseInfileRequest, tlsConfig } from '../../src/db/connect.js';
import { splitQualifiedName } from '../../src/config/names.js';
import { quoteBytes, quoteId, quoteQualified, quoteString } from '../../src/db/quote.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { makeTestPki, type TestPki } from '../support/tls.js';

const HOSTILE = ['we;ird`db', 't.a ble\'"', 'c`1; DROP', '``', 'Zoë 東京 🚀', "a'; DROP TABLE x; --", 'back\\slash', 'new\nline', '-- comment', '/* c */'];

describe('quoteId / quoteQualified / splitQualifiedName', () => {
  test('quoteId doubles backquotes and nothing else', () => {
    assert.equal(quoteId('we;ird`db'), '`we;ird``db`');
    assert.equal(quoteId('c`1; DROP'), '`c``1; DROP`');
    assert.equal(quoteId('``'), '``````');
    assert.equal(quoteId("t.a ble'\""), "`t.a ble'\"`");
    assert.equal(quoteQualified('a`b', 'c.d'), '`a``b`.`c.d`');
    assert.equal(quoteQualified(undefined, 'x'), '`x`');
  });

  test('splitQualifiedName reads back what quoteQualified writes, for hostile names', () => {
    for (const db of HOSTILE) {
      for (const table of HOSTILE) {
        assert.deepEqual(splitQualifiedName(quoteQualified(db, table)), { db, table }, `${db} / ${table}`);
      }
      assert.deepEqual(splitQualifiedName(quoteId(db)), { db: undefined, table: db });
    }
  });

  test('splitQualifiedName: plain and mixed forms, and what it rejects', () => {
    assert.deepEqual(splitQualifiedName('db.t'), { db: 'db', table: 't' });
    assert.deepEqual(splitQualifiedName('t'), { db: undefined, table: 't' });
    assert.deepEqual(splitQualifiedName('`a.b`.c'), { db: 'a.b', table: 'c' });
    assert.deepEqual(splitQualifiedName('a.`b.c`'), { db: 'a', table: 'b.c' });
    for (const bad of ['', 'a.b.c', '`a', 'a.', '.a', '`a`b', '``', '`a`.``', 'a..b']) {
      assert.equal(splitQualifiedName(bad), undefined, JSON.stringify(bad));
    }
  });

  test('quoteString and quoteBytes never let a quote or backslash through raw', () => {
    for (const s of HOSTILE) {
      const q = quoteString(s);
      assert.match(q, /^(''|_utf8mb4 0x[0-9a-f]+)$/);
      const b = quoteBytes(Buffer.from(s, 'utf8'));
      // eslint-disable-next-line no-control-regex -- control bytes must never appear inside a quoted literal
      assert.ok(/^0x[0-9a-f]+$/.test(b) || (/^'[^'\\]*'$/.test(b) && !/[\x00-\x1f\x7f-\xff]/.test(b)), b);
    }
    assert.equal(quoteBytes(Buffer.from(',')), "','");
    assert.equal(quoteBytes(Buffer.from("'")), '0x27');
    assert.equal(quoteBytes(Buffer.from('\\')), '0x5c');
    assert.equal(quoteBytes(Buffer.alloc(0)), "''");
  });
});

describe('tlsConfig (the mysql client\'s --ssl-mode meanings)', () => {
  let pki: TestPki;
  const dir = mkdtempSync(join(tmpdir(), 'flatload-tlscfg-'));
  after(() => {
    pki?.remove();
    rmSync(dir, { recursive: true, force: true });
  });
  const cfg = (ssl: SslOptions) => tlsConfig(ssl, '127.0.0.1');

  test('DISABLED: no TLS; PREFERRED/REQUIRED: TLS without checks; VERIFY_CA: chain; VERIFY_IDENTITY: chain and name', () => {
    pki = makeTestPki();
    assert.equal(cfg({ mode: 'DISABLED', ca: pki.ca }), undefined);
    assert.deepEqual(cfg({ mode: 'PREFERRED' }), { rejectUnauthorized: false, verifyIdentity: false });
    assert.deepEqual(cfg({ mode: 'REQUIRED' }), { rejectUnauthorized: false, verifyIdentity: false });
    const ca = cfg({ mode: 'VERIFY_CA', ca: pki.ca });
    assert.equal(ca?.rejectUnauthorized, true);
    assert.equal(ca?.verifyIdentity, false);
    assert.ok(Buffer.isBuffer(ca?.ca));
    const id = cfg({ mode: 'VERIFY_IDENTITY', ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
    assert.equal(id?.rejectUnauthorized, true);
    assert.equal(id?.verifyIdentity, true);
    assert.ok(Buffer.isBuffer(id?.cert) && Buffer.isBuffer(id?.key));
  });

  test('bad TLS files are CONFIG errors before anything is sent', () => {
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'hello\n');
    const expectConfig = (ssl: SslOptions, re: RegExp): void => {
      assert.throws(
        () => cfg(ssl),
        (e: unknown) => isFlatloadError(e) && e.code === 'CONFIG' && re.test(e.message),
      );
    };
    expectConfig({ mode: 'VERIFY_CA', ca: join(dir, 'missing.pem') }, /cannot read --ssl-ca/);
    expectConfig({ mode: 'VERIFY_CA', ca: notPem }, /holds no PEM certificate/);
    expectConfig({ mode: 'REQUIRED', cert: pki.clientCert }, /--ssl-cert needs --ssl-key/);
    expectConfig({ mode: 'REQUIRED', key: pki.clientKey }, /--ssl-key needs --ssl-cert/);
    expectConfig({ mode: 'REQUIRED', cert: pki.clientCert, key: pki.serverKey }, /cannot use the TLS files.*key values mismatch/);
  });
});

describe('refuseInfileRequest', () => {
  test('fails at once with a clear error and yields no data', async () => {
    const s = refuseInfileRequest('/etc/passwd');
    const chunks: Buffer[] = [];
    const err = await new Promise<unknown>((resolve) => {
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('error', resolve);
      s.on('end', () => resolve(undefined));
    });
    assert.equal(chunks.length, 0);
    assert.ok(isFlatloadError(err));
    assert.match((err as Error).message, /asked for local file "\/etc\/passwd", which flatload did not offer; refused/);
  });
  test('a long or odd name is quoted and cut, not interpreted', async () => {
    const s = refuseInfileRequest(`${'a'.repeat(500)}\n"; DROP`);
    const err = await new Promise<Error>((resolve) => s.on('error', resolve));
    assert.ok(err.message.length < 400);
    assert.match(err.message, /\\n|…/);
  });
});

describe('password prompt key handling', () => {
  const type = (...inputs: string[]) => {
    const st = newPromptState();
    for (const i of inputs) applyPromptInput(st, i);
    return st;
  };
  test('Enter ends, Backspace/DEL edit, Ctrl-U clears, Ctrl-C cancels, Ctrl-D on empty ends', () => {
    assert.deepEqual(type('secret\r'), { chars: [...'secret'], done: true, cancelled: false });
    assert.equal(type('secrex\x7ft\n').chars.join(''), 'secret');
    assert.equal(type('abc\x08\x08x\r').chars.join(''), 'ax');
    assert.equal(type('wrong\x15right\r').chars.join(''), 'right');
    assert.equal(type('se', 'cr', 'et', '\r', 'ignored').chars.join(''), 'secret');
    assert.equal(type('sec\x03ret').cancelled, true);
    assert.deepEqual(type('\x04'), { chars: [], done: true, cancelled: false });
    assert.equal(type('ab\x04c\r').chars.join(''), 'abc');
    assert.equal(type('Zoë 東京 🚀\r').chars.join(''), 'Zoë 東京 🚀');
    assert.equal(type('a\x1b[Ab\r').chars.join(''), 'a[Ab', 'escape bytes are dropped, the rest typed');
  });
});

describe('mysql-style argv (-pSECRET, -p, --password)', () => {
  test('normalizeMysqlStyleArgs', () => {
    assert.deepEqual(normalizeMysqlStyleArgs(['load', 'f.csv', '-pSECRET', '--table', 't']), ['load', 'f.csv', '--password=SECRET', '--table', 't']);
    assert.deepEqual(normalizeMysqlStyleArgs(['load', '-p', 'f.csv']), ['load', '--password=', 'f.csv']);
    assert.deepEqual(normalizeMysqlStyleArgs(['load', '--password', 'f.csv']), ['load', '--password=', 'f.csv']);
    assert.deepEqual(normalizeMysqlStyleArgs(['--password=a b']), ['--password=a b']);
    assert.deepEqual(normalizeMysqlStyleArgs(['-p=x']), ['--password==x'], 'as mysql: all that is attached is the value');
    assert.deepEqual(normalizeMysqlStyleArgs(['-uroot', '-h127.0.0.1', '-P3307', '-S/tmp/s.sock', '-Dshop']), [
      '--user=root',
      '--host=127.0.0.1',
      '--port=3307',
      '--socket=/tmp/s.sock',
      '--database=shop',
    ]);
    assert.deepEqual(normalizeMysqlStyleArgs(['-u', 'root', '-h', 'db', '--progress', 'none', '-j4']), ['-u', 'root', '-h', 'db', '--progress', 'none', '-j4']);
    assert.deepEqual(normalizeMysqlStyleArgs(['load', '--', '-pfile.csv']), ['load', '--', '-pfile.csv']);
  });

  test('maskPasswordArgs hides -p/--password values and URL passwords, same length', () => {
    assert.deepEqual(maskPasswordArgs(['load', 'f', '-pS3cr3t', '--password=hunter2', '-p']), ['load', 'f', '-pxxxxxx', '--password=xxxxxxx', '-p']);
    assert.deepEqual(maskPasswordArgs(['--url', 'mysql://u:p%40ss@h:3306/db', '--url=mariadb://u:pw@h/db']), [
      '--url',
      'mysql://u:xxxxxx@h:3306/db',
      '--url=mariadb://u:xx@h/db',
    ]);
    assert.deepEqual(maskPasswordArgs(['mysql://u@h/db', '--port=3306', '-P3306']), ['mysql://u@h/db', '--port=3306', '-P3306']);
    assert.deepEqual(maskPasswordArgs(['--url', 'mysql://u:p@ss@h/db']), ['--url', 'mysql://u:xxxx@h/db']);
    assert.deepEqual(maskPasswordArgs(['--backend', 'b1=mysql://u:pw@h:3307', '--backend=b2=mariadb://v:secret@h2']), ['--backend', 'b1=mysql://u:xx@h:3307', '--backend=b2=mariadb://v:xxxxxx@h2']);
  });

  test('the resume command drops passwords: -p, --url and --backend NAME=URL', () => {
    const line = resumeCommandLine(['load', 'f.tsv', '--password=pw1', '--url', 'mysql://u:pw2@h/db', '--backend', 'b1=mysql://u:pw3@h:3307', '--backend=b2=mysql://v:pw4@h2', '--restart'], '/data');
    assert.doesNotMatch(line, /pw[1-4]/);
    assert.equal(line, "cd /data && flatload load f.tsv --url mysql://u@h/db --backend b1=mysql://u@h:3307 --backend=b2=mysql://v@h2");
  });
});
