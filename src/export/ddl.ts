import { FlatloadError } from '../errors/index.js';

/**
 * A mysqldump `t.sql` file, read as the server and the `mariadb` client read
 * it: statements end at the current DELIMITER outside strings, quoted names
 * and comments; `--`, `#` and `/* *\/` comments are nothing; an executable
 * comment (`/*!40101 … *\/`, `/*M!100101 … *\/`) is SQL when the server's
 * version is at least its own, else nothing. Pure.
 */
export interface SqlToken {
  /** word: keyword, name or number; var: `@x`, `@@x`, `@@session.x`; string: '…' or "…"; ident: `…`. */
  kind: 'word' | 'var' | 'string' | 'ident' | 'punct';
  /** The value: a string or quoted name unquoted, anything else as written. */
  value: string;
}

export interface SqlStatement {
  /** 1-based line of the statement's first character. */
  line: number;
  /** As written, trimmed (for messages and for running a file whole). */
  text: string;
  /** What the server runs: comments that are nothing taken out, live executable comments kept. */
  runText: string;
  /** The SQL tokens, executable comments' content included. */
  tokens: SqlToken[];
}

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;

function malformed(line: number, what: string): FlatloadError {
  return new FlatloadError('INPUT_MALFORMED', what, { line });
}

/** The end of a quoted run starting at `i` (index after the closing quote); a doubled quote or (not for names) a backslash escapes. */
function quoteEnd(text: string, i: number, line: number): number {
  const q = text[i]!;
  let j = i + 1;
  for (;;) {
    if (j >= text.length) throw malformed(line, `a ${q === '`' ? 'quoted name' : 'string'} that starts on line ${line} is not closed`);
    const c = text[j]!;
    if (c === '\\' && q !== '`') j += 2;
    else if (c === q && text[j + 1] === q) j += 2;
    else if (c === q) return j + 1;
    else j++;
  }
}

function unquote(raw: string): string {
  const q = raw[0]!;
  const body = raw.slice(1, -1).split(q + q).join(q);
  return q === '`' ? body : body.replace(/\\(.)/gs, '$1');
}

/**
 * Splits a `.sql` file into statements. `serverVersion` is the server's as
 * one number (10.11.6 → 101106): it decides which executable comments run.
 */
export function splitSql(text: string, serverVersion: number): SqlStatement[] {
  const s = new SqlSplitter(text, serverVersion);
  while (s.i < text.length) s.step();
  s.push();
  return s.out;
}

/** splitSql's position in the text and the statement it is building. */
class SqlSplitter {
  readonly out: SqlStatement[] = [];
  delimiter = ';';
  raw = '';
  run = '';
  tokens: SqlToken[] = [];
  startLine = 0;
  line = 1;
  /** The line an open executable comment started on, or 0. */
  execOpen = 0;
  i = 0;

  constructor(
    readonly text: string,
    readonly serverVersion: number,
  ) {}

  push(): void {
    if (this.execOpen) throw malformed(this.execOpen, `the statement on line ${this.startLine} ends inside the /*! … */ comment opened on line ${this.execOpen}`);
    if (this.tokens.length > 0) this.out.push({ line: this.startLine, text: this.raw.trim(), runText: this.run.trim(), tokens: this.tokens });
    this.raw = '';
    this.run = '';
    this.tokens = [];
    this.startLine = 0;
  }

  /** Moves past text[i, end): kept in the statement (`kept`), or a comment/delimiter it does not hold. */
  take(end: number, kept: boolean, token?: SqlToken, starts = token !== undefined): void {
    const piece = this.text.slice(this.i, end);
    if (this.startLine === 0 && starts) this.startLine = this.line;
    if (this.startLine !== 0) {
      this.raw += piece;
      this.run += kept ? piece : ' ';
    }
    if (token) this.tokens.push(token);
    for (let k = this.i; k < end; k++) if (this.text.charCodeAt(k) === 10) this.line++;
    this.i = end;
  }

  /** One token, comment, delimiter or DELIMITER line. */
  step(): void {
    const { text, i } = this;
    if ((i === 0 || text[i - 1] === '\n') && this.startLine === 0 && this.delimiterLine()) return;
    const c = text[i]!;
    const next = text[i + 1];
    if (text.startsWith(this.delimiter, i)) {
      const at = this.startLine;
      this.startLine = 0;
      this.take(i + this.delimiter.length, false);
      this.startLine = at;
      this.push();
    } else if (/\s/.test(c)) this.take(i + 1, true);
    else if (c === '#' || (c === '-' && next === '-' && (i + 2 >= text.length || text.charCodeAt(i + 2) <= 32))) {
      const end = text.indexOf('\n', i);
      this.take(end === -1 ? text.length : end, false);
    } else if (c === '/' && next === '*') this.blockComment();
    else if (c === '*' && next === '/' && this.execOpen) {
      this.execOpen = 0;
      this.take(i + 2, true);
    } else if (c === "'" || c === '"' || c === '`') {
      const end = quoteEnd(text, i, this.line);
      this.take(end, true, { kind: c === '`' ? 'ident' : 'string', value: unquote(text.slice(i, end)) });
    } else if (c === '@') {
      const m = /^@@(?:(?:global|session|local)\.)?[A-Za-z0-9_$.]+|^@(?:[A-Za-z0-9_$.]+|'(?:[^'\\]|\\.)*'|`[^`]*`)?/i.exec(text.slice(i, i + 200))!;
      this.take(i + m[0].length, true, { kind: 'var', value: m[0] });
    } else if (WORD.test(c)) {
      let end = i + 1;
      while (end < text.length && WORD.test(text[end]!)) end++;
      this.take(end, true, { kind: 'word', value: text.slice(i, end) });
    } else this.take(i + 1, true, { kind: 'punct', value: c });
  }

  /** A `DELIMITER x` line (the mysql client's command) between statements: taken, and true. */
  private delimiterLine(): boolean {
    const nl = this.text.indexOf('\n', this.i);
    const lineEnd = nl === -1 ? this.text.length : nl;
    const m = /^\s*DELIMITER\s+(\S+)\s*$/i.exec(this.text.slice(this.i, lineEnd));
    if (!m) return false;
    this.delimiter = m[1]!;
    this.take(lineEnd, false);
    return true;
  }

  /** A comment this server skips, or the opening of an executable one it runs (`/*!`, `/*M!`, versioned). */
  private blockComment(): void {
    const { text, i, line } = this;
    const exec = /^\/\*M?!(\d{5,6})?/.exec(text.slice(i, i + 11));
    const live = exec !== null && (exec[1] === undefined || Number(exec[1]) <= this.serverVersion);
    if (live) {
      if (this.execOpen) throw malformed(line, `a /*! … */ comment inside another one (line ${this.execOpen})`);
      this.execOpen = line;
      this.take(i + exec[0].length, true, undefined, true);
      return;
    }
    const end = text.indexOf('*/', i + 2);
    if (end === -1) throw malformed(line, `a comment that starts on line ${line} is not closed`);
    this.take(end + 2, false);
  }
}

/** Session variables mysqldump sets around a table's CREATE TABLE (and sets back): the only ones a `.sql` file may set. */
export const SESSION_VARIABLES = [
  'character_set_client',
  'character_set_connection',
  'character_set_results',
  'collation_connection',
  'time_zone',
  'sql_mode',
  'sql_notes',
  'unique_checks',
  'foreign_key_checks',
  'sql_quote_show_create',
  'check_constraint_checks',
  'note_verbosity',
] as const;

const NAMES_SETS = ['character_set_client', 'character_set_connection', 'character_set_results', 'collation_connection'];

export interface SidecarPlan {
  /** The statements to run, in order (the session SETs and the one CREATE TABLE). */
  run: string[];
  /** The session variables they change, to be set back afterwards. */
  sessionVariables: string[];
}

const upper = (t: SqlToken | undefined): string => (t && t.kind === 'word' ? t.value.toUpperCase() : '');

/** A name token (word or `quoted`), or undefined. */
const nameOf = (t: SqlToken | undefined): string | undefined => (t && (t.kind === 'word' || t.kind === 'ident') ? t.value : undefined);

/** `[db.]name` at tokens[k]: the names and the index after them. */
function qualifiedName(tokens: SqlToken[], k: number): { db: string | undefined; table: string; next: number } | undefined {
  const a = nameOf(tokens[k]);
  if (a === undefined) return undefined;
  if (tokens[k + 1]?.value === '.' && tokens[k + 1]!.kind === 'punct') {
    const b = nameOf(tokens[k + 2]);
    return b === undefined ? undefined : { db: a, table: b, next: k + 3 };
  }
  return { db: undefined, table: a, next: k + 1 };
}

/** The session variables a mysqldump-style `SET` changes, or undefined when it is anything else. */
function sessionSet(tokens: SqlToken[]): string[] | undefined {
  const second = upper(tokens[1]);
  if (second === 'NAMES' || second === 'CHARSET' || (second === 'CHARACTER' && upper(tokens[2]) === 'SET')) {
    const rest = tokens.slice(second === 'CHARACTER' ? 3 : 2);
    const simple = rest.every((t) => t.kind === 'word' || t.kind === 'string');
    const ok = simple && (rest.length === 1 || (rest.length === 3 && second === 'NAMES' && upper(rest[1]) === 'COLLATE'));
    return ok ? NAMES_SETS : undefined;
  }
  const changed: string[] = [];
  let k = 1;
  while (k < tokens.length) {
    let target = tokens[k]!;
    if (upper(target) === 'SESSION' || upper(target) === 'LOCAL') target = tokens[++k]!;
    if (target === undefined) return undefined;
    if (target.kind === 'var' && !target.value.startsWith('@@')) {
      // A user variable: nothing outside this session sees it.
    } else {
      const name = target.kind === 'var' ? /^@@(?:(session|local)\.)?(.+)$/i.exec(target.value)?.[2] : target.kind === 'word' ? target.value : undefined;
      const known = SESSION_VARIABLES.find((v) => v === name?.toLowerCase());
      if (known === undefined) return undefined;
      changed.push(known);
    }
    const eq = tokens[k + 1];
    if (eq?.kind !== 'punct' || (eq.value !== '=' && eq.value !== ':')) return undefined;
    k += eq.value === ':' ? 3 : 2;
    if (eq.value === ':' && tokens[k - 1]?.value !== '=') return undefined;
    if (tokens[k]?.kind === 'punct' && (tokens[k]!.value === '-' || tokens[k]!.value === '+')) k++;
    // One plain value: a literal, a word (ON, DEFAULT, utf8mb4, 0) or a variable — never an expression that could call a function.
    const v = tokens[k];
    if (v === undefined || v.kind === 'punct' || v.kind === 'ident') return undefined;
    k++;
    if (k < tokens.length) {
      if (tokens[k]!.kind !== 'punct' || tokens[k]!.value !== ',') return undefined;
      k++;
      if (k >= tokens.length) return undefined;
    }
  }
  return changed;
}

/** Why a CREATE TABLE does more than create the table (or names another), or undefined when it is the table's. */
function createProblem(tokens: SqlToken[], db: string, table: string): string | undefined {
  let k = 2;
  if (upper(tokens[k]) === 'IF' && upper(tokens[k + 1]) === 'NOT' && upper(tokens[k + 2]) === 'EXISTS') k += 3;
  const name = qualifiedName(tokens, k);
  if (!name || name.table !== table || (name.db !== undefined && name.db !== db)) return `it creates another table than ${db}.${table}`;
  const rest = tokens.slice(name.next);
  if (upper(rest[0]) === 'LIKE' || (rest[0]?.value === '(' && upper(rest[1]) === 'LIKE')) return 'it copies another table (LIKE)';
  if (rest.some((t) => upper(t) === 'SELECT')) return 'it reads rows (CREATE … SELECT)';
  if (rest.some((t) => t.kind === 'punct' && t.value === ';')) return 'it holds more than one statement';
  return undefined;
}

function excerpt(s: SqlStatement): string {
  const flat = s.text.replace(/\s+/g, ' ');
  return flat.length > 100 ? `${flat.slice(0, 97)}…` : flat;
}

/**
 * What a table's `.sql` file may run: its own CREATE TABLE (once) and the
 * session SETs mysqldump writes around it. `DROP TABLE [IF EXISTS]` of that
 * same table is left out (the file runs only when the table is missing);
 * anything else stops before anything runs, naming the statement and its line.
 */
export function sidecarPlan(text: string, o: { file: string; db: string; table: string; serverVersion: number }): SidecarPlan {
  const refuse = (s: SqlStatement, why: string): FlatloadError =>
    new FlatloadError('UNSUPPORTED', `${o.file} line ${s.line}: "${excerpt(s)}" ${why}; a dump directory is input, not a script: its .sql file may only create its own table`, {
      file: o.file,
      line: s.line,
      table: `${o.db}.${o.table}`,
      hint: 'remove the statement from the file, or add --run-sql-files to run every statement of the .sql files as they are',
    });
  let statements: SqlStatement[];
  try {
    statements = splitSql(text, o.serverVersion);
  } catch (err) {
    throw err instanceof FlatloadError ? err.withContext({ file: o.file }) : err;
  }
  const plan: SidecarPlan = { run: [], sessionVariables: [] };
  let created = false;
  for (const s of statements) {
    const first = upper(s.tokens[0]);
    if (first === 'SET') {
      const vars = sessionSet(s.tokens);
      if (vars === undefined) throw refuse(s, `is not a SET of a session variable mysqldump writes (${SESSION_VARIABLES.join(', ')}) or of a @user variable, to one plain value`);
      for (const v of vars) if (!plan.sessionVariables.includes(v)) plan.sessionVariables.push(v);
      plan.run.push(s.runText);
    } else if (first === 'DROP' && upper(s.tokens[1]) === 'TABLE') {
      const k = upper(s.tokens[2]) === 'IF' && upper(s.tokens[3]) === 'EXISTS' ? 4 : 2;
      const name = qualifiedName(s.tokens, k);
      const same = name !== undefined && name.next === s.tokens.length && name.table === o.table && (name.db === undefined || name.db === o.db);
      if (!same) throw refuse(s, `drops another table than ${o.db}.${o.table}`);
    } else if (first === 'CREATE' && upper(s.tokens[1]) === 'TABLE') {
      const problem = created ? `is a second CREATE TABLE` : createProblem(s.tokens, o.db, o.table);
      if (problem !== undefined) throw refuse(s, problem.startsWith('is ') ? problem : `is refused: ${problem}`);
      created = true;
      plan.run.push(s.runText);
    } else {
      throw refuse(s, `is not ${o.table}'s CREATE TABLE`);
    }
  }
  if (!created) {
    throw new FlatloadError('UNSUPPORTED', `${o.file} holds no CREATE TABLE for ${o.table}`, { file: o.file, table: `${o.db}.${o.table}` });
  }
  return plan;
}

/** Every statement of the file as written (--run-sql-files): the user asked for the file to run whole. */
export function allStatements(text: string, file: string, serverVersion: number): string[] {
  try {
    return splitSql(text, serverVersion).map((s) => s.text);
  } catch (err) {
    throw err instanceof FlatloadError ? err.withContext({ file }) : err;
  }
}
