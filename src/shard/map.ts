import { FlatloadError } from '../errors/index.js';
import type { KeyAlgorithm, KeyColumn } from './keyHash.js';
import { PARTITION_METHODS, unevaluableReason, type ListValue, type PartitionColumn, type PartitionMethod, type PartitionRule, type RangeValue } from './partition.js';

/**
 * A Spider table's shard map: its partition rule and, per partition, the
 * backend table that holds the partition's rows. Built from what the front
 * server reports (SHOW CREATE TABLE, information_schema.PARTITIONS and
 * COLUMNS, mysql.servers without the Password column); pure.
 *
 * Where Spider looks for a partition's rows (MariaDB's Spider reads the same
 * parameters from the partition's COMMENT or, since 10.8, its REMOTE_*
 * options, and falls back to the table's): the server named by `srv` /
 * REMOTE_SERVER gives host, port, socket and user; the database is
 * `database` / REMOTE_DATABASE, else the server's Db; the table is `table` /
 * REMOTE_TABLE, else the partition's own internal name `t#P#p` (observed:
 * a partition with only `srv "b1"` made the front look for
 * 'mysql.nodb#P#p0' on b1, mysql being b1's Db).
 */
export interface ShardBackend {
  /** mysql.servers name, when the partition names one. */
  server: string | undefined;
  host: string;
  port: number;
  /** Unix socket, when the server entry gives one. */
  socket: string | undefined;
  database: string;
  table: string;
  /** User name from the server entry or the comment (never a password). */
  user: string | undefined;
}

export interface ShardPartition {
  name: string;
  /** 0-based position, the value partitionIndex() returns. */
  index: number;
  /** PARTITION_DESCRIPTION as the server shows it (RANGE bound, LIST values), or null. */
  description: string | null;
  backend: ShardBackend;
}

export interface ShardMap {
  db: string;
  table: string;
  engine: string;
  rule: PartitionRule;
  partitions: ShardPartition[];
  /** Why flatload cannot route rows by this rule itself (then the front loads them), or undefined. */
  unevaluable: string | undefined;
}

/** information_schema.COLUMNS, the fields the map needs. */
export interface ColumnRow {
  name: string;
  /** DATA_TYPE, e.g. bigint, varchar. */
  dataType: string;
  /** COLUMN_TYPE, e.g. "bigint(20) unsigned", "varchar(20)". */
  columnType: string;
  collation: string | null;
  /** CHARACTER_MAXIMUM_LENGTH (characters for text, bytes for binary). */
  maxChars: number | null;
}

/** information_schema.PARTITIONS, one row per partition. */
export interface PartitionRow {
  name: string;
  ordinal: number;
  method: string | null;
  expression: string | null;
  description: string | null;
  comment: string | null;
  subpartitionMethod?: string | null;
}

/** mysql.servers without Password. */
export interface ServerRow {
  name: string;
  host: string;
  port: number;
  socket: string;
  db: string;
  username: string;
  wrapper: string;
}

const INT_BYTES: Record<string, 1 | 2 | 3 | 4 | 8> = { tinyint: 1, smallint: 2, mediumint: 3, int: 4, integer: 4, bigint: 8 };

/** How a column is stored and hashed, or undefined for types the partition evaluator does not handle. */
export function columnKeyType(c: ColumnRow): KeyColumn | undefined {
  const t = c.dataType.toLowerCase();
  const bytes = INT_BYTES[t];
  if (bytes) return { kind: 'int', bytes, unsigned: /\bunsigned\b/i.test(c.columnType) };
  if ((t === 'varchar' || t === 'char') && c.collation && c.maxChars !== null) return { kind: 'string', collation: c.collation, maxChars: c.maxChars };
  if ((t === 'varbinary' || t === 'binary') && c.maxChars !== null) return { kind: 'binary', maxBytes: c.maxChars, fixed: t === 'binary' };
  return undefined;
}

/**
 * Spider's connection parameters in a COMMENT or CONNECTION string:
 * `wrapper "mysql", srv "b1", table "t"` (values in double or single quotes,
 * or bare words; backslash escapes inside quotes).
 */
export function parseSpiderParams(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\s*([A-Za-z_]+)\s+(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s,]+))\s*(?:,|$)/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const raw = m[2] ?? m[3] ?? m[4] ?? '';
    out[m[1]!.toLowerCase()] = raw.replace(/\\(.)/g, '$1');
    if (re.lastIndex >= text.length) break;
  }
  return out;
}

/** Reads one SQL string literal at text[i] ('…' with '' and backslash escapes); returns its value and the index after it. */
function readSqlString(text: string, i: number): { value: string; end: number } | undefined {
  const q = text[i];
  if (q !== "'" && q !== '"') return undefined;
  let value = '';
  let k = i + 1;
  while (k < text.length) {
    const ch = text[k]!;
    if (ch === '\\' && k + 1 < text.length) {
      const n = text[k + 1]!;
      value += n === 'n' ? '\n' : n === 't' ? '\t' : n === '0' ? '\0' : n;
      k += 2;
    } else if (ch === q) {
      if (text[k + 1] === q) {
        value += q;
        k += 2;
      } else return { value, end: k + 1 };
    } else {
      value += ch;
      k++;
    }
  }
  return undefined;
}

/** `NAME = 'value'` options (COMMENT, CONNECTION, REMOTE_*) in a piece of DDL, outside quotes; upper-case names. */
export function readStringOptions(ddl: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < ddl.length) {
    const ch = ddl[i]!;
    if (ch === "'" || ch === '"' || ch === '`') {
      const s = ch === '`' ? { end: ddl.indexOf('`', i + 1) + 1 } : readSqlString(ddl, i);
      i = s && s.end > i ? s.end : ddl.length;
      continue;
    }
    const m = /^([A-Za-z_]+)\s*=?\s*(?=['"])/.exec(ddl.slice(i, i + 80));
    if (m && (i === 0 || /[\s,(]/.test(ddl[i - 1]!))) {
      const s = readSqlString(ddl, i + m[0].length);
      if (s) {
        out[m[1]!.toUpperCase()] = s.value;
        i = s.end;
        continue;
      }
    }
    i++;
  }
  return out;
}

interface CreateTableParts {
  /** Options after the column list (ENGINE=…, COMMENT='…', CONNECTION='…', REMOTE_SERVER='…'). */
  tableOptions: Record<string, string>;
  primaryKey: string[];
  keyAlgorithm: KeyAlgorithm;
  /** Per partition name, its options (COMMENT, REMOTE_SERVER, …). */
  partitionOptions: Map<string, Record<string, string>>;
  /**
   * The partitions as SHOW CREATE TABLE defines them, in the shape of
   * information_schema.PARTITIONS rows: the fallback when that view cannot be
   * read (for a Spider table it asks every backend for statistics, so one
   * backend down or one remote table missing makes it fail).
   */
  partitionRows: PartitionRow[];
}

/** The index of the last character of the quoted string or identifier starting at text[i], or i itself. */
function skipQuoted(text: string, i: number): number {
  const ch = text[i];
  if (ch === "'" || ch === '"') {
    const s = readSqlString(text, i);
    return s ? s.end - 1 : i;
  }
  if (ch === '`') {
    const e = text.indexOf('`', i + 1);
    return e > i ? e : i;
  }
  return i;
}

/** Splits `(a, b), (c)`-style text at top-level commas, respecting quotes and parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    i = skipQuoted(text, i);
    const ch = text[i]!;
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}

function unquoteIdentifier(s: string): string {
  const t = s.trim();
  return t.startsWith('`') && t.endsWith('`') ? t.slice(1, -1).replace(/``/g, '`') : t;
}

/** Index just past the parenthesised group that opens at text[open], skipping quoted text. */
function closeParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    i = skipQuoted(text, i);
    const ch = text[i]!;
    if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i + 1;
  }
  return text.length;
}

const BOUND = /^\s*VALUES\s+(LESS\s+THAN|IN)\s*/i;

/** The pieces of SHOW CREATE TABLE the shard map needs. */
export function parseCreateTable(text: string): CreateTableParts {
  const partAt = text.search(/\n\s*PARTITION BY\s/i);
  const head = partAt === -1 ? text : text.slice(0, partAt);
  const closing = head.lastIndexOf('\n)');
  const tableOptions = readStringOptions(closing === -1 ? '' : head.slice(closing + 2));
  const pk = /\n\s*PRIMARY KEY\s*\(([^)]*)\)/i.exec(head);
  const primaryKey = pk ? splitTopLevel(pk[1]!).map((c) => unquoteIdentifier(c.replace(/\(\d+\)$/, ''))) : [];
  const partitionOptions = new Map<string, Record<string, string>>();
  const partitionRows: PartitionRow[] = [];
  let keyAlgorithm: KeyAlgorithm = 2;
  if (partAt !== -1) {
    const tail = text.slice(partAt);
    const by = /PARTITION BY\s+(LINEAR\s+)?(HASH|KEY|RANGE|LIST)(\s+ALGORITHM\s*=\s*(\d))?\s*(COLUMNS)?\s*(?=\()/i.exec(tail);
    if (by) {
      if (by[4] === '1') keyAlgorithm = 1;
      const method = [by[1] ? 'LINEAR' : '', by[2]!.toUpperCase(), by[5] ? 'COLUMNS' : ''].filter(Boolean).join(' ');
      const exprOpen = by.index + by[0].length;
      const exprClose = closeParen(tail, exprOpen);
      const expression = tail.slice(exprOpen + 1, exprClose - 1).trim();
      const after = tail.slice(exprClose);
      const listOpen = after.search(/\(\s*PARTITION\s+/i);
      const row = (name: string, ordinal: number, description: string | null, options: Record<string, string>): void => {
        partitionOptions.set(name, options);
        partitionRows.push({ name, ordinal, method, expression, description, comment: options['COMMENT'] ?? '' });
      };
      if (listOpen === -1) {
        // `PARTITIONS n` without a list: the server names them p0 … pn-1.
        const n = Number(/^\s*PARTITIONS\s+(\d+)/i.exec(after)?.[1] ?? 1);
        for (let i = 0; i < n; i++) row(`p${i}`, i + 1, null, {});
      } else {
        const listClose = closeParen(after, listOpen);
        splitTopLevel(after.slice(listOpen + 1, listClose - 1)).forEach((entry, i) => {
          const m = /^PARTITION\s+(`(?:[^`]|``)*`|\S+)/i.exec(entry);
          if (!m) return;
          let rest = entry.slice(m[0].length);
          let description: string | null = null;
          const b = BOUND.exec(rest);
          if (b) {
            const at = b[0].length;
            if (rest[at] === '(') {
              const end = closeParen(rest, at);
              description = rest.slice(at + 1, end - 1).trim();
              rest = rest.slice(end);
            } else {
              const word = /^\w+/.exec(rest.slice(at))?.[0] ?? '';
              description = word.toUpperCase();
              rest = rest.slice(at + word.length);
            }
          } else if (/^\s*DEFAULT\b/i.test(rest)) {
            description = 'DEFAULT';
            rest = rest.replace(/^\s*DEFAULT\b/i, '');
          }
          row(unquoteIdentifier(m[1]!), i + 1, description, readStringOptions(rest));
        });
      }
    }
  }
  return { tableOptions, primaryKey, keyAlgorithm, partitionOptions, partitionRows };
}

/** "`a`,`b`" -> ['a', 'b']; undefined when the expression is anything but a list of plain columns. */
export function expressionColumns(expression: string): string[] | undefined {
  const parts = splitTopLevel(expression);
  const names: string[] = [];
  for (const p of parts) {
    if (/^`(?:[^`]|``)+`$/.test(p)) names.push(unquoteIdentifier(p));
    else if (/^[A-Za-z_][A-Za-z0-9_$]*$/.test(p)) names.push(p);
    else return undefined;
  }
  return names;
}

/** One RANGE bound tuple from PARTITION_DESCRIPTION ("100", "MAXVALUE", "10,MAXVALUE"); undefined if not integers. */
export function parseRangeDescription(desc: string): RangeValue[] | undefined {
  const out: RangeValue[] = [];
  for (const p of splitTopLevel(desc)) {
    if (/^MAXVALUE$/i.test(p)) out.push('MAXVALUE');
    else if (/^[+-]?\d+$/.test(p)) out.push(BigInt(p));
    else return undefined;
  }
  return out.length ? out : undefined;
}

/** LIST values from PARTITION_DESCRIPTION ("1,2,NULL" or "(0,1),(2,2)"); 'default' for DEFAULT; undefined if not integers. */
export function parseListDescription(desc: string, columns: number): ListValue[][] | 'default' | undefined {
  if (/^DEFAULT$/i.test(desc.trim())) return 'default';
  const value = (p: string): ListValue | undefined => (/^NULL$/i.test(p) ? null : /^[+-]?\d+$/.test(p) ? BigInt(p) : undefined);
  const tuples: ListValue[][] = [];
  for (const item of splitTopLevel(desc)) {
    const inner = item.startsWith('(') && item.endsWith(')') ? splitTopLevel(item.slice(1, -1)) : [item];
    if (inner.length !== columns) return undefined;
    const t = inner.map(value);
    if (t.some((x) => x === undefined)) return undefined;
    tuples.push(t as ListValue[]);
  }
  return tuples;
}

function normaliseMethod(m: string | null): PartitionMethod | undefined {
  const up = (m ?? '').toUpperCase().replace(/\s+/g, ' ').trim();
  return (PARTITION_METHODS as readonly string[]).includes(up) ? (up as PartitionMethod) : undefined;
}

export interface ShardMapInput {
  db: string;
  table: string;
  engine: string;
  showCreateTable: string;
  columns: ColumnRow[];
  /** information_schema.PARTITIONS rows; undefined to take the partitions from SHOW CREATE TABLE. */
  partitions: PartitionRow[] | undefined;
  servers: ServerRow[];
}

/**
 * The shard map of a partitioned table. Throws UNSUPPORTED for a table that
 * is not partitioned, is subpartitioned, uses a method flatload does not
 * know, or names a server mysql.servers does not have.
 */
export function buildShardMap(input: ShardMapInput): ShardMap {
  const where = `\`${input.db}\`.\`${input.table}\``;
  const ddl = parseCreateTable(input.showCreateTable);
  const rows = [...(input.partitions ?? ddl.partitionRows)].filter((p) => p.name).sort((a, b) => a.ordinal - b.ordinal);
  if (rows.length === 0) throw new FlatloadError('UNSUPPORTED', `${where} is not partitioned, so it has no shard map`, { table: where });
  if (rows.some((p) => p.subpartitionMethod) || /\n\s*SUBPARTITION BY\s/i.test(input.showCreateTable)) throw new FlatloadError('UNSUPPORTED', `${where} is subpartitioned; flatload maps only one level of partitions`, { table: where });
  const method = normaliseMethod(rows[0]!.method);
  if (!method) throw new FlatloadError('UNSUPPORTED', `${where} is partitioned by ${rows[0]!.method ?? '?'}, which flatload does not know`, { table: where });
  const expression = rows[0]!.expression ?? '';
  // KEY () with no columns partitions by the primary key.
  const names = method.endsWith('KEY') && expression.trim() === '' ? ddl.primaryKey : expressionColumns(expression);
  let columns: PartitionColumn[] | undefined;
  if (names && names.length > 0) {
    const cols: PartitionColumn[] = [];
    for (const n of names) {
      const c = input.columns.find((x) => x.name.toLowerCase() === n.toLowerCase());
      const type = c ? columnKeyType(c) : undefined;
      if (!type) {
        cols.length = 0;
        break;
      }
      cols.push({ name: c!.name, type });
    }
    columns = cols.length ? cols : undefined;
  }
  const rule: PartitionRule = { method, expression: expression || `(${ddl.primaryKey.map((c) => `\`${c}\``).join(',')})`, columns, partitionCount: rows.length };
  if (method.endsWith('KEY')) rule.keyAlgorithm = ddl.keyAlgorithm;
  let boundsReadable = true;
  if (method.startsWith('RANGE')) {
    const bounds = rows.map((p) => (p.description === null ? undefined : parseRangeDescription(p.description)));
    boundsReadable = bounds.every((b) => b !== undefined);
    if (boundsReadable) rule.rangeBounds = bounds as RangeValue[][];
  } else if (method.startsWith('LIST')) {
    const lists = rows.map((p) => (p.description === null ? undefined : parseListDescription(p.description, columns?.length ?? 1)));
    boundsReadable = lists.every((l) => l !== undefined);
    if (boundsReadable) rule.listValues = lists as Array<ListValue[][] | 'default'>;
  }

  const tableParams = { ...parseSpiderParams(ddl.tableOptions['CONNECTION'] ?? ''), ...parseSpiderParams(ddl.tableOptions['COMMENT'] ?? '') };
  const partitions = rows.map((p, index): ShardPartition => {
    const opts = ddl.partitionOptions.get(p.name) ?? {};
    const own = parseSpiderParams(opts['COMMENT'] ?? p.comment ?? '');
    const pick = (param: string, option: string): string | undefined => own[param] ?? opts[option] ?? tableParams[param] ?? ddl.tableOptions[option];
    const serverName = pick('srv', 'REMOTE_SERVER') ?? pick('server', 'REMOTE_SERVER');
    const server = serverName === undefined ? undefined : input.servers.find((s) => s.name === serverName);
    if (serverName !== undefined && !server) {
      throw new FlatloadError('UNSUPPORTED', `partition ${p.name} of ${where} names server "${serverName}", which mysql.servers on the front does not have`, { table: where });
    }
    const host = own['host'] ?? tableParams['host'] ?? server?.host;
    if (!host && !server?.socket) throw new FlatloadError('UNSUPPORTED', `partition ${p.name} of ${where} names no backend server or host`, { table: where });
    const socket = own['socket'] ?? tableParams['socket'] ?? (server?.socket || undefined);
    return {
      name: p.name,
      index,
      description: p.description,
      backend: {
        server: serverName,
        host: host ?? 'localhost',
        port: Number(own['port'] ?? tableParams['port'] ?? server?.port ?? 3306) || 3306,
        socket,
        database: pick('database', 'REMOTE_DATABASE') ?? (server?.db || input.db),
        table: pick('table', 'REMOTE_TABLE') ?? `${input.table}#P#${p.name}`,
        user: own['user'] ?? tableParams['user'] ?? (server?.username || undefined),
      },
    };
  });
  const unevaluable = boundsReadable ? unevaluableReason(rule) : `the ${method} bounds of ${where} are not plain integers`;
  return { db: input.db, table: input.table, engine: input.engine.toUpperCase(), rule, partitions, unevaluable };
}

/** The backends a map loads into, once each (several partitions usually share one backend table). */
export function distinctBackends(map: ShardMap): Array<{ backend: ShardBackend; partitions: number[] }> {
  const out = new Map<string, { backend: ShardBackend; partitions: number[] }>();
  for (const p of map.partitions) {
    const k = backendKey(p.backend);
    const e = out.get(k) ?? { backend: p.backend, partitions: [] };
    e.partitions.push(p.index);
    out.set(k, e);
  }
  return [...out.values()];
}

export function backendKey(b: ShardBackend): string {
  return `${b.socket ?? `${b.host}:${b.port}`}/${b.database}/${b.table}`;
}

/**
 * The map as canonical text, for a job's identity: equal text means the same
 * rows go to the same backend tables. No passwords are ever part of a map.
 */
export function shardMapFingerprint(map: ShardMap): string {
  return JSON.stringify(
    {
      table: `${map.db}.${map.table}`,
      method: map.rule.method,
      expression: map.rule.expression,
      columns: map.rule.columns?.map((c) => [c.name, c.type]) ?? null,
      keyAlgorithm: map.rule.keyAlgorithm ?? null,
      partitions: map.partitions.map((p) => [p.name, p.description, backendKey(p.backend)]),
    },
    (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
  );
}

/** What differs between the map a job started with and the map now, in words (empty when nothing). */
export function describeShardMapChange(before: ShardMap, after: ShardMap): string[] {
  const out: string[] = [];
  if (before.rule.method !== after.rule.method || before.rule.expression !== after.rule.expression) {
    out.push(`partitioning changed from ${before.rule.method} (${before.rule.expression}) to ${after.rule.method} (${after.rule.expression})`);
  }
  if ((before.rule.keyAlgorithm ?? 2) !== (after.rule.keyAlgorithm ?? 2)) out.push(`KEY ALGORITHM changed from ${before.rule.keyAlgorithm} to ${after.rule.keyAlgorithm}`);
  if (before.partitions.length !== after.partitions.length) out.push(`${before.partitions.length} partitions became ${after.partitions.length}`);
  for (let i = 0; i < Math.min(before.partitions.length, after.partitions.length); i++) {
    const a = before.partitions[i]!;
    const b = after.partitions[i]!;
    if (a.name !== b.name) out.push(`partition ${i + 1} was ${a.name}, is now ${b.name}`);
    if (a.description !== b.description) out.push(`partition ${b.name}'s values changed from ${a.description ?? '-'} to ${b.description ?? '-'}`);
    if (backendKey(a.backend) !== backendKey(b.backend)) out.push(`partition ${b.name} moved from ${backendKey(a.backend)} to ${backendKey(b.backend)}`);
  }
  if (JSON.stringify(before.rule.columns?.map((c) => c.type)) !== JSON.stringify(after.rule.columns?.map((c) => c.type))) out.push('the partitioning columns changed type');
  return out;
}
