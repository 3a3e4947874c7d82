/**
 * A LoadPlan for people (renderPlan: `flatload plan`, `--dry-run`) and for
 * machines (planJson: `--json`). Pure.
 */
import { describeSource } from './source.js';
import { runSpaceText } from './runSpace.js';
import { PLACEHOLDER, repeatable, sessionVariable, sqlOf, type Step } from './ops.js';
import { chunkLoadSql, insertHeadSql, keyCounterSql, preAssignedKey, type ChunkSqlContext } from './sql.js';
import type { LoadPlan, PlanFacts } from './types.js';

function strategyLine(plan: LoadPlan): string {
  const what =
    plan.strategy === 'insert'
      ? 'multi-row INSERT'
      : plan.strategy === 'surrogate-key'
        ? 'LOAD DATA LOCAL INFILE, AUTO_INCREMENT key assigned by flatload'
        : 'LOAD DATA LOCAL INFILE';
  const forced = plan.forced
    ? plan.plannerChoice === plan.strategy
      ? ' (forced by --strategy; the planner would have chosen the same)'
      : ` (forced by --strategy; the planner would have chosen ${plan.plannerChoice})`
    : '';
  return `${plan.strategy} — ${what}${forced}`;
}

/** One chunk for the whole input: the bulk insert loads it as one statement. */
function wholeInput(plan: LoadPlan, facts: PlanFacts): boolean {
  return plan.commitScope === 'load' && facts.input.sizeBytes !== undefined && plan.chunkSizeBytes >= facts.input.sizeBytes;
}

function commitLine(plan: LoadPlan): string {
  switch (plan.commitScope) {
    case 'chunk':
      return 'chunk — each chunk is one transaction with its bookkeeping row';
    case 'load':
      return 'load — the whole load is one transaction, committed after the last chunk';
    case 'none':
      return 'none — the engine does not roll back';
  }
}

function statements(title: string, list: readonly Step[], lines: string[], once = true): void {
  lines.push(`${title}:`);
  if (list.length === 0) {
    lines.push('  (none)');
    return;
  }
  for (const s of list) {
    lines.push(`  ${sqlOf(s.op)};`);
    lines.push(`      -- ${s.reason}${once && !repeatable(s.op) ? ' [runs once per load]' : ''}`);
  }
}

/** The SQL one chunk runs, in order, with placeholders for per-chunk values. */
export function chunkTemplate(plan: LoadPlan, facts: PlanFacts, c: ChunkSqlContext): string[] {
  const out: string[] = [];
  if (plan.commitScope === 'chunk') out.push('START TRANSACTION');
  for (const s of plan.chunkBefore) out.push(sqlOf(s.op));
  const key = preAssignedKey(plan);
  if (plan.strategy === 'insert') {
    const fields = plan.columns ?? facts.table.columns.map((col) => ({ name: col.name, isVariable: false }));
    out.push(`${insertHeadSql(plan, fields)}(…), (…), …  -- repeated, each statement at most ${plan.insertBatchBytes} bytes${key ? `; ${key.column} = the chunk's first key + row number in the chunk` : ''}`);
  } else {
    if (key) out.push(keyCounterSql(PLACEHOLDER.chunkFirstKey));
    out.push(chunkLoadSql(plan, c, 'flatload-chunk-N'));
  }
  for (const s of plan.chunkAfter) out.push(sqlOf(s.op));
  out.push(
    plan.commitScope === 'load'
      ? "-- bookkeeping row for chunk N, on the control connection (the load's transaction commits once, after the last chunk)"
      : '-- bookkeeping row for chunk N (resume: the chunk and its row commit together)',
  );
  if (plan.commitScope === 'chunk') out.push('COMMIT');
  return out;
}

/** How the file is written, as the facts and options describe it (for showing the chunk statement). */
export function chunkSqlContext(facts: PlanFacts, format: ChunkSqlContext['format'], characterSet?: string): ChunkSqlContext {
  return { format, characterSet: characterSet ?? facts.server.variables['character_set_database'] ?? 'utf8mb4' };
}

function bytes(n: number): string {
  if (n >= 1 << 30 && n % (1 << 30) === 0) return `${n / (1 << 30)} GiB`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** Human text: strategy, concurrency, commit scope and guarantee, settings, SQL, reasons, warnings. */
export function renderPlan(plan: LoadPlan, facts: PlanFacts, c: ChunkSqlContext): string {
  const lines: string[] = [];
  const target = `${plan.target.db}.${plan.target.table}`;
  const into = plan.loadTarget.table !== plan.target.table || plan.loadTarget.db !== plan.target.db ? ` (loading into ${plan.loadTarget.db}.${plan.loadTarget.table})` : '';
  lines.push(`Plan for ${target}${into}: ${facts.table.engine} on ${facts.server.version}`);
  lines.push(`  source:       ${describeSource(facts, plan).text}`);
  lines.push(`  strategy:     ${strategyLine(plan)}`);
  lines.push(`  mode:         ${plan.mode}`);
  lines.push(`  concurrency:  ${plan.concurrency} connection${plan.concurrency === 1 ? '' : 's'}`);
  lines.push(
    `  chunks:       ${wholeInput(plan, facts) ? 'the whole input in one, one LOAD DATA statement' : bytes(plan.chunkSizeBytes)}${plan.chunkMaxRecords !== undefined ? `, at most ${plan.chunkMaxRecords} records` : ''}`,
  );
  lines.push(
    `  order:        ${plan.order.kind === 'key' ? `by ${plan.order.key.name} (${plan.order.key.columns.join(', ')}): the input is sorted first, ${plan.order.inMemory ? 'in memory' : `${runSpaceText(facts.input.sizeBytes, { bytes: plan.order.spillBytes, ratio: plan.order.runRatio }, facts.input.avgRecordBytes)}, in --tmpdir`}; chunks have disjoint key ranges` : plan.order.sortedBy ? `chunks as in the file, each sorted by ${plan.order.sortedBy.name} (${plan.order.sortedBy.columns.join(', ')}) in memory before it is sent` : 'as in the file'}`,
  );
  if (plan.insertBatchBytes !== undefined) lines.push(`  INSERT batch: at most ${bytes(plan.insertBatchBytes)} of SQL per statement`);
  lines.push(`  commit scope: ${commitLine(plan)}`);
  lines.push(`  guarantee:    ${plan.guarantee.kind} — ${plan.guarantee.text}${plan.guarantee.keyColumns ? ` (key: ${plan.guarantee.keyColumns.join(', ')})` : ''}`);
  if (plan.surrogateKey) {
    const k = plan.surrogateKey;
    lines.push(
      `  surrogate key: ${k.column} — ${
        k.kind === 'pre-assign' ? `pre-assigned from ${k.firstValue} in ${plan.order.kind === 'key' ? `${plan.order.key.name} order` : 'file order'}` : k.kind === 'defer' ? 'left out of the load and added afterwards' : 'numbered by the server'
      }`,
    );
  }
  if (plan.columns) lines.push(`  columns:      ${plan.columns.map((c) => (c.isVariable ? `@${c.name}` : c.name)).join(', ')}`);
  lines.push(`  duplicates:   ${plan.duplicates}`);
  lines.push('');
  statements('Session settings (every loading connection, before its first chunk)', plan.session, lines, false);
  lines.push('');
  statements('Before the first chunk', plan.before, lines);
  lines.push('');
  lines.push('Each chunk:');
  for (const sql of chunkTemplate(plan, facts, c)) lines.push(`  ${sql}${sql.startsWith('--') || sql.includes('  -- ') ? '' : ';'}`);
  lines.push('');
  statements('Every connection after its last chunk (checked)', plan.sessionEnd, lines, false);
  lines.push('');
  statements('After the last chunk', plan.after, lines);
  if (plan.onResume.length > 0) {
    lines.push('');
    statements('On resume, before loading again', plan.onResume, lines, false);
  }
  lines.push('');
  lines.push('Why:');
  for (const r of plan.reasons) lines.push(`  - ${r}`);
  if (plan.warnings.length > 0) {
    lines.push('');
    lines.push('Warnings:');
    for (const w of plan.warnings) lines.push(`  ! ${w}`);
  }
  return lines.join('\n') + '\n';
}

/** The plan as plain JSON data (for --json). */
export function planJson(plan: LoadPlan, facts: PlanFacts, c: ChunkSqlContext): object {
  const st = (list: readonly Step[]) => list.map((s) => ({ sql: sqlOf(s.op), reason: s.reason, idempotent: repeatable(s.op) }));

  return {
    strategy: plan.strategy,
    forced: plan.forced,
    plannerChoice: plan.plannerChoice,
    mode: plan.mode,
    target: plan.target,
    loadTarget: plan.loadTarget,
    concurrency: plan.concurrency,
    source: (({ text: _text, ...s }) => s)(describeSource(facts, plan)),
    chunkSizeBytes: plan.chunkSizeBytes,
    chunkMaxRecords: plan.chunkMaxRecords ?? null,
    commitScope: plan.commitScope,
    guarantee: plan.guarantee,
    sessionSettings: plan.session.flatMap((s) => {
      const v = sessionVariable(s.op);
      return v ? [{ ...v, reason: s.reason }] : [];
    }),
    statements: {
      session: st(plan.session),
      before: st(plan.before),
      perChunk: {
        before: st(plan.chunkBefore),
        template: chunkTemplate(plan, facts, c),
        after: st(plan.chunkAfter),
      },
      sessionEnd: st(plan.sessionEnd),
      after: st(plan.after),
      onResume: st(plan.onResume),
    },
    columns: plan.columns ? plan.columns.map((c) => (c.isVariable ? `@${c.name}` : c.name)) : null,
    surrogateKey: plan.surrogateKey ?? null,
    order: plan.order.kind === 'key' ? { kind: 'key', key: plan.order.key.name, columns: plan.order.key.columns, spillBytes: plan.order.spillBytes, runRatio: plan.order.runRatio ?? null, inMemory: plan.order.inMemory ?? false } : plan.order.sortedBy ? { kind: 'file', sortedBy: plan.order.sortedBy.name, columns: plan.order.sortedBy.columns } : { kind: 'file' },
    insertBatchBytes: plan.insertBatchBytes ?? null,
    duplicates: plan.duplicates,
    reasons: plan.reasons,
    warnings: plan.warnings,
  };
}
