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

/** Parses one SHOW GRANTS line; undefined for lines that grant nothing flatload uses (or cannot be read). */
export function parseGrant(line: string): ParsedGrant | undefined {
  const toks = tokenize(line.trim().replace(/;\s*$/, ''));
  if (!toks || toks.length === 0) return undefined;
  let i = 0;
  const peek = (): Token | undefined => toks[i];
  const first = toks[i++];
  const grant = isWord(first, 'GRANT');
  if (!grant && !isWord(first, 'REVOKE')) return undefined;

  // The list before ON (privileges) or TO (roles).
  const items: Array<{ words: string[]; name: Token | undefined; host: string | undefined; columns: string[] | undefined }> = [];
  let cur: { words: string[]; name: Token | undefined; host: string | undefined; columns: string[] | undefined } = {
    words: [],
    name: undefined,
    host: undefined,
    columns: undefined,
  };
  let terminator: 'ON' | 'TO' | 'FROM' | undefined;
  while (i < toks.length) {
    const t = toks[i]!;
    if (t.kind === 'word' && ['ON', 'TO', 'FROM'].includes(t.text.toUpperCase()) && (cur.words.length > 0 || cur.name)) {
      terminator = t.text.toUpperCase() as 'ON' | 'TO' | 'FROM';
      i++;
      break;
    }
    if (t.kind === 'punct' && t.text === ',') {
      items.push(cur);
      cur = { words: [], name: undefined, host: undefined, columns: undefined };
      i++;
      continue;
    }
    if (t.kind === 'punct' && t.text === '(') {
      const cols: string[] = [];
      i++;
      while (i < toks.length && !(toks[i]!.kind === 'punct' && toks[i]!.text === ')')) {
        const c = toks[i]!;
        if (!(c.kind === 'punct' && c.text === ',')) cols.push(c.text);
        i++;
      }
      if (i >= toks.length) return undefined;
      i++;
      cur.columns = cols;
      continue;
    }
    if (t.kind === 'punct' && t.text === '@') {
      const h = toks[i + 1];
      if (!h) return undefined;
      cur.host = h.text;
      i += 2;
      continue;
    }
    if (t.kind === 'word') cur.words.push(t.text);
    else if (t.kind === 'quoted' || t.kind === 'string') cur.name = t;
    else return undefined;
    i++;
  }
  items.push(cur);
  if (!terminator) return undefined;

  const readGrantees = (): Grantee[] => {
    const gs: Grantee[] = [];
    while (i < toks.length) {
      const t = toks[i]!;
      if (t.kind === 'word' && ['IDENTIFIED', 'REQUIRE', 'WITH', 'AS', 'USING', 'PASSWORD', 'ACCOUNT'].includes(t.text.toUpperCase())) break;
      if (t.kind === 'punct' && t.text === ',') {
        i++;
        continue;
      }
      if (t.kind === 'punct') break;
      const user = t.text;
      i++;
      let host: string | undefined;
      if (peek()?.kind === 'punct' && peek()!.text === '@') {
        const h = toks[i + 1];
        if (!h || h.kind === 'punct') break;
        host = h.text;
        i += 2;
      }
      gs.push({ user, host });
    }
    return gs;
  };

  if (terminator === 'TO' || (terminator === 'FROM' && items.every((it) => it.words.length === 0))) {
    // GRANT role[, role] TO grantee — roles are names, not privilege words.
    const roles: Grantee[] = items.map((it) => ({ user: it.name?.text ?? it.words.join(' '), host: it.host }));
    if (!grant) return undefined;
    return { kind: 'roles', roles, grantees: readGrantees() };
  }
  if (terminator !== 'ON') return undefined;
  const privileges = items.map((it) => ({ name: normPrivilege(it.words), columns: it.columns }));
  if (privileges.some((p) => p.name === 'PROXY')) return undefined;

  // Object type, then the level.
  let level: GrantLevel;
  if (isWord(peek(), 'TABLE')) i++;
  if (['FUNCTION', 'PROCEDURE', 'PACKAGE'].some((w) => isWord(peek(), w))) {
    i++;
    if (isWord(peek(), 'BODY')) i++;
    level = { kind: 'other' };
    // Skip the routine name.
    while (i < toks.length && !isWord(toks[i], 'TO') && !isWord(toks[i], 'FROM')) i++;
  } else {
    const a = toks[i++];
    if (!a) return undefined;
    const dot = peek()?.kind === 'punct' && peek()!.text === '.';
    if (dot) {
      i++;
      const b = toks[i++];
      if (!b) return undefined;
      const aStar = a.kind === 'punct' && a.text === '*';
      const bStar = b.kind === 'punct' && b.text === '*';
      if (aStar && bStar) level = { kind: 'global' };
      else if (aStar) return undefined;
      else if (bStar) level = { kind: 'db', db: a.text };
      else level = { kind: 'table', db: a.text, table: b.text };
    } else if (a.kind === 'punct' && a.text === '*') {
      level = { kind: 'other' }; // `ON *`: the default database at grant time; SHOW GRANTS never prints it
    } else {
      level = { kind: 'table', db: undefined, table: a.text };
    }
  }
  if (!(isWord(peek(), 'TO') || isWord(peek(), 'FROM'))) return undefined;
  i++;
  return { kind: 'privileges', grant, privileges, level, grantees: readGrantees() };
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
