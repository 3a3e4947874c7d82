/**
 * Privileges: parsing SHOW GRANTS (src/introspect/grants.ts; MariaDB 10.11
 * lines copied from the real server, MySQL 8.0/5.7 lines in their documented
 * shapes), matching needs against them (src/plan/privilegeCheck.ts), and the
 * needs of each plan, derived from its operations (src/plan/needs.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAccount, parseGrant, redactGrant } from '../../src/introspect/grants.js';
import { needsOfOp, privilegesForPlan, type PrivilegeNeed } from '../../src/plan/needs.js';
import type { Op } from '../../src/plan/ops.js';
import { planLoad } from '../../src/plan/planner.js';
import { checkPrivileges, describeNeed, grantPatternMatches, grantStatements, missingPrivilegeError, missingPrivileges } from '../../src/plan/privilegeCheck.js';
import type { PlanFacts, PlanOptions } from '../../src/plan/types.js';
import * as F from './facts/index.js';

const need = (privilege: PrivilegeNeed['privilege'], db: string, table?: string, extra: Partial<PrivilegeNeed> = {}): PrivilegeNeed => ({
  privilege,
  on: table === undefined ? { db } : { db, table },
  why: 'test',
  ...extra,
});

/** Names of the missing needs as "PRIV db.table". */
function gaps(grants: string[], needs: PrivilegeNeed[], user?: string, lctn?: number): string[] {
  return missingPrivileges(grants, needs, user, lctn === undefined ? {} : { lowerCaseTableNames: lctn }).map(
    (n) => `${n.privilege} ${n.on.db}${n.on.table === undefined ? '' : `.${n.on.table}`}`,
  );
}

// Real MariaDB 10.11.19 output.
const MARIADB_MIXED = [
  "GRANT RELOAD, PROCESS ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
  'GRANT SELECT, INSERT ON `p`.* TO `u`@`%`',
  'GRANT ALL PRIVILEGES ON `te\\_%`.* TO `u`@`%` WITH GRANT OPTION',
  'GRANT ALL PRIVILEGES ON `p`.`m` TO `u`@`%`',
  'GRANT SELECT (`a`), INSERT (`id`, `a`) ON `p`.`t` TO `u`@`%`',
];
const MARIADB_ROLE_ACTIVE = [
  'GRANT `loader` TO `u`@`%`',
  "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
  'GRANT USAGE ON *.* TO `loader`',
  'GRANT SELECT, INSERT ON `p`.* TO `loader`',
  'SET DEFAULT ROLE `loader` FOR `u`@`%`',
];
const MARIADB_ROLE_INACTIVE = [
  'GRANT `loader` TO `u`@`%`',
  "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
  'SET DEFAULT ROLE `loader` FOR `u`@`%`',
];
const MARIADB_NESTED_ROLES = [
  'GRANT `loader` TO `u`@`%`',
  "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
  'GRANT `inner_r` TO `loader`',
  'GRANT USAGE ON *.* TO `loader`',
  'GRANT INSERT ON `p`.* TO `loader`',
  'GRANT USAGE ON *.* TO `inner_r`',
  'GRANT DELETE ON `p`.`t` TO `inner_r`',
  'SET DEFAULT ROLE `loader` FOR `u`@`%`',
];
const MARIADB_ROOT = [
  'GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION',
  "GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION",
];
const MYSQL8_ROOT = [
  'GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, SHUTDOWN, PROCESS, FILE, REFERENCES, INDEX, ALTER, SHOW DATABASES, SUPER, CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, REPLICATION SLAVE, REPLICATION CLIENT, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, CREATE USER, EVENT, TRIGGER, CREATE TABLESPACE, CREATE ROLE, DROP ROLE ON *.* TO `root`@`localhost` WITH GRANT OPTION',
  'GRANT APPLICATION_PASSWORD_ADMIN,AUDIT_ABORT_EXEMPT,AUDIT_ADMIN,BACKUP_ADMIN,BINLOG_ADMIN,BINLOG_ENCRYPTION_ADMIN,CONNECTION_ADMIN,SYSTEM_VARIABLES_ADMIN,XA_RECOVER_ADMIN ON *.* TO `root`@`localhost` WITH GRANT OPTION',
  'GRANT PROXY ON ``@`` TO `root`@`localhost` WITH GRANT OPTION',
];

describe('parseGrant', () => {
  test('MariaDB privilege lines: levels, multi-word privileges, column lists, grantee, password hash ignored', () => {
    assert.deepEqual(parseGrant(MARIADB_MIXED[0]!), {
      kind: 'privileges',
      grant: true,
      privileges: [
        { name: 'RELOAD', columns: undefined },
        { name: 'PROCESS', columns: undefined },
      ],
      level: { kind: 'global' },
      grantees: [{ user: 'u', host: '%' }],
    });
    assert.deepEqual(parseGrant(MARIADB_MIXED[2]!), {
      kind: 'privileges',
      grant: true,
      privileges: [{ name: 'ALL', columns: undefined }],
      level: { kind: 'db', db: 'te\\_%' },
      grantees: [{ user: 'u', host: '%' }],
    });
    assert.deepEqual(parseGrant(MARIADB_MIXED[4]!), {
      kind: 'privileges',
      grant: true,
      privileges: [
        { name: 'SELECT', columns: ['a'] },
        { name: 'INSERT', columns: ['id', 'a'] },
      ],
      level: { kind: 'table', db: 'p', table: 't' },
      grantees: [{ user: 'u', host: '%' }],
    });
    const g = parseGrant('GRANT CREATE TEMPORARY TABLES, LOCK TABLES, DELETE HISTORY, SHOW VIEW ON `d`.* TO `u`@`10.0.0.%`');
    assert.equal(g?.kind, 'privileges');
    if (g?.kind === 'privileges') {
      assert.deepEqual(
        g.privileges.map((p) => p.name),
        ['CREATE TEMPORARY TABLES', 'LOCK TABLES', 'DELETE HISTORY', 'SHOW VIEW'],
      );
      assert.deepEqual(g.grantees, [{ user: 'u', host: '10.0.0.%' }]);
    }
  });

  test('role grants: MariaDB roles have no host, MySQL 8 roles do, and several may be listed', () => {
    assert.deepEqual(parseGrant('GRANT `loader` TO `u`@`%`'), {
      kind: 'roles',
      roles: [{ user: 'loader', host: undefined }],
      grantees: [{ user: 'u', host: '%' }],
    });
    assert.deepEqual(parseGrant('GRANT `app_read`@`%`,`app_write`@`%` TO `u`@`localhost` WITH ADMIN OPTION'), {
      kind: 'roles',
      roles: [
        { user: 'app_read', host: '%' },
        { user: 'app_write', host: '%' },
      ],
      grantees: [{ user: 'u', host: 'localhost' }],
    });
    assert.deepEqual(parseGrant('GRANT USAGE ON *.* TO `loader`'), {
      kind: 'privileges',
      grant: true,
      privileges: [{ name: 'USAGE', columns: undefined }],
      level: { kind: 'global' },
      grantees: [{ user: 'loader', host: undefined }],
    });
  });

  test('quoting: doubled backquotes, dots and quotes inside names, MySQL 5.7 single-quoted accounts, ANSI double quotes', () => {
    const g = parseGrant("GRANT INSERT ON `we;ird``db`.`t.a ble'\"` TO 'load''er'@'host.example'");
    assert.equal(g?.kind, 'privileges');
    if (g?.kind === 'privileges') {
      assert.deepEqual(g.level, { kind: 'table', db: 'we;ird`db', table: 't.a ble\'"' });
      assert.deepEqual(g.grantees, [{ user: "load'er", host: 'host.example' }]);
    }
    const a = parseGrant('GRANT SELECT ON "db"."t" TO "u"@"%"');
    assert.ok(a?.kind === 'privileges' && a.level.kind === 'table' && a.level.db === 'db' && a.level.table === 't');
    const b = parseGrant('GRANT SELECT ON `Zoë_東京`.* TO `ü`@`%`');
    assert.ok(b?.kind === 'privileges' && b.level.kind === 'db' && b.level.db === 'Zoë_東京');
  });

  test('MySQL 8: dynamic privileges, partial revokes; PROXY, routines and SET DEFAULT ROLE give nothing', () => {
    const d = parseGrant(MYSQL8_ROOT[1]!);
    assert.ok(d?.kind === 'privileges' && d.privileges.some((p) => p.name === 'SYSTEM VARIABLES ADMIN'));
    assert.deepEqual(parseGrant('REVOKE INSERT ON `mysql`.* FROM `u`@`%`'), {
      kind: 'privileges',
      grant: false,
      privileges: [{ name: 'INSERT', columns: undefined }],
      level: { kind: 'db', db: 'mysql' },
      grantees: [{ user: 'u', host: '%' }],
    });
    assert.equal(parseGrant(MYSQL8_ROOT[2]!), undefined);
    assert.equal(parseGrant("GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION"), undefined);
    assert.deepEqual(parseGrant('GRANT EXECUTE ON FUNCTION `p`.`f` TO `u`@`%`'), {
      kind: 'privileges',
      grant: true,
      privileges: [{ name: 'EXECUTE', columns: undefined }],
      level: { kind: 'other' },
      grantees: [{ user: 'u', host: '%' }],
    });
    assert.equal(parseGrant('SET DEFAULT ROLE `loader` FOR `u`@`%`'), undefined);
    assert.equal(parseGrant('not a grant'), undefined);
    assert.equal(parseGrant('GRANT SELECT ON `unterminated TO x'), undefined);
  });
});

describe('grantPatternMatches (database wildcards)', () => {
  const cases: Array<[string, string, boolean]> = [
    ['p', 'p', true],
    ['p', 'P', false],
    ['p%', 'p', true],
    ['p%', 'prod', true],
    ['p%', 'xp', false],
    ['te\\_%', 'te_x', true],
    ['te\\_%', 'tex', false],
    ['te_%', 'tex', true],
    ['_', 'p', true],
    ['_', 'pp', false],
    ['%', '', true],
    ['a%b%c', 'aXXbYc', true],
    ['a%b%c', 'aXXbY', false],
    ['東_', '東京', true],
    ['100\\%', '100%', true],
    ['100\\%', '1000', false],
  ];
  for (const [pattern, name, expected] of cases) {
    test(`${pattern} ~ ${name} = ${expected}`, () => assert.equal(grantPatternMatches(pattern, name), expected));
  }
  test('case-insensitive with lower_case_table_names', () => assert.equal(grantPatternMatches('Prod%', 'PRODUCTION', true), true));
});

describe('missingPrivileges', () => {
  test('ALL PRIVILEGES ON *.* (MariaDB root) and MySQL 8 root have everything flatload asks for', () => {
    const needs = [
      need('SELECT', 'p', 't'),
      need('INSERT', 'p', 't'),
      need('DROP', 'p', 't'),
      need('LOCK TABLES', 'p'),
      need('PROCESS', '*'),
      need('RELOAD', '*'),
      need('SUPER', '*'),
      need('BINLOG ADMIN', '*', undefined, { alternatives: ['SUPER'] }),
    ];
    assert.deepEqual(gaps(MARIADB_ROOT, needs, 'root@localhost'), []);
    assert.deepEqual(gaps(MYSQL8_ROOT, needs, 'root@localhost'), []);
  });

  test('global, database and table levels; ALL at a level carries only that level\'s privileges', () => {
    const needs = [
      need('SELECT', 'p', 't'), // db grant
      need('INSERT', 'p', 'anything'), // db grant
      need('DELETE', 'p', 't'), // nowhere
      need('DROP', 'p', 'm'), // ALL ON p.m
      need('LOCK TABLES', 'p'), // db-level privilege: ALL ON p.m does not carry it
      need('CREATE', 'te_x', 'z'), // ALL ON `te\_%`.*
      need('LOCK TABLES', 'te_x'), // ALL at db level carries LOCK TABLES
      need('CREATE', 'tex', 'z'), // \_ is a literal underscore
      need('PROCESS', '*'), // global grant
      need('FILE', '*'), // no
      need('PROCESS', '*', undefined, { alternatives: ['FILE'] }),
    ];
    assert.deepEqual(gaps(MARIADB_MIXED, needs, 'u@%'), ['DELETE p.t', 'LOCK TABLES p', 'CREATE tex.z', 'FILE *']);
  });

  test('ALL PRIVILEGES ON a database does not give global-only privileges', () => {
    const g = ['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT ALL PRIVILEGES ON `p`.* TO `u`@`%`'];
    assert.deepEqual(gaps(g, [need('PROCESS', '*'), need('RELOAD', '*'), need('ALTER', 'p', 't'), need('TRIGGER', 'p', 't')], 'u@%'), [
      'PROCESS *',
      'RELOAD *',
    ]);
  });

  test('an exact database grant wins over a wildcard one (only the first matching database row counts)', () => {
    // Verified on MariaDB 10.11: with both, SELECT on p.t is denied.
    const g = ['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT INSERT ON `p`.* TO `u`@`%`', 'GRANT SELECT ON `p%`.* TO `u`@`%`'];
    assert.deepEqual(gaps(g, [need('SELECT', 'p', 't'), need('INSERT', 'p', 't'), need('SELECT', 'prod', 't')], 'u@%'), ['SELECT p.t']);
    // Table grants still add to the database row.
    const h = [...g, 'GRANT SELECT ON `p`.`t` TO `u`@`%`'];
    assert.deepEqual(gaps(h, [need('SELECT', 'p', 't')], 'u@%'), []);
    // A global grant adds too.
    assert.deepEqual(gaps(['GRANT SELECT ON *.* TO `u`@`%`', 'GRANT INSERT ON `p`.`t` TO `u`@`%`'], [need('SELECT', 'p', 't'), need('INSERT', 'p', 't')], 'u@%'), []);
  });

  test('column grants meet a need only when it names columns they all cover', () => {
    assert.deepEqual(gaps(MARIADB_MIXED, [need('UPDATE', 'p', 't', { columns: ['a'] })], 'u@%'), ['UPDATE p.t']);
    const noDb = MARIADB_MIXED.filter((l) => !l.includes('ON `p`.*'));
    assert.deepEqual(gaps(noDb, [need('INSERT', 'p', 't', { columns: ['id', 'A'] })], 'u@%'), []);
    assert.deepEqual(gaps(noDb, [need('INSERT', 'p', 't', { columns: ['id', 'b'] })], 'u@%'), ['INSERT p.t']);
    assert.deepEqual(gaps(noDb, [need('INSERT', 'p', 't')], 'u@%'), ['INSERT p.t']);
  });

  test('roles: an active role counts, nested roles count, an inactive role is named', () => {
    assert.deepEqual(gaps(MARIADB_ROLE_ACTIVE, [need('SELECT', 'p', 't'), need('INSERT', 'p', 't'), need('DELETE', 'p', 't')], 'u@%'), ['DELETE p.t']);
    const inactive = checkPrivileges(MARIADB_ROLE_INACTIVE, [need('INSERT', 'p', 't')], { currentUser: 'u@%' });
    assert.deepEqual(inactive.inactiveRoles, ['loader']);
    assert.equal(inactive.missing.length, 1);
    const err = missingPrivilegeError(inactive, 'u@%');
    assert.match(err!.message, /roles granted but not active in this session, so not counted: loader/);
    assert.deepEqual(gaps(MARIADB_NESTED_ROLES, [need('DELETE', 'p', 't'), need('INSERT', 'p', 'x'), need('DELETE', 'p', 'x')], 'u@%'), ['DELETE p.x']);
  });

  test('with CURRENT_USER(), lines for other grantees do not count; MySQL 8 roles with hosts', () => {
    const g = ['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT ALL PRIVILEGES ON *.* TO `someone_else`@`%`', 'GRANT ALL PRIVILEGES ON `p`.* TO `unrelated_role`'];
    assert.deepEqual(gaps(g, [need('INSERT', 'p', 't')], 'u@%'), ['INSERT p.t']);
    assert.deepEqual(gaps(g, [need('INSERT', 'p', 't')]), [], 'without a current user every line counts');
    const my = ['GRANT USAGE ON *.* TO `u`@`localhost`', 'GRANT `app_write`@`%` TO `u`@`localhost`', 'GRANT INSERT, SELECT ON `p`.* TO `app_write`@`%`'];
    assert.deepEqual(gaps(my, [need('INSERT', 'p', 't')], 'u@localhost'), []);
    assert.deepEqual(gaps(my, [need('INSERT', 'p', 't')], 'u@LOCALHOST'), [], 'host names compare case-insensitively');
    assert.deepEqual(gaps(my, [need('INSERT', 'p', 't')], 'other@localhost'), ['INSERT p.t']);
  });

  test('PUBLIC grants count for everyone (MariaDB 11)', () => {
    assert.deepEqual(gaps(['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT SELECT ON `p`.* TO PUBLIC'], [need('SELECT', 'p', 't')], 'u@%'), []);
  });

  test('MySQL partial revokes take a global privilege away for one database', () => {
    const g = ['GRANT SELECT, INSERT ON *.* TO `u`@`%`', 'REVOKE INSERT ON `mysql`.* FROM `u`@`%`'];
    assert.deepEqual(gaps(g, [need('INSERT', 'p', 't'), need('INSERT', 'mysql', 'user'), need('SELECT', 'mysql', 'user')], 'u@%'), ['INSERT mysql.user']);
  });

  test('dynamic privileges stand in for SUPER where the need allows (SYSTEM_VARIABLES_ADMIN)', () => {
    const g = ['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO `u`@`%`'];
    assert.deepEqual(gaps(g, [need('SUPER', '*', undefined, { alternatives: ['SYSTEM VARIABLES ADMIN'] })], 'u@%'), []);
    assert.deepEqual(gaps(g, [need('SUPER', '*')], 'u@%'), ['SUPER *']);
  });

  test('names are case-sensitive unless lower_case_table_names says otherwise', () => {
    const g = ['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT INSERT ON `Sales`.`Orders` TO `u`@`%`', 'GRANT SELECT ON `Sales`.* TO `u`@`%`'];
    assert.deepEqual(gaps(g, [need('INSERT', 'sales', 'orders'), need('SELECT', 'sales', 'orders')], 'u@%'), ['INSERT sales.orders', 'SELECT sales.orders']);
    assert.deepEqual(gaps(g, [need('INSERT', 'sales', 'orders'), need('SELECT', 'sales', 'orders')], 'u@%', 1), []);
  });

  test('no readable grants: nothing is claimed missing (the server decides)', () => {
    const r = checkPrivileges([], [need('INSERT', 'p', 't')]);
    assert.equal(r.known, false);
    assert.deepEqual(r.missing, []);
    assert.deepEqual(missingPrivileges(['garbage'], [need('INSERT', 'p', 't')]), []);
    assert.equal(missingPrivilegeError(r, 'u@%'), undefined);
  });

  test('unparseable grant lines are reported, redacted', () => {
    const r = checkPrivileges(['GRANT USAGE ON *.* TO `u`@`%`', "GRANT SELECT ON `broken TO `u`@`%` IDENTIFIED BY PASSWORD '*SECRET'"], []);
    assert.equal(r.unparsed.length, 1);
    assert.doesNotMatch(r.unparsed[0]!, /SECRET/);
  });

  test('optional needs are kept apart', () => {
    const r = checkPrivileges(['GRANT INSERT, SELECT ON `p`.* TO `u`@`%`'], [need('INSERT', 'p', 't'), need('PROCESS', '*', undefined, { optional: true })], {
      currentUser: 'u@%',
    });
    assert.deepEqual(r.missing, []);
    assert.deepEqual(r.missingOptional.map((n) => n.privilege), ['PROCESS']);
    assert.equal(missingPrivilegeError(r, 'u@%'), undefined);
  });
});

const opts = F.planOptions;

const facts = (table: string, engine = 'InnoDB', input = 'us.tsv'): PlanFacts => ({ server: F.mariadb1011(), table: F.table(table, engine), input: F.input(input) });

describe('privilegesForPlan: the table in docs/security.md, from the plans themselves', () => {
  const list = (f: PlanFacts, o: Partial<PlanOptions> = {}, extra: Parameters<typeof privilegesForPlan>[1] = {}): string[] =>
    privilegesForPlan(planLoad(f, opts(o)), extra)
      .map((n) => `${n.optional ? '(optional) ' : ''}${n.privilege} ${n.on.db === '*' ? '*.*' : `${n.on.db}.${n.on.table ?? '*'}`}`)
      .sort();
  const us = facts('user_summary');
  const T = 'flatload_test.user_summary';

  test('append: SELECT and INSERT on the table, nothing else', () => {
    assert.deepEqual(list(us), [`INSERT ${T}`, `SELECT ${T}`]);
    assert.deepEqual(list(us, { strategy: 'insert' }), [`INSERT ${T}`, `SELECT ${T}`]);
    assert.deepEqual(list(us, { onDuplicate: 'ignore' }), [`INSERT ${T}`, `SELECT ${T}`]);
    assert.deepEqual(list(us, { onDuplicate: 'replace' }), [`DELETE ${T}`, `INSERT ${T}`, `SELECT ${T}`]);
  });

  test('replace: TRUNCATE needs DROP; DELETE FROM (a table foreign keys reference) needs DELETE', () => {
    assert.deepEqual(list(us, { mode: 'replace' }), [`DROP ${T}`, `INSERT ${T}`, `SELECT ${T}`]);
    const c = 'flatload_test.customers';
    assert.deepEqual(list(facts('customers'), { mode: 'replace' }), [`DELETE ${c}`, `INSERT ${c}`, `SELECT ${c}`]);
  });

  test('swap: CREATE/DROP/ALTER/INSERT on the three names, as RENAME TABLE needs them', () => {
    assert.deepEqual(list(us, { mode: 'swap' }), [
      `ALTER ${T}`,
      `ALTER ${T}__flatload_new`,
      `CREATE ${T}`,
      `CREATE ${T}__flatload_new`,
      `CREATE ${T}__flatload_old`,
      `DROP ${T}`,
      `DROP ${T}__flatload_new`,
      `DROP ${T}__flatload_old`,
      `INSERT ${T}`,
      `INSERT ${T}__flatload_new`,
      `INSERT ${T}__flatload_old`,
      `SELECT ${T}`,
    ]);
    assert.ok(!list(us, { mode: 'swap', keepOld: true }).includes(`DROP ${T}__flatload_old`));
  });

  test('deferred indexes and the surrogate key need ALTER on the table loaded', () => {
    assert.ok(list(facts('purchases_index', 'InnoDB', 'pi.tsv (no id)'), { allowDdl: true }).includes('ALTER flatload_test.purchases_index'));
    const u3 = facts('user3', 'InnoDB', 'u3.tsv (no id)');
    assert.ok(list(u3).includes('ALTER flatload_test.user3'), 'AUTO_INCREMENT past the pre-assigned keys');
    assert.ok(list(u3, { allowDdl: true, mode: 'swap' }).includes('ALTER flatload_test.user3__flatload_new'));
  });

  test('resume steps are checked too: a restart empties the table (DROP), a key range is deleted (DELETE, SELECT)', () => {
    const rocks = list(facts('user_summary', 'RocksDB'), { order: 'file' });
    assert.ok(rocks.includes('DROP flatload_test.user_summary'), `MyRocks unsorted bulk load restarts with TRUNCATE: ${rocks.join(', ')}`);
    const sorted = list(facts('user_summary', 'RocksDB', 'us_sorted.tsv'));
    assert.ok(sorted.includes('DELETE flatload_test.user_summary'), `key-range resume deletes: ${sorted.join(', ')}`);
  });

  test('bookkeeping: CREATE, SELECT, INSERT, DELETE on its three tables in its schema, UPDATE on the jobs table', () => {
    const l = list(us, {}, { bookkeepingSchema: 'flatload_meta' }).filter((x) => x.includes('flatload_meta'));
    assert.deepEqual(l, [
      'CREATE flatload_meta.flatload_chunks',
      'CREATE flatload_meta.flatload_chunks_rejects',
      'CREATE flatload_meta.flatload_jobs',
      'DELETE flatload_meta.flatload_chunks',
      'DELETE flatload_meta.flatload_chunks_rejects',
      'DELETE flatload_meta.flatload_jobs',
      'INSERT flatload_meta.flatload_chunks',
      'INSERT flatload_meta.flatload_chunks_rejects',
      'INSERT flatload_meta.flatload_jobs',
      'SELECT flatload_meta.flatload_chunks',
      'SELECT flatload_meta.flatload_chunks_rejects',
      'SELECT flatload_meta.flatload_jobs',
      'UPDATE flatload_meta.flatload_jobs',
    ]);
  });

  test('size report: PROCESS, RELOAD, LOCK TABLES (InnoDB), SUPER (MyRocks), all optional', () => {
    assert.deepEqual(list(us, {}, { sizeReport: true, engine: 'INNODB' }), ['(optional) LOCK TABLES flatload_test.*', '(optional) PROCESS *.*', '(optional) RELOAD *.*', `INSERT ${T}`, `SELECT ${T}`]);
    assert.deepEqual(list(us, {}, { sizeReport: true, engine: 'ARIA' }), ['(optional) RELOAD *.*', `INSERT ${T}`, `SELECT ${T}`]);
    assert.deepEqual(list(us, {}, { sizeReport: true, engine: 'ROCKSDB' }), ['(optional) SUPER *.*', `INSERT ${T}`, `SELECT ${T}`]);
  });

  test('an INSERT-only user planning --mode swap is told exactly what is missing, with GRANT statements', () => {
    const grants = ['GRANT USAGE ON *.* TO `loader`@`%`', 'GRANT INSERT ON `flatload_test`.`user_summary` TO `loader`@`%`'];
    const check = checkPrivileges(grants, privilegesForPlan(planLoad(us, opts({ mode: 'swap' }))), { currentUser: 'loader@%' });
    const err = missingPrivilegeError(check, 'loader@%', { table: T });
    assert.ok(err);
    assert.equal(err.code, 'MISSING_PRIVILEGE');
    assert.match(err.message, /CREATE on `flatload_test`\.`user_summary__flatload_new`/);
    assert.match(err.message, /ALTER on `flatload_test`\.`user_summary`: publish the load atomically/);
    assert.match(err.context.hint ?? '', /GRANT SELECT, ALTER, DROP, CREATE ON `flatload_test`\.`user_summary` TO `loader`@`%`;/);
    assert.ok(!check.missing.some((n) => n.privilege === 'INSERT' && n.on.table === 'user_summary'));
  });
});

describe('needsOfOp: every operation kind', () => {
  const t = { db: 'shop', table: 'orders' };
  const names = (op: Op): string[] => needsOfOp(op, 'why').map((n) => `${n.privilege} ${n.on.db}${n.on.table === undefined ? '' : `.${n.on.table}`}`);
  test('each kind', () => {
    assert.deepEqual(names({ kind: 'truncate', table: t }), ['DROP shop.orders']);
    assert.deepEqual(names({ kind: 'delete-all', table: t }), ['DELETE shop.orders']);
    assert.deepEqual(names({ kind: 'delete-key-range', table: t, columns: ['id'] }), ['DELETE shop.orders', 'SELECT shop.orders']);
    assert.deepEqual(names({ kind: 'create-like', table: { db: 's', table: 'n' }, like: { db: 's', table: 't' } }), ['CREATE s.n', 'SELECT s.t']);
    assert.deepEqual(names({ kind: 'drop-table', table: t, ifExists: true }), ['DROP shop.orders']);
    assert.deepEqual(names({ kind: 'swap-tables', target: { db: 's', table: 't' }, shadow: { db: 's', table: 'n' }, old: { db: 's', table: 'o' } }), [
      'ALTER s.t',
      'DROP s.t',
      'CREATE s.o',
      'INSERT s.o',
      'ALTER s.n',
      'DROP s.n',
      'CREATE s.t',
      'INSERT s.t',
    ]);
    for (const op of [
      { kind: 'drop-indexes', table: t, indexes: [{ name: 'k', columns: ['a'] }] },
      { kind: 'add-indexes', table: t, indexes: [{ name: 'k', columns: ['a'] }] },
      { kind: 'drop-column', table: t, column: 'id' },
      { kind: 'add-auto-increment-key', table: t, column: 'id', columnType: 'int', after: null },
      { kind: 'disable-keys', table: t },
      { kind: 'enable-keys', table: t },
      { kind: 'auto-increment-after-input', table: t, firstValue: '1' },
    ] as const satisfies readonly Op[]) {
      assert.deepEqual(names(op), ['ALTER shop.orders'], op.kind);
    }
    assert.deepEqual(names({ kind: 'set-session', name: 'sql_log_bin', value: '0' }), ['BINLOG ADMIN *']);
    assert.deepEqual(names({ kind: 'set-session', name: 'unique_checks', value: '0' }), []);
    assert.deepEqual(names({ kind: 'bulk-load', on: true }), []);
    assert.deepEqual(names({ kind: 'commit-in-the-middle', on: true }), []);
  });
  test('hostile names stay names', () => {
    assert.deepEqual(names({ kind: 'truncate', table: { db: 'we;ird`db', table: 't.a ble\'"' } }), ['DROP we;ird`db.t.a ble\'"']);
  });
});

describe('words', () => {
  test('describeNeed, grantStatements, parseAccount', () => {
    assert.equal(describeNeed(need('DROP', 'p', 't')), 'DROP on `p`.`t`: test');
    assert.equal(describeNeed(need('SUPER', '*', undefined, { alternatives: ['SYSTEM VARIABLES ADMIN'] })), 'SUPER (or SYSTEM VARIABLES ADMIN) on *.*: test');
    assert.deepEqual(grantStatements([need('DROP', 'p', 't'), need('ALTER', 'p', 't'), need('PROCESS', '*'), need('CREATE', 'we`ird', undefined)], 'lo@der@%'), [
      'GRANT DROP, ALTER ON `p`.`t` TO `lo@der`@`%`;',
      'GRANT PROCESS ON *.* TO `lo@der`@`%`;',
      'GRANT CREATE ON `we``ird`.* TO `lo@der`@`%`;',
    ]);
    assert.deepEqual(parseAccount('root@localhost'), { user: 'root', host: 'localhost' });
    assert.deepEqual(parseAccount('role'), { user: 'role', host: undefined });
  });

  test('redactGrant blanks password hashes and plugin strings, keeps the rest', () => {
    assert.equal(
      redactGrant("GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'"),
      "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '<redacted>'",
    );
    assert.equal(
      redactGrant("GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED VIA ed25519 USING 'ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY' OR unix_socket"),
      "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED VIA ed25519 USING '<redacted>' OR unix_socket",
    );
    assert.equal(redactGrant('GRANT SELECT ON `p`.* TO `u`@`%`'), 'GRANT SELECT ON `p`.* TO `u`@`%`');
    // Redacted lines parse the same, so ServerFacts.grants can be kept redacted.
    for (const line of [...MARIADB_MIXED, ...MARIADB_ROLE_ACTIVE, ...MYSQL8_ROOT]) assert.deepEqual(parseGrant(redactGrant(line)), parseGrant(line), line);
  });
});
