/**
 * A LoadPlan for people (renderPlan: `flatload plan`, `--dry-run`) and for
 * machines (planJson: `--json`). Pure.
 */
import type { LoadPlan, PlanFacts, PlannedStatement } from './types.js';

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

function commitLine(plan: LoadPlan): string {
  switch (plan.commitScope) {
    case 'chunk':
      return 'chunk — each chunk is one transaction with its bookkeeping row';
    case 'load':
      return 'load — the whole load is one transaction on one connection';
    case 'none':
      return 'none — the engine does not roll back';
  }
}

function statements(title: string, list: readonly PlannedStatement[], lines: string[]): void {
  lines.push(`${title}:`);
  if (list.length === 0) {
    lines.push('  (none)');
    return;
  }
  for (const s of list) {
    lines.push(`  ${s.sql};`);
    lines.push(`      -- ${s.reason}${s.idempotent ? '' : ' [runs once per load]'}`);
  }
}

function bytes(n: number): string {
  if (n >= 1 << 30 && n % (1 << 30) === 0) return `${n / (1 << 30)} GiB`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** Human text: strategy, concurrency, commit scope and guarantee, settings, SQL, reasons, warnings. */
export function renderPlan(plan: LoadPlan, facts: PlanFacts): string {
  const lines: string[] = [];
  const target = `${plan.target.db}.${plan.target.table}`;
  const into = plan.loadTarget.table !== plan.target.table || plan.loadTarget.db !== plan.target.db ? ` (loading into ${plan.loadTarget.db}.${plan.loadTarget.table})` : '';
  lines.push(`Plan for ${target}${into}: ${facts.table.engine} on ${facts.server.version}`);
  lines.push(`  strategy:     ${strategyLine(plan)}`);
  lines.push(`  mode:         ${plan.mode}`);
  lines.push(`  concurrency:  ${plan.concurrency} connection${plan.concurrency === 1 ? '' : 's'}`);
  lines.push(
    `  chunks:       ${bytes(plan.chunkSizeBytes)}${plan.chunkMaxRecords !== undefined ? `, at most ${plan.chunkMaxRecords} records` : ''}${plan.sortChunks ? ', each sorted by the clustered key' : ''}`,
  );
  if (plan.insertBatchBytes !== undefined) lines.push(`  INSERT batch: at most ${bytes(plan.insertBatchBytes)} of SQL per statement`);
  lines.push(`  commit scope: ${commitLine(plan)}`);
  lines.push(`  guarantee:    ${plan.guarantee.kind} — ${plan.guarantee.text}${plan.guarantee.keyColumns ? ` (key: ${plan.guarantee.keyColumns.join(', ')})` : ''}`);
  if (plan.surrogateKey) {
    const k = plan.surrogateKey;
    lines.push(
      `  surrogate key: ${k.column} — ${
        k.kind === 'pre-assign' ? `pre-assigned from ${k.firstValue} in file order` : k.kind === 'defer' ? 'left out of the load and added afterwards' : 'numbered by the server'
      }`,
    );
  }
  if (plan.columns) lines.push(`  columns:      ${plan.columns.map((c) => (c.isVariable ? `@${c.name}` : c.name)).join(', ')}`);
  lines.push(`  duplicates:   ${plan.duplicates}`);
  lines.push('');
  lines.push('Session settings (every loading connection, before its first chunk):');
  if (plan.sessionSettings.length === 0) lines.push('  (none)');
  for (const s of plan.sessionSettings) {
    lines.push(`  SET SESSION ${s.name} = ${s.value};`);
    lines.push(`      -- ${s.reason}`);
  }
  lines.push('');
  statements('Before the first chunk', plan.before, lines);
  lines.push('');
  lines.push(`Each chunk${plan.commitScope === 'load' ? ' (all inside one transaction: START TRANSACTION first, COMMIT after the last chunk)' : ''}:`);
  for (const sql of plan.chunkTemplate ?? []) lines.push(`  ${sql}${sql.startsWith('--') ? '' : ';'}`);
  lines.push('');
  statements('Every connection after its last chunk (checked)', plan.sessionEnd, lines);
  lines.push('');
  statements('After the last chunk', plan.after, lines);
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
export function planJson(plan: LoadPlan): object {
  const st = (list: readonly PlannedStatement[] | undefined) => (list ?? []).map((s) => ({ sql: s.sql, reason: s.reason, idempotent: s.idempotent ?? false }));
  return {
    strategy: plan.strategy,
    forced: plan.forced,
    plannerChoice: plan.plannerChoice,
    mode: plan.mode,
    target: plan.target,
    loadTarget: plan.loadTarget,
    concurrency: plan.concurrency,
    chunkSizeBytes: plan.chunkSizeBytes,
    chunkMaxRecords: plan.chunkMaxRecords ?? null,
    commitScope: plan.commitScope,
    guarantee: plan.guarantee,
    sessionSettings: plan.sessionSettings.map((s) => ({ name: s.name, value: s.value, reason: s.reason })),
    statements: {
      before: st(plan.before),
      perChunk: {
        before: st(plan.chunkBefore),
        template: plan.chunkTemplate ?? [],
        after: st(plan.chunkAfter),
      },
      sessionEnd: st(plan.sessionEnd),
      after: st(plan.after),
    },
    columns: plan.columns ? plan.columns.map((c) => (c.isVariable ? `@${c.name}` : c.name)) : null,
    surrogateKey: plan.surrogateKey ?? null,
    sortChunks: plan.sortChunks,
    insertBatchBytes: plan.insertBatchBytes ?? null,
    duplicates: plan.duplicates,
    reasons: plan.reasons,
    warnings: plan.warnings,
  };
}
