/**
 * TokuDB (Percona Server 5.7 / 8.0 up to 8.0.25; removed in 8.0.28). It
 * cannot run here: these rules come from docs/rules.md#tokudb (read from Percona's TokuDB source and documentation) and
 * are covered by planner tests on recorded facts only.
 */
import { step } from '../ops.js';
import { baseDecision, isOn, variable, versionAtLeast, versionText, type Ctx, type EngineDecision } from './context.js';

export function planTokudb(ctx: Ctx): EngineDecision {
  const { server } = ctx;
  const d = baseDecision(ctx);
  ctx.reasons.push(
    ctx.transport === 'load-data'
      ? 'TokuDB: its bulk loader never runs for LOAD DATA LOCAL (LOCAL implies IGNORE, which turns the loader off) and would only serve the first statement after the table was empty; chunks load as ordinary transactions [docs/rules.md#tokudb-loader-conditions (the LOAD DATA LOCAL case is inferred from the source, not run)]'
      : 'TokuDB: its bulk loader would only serve the first multi-row INSERT after the table was empty (one chunk of many); chunks load as ordinary transactions [docs/rules.md#tokudb-loader-conditions]',
  );
  const prelock = isOn(variable(server, 'tokudb_prelock_empty'));
  if (ctx.emptyAtStart && prelock !== false && d.concurrency > 1) {
    d.session.push(
      step(
        { kind: 'set-session', name: 'tokudb_prelock_empty', value: '0' },
        'with it ON the first transaction into an empty table locks the whole table and the other streams wait until it commits; it only matters for the loader, which LOAD DATA LOCAL does not get [docs/rules.md#tokudb-prelock-empty]',
      ),
    );
  }
  ctx.reasons.push(`concurrency ${d.concurrency}: without the loader TokuDB takes row locks, so chunks load in parallel [docs/rules.md#tokudb-prelock-empty]`);
  ctx.reasons.push('commit scope chunk: each chunk is one transaction with its bookkeeping row (TokuDB is transactional) [docs/rules.md#tokudb-transactions]');
  ctx.reasons.push('unique_checks stays on: with it off TokuDB does not detect primary-key duplicates and can corrupt secondary indexes [docs/rules.md#tokudb-unique-checks]');
  if (server.flavor === 'percona' && versionAtLeast(server, [8, 0, 26])) {
    ctx.warnings.push(`${versionText(server)}: TokuDB is disabled from 8.0.26 and removed in 8.0.28; plan a migration [docs/rules.md#tokudb-status]`);
  }
  if (ctx.preAssign) ctx.reasons.push('pre-assigned keys cost TokuDB nothing and make chunk ids predictable [docs/rules.md#tokudb-auto-increment]');
  return d;
}
