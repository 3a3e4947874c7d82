import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * Reads MySQL/MariaDB option files the way the client library does: groups in
 * brackets, `key=value` (spaces allowed, quotes stripped, `_` and `-` the same),
 * `#`/`;` comments, `!include FILE` and `!includedir DIR` (*.cnf). Later files
 * and later lines win.
 */
export type OptionGroups = Map<string, Map<string, string>>;

/** Groups the `mariadb` client reads, plus our own. */
export const CLIENT_GROUPS = ['client', 'client-server', 'client-mariadb', 'flatload'] as const;

export function defaultOptionFiles(): string[] {
  return ['/etc/my.cnf', '/etc/mysql/my.cnf', join(homedir(), '.my.cnf')];
}

export function readOptionFiles(paths: readonly string[]): OptionGroups {
  const groups: OptionGroups = new Map();
  const seen = new Set<string>();
  for (const p of paths) parseInto(p, groups, seen, 0);
  return groups;
}

function parseInto(path: string, groups: OptionGroups, seen: Set<string>, depth: number): void {
  if (depth > 10 || seen.has(path) || !existsSync(path)) return;
  seen.add(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return; // An unreadable system option file is skipped, as the client does.
  }
  parseOptionText(text, groups, (directive, arg) => {
    const target = isAbsolute(arg) ? arg : join(dirname(path), arg);
    if (directive === 'include') parseInto(target, groups, seen, depth + 1);
    else if (directive === 'includedir' && existsSync(target) && statSync(target).isDirectory()) {
      for (const f of readdirSync(target).filter((n) => n.endsWith('.cnf')).sort()) {
        parseInto(join(target, f), groups, seen, depth + 1);
      }
    }
  });
}

/** Pure part: text in, groups out; includes are handed to the callback. */
export function parseOptionText(
  text: string,
  groups: OptionGroups,
  onInclude: (directive: 'include' | 'includedir', arg: string) => void = () => undefined,
): OptionGroups {
  let group: Map<string, string> | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const inc = /^!(includedir|include)\s+(.+)$/.exec(line);
    if (inc) {
      onInclude(inc[1] as 'include' | 'includedir', inc[2]!.trim());
      continue;
    }
    const g = /^\[([^\]]+)\]/.exec(line);
    if (g) {
      const name = g[1]!.trim().toLowerCase();
      group = groups.get(name) ?? new Map();
      groups.set(name, group);
      continue;
    }
    if (!group) continue;
    const eq = line.indexOf('=');
    const key = (eq === -1 ? line : line.slice(0, eq)).trim().toLowerCase().replace(/_/g, '-');
    let value = eq === -1 ? '' : line.slice(eq + 1).trim();
    value = unquote(value);
    group.set(key, value);
  }
  return groups;
}

function unquote(value: string): string {
  const q = value[0];
  if ((q === '"' || q === "'") && value.length >= 2) {
    const end = value.indexOf(q, 1);
    if (end > 0) return value.slice(1, end).replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', b: '\b', s: ' ' })[c] ?? c);
  }
  // An unquoted value ends at an inline comment.
  const hash = value.search(/\s#/);
  return (hash === -1 ? value : value.slice(0, hash)).trim();
}

/** The merged `[client]`-family options, later groups overriding earlier ones. */
export function clientOptions(groups: OptionGroups): Map<string, string> {
  const merged = new Map<string, string>();
  for (const g of CLIENT_GROUPS) for (const [k, v] of groups.get(g) ?? []) merged.set(k, v);
  return merged;
}
