/**
 * Least privilege, verified on the real server. For every row of the
 * privilege table (docs/security.md), built from the plan's own operations —
 * their needs (needsOfOp, loadNeeds) and their SQL (sqlOf), so the check
 * covers exactly what a load runs:
 * - SUFFICIENT: a user granted exactly those privileges (with the GRANT
 *   statements grantStatements() prints) runs every statement of that plan;
 * - NECESSARY: with any one of them taken away, some statement fails with a
 *   privilege error, and missingPrivileges() over that user's real SHOW
 *   GRANTS names exactly the one taken away.
 * Then the CLI itself loads as a user with exactly the append privileges,
 * and an INSERT-only user's real grants yield the planning-time error for
 * --mode swap.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import mysql, { type Connection } from 'mysql2/promise';
import { quoteId, quoteQualified } from '../../src/db/quote.js';
import { bookkeepingNeeds, loadNeeds, mergeNeeds, needsOfOp, sizeReportNeeds, type PrivilegeNeed } from '../../src/plan/needs.js';
import { sqlOf, type Op } from '../../src/plan/ops.js';
import { checkPrivileges, grantStatements, missingPrivilegeError, missingPrivileges } from '../../src/plan/privilegeCheck.js';
import { runCli } from '../support/cli.js';
import { adminConnection, serverUrl } from '../support/db.js';

const D = `priv_${randomBytes(3).toString('hex')}`;
const T = 'orders';
const S = `${T}__flatload_new`;
const O = `${T}__flatload_old`;
const q = (t: string): string => quoteQualified(D, t);
let admin: Connection;
let dir: string;
const users: string[] = [];
const password = `pw-${randomBytes(8).toString('hex')}`;
const PRIVILEGE_ERRNOS = new Set([1142, 1143, 1044, 1227, 1045, 1370, 1036]);

before(async () => {
  admin = await adminConnection();
  await admin.query(`CREATE DATABASE ${quoteId(D)}`);
  dir = mkdtempSync(join(tmpdir(), 'flatload-priv-'));
});
after(async () => {
  for (const u of users) await admin.query('DROP USER IF EXISTS ?@?', [u, '%']).catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS ${quoteId(D)}`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});

async function resetTables(): Promise<void> {
  for (const t of [T, S, O, 'flatload_jobs', 'flatload_chunks', 'flatload_chunks_rejects']) await admin.query(`DROP TABLE IF EXISTS ${q(t)}`);
  await admin.query(`CREATE TABLE ${q(T)} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, a INT NULL, b VARCHAR(20) NULL, KEY k (a)) ENGINE=InnoDB`);
  await admin.query(`INSERT INTO ${q(T)} (id, a, b) VALUES (1, 1, 'old'), (2, 2, 'old')`);
}

/**
 * Runs a GRANT. MariaDB refuses a table-level GRANT for a table that does not
 * exist yet unless CREATE is in it (ER_NO_SUCH_TABLE); the tests that take
 * CREATE away create the table for the moment of the GRANT (the grant stays
 * when the table is dropped).
 */
async function grant(statement: string): Promise<void> {
  const sql = statement.replace(/;$/, '');
  try {
    await admin.query(sql);
  } catch (err) {
    if ((err as { errno?: number }).errno !== 1146) throw err;
    const m = /\bON (`(?:[^`]|``)+`\.`(?:[^`]|``)+`) TO/.exec(sql);
    if (!m) throw err;
    await admin.query(`CREATE TABLE ${m[1]} (x INT)`);
    try {
      await admin.query(sql);
    } finally {
      await admin.query(`DROP TABLE ${m[1]}`);
    }
  }
}

/** A new user holding exactly `needs` (granted with the GRANT statements flatload would print). */
async function userWith(needs: readonly PrivilegeNeed[]): Promise<{ name: string; conn: Connection; grants: string[]; current: string }> {
  const name = `u${randomBytes(4).toString('hex')}`;
  users.push(name);
  await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [name, '%', password]);
  for (const g of grantStatements(needs, `${name}@%`)) await grant(g);
  const u = new URL(serverUrl());
  const conn = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: name, password, multipleStatements: false });
  const [rows] = await conn.query('SHOW GRANTS');
  const grants = (rows as Array<Record<string, string>>).map((r) => String(Object.values(r)[0]));
  const [cu] = await conn.query('SELECT CURRENT_USER() AS u');
  return { name, conn, grants, current: String((cu as Array<{ u: string }>)[0]!.u) };
}

/** Runs the statements; returns the first privilege error, throws on any other error. */
async function runAll(conn: Connection, statements: readonly string[]): Promise<{ sql: string; message: string } | undefined> {
  for (const sql of statements) {
    try {
      await conn.query({
        sql,
        infileStreamFactory: () => Readable.from([Buffer.from('100\t7\tnew\n101\t8\tnew\n')]),
      } as never);
    } catch (err) {
      const e = err as { errno?: number; message: string };
      if (e.errno !== undefined && PRIVILEGE_ERRNOS.has(e.errno)) return { sql, message: e.message };
      throw new Error(`${sql}: ${e.message}`, { cause: err });
    }
  }
  return undefined;
}

const LOAD = (t: string, dup = ''): string => `LOAD DATA LOCAL INFILE 'flatload-chunk-0'${dup} INTO TABLE ${q(t)} (id, a, b)`;
const INTROSPECT = [`SELECT 1 AS one FROM ${q(T)} LIMIT 1`, `SHOW CREATE TABLE ${q(T)}`];
const BOOKKEEPING = [
  `CREATE TABLE IF NOT EXISTS ${q('flatload_jobs')} (job_id VARCHAR(64) PRIMARY KEY, state VARCHAR(20), n INT)`,
  `CREATE TABLE IF NOT EXISTS ${q('flatload_chunks')} (job_id VARCHAR(64), chunk_index INT, PRIMARY KEY (job_id, chunk_index))`,
  `CREATE TABLE IF NOT EXISTS ${q('flatload_chunks_rejects')} (job_id VARCHAR(64), chunk_index INT, piece INT, rejects LONGBLOB, PRIMARY KEY (job_id, chunk_index, piece))`,
  `SELECT * FROM ${q('flatload_jobs')} WHERE job_id = 'j' AND state <> 'done'`,
  `INSERT INTO ${q('flatload_jobs')} (job_id, state) VALUES ('j', 'running') ON DUPLICATE KEY UPDATE state = 'running'`,
  `INSERT INTO ${q('flatload_chunks')} (job_id, chunk_index) VALUES ('j', 0)`,
  `SELECT chunk_index FROM ${q('flatload_chunks')} WHERE job_id = 'j'`,
  `INSERT INTO ${q('flatload_chunks_rejects')} (job_id, chunk_index, piece, rejects) VALUES ('j', 0, 0, 'x')`,
  `SELECT rejects FROM ${q('flatload_chunks_rejects')} WHERE job_id = 'j' ORDER BY chunk_index, piece`,
  `DELETE FROM ${q('flatload_chunks_rejects')} WHERE job_id = 'j'`,
  `UPDATE ${q('flatload_jobs')} SET state = 'done' WHERE job_id = 'j'`,
  `DELETE FROM ${q('flatload_chunks')} WHERE job_id = 'j'`,
  `DELETE FROM ${q('flatload_jobs')} WHERE job_id = 'j'`,
];

const t = { db: D, table: T };
const sh = { db: D, table: S };
const old = { db: D, table: O };

interface Scenario {
  name: string;
  needs: PrivilegeNeed[];
  statements: string[];
}

/** A plan's row of the table: the load into `into`, with operations before and after it. */
function plan(name: string, o: { before?: Op[]; after?: Op[]; into?: typeof t; strategy?: string; duplicates?: 'error' | 'ignore' | 'replace'; load?: string }): Scenario {
  const into = o.into ?? t;
  const ops = [...(o.before ?? []), ...(o.after ?? [])];
  const needs = mergeNeeds([
    ...loadNeeds({ target: t, loadTarget: into, strategy: (o.strategy ?? 'load-data') as never, duplicates: o.duplicates ?? 'error' }),
    ...ops.flatMap((op) => needsOfOp(op, sqlOf(op))),
  ]);
  const statements = [...INTROSPECT, ...(o.before ?? []).map((op) => sqlOf(op, { keyRange: { lo: ['1'], hi: ['2'] } })), o.load ?? LOAD(into.table, o.duplicates === 'ignore' ? ' IGNORE' : o.duplicates === 'replace' ? ' REPLACE' : ''), ...(o.after ?? []).map((op) => sqlOf(op, { inputRecords: 1000 }))];
  return { name, needs, statements };
}

const swapOps: Op[] = [{ kind: 'drop-table', table: sh, ifExists: true }, { kind: 'create-like', table: sh, like: t }];

const scenarios: Scenario[] = [
  plan('append (LOAD DATA LOCAL)', {}),
  plan('append, --strategy insert', { strategy: 'insert', load: `INSERT INTO ${q(T)} (id, a, b) VALUES (100, 7, 'x')` }),
  plan('append, --on-duplicate ignore', { duplicates: 'ignore' }),
  plan('append, --on-duplicate replace', { duplicates: 'replace' }),
  plan('replace by TRUNCATE', { before: [{ kind: 'truncate', table: t }] }),
  plan('replace by DELETE', { before: [{ kind: 'delete-all', table: t }] }),
  plan('swap', { before: swapOps, into: sh, after: [{ kind: 'swap-tables', target: t, shadow: sh, old }, { kind: 'drop-table', table: old, ifExists: false }] }),
  plan('swap --keep-old', { before: swapOps, into: sh, after: [{ kind: 'swap-tables', target: t, shadow: sh, old }] }),
  plan('deferred secondary indexes', { before: [{ kind: 'drop-indexes', table: t, indexes: [{ name: 'k', columns: ['a'] }] }], after: [{ kind: 'add-indexes', table: t, indexes: [{ name: 'k', columns: ['a'] }] }] }),
  plan('MyISAM-style DISABLE/ENABLE KEYS', { before: [{ kind: 'disable-keys', table: t }], after: [{ kind: 'enable-keys', table: t }] }),
  plan('surrogate key pre-assigned', { after: [{ kind: 'auto-increment-after-input', table: t, firstValue: '3' }] }),
  plan('surrogate key taken out and put back', {
    before: [{ kind: 'drop-column', table: t, column: 'id' }],
    after: [{ kind: 'add-auto-increment-key', table: t, column: 'id', columnType: 'int(11)', after: null }],
    load: `LOAD DATA LOCAL INFILE 'flatload-chunk-0' INTO TABLE ${q(T)} (a, b, @skip)`,
  }),
  plan('resume: a chunk\'s key range deleted', { before: [{ kind: 'delete-key-range', table: t, columns: ['id'] }] }),
  plan('resume: restart (TRUNCATE)', { before: [{ kind: 'truncate', table: t }] }),
  { name: 'resume bookkeeping', needs: bookkeepingNeeds(D), statements: BOOKKEEPING },
  {
    name: 'size report (InnoDB, optional)',
    needs: sizeReportNeeds(D, T, 'INNODB'),
    statements: [
      `SELECT NAME FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = '${D}/${T}'`,
      `FLUSH TABLES ${q(T)} FOR EXPORT`,
      'UNLOCK TABLES',
      `ANALYZE TABLE ${q(T)}`,
    ],
  },
  {
    name: 'size report (Aria, optional)',
    needs: sizeReportNeeds(D, T, 'ARIA'),
    statements: [`FLUSH TABLES ${q(T)}`, `ANALYZE TABLE ${q(T)}`],
  },
];

/** The append plan with its bookkeeping: what the CLI needs for a plain load. */
const appendNeeds = (): PrivilegeNeed[] => mergeNeeds([...loadNeeds({ target: t, loadTarget: t, strategy: 'load-data', duplicates: 'error' }), ...bookkeepingNeeds(D)]);
const swapNeeds = (): PrivilegeNeed[] => scenarios.find((x) => x.name === 'swap')!.needs;

const label = (n: PrivilegeNeed): string => `${n.privilege} ON ${n.on.db === '*' ? '*.*' : `${n.on.db}.${n.on.table ?? '*'}`}`;

describe('each row of the privilege table is sufficient and every privilege in it necessary (MariaDB)', () => {
  for (const sc of scenarios) {
    test(sc.name, async () => {
      await resetTables();
      const full = await userWith(sc.needs);
      try {
        assert.deepEqual(missingPrivileges(full.grants, sc.needs, full.current), [], `parsed from real SHOW GRANTS: ${full.grants.join(' | ')}`);
        const denied = await runAll(full.conn, sc.statements);
        assert.equal(denied, undefined, `with exactly ${sc.needs.map(label).join(', ')}: ${denied?.sql} failed: ${denied?.message}`);
      } finally {
        await full.conn.end();
      }
      for (const dropped of sc.needs) {
        await resetTables();
        const rest = sc.needs.filter((x) => x !== dropped);
        const u = await userWith(rest);
        try {
          assert.deepEqual(missingPrivileges(u.grants, sc.needs, u.current).map(label), [label(dropped)], `real grants: ${u.grants.join(' | ')}`);
          const denied = await runAll(u.conn, sc.statements);
          assert.ok(denied, `${label(dropped)} is listed but every statement ran without it`);
        } finally {
          await u.conn.end();
        }
      }
    });
  }
});

describe('the planning-time check against real SHOW GRANTS', () => {
  test('an INSERT-only user planning --mode swap is told which privileges are missing', async () => {
    await resetTables();
    const u = await userWith([{ privilege: 'INSERT', on: { db: D, table: T }, why: 'only this' }]);
    try {
      const check = checkPrivileges(u.grants, mergeNeeds([...swapNeeds(), ...bookkeepingNeeds(D)]), { currentUser: u.current });
      const err = missingPrivilegeError(check, u.current, { table: `${D}.${T}` });
      assert.ok(err);
      assert.equal(err.code, 'MISSING_PRIVILEGE');
      assert.equal(err.exitCode, 7);
      for (const p of ['SELECT', 'CREATE', 'DROP', 'ALTER']) assert.match(err.message, new RegExp(`\\b${p} on \`${D}\``));
      assert.match(err.message, /RENAME TABLE/);
      assert.ok(!check.missing.some((n) => n.privilege === 'INSERT' && n.on.table === T), 'INSERT on the table is held');
      // The GRANT statements in the hint work as printed, and then nothing is missing.
      for (const g of grantStatements(check.missing, u.current)) await admin.query(g.replace(/;$/, ''));
      const [rows] = await u.conn.query('SHOW GRANTS');
      const after = (rows as Array<Record<string, string>>).map((r) => String(Object.values(r)[0]));
      assert.deepEqual(missingPrivileges(after, check.missing, u.current), []);
    } finally {
      await u.conn.end();
    }
  });

  test('SHOW GRANTS carries the password hash; redactGrant-free parsing never needs it', async () => {
    const u = await userWith([{ privilege: 'SELECT', on: { db: D }, why: 'x' }]);
    try {
      assert.ok(u.grants.some((g) => /IDENTIFIED BY PASSWORD '\*[0-9A-F]{40}'/.test(g)), 'MariaDB prints the hash: never show these lines unredacted');
      const err = missingPrivilegeError(checkPrivileges(u.grants, [{ privilege: 'DROP', on: { db: D, table: T }, why: 'x' }], { currentUser: u.current }), u.current);
      assert.ok(err && !/\*[0-9A-F]{40}/.test(`${err.message} ${err.context.hint ?? ''}`));
    } finally {
      await u.conn.end();
    }
  });

  test('roles: a default role\'s privileges count, and with the role inactive they are reported as such', async () => {
    const role = `r${randomBytes(3).toString('hex')}`;
    await admin.query(`CREATE ROLE ${quoteId(role)}`);
    try {
      await admin.query(`GRANT SELECT, INSERT ON ${quoteId(D)}.* TO ${quoteId(role)}`);
      const u = await userWith([]);
      try {
        await admin.query(`GRANT ${quoteId(role)} TO ?@'%'`, [u.name]);
        await admin.query(`SET DEFAULT ROLE ${quoteId(role)} FOR ?@'%'`, [u.name]);
        const uu = new URL(serverUrl());
        const c = await mysql.createConnection({ host: uu.hostname, port: Number(uu.port), user: u.name, password });
        try {
          const needs = scenarios[0]!.needs;
          const grantsOf = async (): Promise<string[]> =>
            ((await c.query('SHOW GRANTS'))[0] as Array<Record<string, string>>).map((r) => String(Object.values(r)[0]));
          assert.deepEqual(missingPrivileges(await grantsOf(), needs, u.current), []);
          await c.query('SET ROLE NONE');
          const check = checkPrivileges(await grantsOf(), needs, { currentUser: u.current });
          assert.deepEqual(check.inactiveRoles, [role]);
          assert.equal(check.missing.length, 2);
        } finally {
          await c.end();
        }
      } finally {
        await u.conn.end();
      }
    } finally {
      await admin.query(`DROP ROLE ${quoteId(role)}`);
    }
  });
});

describe('the CLI with exactly the listed privileges', () => {
  test('append + bookkeeping privileges are enough for a real load; without SELECT it stops at once, naming it', async () => {
    await resetTables();
    const file = join(dir, 'rows.tsv');
    writeFileSync(file, '10\t1\tx\n11\t2\ty\n12\t3\tz\n');
    const needs = appendNeeds();
    const u = await userWith(needs);
    await u.conn.end();
    const url = (() => {
      const x = new URL(serverUrl());
      x.username = u.name;
      x.password = password;
      x.pathname = `/${D}`;
      return x.toString();
    })();
    const r = await runCli(['load', file, '--table', T, '--url', url, '--json', '--progress', 'none', '--no-defaults']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rows: number }).rows, 3);

    await resetTables();
    const v = await userWith(needs.filter((n) => !(n.privilege === 'SELECT' && n.on.table === T)));
    await v.conn.end();
    const url2 = url.replace(encodeURIComponent(u.name), encodeURIComponent(v.name));
    const r2 = await runCli(['load', file, '--table', T, '--url', url2, '--progress', 'none', '--no-defaults']);
    assert.equal(r2.code, 7, r2.stderr);
    assert.match(r2.stderr, /SELECT command denied/);
    const [rows] = await admin.query(`SELECT COUNT(*) AS n FROM ${q(T)}`);
    assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 2, 'nothing loaded');
  });
});
