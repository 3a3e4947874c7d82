/**
 * TokuDB (Percona Server 5.7 / 8.0 up to 8.0.25; removed in 8.0.28). It
 * cannot run here: these rules come from engines.md §1 (code reading) and
 * are covered by planner tests on recorded facts only.
 */
import { exactlyOnce, isOn, setting, variable, versionAtLeast, versionText, type Ctx, type EngineDecision } from './context.js';

export function planTokudb(ctx: Ctx): EngineDecision {
  const { server, options } = ctx;
  const d: EngineDecision = {
    concurrency: ctx.parallel,
    commitScope: 'chunk',
    guarantee: exactlyOnce(),
    sessionSettings: [],
    sessionEnd: [],
    chunkBefore: [],
    chunkAfter: [],
    before: [],
    after: [],
    sortChunks: false,
    chunkSizeBytes: options.chunkSizeBytes,
    chunkMaxRecords: undefined,
  };
  ctx.reasons.push(
    ctx.transport === 'load-data'
      ? 'TokuDB: its bulk loader never runs for LOAD DATA LOCAL (LOCAL implies IGNORE, which turns the loader off) and would only serve the first statement after the table was empty; chunks load as ordinary transactions [engines.md T3, T7, T8 (T8 INFERRED, not verifiable here)]'
      : 'TokuDB: its bulk loader would only serve the first multi-row INSERT after the table was empty (one chunk of many); chunks load as ordinary transactions [engines.md T2, T3]',
  );
  const prelock = isOn(variable(server, 'tokudb_prelock_empty'));
  if (ctx.emptyAtStart && prelock !== false && d.concurrency > 1) {
    d.sessionSettings.push(
      setting(
        'tokudb_prelock_empty',
        '0',
        'with it ON the first transaction into an empty table locks the whole table and the other streams wait until it commits; it only matters for the loader, which LOAD DATA LOCAL does not get [engines.md T4, T14]',
      ),
    );
  }
  ctx.reasons.push(`concurrency ${d.concurrency}: without the loader TokuDB takes row locks, so chunks load in parallel [engines.md T14]`);
  ctx.reasons.push('commit scope chunk: each chunk is one transaction with its bookkeeping row (TokuDB is transactional) [engines.md 1.4]');
  ctx.reasons.push('unique_checks stays on: with it off TokuDB does not detect primary-key duplicates and can corrupt secondary indexes [engines.md T11]');
  if (server.flavor === 'percona' && versionAtLeast(server, [8, 0, 26])) {
    ctx.warnings.push(`${versionText(server)}: TokuDB is disabled from 8.0.26 and removed in 8.0.28; plan a migration [engines.md §1 status]`);
  }
  if (ctx.preAssign) ctx.reasons.push('pre-assigned keys cost TokuDB nothing and make chunk ids predictable [engines.md T13, T13b]');
  return d;
}
