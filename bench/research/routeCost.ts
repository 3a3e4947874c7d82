/**
 * What routing costs the client: for 1M user_summary TSV records in memory,
 * the time to parse each record's partitioning field (parseRecord, as the
 * loader does) and evaluate its partition (HASH, KEY, RANGE), on one core.
 * Best of 3 rounds in rotating order. Run: `node --import tsx bench/research/routeCost.ts`.
 */
import { FlatloadError } from '../../src/errors/index.js';
import { generateLines } from '../../fixtures/generate.js';
import { charsetInfo } from '../../src/chunking/charsets.js';
import { parseRecord } from '../../src/chunking/fields.js';
import { partitionIndex, type PartitionRule } from '../../src/shard/partition.js';

const ROWS = 1_000_000;
const data = Buffer.concat([...generateLines({ table: 'user_summary', rows: ROWS, seed: 5 })]);
const fmt = { fieldTerm: Buffer.from('\t'), lineTerm: Buffer.from('\n'), enclosure: -1, escape: 0x5c };
const cs = charsetInfo('utf8mb4')!;
const targets = { fields: 1, textField: [false] };
const col = [{ name: 'user_id', type: { kind: 'int' as const, bytes: 8 as const, unsigned: true } }];
const rules: Record<string, PartitionRule> = {
  'HASH(user_id) /4': { method: 'HASH', expression: '`user_id`', columns: col, partitionCount: 4 },
  'KEY(user_id) /4': { method: 'KEY', expression: '`user_id`', columns: col, partitionCount: 4, keyAlgorithm: 2 },
  'RANGE(user_id) 4 parts': { method: 'RANGE', expression: '`user_id`', columns: col, partitionCount: 4, rangeBounds: [[800000000n], [1600000000n], [2400000000n], ['MAXVALUE']] },
};

function pass(rule: PartitionRule | undefined): { ms: number; counts: number[] } {
  const counts = [0, 0, 0, 0];
  const t = process.hrtime.bigint();
  let start = 0;
  while (start < data.length) {
    const nl = data.indexOf(0x0a, start);
    const end = nl === -1 ? data.length : nl + 1;
    const values = parseRecord(data, start, end, fmt, cs, targets).values;
    if (rule) {
      const p = partitionIndex(rule, values);
      if (p === undefined) throw new FlatloadError('INTERNAL', `unroutable record at ${start}`);
      counts[p]!++;
    }
    start = end;
  }
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, counts };
}

process.stdout.write(`${ROWS} records, ${data.length} bytes\n`);
const configs = [['parse the first field only', undefined] as const, ...Object.entries(rules)];
const best = new Map<string, { ms: number; counts: number[] }>();
// Three rounds in rotating order; the best round per case (the CPU is shared).
for (let round = 0; round < 3; round++) {
  for (let k = 0; k < configs.length; k++) {
    const [name, rule] = configs[(k + round) % configs.length]!;
    const r = pass(rule);
    if (!best.has(name) || r.ms < best.get(name)!.ms) best.set(name, r);
  }
}
for (const [name, rule] of configs) {
  const r = best.get(name)!;
  process.stdout.write(`${name}: ${r.ms.toFixed(0)} ms = ${Math.round(ROWS / (r.ms / 1000)).toLocaleString('en-US')} records/s on one core${rule ? `; per partition ${r.counts.join(' / ')}` : ''}\n`);
}
