import { FlatloadError } from '../errors/index.js';
import { displayBytes, interpretEscapes } from './escapes.js';

export const DIALECTS = ['default', 'csv', 'tsv', 'csv-unix'] as const;
export type DialectName = (typeof DIALECTS)[number];

/**
 * The file's text format, in LOAD DATA's own terms. Terminators are bytes as
 * they appear in the file (ASCII in practice; they are matched byte for byte).
 */
export interface FileFormat {
  fieldsTerminatedBy: Buffer;
  /** Empty, or one byte. */
  fieldsEnclosedBy: Buffer;
  /** OPTIONALLY ENCLOSED: only affects output on the server; input parsing is the same. */
  fieldsOptionallyEnclosed: boolean;
  /** Empty, or one byte. */
  fieldsEscapedBy: Buffer;
  linesTerminatedBy: Buffer;
  ignoreLines: number;
  /** LOAD DATA's CHARACTER SET; undefined means the server's character_set_database. */
  characterSet: string | undefined;
}

interface DialectPreset {
  fieldsTerminatedBy: string;
  fieldsEnclosedBy: string;
  fieldsOptionallyEnclosed: boolean;
  fieldsEscapedBy: string;
  linesTerminatedBy: string;
}

/** As MySQL Shell's util.importTable defines them (modules/util/import_table/dialect.cc). */
const PRESETS: Record<DialectName, DialectPreset> = {
  default: { fieldsTerminatedBy: '\t', fieldsEnclosedBy: '', fieldsOptionallyEnclosed: false, fieldsEscapedBy: '\\', linesTerminatedBy: '\n' },
  csv: { fieldsTerminatedBy: ',', fieldsEnclosedBy: '"', fieldsOptionallyEnclosed: true, fieldsEscapedBy: '\\', linesTerminatedBy: '\r\n' },
  tsv: { fieldsTerminatedBy: '\t', fieldsEnclosedBy: '"', fieldsOptionallyEnclosed: true, fieldsEscapedBy: '\\', linesTerminatedBy: '\r\n' },
  'csv-unix': { fieldsTerminatedBy: ',', fieldsEnclosedBy: '"', fieldsOptionallyEnclosed: false, fieldsEscapedBy: '\\', linesTerminatedBy: '\n' },
};

/** Raw flag values; undefined means "not given". */
export interface FormatFlags {
  dialect?: string | undefined;
  fieldsTerminatedBy?: string | undefined;
  fieldsEnclosedBy?: string | undefined;
  fieldsOptionallyEnclosedBy?: string | undefined;
  fieldsEscapedBy?: string | undefined;
  linesTerminatedBy?: string | undefined;
  ignoreLines?: number | undefined;
  characterSet?: string | undefined;
}

/** Wide character sets: MariaDB's LOAD DATA accepts them and loads garbage (its ASCII terminators do not match), so flatload refuses them. */
const UNSUPPORTED_FILE_CHARSETS = new Set(['ucs2', 'utf16', 'utf16le', 'utf32']);

export function resolveFormat(flags: FormatFlags): FileFormat {
  const dialect = flags.dialect ?? 'default';
  if (!(DIALECTS as readonly string[]).includes(dialect)) {
    throw new FlatloadError('USAGE', `--dialect: "${dialect}" is not one of ${DIALECTS.join(', ')}`);
  }
  const preset = PRESETS[dialect as DialectName];
  const bytes = (flag: string | undefined, fallback: string, name: string): Buffer =>
    flag === undefined ? Buffer.from(fallback, 'utf8') : interpretEscapes(flag, name);

  let enclosed = bytes(flags.fieldsEnclosedBy, preset.fieldsEnclosedBy, 'fields-enclosed-by');
  let optionally = flags.fieldsEnclosedBy === undefined ? preset.fieldsOptionallyEnclosed : false;
  if (flags.fieldsOptionallyEnclosedBy !== undefined) {
    if (flags.fieldsEnclosedBy !== undefined) {
      throw new FlatloadError('USAGE', '--fields-enclosed-by and --fields-optionally-enclosed-by are mutually exclusive');
    }
    enclosed = interpretEscapes(flags.fieldsOptionallyEnclosedBy, 'fields-optionally-enclosed-by');
    optionally = enclosed.length > 0;
  }
  const format: FileFormat = {
    fieldsTerminatedBy: bytes(flags.fieldsTerminatedBy, preset.fieldsTerminatedBy, 'fields-terminated-by'),
    fieldsEnclosedBy: enclosed,
    fieldsOptionallyEnclosed: optionally,
    fieldsEscapedBy: bytes(flags.fieldsEscapedBy, preset.fieldsEscapedBy, 'fields-escaped-by'),
    linesTerminatedBy: bytes(flags.linesTerminatedBy, preset.linesTerminatedBy, 'lines-terminated-by'),
    ignoreLines: flags.ignoreLines ?? 0,
    characterSet: flags.characterSet?.toLowerCase(),
  };
  validateFormat(format);
  return format;
}

function validateFormat(f: FileFormat): void {
  if (f.fieldsEnclosedBy.length > 1) {
    throw new FlatloadError('USAGE', `--fields-enclosed-by must be empty or one character, got "${displayBytes(f.fieldsEnclosedBy)}"`);
  }
  if (f.fieldsEscapedBy.length > 1) {
    throw new FlatloadError('USAGE', `--fields-escaped-by must be empty or one character, got "${displayBytes(f.fieldsEscapedBy)}"`);
  }
  if (!Number.isInteger(f.ignoreLines) || f.ignoreLines < 0) {
    throw new FlatloadError('USAGE', `--ignore-lines must be a whole number >= 0, got ${f.ignoreLines}`);
  }
  if (f.characterSet !== undefined) {
    if (!/^[a-z0-9_]+$/.test(f.characterSet)) {
      throw new FlatloadError('USAGE', `--character-set: "${f.characterSet}" is not a character set name`);
    }
    if (UNSUPPORTED_FILE_CHARSETS.has(f.characterSet)) {
      throw new FlatloadError(
        'USAGE',
        `--character-set ${f.characterSet}: LOAD DATA cannot read ${f.characterSet} files`,
        { hint: 'convert the file first, e.g. iconv -f UTF-16 -t UTF-8' },
      );
    }
  }
}

/** Whether record boundaries can be found by scanning (MySQL Shell has the same rule). */
export function isChunkable(f: FileFormat): { ok: true } | { ok: false; reason: string } {
  if (f.linesTerminatedBy.length === 0) return { ok: false, reason: 'the line terminator is empty' };
  if (f.fieldsTerminatedBy.length === 0) return { ok: false, reason: 'the field terminator is empty (fixed-width rows)' };
  if (f.linesTerminatedBy.equals(f.fieldsTerminatedBy)) {
    return { ok: false, reason: 'the line terminator equals the field terminator' };
  }
  return { ok: true };
}

export function describeFormat(f: FileFormat): string {
  const parts = [`FIELDS TERMINATED BY '${displayBytes(f.fieldsTerminatedBy)}'`];
  if (f.fieldsEnclosedBy.length) {
    parts.push(`${f.fieldsOptionallyEnclosed ? 'OPTIONALLY ' : ''}ENCLOSED BY '${displayBytes(f.fieldsEnclosedBy)}'`);
  }
  parts.push(`ESCAPED BY '${displayBytes(f.fieldsEscapedBy)}'`, `LINES TERMINATED BY '${displayBytes(f.linesTerminatedBy)}'`);
  return parts.join(' ');
}
