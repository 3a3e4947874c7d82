/**
 * --mode replace and --mode swap: the statements around the load and the
 * table the chunks go into. Rules: docs/strategies.md §Modes.
 */
import { createHash } from 'node:crypto';
import { FlatloadError } from '../../errors/index.js';
import type { TableFacts } from '../../introspect/types.js';
import type { LoadMode } from '../../config/loadOptions.js';
import { step, type Step, type TableRef } from '../ops.js';
import { plural, type EmptyHow, type EngineKind } from './context.js';

const MAX_NAME = 64;

/**
 * `<table><suffix>`; a table name too long for that within the 64-character
 * limit is cut and followed by `_` and 8 hex digits of its SHA-256, so two
 * tables sharing a long prefix never share a shadow, and a rerun finds its own.
 */
export function derivedName(table: string, suffix: string): string {
  const chars = [...table];
  if (chars.length + suffix.length <= MAX_NAME) return `${table}${suffix}`;
  const hash = createHash('sha256').update(table).digest('hex').slice(0, 8);
  return `${chars.slice(0, MAX_NAME - suffix.length - hash.length - 1).join('')}_${hash}${suffix}`;
}

export const SHADOW_SUFFIX = '__flatload_new';
export const OLD_SUFFIX = '__flatload_old';

export interface ModePlan {
  loadTarget: TableRef;
  emptyHow: EmptyHow;
  /** Steps that empty or create the load target (run first). */
  before: Step[];
  /** Steps that publish the load (run last). */
  finish: Step[];
  reasons: string[];
  warnings: string[];
}

export function planMode(mode: LoadMode, table: TableFacts, engine: EngineKind, keepOld: boolean): ModePlan {
  const target = { db: table.db, table: table.table };
  const out: ModePlan = { loadTarget: target, emptyHow: table.empty ? 'already' : 'no', before: [], finish: [], reasons: [], warnings: [] };
  if (mode === 'append') {
    out.reasons.push(table.empty ? 'mode append: the table is empty' : `mode append: the table has rows (about ${table.approxRows}), so the empty-table fast paths do not apply`);
    return out;
  }
  if (mode === 'replace') {
    if (table.referencedBy > 0) {
      out.emptyHow = 'delete';
      out.before.push(
        step(
          { kind: 'delete-all', table: target },
          `empty the table: ${plural(table.referencedBy, 'foreign key')} in other tables reference it, so TRUNCATE is refused (ER_TRUNCATE_ILLEGAL_FK 1701)`,
        ),
      );
      out.reasons.push('mode replace: DELETE FROM (not TRUNCATE, which foreign keys referencing the table forbid); it runs once, before the first chunk, and not again on resume');
      out.warnings.push(
        `mode replace on a table referenced by ${plural(table.referencedBy, 'foreign key')}: DELETE fails if child rows reference it (RESTRICT) or deletes them too (ON DELETE CASCADE)`,
      );
      if (engine === 'innodb') out.warnings.push('DELETE of a large InnoDB table is slow and leaves delete-marked rows: the empty-table bulk path does not apply afterwards');
    } else {
      out.emptyHow = 'truncate';
      out.before.push(step({ kind: 'truncate', table: target }, 'empty the table (drop and recreate: fast, resets AUTO_INCREMENT); runs once, not again on resume'));
      out.reasons.push('mode replace: TRUNCATE TABLE, then the load sees an empty table');
    }
    out.warnings.push(
      engine === 'innodb' || engine === 'rocksdb' || engine === 'tokudb'
        ? 'mode replace empties the table before loading and commits that at once: until the load finishes the table is empty or partial (--mode swap keeps the old rows visible until one atomic RENAME)'
        : 'mode replace empties the table first; the engine cannot roll back, so until the load finishes readers see an empty or partial table (--mode swap avoids that)',
    );
    return out;
  }
  // swap
  const blockers: string[] = [];
  if (table.referencedBy > 0) blockers.push(`${plural(table.referencedBy, 'foreign key')} in other tables reference it and would follow the old table through RENAME`);
  if (table.foreignKeys.length > 0) blockers.push(`CREATE TABLE … LIKE does not copy its ${plural(table.foreignKeys.length, 'foreign key')}`);
  if (table.triggers.length > 0) blockers.push(`its ${plural(table.triggers.length, 'trigger')} stay with the old table on RENAME`);
  if (blockers.length > 0) {
    throw new FlatloadError('UNSUPPORTED', `--mode swap cannot replace ${table.db}.${table.table}: ${blockers.join('; ')}`, {
      table: `${table.db}.${table.table}`,
      hint: 'use --mode replace, or recreate the foreign keys/triggers yourself',
    });
  }
  const shadow = derivedName(table.table, SHADOW_SUFFIX);
  const old = derivedName(table.table, OLD_SUFFIX);
  const s = { db: table.db, table: shadow };
  const o = { db: table.db, table: old };
  out.loadTarget = s;
  out.emptyHow = 'shadow';
  out.before.push(step({ kind: 'drop-table', table: s, ifExists: true }, `remove a shadow table left by an earlier run that was not resumed (${shadow} is flatload's own name); runs once, never on resume`));
  out.before.push(step({ kind: 'create-like', table: s, like: target }, 'the shadow copy the chunks load into: same columns, indexes, engine and partitioning, and empty'));
  out.finish.push(step({ kind: 'swap-tables', target, shadow: s, old: o }, 'publish the load atomically: readers see the old rows until this instant, then all new rows'));
  if (keepOld) {
    out.reasons.push(`mode swap: load the empty shadow ${shadow} with the bulk path, then one atomic RENAME; the old table is kept as ${old} (--keep-old)`);
    out.warnings.push(`--keep-old: the RENAME fails if ${old} already exists (from an earlier swap); drop it first`);
  } else {
    out.finish.push(step({ kind: 'drop-table', table: o, ifExists: false }, 'drop the old rows (--keep-old keeps them)'));
    out.reasons.push(`mode swap: load the empty shadow ${shadow} with the bulk path, then one atomic RENAME and DROP TABLE of the old copy`);
  }
  out.warnings.push('mode swap: writes to the table during the load are lost (they go to the old copy); the load needs free space for a second copy of the table');
  return out;
}
