/**
 * How the repository's own checks read imports: test/unit/layers.test.ts (the
 * layer rule, and that src/ holds only what the shipped command loads) and
 * tools/unreachable.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The module specifiers a file imports. Static imports and re-exports start a
 * line (so examples in comments, which start with " *", are not read);
 * dynamic imports are taken wherever a literal path is passed.
 */
export function importSpecifiers(text: string): string[] {
  const re = /^[ \t]*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]|^[ \t]*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
  return [...text.matchAll(re)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** The files under dir whose name ends in ext, sorted, as absolute paths. */
export function sourceFiles(dir: string, ext = '.ts'): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(ext))
    .sort()
    .map((name) => join(dir, name));
}

/** Every file reachable from `entry` through relative imports (a `.js` specifier names its `.ts` source). */
export function reachableFrom(entry: string, read: (file: string) => string): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of importSpecifiers(read(file))) {
      if (spec.startsWith('.')) todo.push(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
    }
  }
  return seen;
}

/** The files under srcDir that `entry` never loads, with their line counts. */
export function unreachableFiles(srcDir: string, entry: string): Array<{ file: string; lines: number }> {
  const read = (file: string): string => readFileSync(file, 'utf8');
  const reached = reachableFrom(entry, read);
  return sourceFiles(srcDir)
    .filter((f) => !reached.has(f))
    .map((file) => ({ file, lines: read(file).split('\n').length - 1 }));
}
