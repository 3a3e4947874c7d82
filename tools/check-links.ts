/**
 * Citations a reader cannot open: every markdown link to a file of this
 * repository (and its #anchor), and every repository path named in docs, code
 * and tests (`src/…ts`, `docs/…md#anchor`, `test/…`, …), must name something
 * that exists; a removed file cited as `git show REV:path` must be in the
 * repository's history. Prints each broken one as file:line and exits 1 when there is any.
 * Run: `node --import tsx tools/check-links.ts`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceFiles } from './imports.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** GitHub's anchor for a heading: inline markup dropped, lower case, punctuation removed, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a markdown file offers: its headings (repeats get -1, -2 …) and explicit `<a id|name="…">`. */
export function anchorsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

/** A cited target: a path (relative to `base`) with an optional anchor, found at file:line. */
interface Citation {
  file: string;
  line: number;
  base: string;
  target: string;
  /** Set for `git show REV:path`: the revision the path is read at. */
  rev?: string;
  /** A second base the path may be relative to. */
  orUnder?: string;
}

const REPO_DIRS = 'src|test|docs|fixtures|bench|dev|tools';
/** A repository path named in prose or code: starts at one of the top folders, ends in a file extension, maybe an #anchor. */
const PATH_RE = new RegExp(`(?<![\\w./@:-])(?:${REPO_DIRS})/[\\w./-]*\\.(?:ts|md|json|py|sql|tsv|csv|svg)(?:#[\\w-]+)?`, 'g');
/** A file cited from history. */
const HISTORY_RE = /git show ([0-9a-f]{7,40}[\^~]*\d*):([\w./-]+)/g;
/** Files whose paths name files under src/ (the layer rule's cases), not the repository's top. */
const SRC_RELATIVE = new Set(['test/unit/layers.test.ts']);
/** A markdown link's target (not a URL, not a pure #anchor, which is checked against its own file). */
const LINK_RE = /\]\(([^)\s]+)\)/g;

export function citationsIn(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  const isMarkdown = file.endsWith('.md');
  text.split('\n').forEach((line, i) => {
    if (isMarkdown) {
      for (const m of line.matchAll(LINK_RE)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        out.push({ file, line: i + 1, base: target.startsWith('#') ? file : dirname(file), target });
      }
    }
    for (const m of line.matchAll(HISTORY_RE)) out.push({ file, line: i + 1, base: root, target: m[2]!, rev: m[1]! });
    for (const m of line.matchAll(PATH_RE)) {
      // A path inside a link target was checked above, relative to its file.
      if (isMarkdown && line[m.index - 1] === '(' && line[m.index - 2] === ']') continue;
      out.push({ file, line: i + 1, base: root, target: m[0] });
      if (SRC_RELATIVE.has(relative(root, file))) out[out.length - 1]!.orUnder = join(root, 'src');
    }
  });
  return out;
}

/** Why a citation cannot be opened, or undefined when it can. */
export function brokenReason(c: Citation, read: (file: string) => string): string | undefined {
  if (c.rev !== undefined) return inHistory(c.rev, c.target) ? undefined : `not in the repository's history at ${c.rev}`;
  const [path, anchor] = c.target.split('#', 2) as [string, string | undefined];
  let full = path === '' ? c.file : c.base === c.file ? c.file : resolve(c.base, path);
  if (!existsSync(full) && c.orUnder !== undefined) full = resolve(c.orUnder, path);
  if (!existsSync(full)) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (!full.endsWith('.md') || statSync(full).isDirectory()) return undefined;
  return anchorsOf(read(full)).has(anchor) ? undefined : `no heading #${anchor} in ${relative(root, full)}`;
}

function inHistory(rev: string, path: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${rev}:${path}`], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function main(): void {
  const files = [
    join(root, 'README.md'),
    ...['docs', 'fixtures', 'tools'].flatMap((d) => sourceFiles(join(root, d), '.md')),
    ...['src', 'test', 'bench', 'dev', 'fixtures', 'tools'].flatMap((d) => sourceFiles(join(root, d))),
  ];
  const cache = new Map<string, string>();
  const read = (f: string): string => {
    let t = cache.get(f);
    if (t === undefined) cache.set(f, (t = readFileSync(f, 'utf8')));
    return t;
  };
  let broken = 0;
  for (const file of files) {
    for (const c of citationsIn(file, read(file))) {
      const why = brokenReason(c, read);
      if (why === undefined) continue;
      broken++;
      process.stdout.write(`${relative(root, c.file)}:${c.line}: ${c.target}: ${why}\n`);
    }
  }
  process.stdout.write(`${broken} broken citation${broken === 1 ? '' : 's'} in ${files.length} files\n`);
  if (broken > 0) process.exitCode = 1;
}

main();
