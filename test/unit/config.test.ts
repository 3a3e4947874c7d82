import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveConnection } from '../../src/config/connection.js';
import { displayBytes, interpretEscapes } from '../../src/config/escapes.js';
import { isChunkable, resolveFormat } from '../../src/config/format.js';
import { parseBackends, parseColumnList, toLoadOptions } from '../../src/config/loadOptions.js';
import { clientOptions, parseOptionText } from '../../src/config/optionFiles.js';
import { parseByteSize } from '../../src/config/size.js';
import { parseConnectionUrl, redactUrl } from '../../src/config/url.js';
import { splitQualifiedName } from '../../src/config/names.js';
import { isFlatloadError } from '../../src/errors/index.js';

const throwsCode = (fn: () => unknown, code: string, re?: RegExp): void => {
  assert.throws(fn, (e: unknown) => isFlatloadError(e) && e.code === code && (!re || re.test(e.message)));
};

test('escape sequences are read as mysqlimport users write them', () => {
  const cases: Array<[string, number[]]> = [
    ['\\t', [9]],
    ['\\n', [10]],
    ['\\r\\n', [13, 10]],
    ['\\\\', [0x5c]],
    ['\\', [0x5c]], // --fields-escaped-by=\ : a lone trailing backslash is a backslash
    ['', []],
    [',', [0x2c]],
    ['||\\n', [0x7c, 0x7c, 10]],
    ['\\0', [0]],
    ['\\Z', [0x1a]],
    ['\\"', [0x22]],
    ["\\'", [0x27]],
    ['\\x', [0x78]], // other escapes drop the backslash, as in SQL literals
    ['\\%', [0x5c, 0x25]],
    ['0x2C', [0x2c]],
    ['0x0d0a', [13, 10]],
    ['é', [0xc3, 0xa9]],
  ];
  for (const [input, bytes] of cases) assert.deepEqual([...interpretEscapes(input, 'x')], bytes, JSON.stringify(input));
  throwsCode(() => interpretEscapes('0xZZ', 'fields-terminated-by'), 'USAGE', /hex/);
  throwsCode(() => interpretEscapes('0x123', 'fields-terminated-by'), 'USAGE');
  assert.equal(displayBytes(Buffer.from('\t\r\n\\a\x01')), '\\t\\r\\n\\\\a\\x01');
});

test('byte sizes', () => {
  const cases: Array<[string, number]> = [
    ['64MiB', 64 * 1024 ** 2],
    ['64M', 64 * 1024 ** 2],
    ['64mb', 64e6],
    ['1G', 1024 ** 3],
    ['1GiB', 1024 ** 3],
    ['500kB', 500_000],
    ['1048576', 1048576],
    ['1.5M', 1.5 * 1024 ** 2],
    [' 2 k ', 2048],
  ];
  for (const [t, n] of cases) assert.equal(parseByteSize(t, 'chunk-size'), n, t);
  for (const bad of ['', 'abc', '-1', '0', '1X', '1.5.2M']) throwsCode(() => parseByteSize(bad, 'chunk-size'), 'USAGE');
});

test('dialects are MySQL Shell presets; flags override them', () => {
  const d = resolveFormat({});
  assert.equal(displayBytes(d.fieldsTerminatedBy), '\\t');
  assert.equal(displayBytes(d.linesTerminatedBy), '\\n');
  assert.equal(displayBytes(d.fieldsEscapedBy), '\\\\');
  assert.equal(d.fieldsEnclosedBy.length, 0);

  const csv = resolveFormat({ dialect: 'csv' });
  assert.equal(displayBytes(csv.fieldsTerminatedBy), ',');
  assert.equal(displayBytes(csv.linesTerminatedBy), '\\r\\n');
  assert.equal(displayBytes(csv.fieldsEnclosedBy), '"');
  assert.equal(csv.fieldsOptionallyEnclosed, true);

  const tsv = resolveFormat({ dialect: 'tsv' });
  assert.equal(displayBytes(tsv.fieldsTerminatedBy), '\\t');
  assert.equal(displayBytes(tsv.linesTerminatedBy), '\\r\\n');
  assert.equal(tsv.fieldsOptionallyEnclosed, true);

  const unix = resolveFormat({ dialect: 'csv-unix' });
  assert.equal(displayBytes(unix.linesTerminatedBy), '\\n');
  assert.equal(unix.fieldsOptionallyEnclosed, false);
  assert.equal(displayBytes(unix.fieldsEnclosedBy), '"');

  const o = resolveFormat({ dialect: 'csv', linesTerminatedBy: '\\n', fieldsEscapedBy: '' });
  assert.equal(displayBytes(o.linesTerminatedBy), '\\n');
  assert.equal(o.fieldsEscapedBy.length, 0);

  const opt = resolveFormat({ fieldsOptionallyEnclosedBy: '"', fieldsTerminatedBy: ',' });
  assert.equal(opt.fieldsOptionallyEnclosed, true);
  assert.equal(displayBytes(opt.fieldsEnclosedBy), '"');
  assert.equal(resolveFormat({ fieldsEnclosedBy: '"' }).fieldsOptionallyEnclosed, false);

  throwsCode(() => resolveFormat({ dialect: 'excel' }), 'USAGE', /dialect/);
  throwsCode(() => resolveFormat({ fieldsEnclosedBy: '""' }), 'USAGE', /one character/);
  throwsCode(() => resolveFormat({ fieldsEscapedBy: 'ab' }), 'USAGE');
  throwsCode(() => resolveFormat({ fieldsEnclosedBy: '"', fieldsOptionallyEnclosedBy: '"' }), 'USAGE');
  throwsCode(() => resolveFormat({ characterSet: 'utf16' }), 'USAGE', /utf16/);
  throwsCode(() => resolveFormat({ ignoreLines: -1 }), 'USAGE');
  assert.equal(resolveFormat({ characterSet: 'GBK' }).characterSet, 'gbk');
});

test('what can be chunked', () => {
  assert.equal(isChunkable(resolveFormat({})).ok, true);
  assert.equal(isChunkable(resolveFormat({ linesTerminatedBy: '' })).ok, false);
  assert.equal(isChunkable(resolveFormat({ fieldsTerminatedBy: '' })).ok, false);
  assert.equal(isChunkable(resolveFormat({ fieldsTerminatedBy: '\\n' })).ok, false);
});

test('connection URLs', () => {
  const u = parseConnectionUrl('mysql://us%40er:p%3Ass@db.example:3307/my%20db?ssl-mode=VERIFY_CA&ssl_ca=/ca.pem&socket=/tmp/s.sock', 'x');
  assert.deepEqual(
    { host: u.host, port: u.port, user: u.user, password: u.password, database: u.database, socket: u.socketPath },
    { host: 'db.example', port: 3307, user: 'us@er', password: 'p:ss', database: 'my db', socket: '/tmp/s.sock' },
  );
  assert.equal(u.params['ssl-mode'], 'VERIFY_CA');
  assert.equal(u.params['ssl-ca'], '/ca.pem');
  assert.equal(parseConnectionUrl('mariadb://[::1]:3306', 'x').host, '::1');
  assert.equal(parseConnectionUrl('mysql://h?sslmode=REQUIRED', 'x').params['ssl-mode'], 'REQUIRED');
  throwsCode(() => parseConnectionUrl('postgres://x', 'DATABASE_URL'), 'USAGE', /mysql:\/\//);
  // The message never repeats the URL (it may hold a password).
  assert.throws(
    () => parseConnectionUrl('not a url with secret', 'DATABASE_URL'),
    (e: unknown) => isFlatloadError(e) && !e.message.includes('secret'),
  );
  assert.equal(redactUrl('mysql://u:secret@h/db'), 'mysql://u:***@h/db');
});

test('option files: groups, quotes, comments, includes', () => {
  const includes: string[] = [];
  const groups = parseOptionText(
    [
      '# comment',
      '[client]',
      'user = alice',
      'password = "se cret#x"',
      'port=3307  # inline comment',
      'ssl_ca = /etc/ca.pem',
      '[mysqld]',
      'user = mysql',
      '[client-server]',
      'socket = /run/mysqld/mysqld.sock',
      '!includedir /etc/mysql/conf.d/',
    ].join('\n'),
    new Map(),
    (d, a) => includes.push(`${d} ${a}`),
  );
  const c = clientOptions(groups);
  assert.equal(c.get('user'), 'alice');
  assert.equal(c.get('password'), 'se cret#x');
  assert.equal(c.get('port'), '3307');
  assert.equal(c.get('ssl-ca'), '/etc/ca.pem');
  assert.equal(c.get('socket'), '/run/mysqld/mysqld.sock');
  assert.deepEqual(includes, ['includedir /etc/mysql/conf.d/']);
});

test('connection sources follow the mysql client precedence', () => {
  const file = new Map([
    ['user', 'fileuser'],
    ['password', 'filepw'],
    ['socket', '/run/mysqld/mysqld.sock'],
    ['database', 'filedb'],
  ]);
  // Option file alone: its socket is used, as the mysql client does for localhost.
  const a = resolveConnection({}, {}, file);
  assert.equal(a.socketPath, '/run/mysqld/mysqld.sock');
  assert.equal(a.user, 'fileuser');
  assert.equal(a.password, 'filepw');
  assert.equal(a.passwordSource, 'option file');

  // DATABASE_URL names a host: the option file's socket must not redirect it.
  const b = resolveConnection({}, { DATABASE_URL: 'mysql://root:pw@127.0.0.1:4000/app' }, file);
  assert.equal(b.socketPath, undefined);
  assert.equal(b.host, '127.0.0.1');
  assert.equal(b.port, 4000);
  assert.equal(b.user, 'root');
  assert.equal(b.password, 'pw');
  assert.equal(b.database, 'app');
  assert.equal(b.passwordSource, 'DATABASE_URL');

  // Flags beat --url, which beats DATABASE_URL.
  const c = resolveConnection(
    { url: 'mysql://urluser:urlpw@urlhost:5000/urldb', user: 'flaguser', database: 'flagdb' },
    { DATABASE_URL: 'mysql://envuser@envhost/envdb' },
    file,
  );
  assert.deepEqual([c.host, c.port, c.user, c.password, c.database], ['urlhost', 5000, 'flaguser', 'urlpw', 'flagdb']);

  // --host on the command line wins over the URL's host, and the URL's port goes with the URL.
  const d = resolveConnection({ host: 'flaghost', url: 'mysql://u@urlhost:5000/' }, {}, new Map());
  assert.deepEqual([d.host, d.port], ['flaghost', 3306]);

  const e = resolveConnection({}, { MYSQL_PWD: 'envpw' }, new Map());
  assert.equal(e.password, 'envpw');
  assert.equal(e.passwordSource, 'MYSQL_PWD');
  assert.equal(e.ssl.mode, 'PREFERRED');

  assert.equal(resolveConnection({ sslMode: 'verify-identity' }, {}, new Map()).ssl.mode, 'VERIFY_IDENTITY');
  assert.equal(resolveConnection({}, {}, new Map([['ssl-verify-server-cert', '']])).ssl.mode, 'VERIFY_IDENTITY');
  throwsCode(() => resolveConnection({ sslMode: 'SOMETIMES' }, {}, new Map()), 'USAGE', /ssl-mode/);
  throwsCode(() => resolveConnection({ port: 70000 }, {}, new Map()), 'USAGE', /port/);
});

test('table names and column lists', () => {
  assert.deepEqual(splitQualifiedName('t'), { db: undefined, table: 't' });
  assert.deepEqual(splitQualifiedName('db.t'), { db: 'db', table: 't' });
  assert.deepEqual(splitQualifiedName('`my.db`.`t``x`'), { db: 'my.db', table: 't`x' });
  assert.deepEqual(splitQualifiedName('`a b`'), { db: undefined, table: 'a b' });
  for (const bad of ['', 'a.b.c', 'db.', '.t', '`unterminated']) assert.equal(splitQualifiedName(bad), undefined, bad);

  assert.deepEqual(parseColumnList('a, b ,@skip,`c,d`,`e``f`'), [
    { name: 'a', isVariable: false },
    { name: 'b', isVariable: false },
    { name: 'skip', isVariable: true },
    { name: 'c,d', isVariable: false },
    { name: 'e`f', isVariable: false },
  ]);
  throwsCode(() => parseColumnList('a,,b'), 'USAGE', /empty/);
  throwsCode(() => parseColumnList('@bad var'), 'USAGE');
});

test('load options: defaults, aliases and validation', () => {
  const o = toLoadOptions({ file: 'x.tsv', table: 'db.t' });
  assert.equal(o.chunkSizeBytes, undefined);
  assert.equal(o.mode, 'append');
  assert.equal(o.maxErrors, 0);
  assert.equal(o.onDuplicate, 'error');
  assert.equal(o.progress, 'auto');
  assert.equal(o.jobs, undefined);
  assert.equal(toLoadOptions({ file: 'x', table: 't', ignore: true }).onDuplicate, 'ignore');
  assert.equal(toLoadOptions({ file: 'x', table: 't', replace: true }).onDuplicate, 'replace');
  assert.equal(toLoadOptions({ file: 'x', table: 't', chunkSize: '1G' }).chunkSizeBytes, 1024 ** 3);
  assert.equal(o.sortMemoryBytes, 176 * 1024 ** 2, 'an in-memory sort holds at most 176 MiB by default');
  assert.equal(toLoadOptions({ file: 'x', table: 't', sortMemory: '0' }).sortMemoryBytes, 0, '--sort-memory 0: always in runs');
  assert.equal(toLoadOptions({ file: 'x', table: 't', sortMemory: '2GiB' }).sortMemoryBytes, 2 * 1024 ** 3);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', sortMemory: '3GiB' }), 'USAGE', /at most 2GiB/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', sortMemory: '-1' }), 'USAGE', /sort-memory/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', chunkSize: '0' }), 'USAGE', /positive size/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', ignore: true, replace: true }), 'USAGE');
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', ignore: true, onDuplicate: 'error' }), 'USAGE');
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', jobs: 0 }), 'USAGE', /jobs/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', jobs: 1.5 }), 'USAGE', /jobs/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', maxErrors: -1 }), 'USAGE');
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', mode: 'merge' }), 'USAGE', /mode/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', strategy: 'magic' }), 'USAGE', /strategy/);
  throwsCode(() => toLoadOptions({ file: 'x', table: 't', onDuplicate: 'skip' }), 'USAGE');
  throwsCode(() => toLoadOptions({ file: 'x', table: 'a.b.c' }), 'USAGE', /table/);
  throwsCode(() => toLoadOptions({ file: 'x' }), 'USAGE', /--table/);
  throwsCode(() => toLoadOptions({ table: 't' }), 'USAGE', /file/);
});

test('--route, --verify and --backend NAME=URL', () => {
  const o = toLoadOptions({ file: 'f', table: 't', route: 'direct', verify: true, backend: ['b1=mysql://u:pw@h1:3307', 'b2=mysql://h2'] });
  assert.equal(o.route, 'direct');
  assert.equal(o.verify, true);
  assert.deepEqual(o.backends, { b1: { host: 'h1', port: 3307, user: 'u', password: 'pw', params: {} }, b2: { host: 'h2', params: {} } });
  assert.equal(toLoadOptions({ file: 'f', table: 't', route: 'auto' }).route, undefined);
  assert.equal(toLoadOptions({ file: 'f', table: 't' }).route, undefined);
  assert.throws(() => toLoadOptions({ file: 'f', table: 't', route: 'sideways' }), /--route: "sideways" is not one of front, direct/);
  assert.deepEqual(parseBackends(undefined), {});
  for (const bad of ['mysql://h', '=mysql://h', 'b 1=mysql://h']) assert.throws(() => parseBackends(bad), /--backend takes NAME=URL/);
  assert.throws(() => parseBackends(['b1=mysql://h', 'b1=mysql://g']), /--backend b1 is given twice/);
  // The message never repeats the URL (it may hold a password).
  assert.throws(
    () => parseBackends('b1=http://u:secret@h'),
    (e: unknown) => isFlatloadError(e) && !e.message.includes('secret'),
  );
});
