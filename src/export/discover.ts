/**
 * The I/O edge of export discovery: what the command line names (a
 * directory, files, a quoted glob, or a --manifest) read from disk, then
 * grouped into tables by the pure rules in names.ts and manifest.ts.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FlatloadError } from '../errors/index.js';
import { parseManifest } from './manifest.js';
import { globMatcher, groupFiles, isGlob, isRejectFile, parseFileName, type ExportTable } from './names.js';

export interface DiscoveredTable extends ExportTable {
  /** Bytes of its files as they are on disk (compressed files count compressed). */
  sizeBytes: number;
  sizes: Array<{ path: string; sizeBytes: number; mtimeMs: number }>;
}

export interface Discovered {
  /** What was named, for messages and the bookkeeping. */
  source: string;
  tables: DiscoveredTable[];
}

function statOf(path: string): { sizeBytes: number; mtimeMs: number; dir: boolean } {
  try {
    const s = statSync(path);
    return { sizeBytes: s.size, mtimeMs: Math.round(s.mtimeMs), dir: s.isDirectory() };
  } catch (err) {
    throw new FlatloadError('INPUT_NOT_FOUND', `cannot read ${path}: ${(err as Error).message}`, { file: path });
  }
}

/** Files in a directory that an export loads: data files and mysqldump's .sql files, not reject files. */
function exportFilesIn(dir: string, match?: RegExp): string[] {
  return readdirSync(dir)
    .filter((name) => (match ? match.test(name) : true))
    .map((name) => join(dir, name))
    .filter((p) => !isRejectFile(p) && statSync(p).isFile() && parseFileName(p).kind !== 'other');
}

export function discoverExport(args: readonly string[], manifest: string | undefined, cwd: string): Discovered {
  let tables: ExportTable[];
  let source: string;
  if (manifest !== undefined) {
    if (args.length > 0) throw new FlatloadError('USAGE', '--manifest names the files itself: give no input files with it');
    const path = resolve(cwd, manifest);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new FlatloadError('INPUT_NOT_FOUND', `cannot read the manifest ${manifest}: ${(err as Error).message}`, { file: manifest });
    }
    tables = parseManifest(text, manifest, dirname(path));
    source = path;
  } else {
    if (args.length === 0) throw new FlatloadError('USAGE', 'name a directory, files, a glob or a --manifest to load');
    const paths: string[] = [];
    for (const arg of args) {
      const p = resolve(cwd, arg);
      if (isGlob(arg)) {
        const found = exportFilesIn(dirname(p), globMatcher(p));
        if (found.length === 0) throw new FlatloadError('INPUT_NOT_FOUND', `no file matches ${arg}`, { file: arg });
        paths.push(...found);
      } else if (statOf(p).dir) {
        const found = exportFilesIn(p);
        if (found.length === 0) throw new FlatloadError('INPUT_NOT_FOUND', `no data files (${'.txt, .csv, .tsv, .dat'}, optionally .gz/.zst) in ${arg}`, { file: arg });
        paths.push(...found);
      } else paths.push(p);
    }
    tables = groupFiles(paths);
    source = args.length === 1 ? resolve(cwd, args[0]!) : args.map((a) => resolve(cwd, a)).join(' ');
  }
  const out = tables.map((t) => {
    const sizes = t.files.map((f) => {
      const s = statOf(f);
      if (s.dir) throw new FlatloadError('USAGE', `${f} is a directory: name it alone to load every file in it`, { file: f });
      return { path: realpathSync(f), sizeBytes: s.sizeBytes, mtimeMs: s.mtimeMs };
    });
    return { ...t, files: sizes.map((s) => s.path), sizes, sizeBytes: sizes.reduce((a, s) => a + s.sizeBytes, 0) };
  });
  return { source, tables: out };
}
