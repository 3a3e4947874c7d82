import type { CutChunk } from '../chunking/types.js';
import { quoteString } from '../db/quote.js';
import { parseRecord } from '../chunking/fields.js';
import type { Prepared } from '../introspect/target.js';
import { preAssignedKey } from '../plan/sql.js';
import type { LoadPlan } from '../plan/types.js';
import { clusteredKeyInFile } from '../introspect/keySpec.js';
import type { ChunkSource } from './chunkSource.js';

function sqlValue(v: Buffer | null | undefined, numeric: boolean): string {
  if (v === null || v === undefined) return 'NULL';
  const text = v.toString('utf8');
  return numeric && /^-?\d+(\.\d+)?$/.test(text) ? text : quoteString(text);
}

/**
 * The key range a chunk's rows occupy, as SQL literals, for the plan's
 * delete-key-range step on resume: the chunk's pre-assigned keys, or
 * (key-ordered input) its first and last record's clustered key.
 */
export async function chunkKeyRange(plan: LoadPlan, chunk: CutChunk, input: ChunkSource, prep: Prepared): Promise<{ lo: string[]; hi: string[] } | undefined> {
  const key = preAssignedKey(plan);
  if (key) {
    const lo = BigInt(key.firstValue) + BigInt(chunk.firstRecord);
    return { lo: [lo.toString()], hi: [(lo + BigInt(chunk.records) - 1n).toString()] };
  }
  // Ordered chunks know their key range exactly.
  const known = input.keyRange?.(chunk);
  if (known) return known;
  const spec = plan.guarantee.keyColumns ? clusteredKeyInFile(prep.table, plan.columns) : undefined;
  if (!spec || chunk.records <= 0) return undefined;
  const { bytes, records } = await input.records(chunk);
  const [lo, hi] = [records[0]!, records[records.length - 1]!].map((r) => {
    const values = parseRecord(bytes, r.pos, r.pos + r.length, prep.scan, prep.charset, prep.targets).values;
    return spec.fields.map((f, i) => sqlValue(values[f], spec.numeric[i] === true));
  });
  return { lo: lo!, hi: hi! };
}
