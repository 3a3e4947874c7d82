import { availableParallelism } from 'node:os';
import { quoteQualified } from '../db/quote.js';
import type { LoadPlan, PlanFacts, PlanOptions } from '../plan/types.js';

/** Interim plan until the strategy planner lands: LOAD DATA over N connections, one transaction per chunk. */
export function provisionalPlan(facts: PlanFacts, o: PlanOptions, db: string, tableName: string): LoadPlan {
  const { server, table } = facts;
  const concurrency = o.jobs ?? Math.max(1, Math.min(server.serverCpus ?? availableParallelism(), 8));
  const transactional = ['INNODB', 'ROCKSDB', 'TOKUDB'].includes(table.engine);
  const ai = table.autoIncrementColumn;
  const aiAbsent = ai !== undefined && o.columns !== undefined && !o.columns.some((c) => !c.isVariable && c.name.toLowerCase() === ai.toLowerCase());
  const firstValue = table.autoIncrementNext ?? '1';
  const choice = server.localInfile ? 'load-data' : 'insert';
  const plan: LoadPlan = {
    strategy: o.strategy === 'insert' ? 'insert' : o.strategy ? 'load-data' : choice,
    forced: o.strategy !== undefined,
    plannerChoice: choice,
    mode: o.mode,
    loadTarget: { db, table: tableName },
    target: { db, table: tableName },
    concurrency,
    chunkSizeBytes: o.chunkSizeBytes,
    commitScope: transactional ? 'chunk' : 'none',
    sessionSettings: [{ name: 'max_error_count', value: '65535', reason: 'read every warning of a chunk' }],
    sessionEnd: [],
    before: [],
    after: [],
    columns: o.columns,
    surrogateKey: aiAbsent ? { kind: 'pre-assign', column: ai, firstValue } : undefined,
    sortChunks: o.sortChunks === 'on',
    insertBatchBytes: undefined,
    duplicates: o.onDuplicate,
    guarantee: transactional
      ? { kind: 'exactly-once', text: 'each chunk commits with its bookkeeping row' }
      : { kind: 'restart-required', text: `${table.engine} cannot roll back a chunk` },
    reasons: [`${table.engine} table: LOAD DATA LOCAL over ${concurrency} connection(s)`],
    warnings: [],
  };
  if (!server.localInfile && plan.strategy === 'insert') {
    plan.warnings.push('the server has local_infile=OFF, so rows go as batched INSERTs (several times slower); SET GLOBAL local_infile=1 enables the fast path');
  }
  if (aiAbsent) {
    plan.reasons.push(`${ai} is AUTO_INCREMENT and not in the file: keys are pre-assigned from ${firstValue} in file order`);
    plan.after.push({
      sql: `ALTER TABLE ${quoteQualified(db, tableName)} AUTO_INCREMENT = {{nextAutoIncrement}}`,
      reason: 'move AUTO_INCREMENT past the pre-assigned keys',
    });
  }
  return plan;
}
