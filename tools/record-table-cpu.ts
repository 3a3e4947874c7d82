/**
 * CPU-seconds of indexing a `user_summary` file's records the way run
 * generation does (recordTable on chunks of about 16 MiB, each copied into a
 * fresh buffer first, as a read brings it in), this checkout's code against
 * another checkout's, chunk by chunk in turn in one process, so that other
 * work on the machine weighs on both alike. Prints each round and the medians
 * [min–max] of all rounds but the first (the JIT's).
 *
 *   node --import tsx tools/record-table-cpu.ts FILE --baseline DIR [--rounds N]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from '../bench/rounds.js';
import { charsetInfo } from '../src/chunking/charsets.js';
import { recordTable } from '../src/chunking/records.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '7' } } });
const file = positionals[0];
if (!file || !values.baseline) throw new Error('usage: node --import tsx tools/record-table-cpu.ts FILE --baseline DIR [--rounds N]');
const before = (await import(pathToFileURL(resolve(values.baseline, 'src/chunking/records.ts')).href)) as { recordTable: typeof recordTable };
const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const fmt = { fieldTerm: b('\t'), lineTerm: b('\n'), enclosure: -1, escape: 0x5c };
const cs = charsetInfo('utf8mb4')!;
const targets = { fields: 5, textField: [false, false, true, true, false] }; // user_summary's columns

const data = readFileSync(file);
const chunks: Buffer[] = [];
for (let s = 0; s < data.length; ) {
  const nl = data.indexOf(0x0a, Math.min(data.length - 1, s + (16 << 20)));
  const e = nl === -1 ? data.length : nl + 1;
  chunks.push(data.subarray(s, e));
  s = e;
}
const into = { ends: new Uint32Array(1 << 20), lineOffsets: new Uint32Array(1 << 20) };
const cpu = (f: () => void): number => {
  const t = process.cpuUsage();
  f();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / 1e6;
};
const rounds: Array<{ old: number; cur: number }> = [];
for (let r = 0; r < Number(values.rounds); r++) {
  let old = 0;
  let cur = 0;
  for (const c of chunks) {
    const x = Buffer.from(c);
    old += cpu(() => before.recordTable(x, fmt, cs, targets, into));
    const y = Buffer.from(c);
    cur += cpu(() => recordTable(y, fmt, cs, targets, into));
  }
  rounds.push({ old, cur });
  console.log(`round ${r}: baseline ${old.toFixed(3)} s, this checkout ${cur.toFixed(3)} s`);
}
const stat = (xs: number[]): string => `${median(xs).toFixed(3)} s [${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}]`;
const kept = rounds.slice(1);
console.log(`${chunks.length} chunks, ${(data.length / 1e9).toFixed(3)} GB: baseline ${stat(kept.map((r) => r.old))}, this checkout ${stat(kept.map((r) => r.cur))}`);
