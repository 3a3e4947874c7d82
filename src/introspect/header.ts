/**
 * `--columns header`: the file's first record names its fields, and the
 * fields go to the table's columns of those names (case-insensitively, as
 * the server compares column names). Pure: the header's bytes in, a column
 * list (the one `--columns` would give) out.
 */
import type { CharsetInfo } from '../chunking/charsets.js';
import { parseRecord } from '../chunking/fields.js';
import type { ScanFormat } from '../chunking/scanner.js';
import type { ColumnTarget } from '../config/loadOptions.js';
import { FlatloadError } from '../errors/index.js';
import type { ColumnFacts, TableFacts } from './types.js';

/** More header fields than this is not a header (the server's limit is 4096 columns). */
const MAX_FIELDS = 4096;

function decode(bytes: Buffer, charset: CharsetInfo): string {
  if (charset.utf8) return bytes.toString('utf8');
  try {
    return new TextDecoder(charset.name).decode(bytes);
  } catch {
    // A character set TextDecoder does not know: column names are ASCII in practice.
    return bytes.toString('latin1');
  }
}

/**
 * The field names of the header record that starts at `start` (after a
 * byte-order mark), trimmed of surrounding blanks; undefined when the
 * sample holds no whole first record.
 */
export function headerNames(head: Buffer, start: number, complete: boolean, fmt: ScanFormat, charset: CharsetInfo): string[] | undefined {
  if (start >= head.length) return undefined;
  const targets = { fields: MAX_FIELDS, textField: Array.from({ length: MAX_FIELDS }, () => true) };
  const lt = fmt.lineTerm;
  // Only a record whose terminator is within the sample is whole (a header is short; the sample is 1 MiB).
  if (!complete && (lt.length === 0 || head.indexOf(lt, start) === -1)) return undefined;
  const { values } = parseRecord(head, start, head.length, fmt, charset, targets);
  const names: string[] = [];
  for (const v of values) {
    if (v === undefined) break;
    names.push(v === null ? '' : decode(v, charset).trim());
  }
  return names;
}

/** A column the load must be given a value for: no default, not NULL-able, not filled by the server. */
function needsValue(c: ColumnFacts): boolean {
  if (c.generated || /auto_increment/i.test(c.extra)) return false;
  return !c.nullable && c.defaultValue === null;
}

export interface HeaderWhere {
  file: string;
  /** `db.table`, for messages. */
  display: string;
  /** The header's byte offset (after a byte-order mark). */
  byteOffset: number;
}

/**
 * The column list a header gives: each field to the column of its name, a
 * field named in `skip` discarded (`@name`). A field the table lacks, a
 * field named twice, and a column the file lacks that has no default are
 * errors naming them.
 */
export function mapHeader(names: readonly string[], table: TableFacts, skip: readonly string[], where: HeaderWhere): ColumnTarget[] {
  const ctx = { file: where.file, line: 1, byteOffset: where.byteOffset, table: where.display };
  const byName = new Map(table.columns.map((c) => [c.name.toLowerCase(), c]));
  const skipped = new Set(skip.map((s) => s.toLowerCase()));
  const unusedSkip = skip.filter((s) => !names.some((n) => n.toLowerCase() === s.toLowerCase()));
  if (unusedSkip.length) {
    throw new FlatloadError('USAGE', `--skip-fields names ${unusedSkip.map((s) => `"${s}"`).join(', ')}, not a field of the header (${names.join(', ')})`, ctx);
  }
  const seen = new Set<string>();
  const out: ColumnTarget[] = [];
  const unknown: string[] = [];
  for (const [i, name] of names.entries()) {
    if (name === '') throw new FlatloadError('INPUT_MALFORMED', `--columns header: field ${i + 1} of the header line has no name`, ctx);
    const key = name.toLowerCase();
    if (seen.has(key)) throw new FlatloadError('INPUT_MALFORMED', `--columns header: the header line names "${name}" twice`, ctx);
    seen.add(key);
    if (skipped.has(key)) {
      out.push({ name: `skip${i + 1}`, isVariable: true });
      continue;
    }
    const col = byName.get(key);
    if (!col) unknown.push(name);
    else if (col.generated) throw new FlatloadError('UNKNOWN_COLUMN', `--columns header: the header names \`${col.name}\`, a generated column of ${where.display}, which takes no value`, { ...ctx, hint: `add --skip-fields '${name}' to discard that field` });
    else out.push({ name: col.name, isVariable: false });
  }
  if (unknown.length) {
    throw new FlatloadError('UNKNOWN_COLUMN', `--columns header: the header names ${unknown.map((n) => `"${n}"`).join(', ')}, not ${unknown.length === 1 ? 'a column' : 'columns'} of ${where.display}`, {
      ...ctx,
      hint: `add --skip-fields '${unknown.join(',')}' to discard ${unknown.length === 1 ? 'that field' : 'those fields'}, or add the column${unknown.length === 1 ? '' : 's'} to the table`,
    });
  }
  const missing = table.columns.filter((c) => needsValue(c) && !seen.has(c.name.toLowerCase()));
  if (missing.length) {
    throw new FlatloadError('UNKNOWN_COLUMN', `--columns header: ${where.display} has ${missing.map((c) => `\`${c.name}\``).join(', ')} (NOT NULL, no default), which the header does not name`, ctx);
  }
  return out;
}
