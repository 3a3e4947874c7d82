/**
 * The export manifest (`--manifest export.json`), for exports whose file
 * names do not say the table:
 *
 *   { "tables": [ { "table": "shop.orders", "files": ["o1.csv.gz", "o2.csv.gz"],
 *                   "ddl": "orders.sql", "options": { "dialect": "csv", "ignore-lines": 1 },
 *                   "rows": 40000, "checksum": 3194712081 } ] }
 *
 * Paths are relative to the manifest's directory. Options are the load
 * command's format and row options, by their command-line names; rows and
 * checksum, what the exporter recorded (COUNT(*), CHECKSUM TABLE), are
 * checked against the table after the load. Pure.
 */
import { isAbsolute, join } from 'node:path';
import { parseExpectation } from '../config/loadOptions.js';
import { splitQualifiedName } from '../config/names.js';
import { FlatloadError } from '../errors/index.js';
import { tableKey, type ExportTable } from './names.js';

/** Options a manifest may set per table: what the file looks like and how its rows go in. */
export const TABLE_OPTIONS = [
  'dialect',
  'fields-terminated-by',
  'fields-enclosed-by',
  'fields-optionally-enclosed-by',
  'fields-escaped-by',
  'lines-terminated-by',
  'ignore-lines',
  'columns',
  'skip-fields',
  'character-set',
  'keep-bom',
  'strategy',
  'on-duplicate',
  'max-errors',
  'allow-truncation',
  'order',
  'chunk-size',
] as const;

const NUMBERS = ['ignore-lines', 'max-errors'];
const BOOLEANS = ['keep-bom', 'allow-truncation'];

function kindOf(option: string): string {
  return NUMBERS.includes(option) ? 'a whole number' : BOOLEANS.includes(option) ? 'true or false' : 'a string';
}

/** A manifest value as the command line would have given it: whole numbers, booleans, or strings. */
function optionValue(option: string, v: unknown, fail: () => FlatloadError): string | number | boolean {
  if (NUMBERS.includes(option)) {
    const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw fail();
    return n;
  }
  if (BOOLEANS.includes(option)) {
    if (typeof v !== 'boolean') throw fail();
    return v;
  }
  if (typeof v !== 'string' && typeof v !== 'number') throw fail();
  return String(v);
}

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function bad(file: string, what: string): FlatloadError {
  return new FlatloadError('USAGE', `manifest ${file}: ${what}`, { file });
}

/** The tables a manifest lists, paths resolved against `baseDir`; options keyed as the load command's arguments. */
export function parseManifest(text: string, file: string, baseDir: string): ExportTable[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw bad(file, `not JSON: ${(err as Error).message}`);
  }
  const tables = (doc as { tables?: unknown } | null)?.tables;
  if (!Array.isArray(tables) || tables.length === 0) throw bad(file, 'expected {"tables": [ … ]} with at least one table');
  const seen = new Set<string>();
  return tables.map((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null) throw bad(file, `tables[${i}] is not an object`);
    const t = raw as Record<string, unknown>;
    const name = typeof t['table'] === 'string' ? splitQualifiedName(t['table']) : undefined;
    if (!name) throw bad(file, `tables[${i}].table must be "table" or "db.table"`);
    const key = tableKey(name);
    if (seen.has(key)) throw bad(file, `table ${key} is listed twice (list all its files under one entry)`);
    seen.add(key);
    const files = t['files'];
    if (!Array.isArray(files) || files.length === 0 || !files.every((f) => typeof f === 'string' && f !== '')) {
      throw bad(file, `tables[${i}].files must be a non-empty list of paths`);
    }
    const ddl = t['ddl'];
    if (ddl !== undefined && typeof ddl !== 'string') throw bad(file, `tables[${i}].ddl must be a path`);
    const options: ExportTable['options'] = {};
    const given = t['options'] ?? {};
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw bad(file, `tables[${i}].options must be an object`);
    for (const [k, v] of Object.entries(given)) {
      if (!(TABLE_OPTIONS as readonly string[]).includes(k)) throw bad(file, `tables[${i}].options: "${k}" is not one of ${TABLE_OPTIONS.join(', ')}`);
      options[camel(k)] = optionValue(k, v, () => bad(file, `tables[${i}].options.${k}: ${JSON.stringify(v)} is not ${kindOf(k)}`));
    }
    for (const k of Object.keys(t)) {
      if (!['table', 'files', 'ddl', 'options', 'rows', 'checksum'].includes(k)) throw bad(file, `tables[${i}]: unknown field "${k}"`);
    }
    const figure = (k: 'rows' | 'checksum'): string | number | undefined => {
      const v = t[k];
      if (v === undefined) return undefined;
      if ((typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'string' && /^\d+$/.test(v))) return v;
      throw bad(file, `tables[${i}].${k} must be a whole number >= 0${k === 'checksum' ? ' (the value CHECKSUM TABLE returns)' : ''}, got ${JSON.stringify(v)}`);
    };
    const expect = parseExpectation(figure('rows'), figure('checksum'), `manifest ${file}`);
    const resolve = (p: string): string => (isAbsolute(p) ? p : join(baseDir, p));
    return { db: name.db, table: name.table, files: (files as string[]).map(resolve), ddl: ddl === undefined ? undefined : resolve(ddl), options, ...(expect ? { expect } : {}) };
  });
}
