/**
 * MyISAM and Aria: table locks, no transactions (Aria TRANSACTIONAL=1 is
 * crash-safe per statement, not transactional). Rules and measurements:
 * docs/strategies.md §MyISAM/Aria.
 */
import { step } from '../ops.js';
import { baseDecision, indexList, plural, type Ctx, type EngineDecision } from './context.js';

/** Aria tables are crash-safe per statement unless TRANSACTIONAL=0 or a non-PAGE row format [docs/rules.md#aria-crash-safety]. */
export function ariaCrashSafe(ctx: Ctx): boolean {
  const opts = ctx.table.createOptions.toLowerCase();
  if (/transactional=0/.test(opts)) return false;
  const rf = (ctx.table.rowFormat ?? 'Page').toLowerCase();
  return rf === 'page';
}

export function planMyisamAria(ctx: Ctx): EngineDecision {
  const { table, options } = ctx;
  const name = ctx.engine === 'aria' ? 'Aria' : 'MyISAM';
  const d: EngineDecision = { ...baseDecision(ctx), concurrency: 1, commitScope: 'none' };
  if (ctx.jobsForced && ctx.parallel > 1) {
    d.concurrency = ctx.parallel;
    ctx.warnings.push(`--jobs ${ctx.parallel}: ${name} locks the whole table for each statement, so the streams take turns [docs/rules.md#myisam-and-aria-table-locks; not measured here]`);
  } else {
    ctx.reasons.push(`concurrency 1: ${name} takes a table write lock per statement, so parallel streams only take turns [docs/rules.md#myisam-and-aria-table-locks; not measured here]`);
  }

  // Non-unique indexes: the empty-table rebuild only covers the first statement; DISABLE KEYS covers all chunks.
  const nonUnique = table.indexes.filter((i) => !i.unique && !i.primary && i.type.toUpperCase() !== 'FULLTEXT' && i.type.toUpperCase() !== 'SPATIAL');
  if (nonUnique.length > 0 && ctx.emptyAtStart) {
    d.before.push(step({ kind: 'disable-keys', table: ctx.loadTarget }, `stop maintaining ${plural(nonUnique.length, 'non-unique index', 'non-unique indexes')} (${indexList(nonUnique)}) row by row for every chunk, not only the first [docs/rules.md#myisam-and-aria-index-disabling]`));
    d.after.push(step({ kind: 'enable-keys', table: ctx.loadTarget }, 'rebuild the non-unique indexes by sorting, once ("Repair by sorting") [docs/rules.md#myisam-and-aria-index-disabling]'));
    ctx.reasons.push(
      `${name}, empty table with non-unique indexes (${indexList(nonUnique)}): DISABLE KEYS before and ENABLE KEYS after, so every chunk skips them and they are built once by sorting [docs/rules.md#myisam-and-aria-index-disabling; not measured here]`,
    );
    ctx.warnings.push('an interrupted load leaves the non-unique indexes disabled (queries do not use them) until resume finishes or ALTER TABLE … ENABLE KEYS runs');
  } else if (nonUnique.length > 0 && !ctx.emptyAtStart) {
    ctx.reasons.push(`${name} table with rows: its non-unique indexes take the bulk_insert_buffer_size tree cache per statement [docs/rules.md#myisam-and-aria-bulk-insert-buffer]`);
  }
  if (table.indexes.some((i) => i.unique || i.primary)) {
    ctx.reasons.push(`PRIMARY/UNIQUE keys are maintained row by row in every case [docs/rules.md#myisam-and-aria-unique-keys]`);
  }

  // What resume can promise without transactions.
  const crashSafe = ctx.engine === 'aria' && ariaCrashSafe(ctx);
  if (ctx.preAssign) {
    d.guarantee = {
      kind: 'exactly-once-by-key-range',
      text: `${name} cannot roll back a chunk, but every chunk's rows carry pre-assigned keys ${ctx.autoInc!.column} in a known range: on resume the interrupted chunk's key range is deleted and the chunk loaded again`,
      keyColumns: [ctx.autoInc!.column],
    };
  } else if (d.concurrency === 1 && options.onDuplicate === 'error') {
    d.guarantee = {
      kind: 'exactly-once-by-row-count',
      text: `${name} cannot roll back a chunk; one stream appends the chunks in file order, so on resume the rows of the interrupted chunk that landed are counted (COUNT(*) minus the rows of committed chunks) and that many of its records are skipped${
        crashSafe ? '' : `; after a server crash run CHECK/REPAIR TABLE first (${name === 'Aria' ? 'TRANSACTIONAL=0' : 'MyISAM'} is not crash-safe)`
      }`,
    };
  } else {
    d.guarantee = {
      kind: 'restart-required',
      text: `${name} cannot roll back a chunk and ${d.concurrency > 1 ? 'parallel streams interleave rows' : 'duplicates may be skipped'}, so the rows of an interrupted chunk cannot be told apart: resume must empty the table and start again`,
    };
  }
  ctx.reasons.push(
    `commit scope none: ${name} is not transactional${crashSafe ? ' (TRANSACTIONAL=1 Aria only undoes an unfinished statement after a crash)' : ''}; a chunk that fails part-way keeps the rows before the failure [docs/rules.md#myisam-and-aria-partial-chunks]`,
  );
  ctx.warnings.push(`${name} is not transactional: a rejected row cannot be rolled back, the rest of its chunk stays loaded [docs/rules.md#myisam-and-aria-partial-chunks]`);
  return d;
}
