import type { CutChunk } from '../chunking/types.js';
import { quoteInCharset } from '../db/quote.js';
import type { Prepared } from '../introspect/target.js';
import { clusteredKeyInFile } from '../introspect/keySpec.js';
import { compareKeys, decodeKey, keyReader, recordKey, type SortKey } from '../order/key.js';
import { sameName } from '../plan/rules/context.js';
import { preAssignedKey } from '../plan/sql.js';
import type { KeyRange } from '../plan/ops.js';
import type { LoadPlan } from '../plan/types.js';
import type { ChunkSource } from './chunkSource.js';

/**
 * A key's parts as SQL literals, in the key's column order: a number as the
 * decimal the key holds (rounded to its column's scale, as the server stores
 * it), text as its bytes introduced with `charsets[i]` (the file's character
 * set, which the server converts as it converted the loaded value; binary for
 * a byte-string column). Undefined when a part is not a number the server
 * reads without a warning: no literal bounds what it stored.
 */
export function keyLiterals(key: SortKey, charsets: readonly string[]): string[] | undefined {
  const out: string[] = [];
  for (const [i, part] of decodeKey(key).entries()) {
    if (part.kind === 'malformed') return undefined;
    if (part.kind === 'null') out.push('NULL');
    else if (part.kind === 'number') out.push(part.decimal);
    else out.push(quoteInCharset(part.bytes, charsets[i] ?? 'binary'));
  }
  return out;
}

/** The character set each key column's text literal is read in: the file's, or binary where the column has none (VARBINARY, BLOB, dates). */
function keyCharsets(plan: LoadPlan, prep: Prepared): string[] {
  const column = (name: string) => prep.table.columns.find((c) => sameName(c.name, name));
  return (plan.guarantee.keyColumns ?? []).map((name) => (column(name)?.characterSet ? prep.characterSet : 'binary'));
}

/** A chunk's first and last key; `loExclusive`: the first is the chunk before's. */
interface KeyBounds {
  lo: SortKey;
  hi: SortKey;
  loExclusive?: boolean;
}

/**
 * The key range a chunk's rows occupy, as SQL literals, for the plan's
 * delete-key-range step on resume: the chunk's pre-assigned keys, or
 * (key-ordered input) its first and last record's clustered key.
 */
export async function chunkKeyRange(plan: LoadPlan, chunk: CutChunk, input: ChunkSource, prep: Prepared): Promise<KeyRange | undefined> {
  const key = preAssignedKey(plan);
  if (key) {
    const lo = BigInt(key.firstValue) + BigInt(chunk.firstRecord);
    return { lo: [lo.toString()], hi: [(lo + BigInt(chunk.records) - 1n).toString()] };
  }
  // Ordered chunks know their key range exactly (the merge cuts only where the key changes).
  const bounds: KeyBounds | undefined = input.keyBounds?.(chunk) ?? (await fileOrderBounds(plan, chunk, input, prep));
  if (!bounds) return undefined;
  const charsets = keyCharsets(plan, prep);
  const lo = keyLiterals(bounds.lo, charsets);
  const hi = keyLiterals(bounds.hi, charsets);
  return lo && hi ? { lo, hi, ...(bounds.loExclusive === true ? { loExclusive: true } : {}) } : undefined;
}

/**
 * A file-order chunk of key-ordered input: its first and last record's keys,
 * read as the sort reads them, so as the server stores them (7.4 in an INT
 * key is 7: a range from 7.4 would miss it). A first key the chunk before
 * ends with too (the input repeats it across the cut) is that chunk's
 * committed row, left out of the range.
 */
async function fileOrderBounds(plan: LoadPlan, chunk: CutChunk, input: ChunkSource, prep: Prepared): Promise<KeyBounds | undefined> {
  const spec = plan.guarantee.keyColumns ? clusteredKeyInFile(prep.table, plan.columns) : undefined;
  if (!spec || chunk.records <= 0) return undefined;
  const reader = keyReader({ spec, fmt: prep.scan, cs: prep.charset, targets: prep.targets });
  const ends = async (c: CutChunk): Promise<[SortKey, SortKey]> => {
    const { bytes, records } = await input.records(c);
    const [first, last] = [records[0]!, records[records.length - 1]!];
    return [recordKey(bytes, first.pos, first.pos + first.length, reader), recordKey(bytes, last.pos, last.pos + last.length, reader)];
  };
  const [lo, hi] = await ends(chunk);
  const before = input.chunkBefore?.(chunk);
  const loExclusive = before !== undefined && before.records > 0 && compareKeys((await ends(before))[1], lo) === 0;
  return { lo, hi, loExclusive };
}
