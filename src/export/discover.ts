/**
 * The I/O edge of export discovery: what the command line names (a
 * directory, files, a quoted glob, or a --manifest) read from disk, then
 * grouped into tables by the pure rules in names.ts and manifest.ts.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FlatloadError } from '../errors/index.js';
import { parseManifest } from './manifest.js';
import { MYDUMPER_METADATA, parseMydumperMetadata, type MetadataTable } from './metadata.js';
import { DATA_EXTENSIONS, globMatcher, groupFiles, isGlob, isRejectFile, parseFileName, tableKey, type ExportTable } from './names.js';

export interface DiscoveredTable extends ExportTable {
  /** Bytes of its files as they are on disk (compressed files count compressed). */
  sizeBytes: number;
  sizes: Array<{ path: string; sizeBytes: number; mtimeMs: number }>;
}

export interface Discovered {
  /** What was named, for messages and the bookkeeping. */
  source: string;
  tables: DiscoveredTable[];
  /** Files in a named directory or glob that are not loaded, with why (`flatload plan DIR` lists them). */
  passedOver: PassedOver[];
  /** Tables mydumper's metadata lists that no data file holds (lost in transfer, say): the export is not the whole set. */
  missing: Array<MetadataTable & { file: string }>;
}

function statOf(path: string): { sizeBytes: number; mtimeMs: number; dir: boolean } {
  try {
    const s = statSync(path);
    return { sizeBytes: s.size, mtimeMs: Math.round(s.mtimeMs), dir: s.isDirectory() };
  } catch (err) {
    throw new FlatloadError('INPUT_NOT_FOUND', `cannot read ${path}: ${(err as Error).message}`, { file: path });
  }
}

/** A file in a named directory (or matching a glob) that the export does not load, and why. */
export interface PassedOver {
  path: string;
  reason: string;
}

/** Files in a directory that an export loads: data files and mysqldump's .sql files, not reject files; the rest with why. */
function exportFilesIn(dir: string, passed: PassedOver[], match?: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (match && !match.test(name)) continue;
    const p = join(dir, name);
    if (isRejectFile(p)) passed.push({ path: p, reason: 'a reject file of an earlier run' });
    else if (!statSync(p).isFile()) passed.push({ path: p, reason: 'not a file (subdirectories are not entered)' });
    else if (name === MYDUMPER_METADATA) passed.push({ path: p, reason: 'mydumper\'s metadata: the row counts and checksums it lists are checked against the tables after the load' });
    else if (parseFileName(p).kind === 'other') passed.push({ path: p, reason: `not a data file (${DATA_EXTENSIONS.map((e) => `.${e}`).join(' ')}, optionally .gz/.zst) or a .sql file` });
    else out.push(p);
  }
  return out;
}

/** mydumper's metadata in a dump directory, when it lists tables. */
function readMetadata(dir: string): Array<MetadataTable & { file: string }> {
  const file = join(dir, MYDUMPER_METADATA);
  if (!existsSync(file) || !statSync(file).isFile()) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new FlatloadError('INPUT_UNREADABLE', `cannot read mydumper's metadata ${file}: ${(err as Error).message}`, { file });
  }
  return parseMydumperMetadata(text).map((m) => ({ ...m, file }));
}

export function discoverExport(args: readonly string[], manifest: string | undefined, cwd: string): Discovered {
  let tables: ExportTable[];
  let source: string;
  const passedOver: PassedOver[] = [];
  const metadata: Array<MetadataTable & { file: string }> = [];
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
        const found = exportFilesIn(dirname(p), passedOver, globMatcher(p));
        if (found.length === 0) throw new FlatloadError('INPUT_NOT_FOUND', `no file matches ${arg}`, { file: arg });
        paths.push(...found);
      } else if (statOf(p).dir) {
        metadata.push(...readMetadata(p));
        const found = exportFilesIn(p, passedOver);
        if (found.length === 0) throw new FlatloadError('INPUT_NOT_FOUND', `no data files (${'.txt, .csv, .tsv, .dat'}, optionally .gz/.zst) in ${arg}`, { file: arg });
        paths.push(...found);
      } else paths.push(p);
    }
    tables = groupFiles(paths);
    const loaded = new Set(tables.map(tableKey));
    for (const p of paths) {
      const n = isRejectFile(p) ? undefined : parseFileName(p);
      if (n?.kind === 'ddl' && !loaded.has(tableKey(n))) passedOver.push({ path: p, reason: 'a .sql file with no data file beside it (mysqldump writes only the .sql of a view)' });
    }
    source = args.length === 1 ? resolve(cwd, args[0]!) : args.map((a) => resolve(cwd, a)).join(' ');
  }
  const missing: Array<MetadataTable & { file: string }> = [];
  for (const m of metadata) {
    const t = tables.find((x) => x.db === m.db && (x.table === m.table || x.table === m.fileTable));
    if (t) t.expect = { rows: m.rows, checksum: m.checksum, source: `mydumper metadata ${m.file}` };
    // An empty table may have no data file; one that had rows and has none lost it.
    else if (m.rows !== 0 && !(m.rows === undefined && m.checksum === '0')) missing.push(m);
  }
  const out = tables.map((t) => {
    const sizes = t.files.map((f) => {
      const s = statOf(f);
      if (s.dir) throw new FlatloadError('USAGE', `${f} is a directory: name it alone to load every file in it`, { file: f });
      return { path: realpathSync(f), sizeBytes: s.sizeBytes, mtimeMs: s.mtimeMs };
    });
    return { ...t, files: sizes.map((s) => s.path), sizes, sizeBytes: sizes.reduce((a, s) => a + s.sizeBytes, 0) };
  });
  return { source, tables: out, passedOver, missing };
}
