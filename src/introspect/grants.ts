/**
 * SHOW GRANTS, read: each line parsed into what it grants (or revokes), to
 * whom, at which level. What the server reports, as data; the planner decides
 * what those grants allow (plan/privilegeCheck.ts). Pure.
 */
interface Token {
  kind: 'word' | 'quoted' | 'string' | 'punct';
  text: string;
}

function tokenize(line: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '`' || c === '"' || c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= line.length) return undefined;
        const d = line[i]!;
        if (d === c) {
          if (line[i + 1] === c) {
            text += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (d === '\\' && c === "'" && i + 1 < line.length) {
          // String literals (user/host in MySQL 5.x, password hashes) escape with a backslash.
          text += line[i + 1]!;
          i += 2;
          continue;
        }
        text += d;
        i++;
      }
      out.push({ kind: c === '`' ? 'quoted' : c === '"' ? 'quoted' : 'string', text });
      continue;
    }
    if (',.()@*;='.includes(c)) {
      out.push({ kind: 'punct', text: c });
      i++;
      continue;
    }
    let j = i;
    while (j < line.length && !/\s/.test(line[j]!) && !',.()@*;=`"\''.includes(line[j]!)) j++;
    out.push({ kind: 'word', text: line.slice(i, j) });
    i = j;
  }
  return out;
}

export interface Grantee {
  user: string;
  /** undefined for a MariaDB role (roles have no host). */
  host: string | undefined;
}

export type GrantLevel =
  | { kind: 'global' }
  | { kind: 'db'; db: string }
  | { kind: 'table'; db: string | undefined; table: string }
  | { kind: 'other' };

export type ParsedGrant =
  | {
      kind: 'privileges';
      /** GRANT (true) or a MySQL partial REVOKE (false). */
      grant: boolean;
      /** Normalised names (upper case, single spaces, `_` as space); ALL PRIVILEGES as 'ALL'. */
      privileges: Array<{ name: string; columns: string[] | undefined }>;
      level: GrantLevel;
      grantees: Grantee[];
    }
  | { kind: 'roles'; roles: Grantee[]; grantees: Grantee[] };

function normPrivilege(words: string[]): string {
  const name = words.join(' ').toUpperCase().replace(/_/g, ' ').replace(/\s+/g, ' ').trim();
  return name === 'ALL PRIVILEGES' ? 'ALL' : name;
}

const isWord = (t: Token | undefined, w: string): boolean => t?.kind === 'word' && t.text.toUpperCase() === w;

const isPunct = (t: Token | undefined, p: string): boolean => t?.kind === 'punct' && t.text === p;

/** A read position in one line's tokens. */
class Cursor {
  i = 0;
  constructor(readonly toks: Token[]) {}
  peek(): Token | undefined {
    return this.toks[this.i];
  }
  next(): Token | undefined {
    return this.toks[this.i++];
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
}

type Terminator = 'ON' | 'TO' | 'FROM';
interface GrantItem {
  words: string[];
  name: Token | undefined;
  host: string | undefined;
  columns: string[] | undefined;
}
const newItem = (): GrantItem => ({ words: [], name: undefined, host: undefined, columns: undefined });

/** Parses one SHOW GRANTS line; undefined for lines that grant nothing flatload uses (or cannot be read). */
export function parseGrant(line: string): ParsedGrant | undefined {
  const toks = tokenize(line.trim().replace(/;\s*$/, ''));
  if (!toks || toks.length === 0) return undefined;
  const c = new Cursor(toks);
  const first = c.next();
  const grant = isWord(first, 'GRANT');
  if (!grant && !isWord(first, 'REVOKE')) return undefined;
  const list = readItems(c);
  if (!list) return undefined;
  const { items, terminator } = list;

  if (terminator === 'TO' || (terminator === 'FROM' && items.every((it) => it.words.length === 0))) {
    // GRANT role[, role] TO grantee — roles are names, not privilege words.
    const roles: Grantee[] = items.map((it) => ({ user: it.name?.text ?? it.words.join(' '), host: it.host }));
    if (!grant) return undefined;
    return { kind: 'roles', roles, grantees: readGrantees(c) };
  }
  if (terminator !== 'ON') return undefined;
  const privileges = items.map((it) => ({ name: normPrivilege(it.words), columns: it.columns }));
  if (privileges.some((p) => p.name === 'PROXY')) return undefined;
  const level = readLevel(c);
  if (!level) return undefined;
  if (!(isWord(c.peek(), 'TO') || isWord(c.peek(), 'FROM'))) return undefined;
  c.i++;
  return { kind: 'privileges', grant, privileges, level, grantees: readGrantees(c) };
}

/** The list before ON (privileges) or TO (roles), and the word that ends it. */
function readItems(c: Cursor): { items: GrantItem[]; terminator: Terminator } | undefined {
  const items: GrantItem[] = [];
  let cur = newItem();
  while (!c.done()) {
    const t = c.peek()!;
    if (t.kind === 'word' && ['ON', 'TO', 'FROM'].includes(t.text.toUpperCase()) && (cur.words.length > 0 || cur.name)) {
      c.i++;
      items.push(cur);
      return { items, terminator: t.text.toUpperCase() as Terminator };
    }
    if (isPunct(t, ',')) {
      items.push(cur);
      cur = newItem();
      c.i++;
      continue;
    }
    if (isPunct(t, '(')) {
      const columns = readColumnList(c);
      if (!columns) return undefined;
      cur.columns = columns;
      continue;
    }
    if (isPunct(t, '@')) {
      const h = c.toks[c.i + 1];
      if (!h) return undefined;
      cur.host = h.text;
      c.i += 2;
      continue;
    }
    if (t.kind === 'word') cur.words.push(t.text);
    else if (t.kind === 'quoted' || t.kind === 'string') cur.name = t;
    else return undefined;
    c.i++;
  }
  return undefined;
}

/** `(a, b)` after a column privilege; the cursor is on the `(`. */
function readColumnList(c: Cursor): string[] | undefined {
  const columns: string[] = [];
  c.i++;
  while (!c.done() && !isPunct(c.peek(), ')')) {
    const t = c.next()!;
    if (!isPunct(t, ',')) columns.push(t.text);
  }
  if (c.done()) return undefined;
  c.i++;
  return columns;
}

/** After ON: the object type, then the level. */
function readLevel(c: Cursor): GrantLevel | undefined {
  if (isWord(c.peek(), 'TABLE')) c.i++;
  if (['FUNCTION', 'PROCEDURE', 'PACKAGE'].some((w) => isWord(c.peek(), w))) {
    c.i++;
    if (isWord(c.peek(), 'BODY')) c.i++;
    // Skip the routine name.
    while (!c.done() && !isWord(c.peek(), 'TO') && !isWord(c.peek(), 'FROM')) c.i++;
    return { kind: 'other' };
  }
  const a = c.next();
  if (!a) return undefined;
  if (isPunct(c.peek(), '.')) {
    c.i++;
    const b = c.next();
    if (!b) return undefined;
    const aStar = isPunct(a, '*');
    const bStar = isPunct(b, '*');
    if (aStar && bStar) return { kind: 'global' };
    if (aStar) return undefined;
    if (bStar) return { kind: 'db', db: a.text };
    return { kind: 'table', db: a.text, table: b.text };
  }
  // `ON *`: the default database at grant time; SHOW GRANTS never prints it
  if (isPunct(a, '*')) return { kind: 'other' };
  return { kind: 'table', db: undefined, table: a.text };
}

/** The accounts after TO / FROM, up to the first clause that is not one. */
function readGrantees(c: Cursor): Grantee[] {
  const gs: Grantee[] = [];
  while (!c.done()) {
    const t = c.peek()!;
    if (t.kind === 'word' && ['IDENTIFIED', 'REQUIRE', 'WITH', 'AS', 'USING', 'PASSWORD', 'ACCOUNT'].includes(t.text.toUpperCase())) break;
    if (isPunct(t, ',')) {
      c.i++;
      continue;
    }
    if (t.kind === 'punct') break;
    c.i++;
    const host = isPunct(c.peek(), '@') ? c.toks[c.i + 1] : undefined;
    if (isPunct(c.peek(), '@') && (!host || host.kind === 'punct')) break;
    if (host) c.i += 2;
    gs.push({ user: t.text, host: host?.text });
  }
  return gs;
}

/** `user@host` as CURRENT_USER() returns it (the user part may itself contain `@`). */
export function parseAccount(account: string): Grantee {
  const at = account.lastIndexOf('@');
  return at === -1 ? { user: account, host: undefined } : { user: account.slice(0, at), host: account.slice(at + 1) };
}

/**
 * A SHOW GRANTS line with its secrets blanked: MariaDB and MySQL 5.x print the
 * password hash (IDENTIFIED BY PASSWORD '*…'), and authentication plugins
 * their strings (IDENTIFIED VIA … USING '…', AS '…'). Use before a grant
 * line is logged, reported or put in an error.
 */
export function redactGrant(line: string): string {
  return line
    .replace(/(\bIDENTIFIED\s+(?:BY|WITH|VIA)\b.*)$/is, (m) => m.replace(/'(?:[^'\\]|\\.|'')*'/g, "'<redacted>'"))
    .replace(/(\bPASSWORD\s*)'(?:[^'\\]|\\.|'')*'/gi, "$1'<redacted>'");
}
