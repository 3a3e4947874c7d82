/**
 * Least privilege: which of a plan's needs (plan/needs.ts) the current
 * user's grants do not give (checkPrivileges / missingPrivileges), and the
 * words and GRANT statements that say so. No I/O: the caller reads the
 * grants (ServerFacts.grants) and CURRENT_USER().
 *
 * How the server combines grants, and what this module copies of it:
 * - A privilege counts if it is granted globally (ON *.*), on the database,
 *   on the table, or (only for needs that name columns) on every column.
 * - Database grants: only the FIRST matching database row counts, not the
 *   union. A grant naming the database exactly wins over wildcard patterns
 *   (`_`, `%`; `\_` is a literal underscore). When several wildcard patterns
 *   match and none is exact, the server picks one by an internal sort order;
 *   this module counts all of them, so it can miss a gap that the server
 *   then reports at load time, but never invents one.
 * - Roles: the privileges of a role count when SHOW GRANTS lists them, which
 *   MariaDB does only for the roles active in the session (the default role
 *   at login). A role granted but not active is reported in `inactiveRoles`.
 *   MySQL 8 lists active roles' privileges merged into the user's lines.
 * - MySQL partial revokes (`REVOKE … ON db.* FROM u`) take a global privilege
 *   away for that database.
 * - Routine (FUNCTION/PROCEDURE/PACKAGE) and PROXY grants are ignored.
 */
import { quoteId } from '../db/quote.js';
import { FlatloadError } from '../errors/index.js';
import { parseAccount, parseGrant, redactGrant, type Grantee, type ParsedGrant } from '../introspect/grants.js';
import { GLOBAL, type PrivilegeNeed, type PrivilegeTarget } from './needs.js';

/** Privileges that exist only ON *.*. */
const GLOBAL_ONLY = new Set([
  'FILE',
  'RELOAD',
  'PROCESS',
  'SUPER',
  'SHUTDOWN',
  'SHOW DATABASES',
  'REPLICATION SLAVE',
  'REPLICATION CLIENT',
  'CREATE USER',
  'CREATE TABLESPACE',
  'CREATE ROLE',
  'DROP ROLE',
  'BINLOG ADMIN',
  'BINLOG MONITOR',
  'BINLOG REPLAY',
  'CONNECTION ADMIN',
  'FEDERATED ADMIN',
  'READ ONLY ADMIN',
  'REPLICATION MASTER ADMIN',
  'REPLICATION SLAVE ADMIN',
  'SLAVE MONITOR',
  'SYSTEM VARIABLES ADMIN',
]);

/** Privileges a table-level grant (and so ALL PRIVILEGES ON db.tbl) can carry. */
const TABLE_LEVEL = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'REFERENCES',
  'INDEX',
  'ALTER',
  'CREATE VIEW',
  'SHOW VIEW',
  'TRIGGER',
  'DELETE HISTORY',
]);

const COLUMN_LEVEL = new Set(['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']);

/** SQL LIKE as the grant tables use it: `%` any run, `_` one character, `\` escapes. */
export function grantPatternMatches(pattern: string, name: string, caseInsensitive = false): boolean {
  const p = caseInsensitive ? pattern.toLowerCase() : pattern;
  const n = caseInsensitive ? name.toLowerCase() : name;
  const pc = [...p];
  const nc = [...n];
  const memo = new Map<string, boolean>();
  const m = (pi: number, ni: number): boolean => {
    const key = `${pi},${ni}`;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (pi === pc.length) r = ni === nc.length;
    else {
      const c = pc[pi]!;
      if (c === '%') r = m(pi + 1, ni) || (ni < nc.length && m(pi, ni + 1));
      else if (c === '_') r = ni < nc.length && m(pi + 1, ni + 1);
      else if (c === '\\' && pi + 1 < pc.length) r = ni < nc.length && nc[ni] === pc[pi + 1] && m(pi + 2, ni + 1);
      else r = ni < nc.length && nc[ni] === c && m(pi + 1, ni + 1);
    }
    memo.set(key, r);
    return r;
  };
  return m(0, 0);
}

function hasWildcard(pattern: string): boolean {
  return /(^|[^\\])[%_]/.test(pattern);
}

function unescapePattern(pattern: string): string {
  return pattern.replace(/\\(.)/g, '$1');
}

interface PrivSet {
  all: boolean;
  names: Set<string>;
}

interface GranteeGrants {
  global: PrivSet;
  dbs: Array<{ pattern: string; privs: PrivSet }>;
  tables: Array<{ db: string; table: string; privs: PrivSet }>;
  columns: Array<{ db: string; table: string; privilege: string; columns: string[] }>;
  revokes: Array<{ db: string; names: Set<string> }>;
}

const granteeKey = (g: Grantee): string => (g.host === undefined ? g.user : `${g.user}@${g.host.toLowerCase()}`);

function emptyGrants(): GranteeGrants {
  return { global: { all: false, names: new Set() }, dbs: [], tables: [], columns: [], revokes: [] };
}

function addPrivs(set: PrivSet, names: string[]): void {
  for (const n of names) {
    if (n === 'ALL') set.all = true;
    else set.names.add(n);
  }
}

export interface CheckOptions {
  /** CURRENT_USER(), e.g. "loader@%". Without it every privilege line counts, whoever it names. */
  currentUser?: string;
  /** The server's lower_case_table_names: 1 or 2 compare names case-insensitively. */
  lowerCaseTableNames?: number;
}

export interface PrivilegeCheck {
  /** False when no grant line could be read: then nothing is claimed missing (let the server decide). */
  known: boolean;
  /** Needed privileges the grants do not give. */
  missing: PrivilegeNeed[];
  /** Optional ones (size report) the grants do not give. */
  missingOptional: PrivilegeNeed[];
  /** Roles granted to the user whose privileges SHOW GRANTS does not list (not active in this session). */
  inactiveRoles: string[];
  /** Lines that looked like grants but could not be parsed (ignored). */
  unparsed: string[];
}

type PrivilegeLine = Extract<ParsedGrant, { kind: 'privileges' }>;
type RoleLine = Extract<ParsedGrant, { kind: 'roles' }>;

export function checkPrivileges(grants: readonly string[], needs: readonly PrivilegeNeed[], opts: CheckOptions = {}): PrivilegeCheck {
  const ci = (opts.lowerCaseTableNames ?? 0) > 0;
  const { parsed, unparsed } = parseGrantLines(grants);
  const privilegeLines = parsed.filter((g): g is PrivilegeLine => g.kind === 'privileges');
  const roleLines = parsed.filter((g): g is RoleLine => g.kind === 'roles');
  const { applies, inactiveRoles } = applyingGrantees(privilegeLines, roleLines, opts.currentUser);
  const byGrantee = grantsByGrantee(privilegeLines, applies);

  const known = parsed.length > 0;
  const missing: PrivilegeNeed[] = [];
  const missingOptional: PrivilegeNeed[] = [];
  if (known) {
    for (const n of needs) {
      const ok = [...byGrantee.values()].some((gg) => satisfies(gg, n, ci));
      if (!ok) (n.optional ? missingOptional : missing).push(n);
    }
  }
  return { known, missing, missingOptional, inactiveRoles: [...new Set(inactiveRoles)], unparsed };
}

/** The lines read; the grant lines that could not be (redacted), leaving out the kinds flatload never needs. */
function parseGrantLines(grants: readonly string[]): { parsed: ParsedGrant[]; unparsed: string[] } {
  const parsed: ParsedGrant[] = [];
  const unparsed: string[] = [];
  for (const line of grants) {
    const g = parseGrant(line);
    if (g) parsed.push(g);
    else if (/^\s*(GRANT|REVOKE)\b/i.test(line) && !/^\s*GRANT\s+PROXY\b/i.test(line) && !/\bON\s+(FUNCTION|PROCEDURE|PACKAGE)\b/i.test(line)) {
      unparsed.push(redactGrant(line));
    }
  }
  return { parsed, unparsed };
}

/**
 * Which grantees' lines apply: the user, PUBLIC, and the roles reachable from them (every
 * grantee without a current user); and the granted roles SHOW GRANTS lists no privileges for.
 */
function applyingGrantees(privilegeLines: PrivilegeLine[], roleLines: RoleLine[], currentUser: string | undefined): { applies: (key: string) => boolean; inactiveRoles: string[] } {
  const withPrivileges = new Set(privilegeLines.flatMap((g) => g.grantees.map(granteeKey)));
  const inactiveRoles: string[] = [];
  if (currentUser === undefined) {
    for (const r of roleLines) for (const role of r.roles) if (!withPrivileges.has(granteeKey(role))) inactiveRoles.push(granteeKey(role));
    return { applies: () => true, inactiveRoles };
  }
  const active = reachableGrantees(currentUser, roleLines);
  for (const r of roleLines) {
    if (!r.grantees.some((g) => active.has(granteeKey(g)))) continue;
    for (const role of r.roles) if (!withPrivileges.has(granteeKey(role))) inactiveRoles.push(granteeKey(role));
  }
  return { applies: (k) => active.has(k), inactiveRoles };
}

/** The user, PUBLIC, and every role granted to one of them, transitively. */
function reachableGrantees(currentUser: string, roleLines: RoleLine[]): Set<string> {
  const active = new Set<string>([granteeKey(parseAccount(currentUser)), 'PUBLIC']);
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of roleLines) {
      if (!r.grantees.some((g) => active.has(granteeKey(g)))) continue;
      for (const role of r.roles) {
        const k = granteeKey(role);
        if (!active.has(k)) {
          active.add(k);
          changed = true;
        }
      }
    }
  }
  return active;
}

function grantsByGrantee(privilegeLines: PrivilegeLine[], applies: (key: string) => boolean): Map<string, GranteeGrants> {
  const byGrantee = new Map<string, GranteeGrants>();
  for (const g of privilegeLines) {
    for (const who of g.grantees) {
      const key = granteeKey(who);
      if (!applies(key)) continue;
      const gg = byGrantee.get(key) ?? emptyGrants();
      byGrantee.set(key, gg);
      addGrantLine(gg, g);
    }
  }
  return byGrantee;
}

/** One GRANT (or partial REVOKE) line into a grantee's privileges at its level. */
function addGrantLine(gg: GranteeGrants, g: PrivilegeLine): void {
  const whole = g.privileges.filter((p) => p.columns === undefined).map((p) => p.name);
  const lvl = g.level;
  if (!g.grant) {
    if (lvl.kind === 'db') gg.revokes.push({ db: unescapePattern(lvl.db), names: new Set(whole) });
    return;
  }
  if (lvl.kind === 'global') addPrivs(gg.global, whole);
  else if (lvl.kind === 'db') {
    let entry = gg.dbs.find((d) => d.pattern === lvl.db);
    if (!entry) gg.dbs.push((entry = { pattern: lvl.db, privs: { all: false, names: new Set() } }));
    addPrivs(entry.privs, whole);
  } else if (lvl.kind === 'table' && lvl.db !== undefined) {
    const db = lvl.db;
    let entry = gg.tables.find((t) => t.db === db && t.table === lvl.table);
    if (!entry) gg.tables.push((entry = { db, table: lvl.table, privs: { all: false, names: new Set() } }));
    addPrivs(entry.privs, whole);
    for (const p of g.privileges) {
      if (p.columns !== undefined) gg.columns.push({ db, table: lvl.table, privilege: p.name, columns: p.columns });
    }
  }
}

function holds(set: PrivSet, privilege: string, levelAllows: (p: string) => boolean): boolean {
  return set.names.has(privilege) || (set.all && levelAllows(privilege));
}

function satisfies(gg: GranteeGrants, n: PrivilegeNeed, ci: boolean): boolean {
  return [n.privilege, ...(n.alternatives ?? [])].some((p) => satisfiesOne(gg, p, n, ci));
}

function satisfiesOne(gg: GranteeGrants, privilege: string, n: PrivilegeNeed, ci: boolean): boolean {
  const eq = (a: string, b: string): boolean => (ci ? a.toLowerCase() === b.toLowerCase() : a === b);
  const isGlobalNeed = n.on.db === GLOBAL;
  // ALL PRIVILEGES ON *.* is every privilege except GRANT OPTION (and PROXY).
  if (holds(gg.global, privilege, (p) => p !== 'GRANT OPTION')) {
    const revoked = !isGlobalNeed && gg.revokes.some((r) => eq(r.db, n.on.db) && (r.names.has(privilege) || r.names.has('ALL')));
    if (!revoked) return true;
  }
  if (isGlobalNeed || GLOBAL_ONLY.has(privilege)) return false;

  // Database level: the exact name wins over patterns; among patterns, any match (see the header).
  const matching = gg.dbs.filter((d) => grantPatternMatches(d.pattern, n.on.db, ci));
  const exact = matching.filter((d) => !hasWildcard(d.pattern));
  const dbRows = exact.length > 0 ? exact : matching;
  if (dbRows.some((d) => holds(d.privs, privilege, (p) => !GLOBAL_ONLY.has(p) && p !== 'GRANT OPTION'))) return true;

  if (n.on.table === undefined) return false;
  const table = n.on.table;
  const t = gg.tables.find((x) => eq(x.db, n.on.db) && eq(x.table, table));
  if (t && holds(t.privs, privilege, (p) => TABLE_LEVEL.has(p))) return true;

  if (n.columns && n.columns.length > 0 && COLUMN_LEVEL.has(privilege)) {
    const granted = new Set(
      gg.columns
        .filter((c) => c.privilege === privilege && eq(c.db, n.on.db) && eq(c.table, table))
        .flatMap((c) => c.columns.map((x) => x.toLowerCase())),
    );
    if (n.columns.every((c) => granted.has(c.toLowerCase()))) return true;
  }
  return false;
}

/**
 * The needs the grants do not give (optional ones included; filter on
 * `optional`). Empty when the grants could not be read at all: a planner
 * must not refuse a load on a guess.
 */
export function missingPrivileges(grants: readonly string[], needs: readonly PrivilegeNeed[], currentUser?: string, opts: Omit<CheckOptions, 'currentUser'> = {}): PrivilegeNeed[] {
  const r = checkPrivileges(grants, needs, currentUser === undefined ? opts : { ...opts, currentUser });
  return [...r.missing, ...r.missingOptional];
}

// ------------------------------------------------------------------ words for people

export function describeTarget(on: PrivilegeTarget): string {
  if (on.db === GLOBAL) return '*.*';
  return on.table === undefined ? `${quoteId(on.db)}.*` : `${quoteId(on.db)}.${quoteId(on.table)}`;
}

/** "DROP on `db`.`t` (TRUNCATE TABLE empties the table first (--mode replace))" */
export function describeNeed(n: PrivilegeNeed): string {
  const alt = n.alternatives?.length ? ` (or ${n.alternatives.join(' or ')})` : '';
  return `${n.privilege}${alt} on ${describeTarget(n.on)}: ${n.why}`;
}

function quoteAccount(account: string): string {
  const g = parseAccount(account);
  return g.host === undefined ? quoteId(g.user) : `${quoteId(g.user)}@${quoteId(g.host)}`;
}

/** GRANT statements a DBA can run to give exactly what is missing, one per object. */
export function grantStatements(needs: readonly PrivilegeNeed[], account: string): string[] {
  const byObject = new Map<string, Set<string>>();
  for (const n of needs) {
    const obj = describeTarget(n.on);
    const set = byObject.get(obj) ?? new Set<string>();
    set.add(n.privilege);
    byObject.set(obj, set);
  }
  return [...byObject].map(([obj, privs]) => `GRANT ${[...privs].join(', ')} ON ${obj} TO ${quoteAccount(account)};`);
}

/**
 * The planning-time error for missing privileges (MISSING_PRIVILEGE), or
 * undefined when nothing required is missing.
 */
export function missingPrivilegeError(check: PrivilegeCheck, account: string | undefined, context: { table?: string } = {}): FlatloadError | undefined {
  if (!check.known || check.missing.length === 0) return undefined;
  const who = account ?? 'the current user';
  const lines = check.missing.map((n) => `  - ${describeNeed(n)}`);
  const roles = check.inactiveRoles.length
    ? `\n  (roles granted but not active in this session, so not counted: ${check.inactiveRoles.join(', ')}; SET DEFAULT ROLE makes one active at login)`
    : '';
  return new FlatloadError('MISSING_PRIVILEGE', `${who} lacks privileges this plan needs:\n${lines.join('\n')}${roles}`, {
    ...context,
    hint: `a DBA can grant them with: ${grantStatements(check.missing, account ?? 'USER@HOST').join(' ')}`,
  });
}
