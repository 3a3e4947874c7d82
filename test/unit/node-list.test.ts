/**
 * A list of nodes in --url and --host, as MariaDB's connectors take one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveConnection, type ConnectionFlags } from '../../src/config/connection.js';
import { maskUrlPassword, parseConnectionUrl, parseHostList, redactUrl } from '../../src/config/url.js';
import { resumeCommandLine } from '../../src/cli/resumeCommand.js';
import { FlatloadError } from '../../src/errors/index.js';
import { NodeRouter } from '../../src/db/nodes.js';
import { isRetryable } from '../../src/db/retry.js';

const nodes = (flags: ConnectionFlags, env: Record<string, string> = {}): string[] => resolveConnection(flags, env, new Map()).nodes.map((n) => `${n.host}:${n.port}`);

describe('parseHostList', () => {
  const cases: Array<[string, Array<{ host: string; port?: number }>]> = [
    ['h1', [{ host: 'h1' }]],
    ['h1,h2,h3', [{ host: 'h1' }, { host: 'h2' }, { host: 'h3' }]],
    ['h1:3306,h2:3307', [{ host: 'h1', port: 3306 }, { host: 'h2', port: 3307 }]],
    [' h1 , h2:4000 ', [{ host: 'h1' }, { host: 'h2', port: 4000 }]],
    ['[::1]:3306,10.0.0.2', [{ host: '::1', port: 3306 }, { host: '10.0.0.2' }]],
    ['::1,h2', [{ host: '::1' }, { host: 'h2' }]],
  ];
  for (const [text, want] of cases) test(text, () => assert.deepEqual(parseHostList(text, '--host'), want));
  for (const bad of ['h1,,h2', 'h1,', 'h1:0', 'h1:x', 'h1:70000']) {
    test(`refused: ${bad}`, () => assert.throws(() => parseHostList(bad, '--host'), (e: unknown) => e instanceof FlatloadError && e.code === 'USAGE'));
  }
});

describe('a URL with several nodes', () => {
  const cases: Array<[string, { host?: string; port?: number; nodes?: Array<{ host: string; port?: number }>; user?: string; password?: string; database?: string }]> = [
    ['mysql://u@h1:3306,h2:3306,h3:3306/db', { host: 'h1', port: 3306, user: 'u', database: 'db', nodes: [{ host: 'h1', port: 3306 }, { host: 'h2', port: 3306 }, { host: 'h3', port: 3306 }] }],
    ['mariadb://u:p%40ss@h1,h2:3307/db', { host: 'h1', user: 'u', password: 'p@ss', database: 'db', nodes: [{ host: 'h1' }, { host: 'h2', port: 3307 }] }],
    ['mysql://u:a,b@h1:1,h2:2/', { host: 'h1', port: 1, user: 'u', password: 'a,b', nodes: [{ host: 'h1', port: 1 }, { host: 'h2', port: 2 }] }],
    ['mysql://h1:4000/db', { host: 'h1', port: 4000, database: 'db' }],
  ];
  for (const [url, want] of cases) {
    test(url.replace(/:[^:@/]*@/, ':***@'), () => {
      const p = parseConnectionUrl(url, '--url');
      assert.deepEqual({ host: p.host, port: p.port, nodes: p.nodes, user: p.user, password: p.password, database: p.database }, { host: undefined, port: undefined, nodes: undefined, user: undefined, password: undefined, database: undefined, ...want });
    });
  }
  test('an empty entry is refused without repeating the password', () => {
    assert.throws(
      () => parseConnectionUrl('mysql://u:secret@h1,,h2/db', '--url'),
      (e: unknown) => e instanceof FlatloadError && e.code === 'USAGE' && !e.message.includes('secret'),
    );
  });
});

describe('resolveConnection: the endpoints flatload may connect to', () => {
  const cases: Array<[string, ConnectionFlags, Record<string, string>, string[]]> = [
    ['one host', { host: 'db1' }, {}, ['db1:3306']],
    ['--host list, --port for all', { host: 'h1,h2,h3', port: 3307 }, {}, ['h1:3307', 'h2:3307', 'h3:3307']],
    ['--host list, per-host ports win', { host: 'h1:4001,h2,h3:4003', port: 3307 }, {}, ['h1:4001', 'h2:3307', 'h3:4003']],
    ['--url list, an entry without a port is 3306', { url: 'mysql://u@h1:4001,h2/db' }, {}, ['h1:4001', 'h2:3306']],
    ['DATABASE_URL list', {}, { DATABASE_URL: 'mysql://u@a:1,b:2,c:3/db' }, ['a:1', 'b:2', 'c:3']],
    ['--host beats a URL list', { host: 'solo', url: 'mysql://u@a:1,b:2/db' }, {}, ['solo:3306']],
  ];
  for (const [name, flags, env, want] of cases) {
    test(name, () => {
      const c = resolveConnection(flags, env, new Map());
      assert.deepEqual(nodes(flags, env), want);
      assert.equal(`${c.host}:${c.port}`, want[0]);
    });
  }
});

describe('NodeRouter: one node at a time, the next when it fails', () => {
  const three = [
    { host: 'a', port: 1 },
    { host: 'b', port: 2 },
    { host: 'c', port: 3 },
  ];
  test('stays on the first node while it works', () => {
    const r = new NodeRouter(three);
    assert.deepEqual(r.current, three[0]);
    r.connected(three[0]!);
    assert.deepEqual(r.current, three[0]);
    assert.deepEqual(r.report(), { used: ['a:1'], lost: [] });
  });
  test('a failed node moves everyone to the next; a second report of the same failure does not skip a node', () => {
    const r = new NodeRouter(three);
    const told: string[] = [];
    r.onFailover((lost, next) => told.push(`${lost} -> ${next}`));
    r.connected(three[0]!);
    r.failed(three[0]!);
    r.failed(three[0]!);
    assert.deepEqual(r.current, three[1]);
    assert.deepEqual(told, ['a:1 -> b:2']);
    r.connected(three[1]!);
    assert.deepEqual(r.report(), { used: ['a:1', 'b:2'], lost: ['a:1'] });
  });
  test('after the last node it wraps around (a restarted node may be back)', () => {
    const r = new NodeRouter(three);
    r.failed(three[0]!);
    r.failed(three[1]!);
    r.failed(three[2]!);
    assert.deepEqual(r.current, three[0]);
    assert.deepEqual(r.report().lost, ['a:1', 'b:2', 'c:3']);
  });
  test('a node lost and connected to again stays in the lost list (the report says what happened)', () => {
    const r = new NodeRouter(three);
    r.connected(three[0]!);
    r.failed(three[0]!);
    r.failed(three[1]!);
    r.failed(three[2]!);
    r.connected(three[0]!);
    assert.deepEqual(r.report(), { used: ['a:1'], lost: ['a:1', 'b:2', 'c:3'] });
  });
});

describe('a list URL never shows its password', () => {
  const cases: Array<[string, string, string]> = [
    // url, redactUrl, resume command's --url
    ['mysql://u:s3cret@h1:1,h2:2/db', 'mysql://u:***@h1:1,h2:2/db', 'mysql://u@h1:1,h2:2/db'],
    ['mysql://u:p@ss@h1,h2/db?ssl-mode=REQUIRED', 'mysql://u:***@h1,h2/db?ssl-mode=REQUIRED', 'mysql://u@h1,h2/db?ssl-mode=REQUIRED'],
    ['mysql://u@h1:1,h2:2/db', 'mysql://u@h1:1,h2:2/db', 'mysql://u@h1:1,h2:2/db'],
  ];
  for (const [url, redacted, resumed] of cases) {
    test(redacted, () => {
      assert.equal(redactUrl(url), redacted);
      assert.equal(maskUrlPassword(url, ''), resumed);
      const line = resumeCommandLine(['load', 'f.tsv', '--url', url, '--table', 't'], '/w');
      assert.ok(line.includes(resumed), line);
      assert.ok(!/s3cret|p@ss/.test(line), line);
    });
  }
});

describe('which server errors a chunk is retried after', () => {
  const cases: Array<[string, { errno: number; sqlMessage: string }, boolean]> = [
    ['1047 node not ready', { errno: 1047, sqlMessage: 'WSREP has not yet prepared node for application use' }, true],
    ['1180 lost the primary component', { errno: 1180, sqlMessage: 'Got error 6 "No such device or address" during COMMIT: Not connected to Primary Component' }, true],
    ['1180 too many rows in a write-set', { errno: 1180, sqlMessage: 'Got error 5 "Input/output error" during COMMIT: wsrep_max_ws_rows exceeded' }, false],
    ['1213 certification conflict', { errno: 1213, sqlMessage: 'Deadlock found when trying to get lock; try restarting transaction' }, true],
    ['1105 write-set too large', { errno: 1105, sqlMessage: 'Maximum writeset size exceeded' }, false],
    ['1226 a new connection over the account\'s limit', { errno: 1226, sqlMessage: "User 'etl' has exceeded the 'max_user_connections' resource (current value: 4)" }, true],
  ];
  for (const [name, err, want] of cases) test(name, () => assert.equal(isRetryable(err), want));
});
