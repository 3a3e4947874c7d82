/**
 * Engines flatload has no rule for (MEMORY, CSV, ARCHIVE, ColumnStore,
 * Spider, TiDB's storage, …): the safe default. Plain LOAD DATA / INSERT
 * chunks, no session tricks, no DDL.
 */
import { baseDecision, versionText, type Ctx, type EngineDecision } from './context.js';

export function planGeneric(ctx: Ctx): EngineDecision {
  const { table, server } = ctx;
  const d = baseDecision(ctx);
  if (server.flavor !== 'tidb') {
    d.guarantee = {
      kind: 'restart-required',
      text: `flatload has no rule for ENGINE=${table.engine}: each chunk is sent in a transaction, but if the engine ignores transactions an interrupted chunk may stay partly loaded, so resume cannot promise exactly once; empty the table and start again`,
    };
  }
  if (server.flavor === 'tidb') {
    ctx.reasons.push(`${versionText(server)}: distributed; chunks load in parallel, one transaction each (TiDB ≥ 7.0 runs each LOAD DATA in one transaction) [docs/rules.md#tidb]`);
    if (ctx.preAssign) {
      ctx.warnings.push('TiDB: dense pre-assigned keys in a clustered AUTO_INCREMENT primary key write to one Region at a time; AUTO_RANDOM or SHARD_ROW_ID_BITS spread the load [docs/rules.md#tidb]');
    }
  } else {
    ctx.reasons.push(`ENGINE=${table.engine}: no rule for this engine, so the safe default — plain chunks, one transaction each, no session settings and no DDL`);
    ctx.warnings.push(`no rule for ENGINE=${table.engine}: the plan uses no engine fast path and cannot promise exactly-once resume`);
  }
  ctx.reasons.push(`concurrency ${d.concurrency}: the default for this server`);
  return d;
}
