/**
 * The order rule when --tmpdir cannot take the sorted runs (too small, or not
 * writable): the automatic order falls back to file order and says why;
 * --order key, which the user asked for, is an error before anything runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFlatloadError } from '../../src/errors/index.js';
import { planLoad } from '../../src/plan/planner.js';
import type { PlanFacts } from '../../src/plan/types.js';
import * as F from './facts/index.js';
import { spillBytesEstimate } from '../../src/order/spillDir.js';

/** user_summary: a 74 MB random-order input, larger than --sort-memory 0, so it sorts in runs. */
const us = F.input('us.tsv');
/** The runs uncompressed, and 0.6 of that: room for them compressed at a sample ratio of 0.4 (0.5 with the margin), not uncompressed. */
const uncompressed = spillBytesEstimate(us.sizeBytes!, us.estimatedRecords!);
const between = Math.round(0.6 * uncompressed);
const facts = (input: Partial<PlanFacts['input']>): PlanFacts => ({
  server: F.mariadb1011(),
  table: F.table('user_summary', 'InnoDB'),
  input: { ...F.input('us.tsv'), spillDir: '/mnt/spill', ...input },
});

const CASES: Array<{ name: string; order: 'auto' | 'key'; input: Partial<PlanFacts['input']>; expect: { order: 'key' | 'file' | 'chunk'; warning?: RegExp } | { error: string; message: RegExp } }> = [
  { name: 'auto, room to spare: sorted in runs', order: 'auto', input: { spillFreeBytes: 1e12 }, expect: { order: 'key' } },
  { name: 'auto, too little room: each chunk sorted instead, saying how much it needs and where', order: 'auto', input: { spillFreeBytes: 1000 }, expect: { order: 'chunk', warning: /needs about \d+ MB of runs, counted uncompressed: no sample to measure how the rows compress, in --tmpdir \(\/mnt\/spill\), where 0 MB are free: each chunk is sorted by u_user_id in memory instead/ } },
  { name: 'auto, read-only: each chunk sorted instead, saying why', order: 'auto', input: { spillFreeBytes: 1e12, spillUnwritable: '/mnt/spill is on a read-only file system' }, expect: { order: 'chunk', warning: /\/mnt\/spill is on a read-only file system: each chunk is sorted by u_user_id in memory instead/ } },
  { name: 'auto, read-only, standard input: file order, saying why', order: 'auto', input: { kind: 'stdin', sizeBytes: undefined, spillFreeBytes: 1e12, spillUnwritable: '/mnt/spill is on a read-only file system' }, expect: { order: 'file', warning: /\/mnt\/spill is on a read-only file system: it goes in file order/ } },
  { name: '--order key, room to spare: sorted in runs', order: 'key', input: { spillFreeBytes: 1e12 }, expect: { order: 'key' } },
  { name: '--order key, too little room: an error naming the room and the directory', order: 'key', input: { spillFreeBytes: 1000 }, expect: { error: 'SPILL', message: /--order key cannot be honoured: sorting the input needs about \d+ MB of runs, .*, in --tmpdir \(\/mnt\/spill\), where 0 MB are free/ } },
  { name: '--order key, room for the runs compressed (sample ratio 0.4) but not uncompressed: sorted in runs', order: 'key', input: { spillFreeBytes: between, sampleRunRatio: 0.4 }, expect: { order: 'key' } },
  { name: 'auto, the same room: sorted in runs', order: 'auto', input: { spillFreeBytes: between, sampleRunRatio: 0.4 }, expect: { order: 'key' } },
  { name: '--order key, the same room with no sample ratio: the uncompressed bound is refused', order: 'key', input: { spillFreeBytes: between }, expect: { error: 'SPILL', message: /counted uncompressed/ } },
  { name: '--order key, rows that hardly compress (sample ratio 0.9): the room is too small', order: 'key', input: { spillFreeBytes: between, sampleRunRatio: 0.9 }, expect: { error: 'SPILL', message: /needs about \d+ MB of runs, compressed \(sample ratio 0\.90x\)/ } },
  { name: '--order key, read-only: an error naming the directory', order: 'key', input: { spillFreeBytes: 1e12, spillUnwritable: '/mnt/spill is on a read-only file system' }, expect: { error: 'OUTPUT_UNWRITABLE', message: /--order key cannot be honoured: .*\/mnt\/spill is on a read-only file system/ } },
];

for (const c of CASES) {
  test(c.name, () => {
    const run = () => planLoad(facts(c.input), F.planOptions({ order: c.order, sortMemoryBytes: 0 }));
    const e = c.expect;
    if ('error' in e) {
      assert.throws(run, (err) => isFlatloadError(err) && err.code === e.error && e.message.test(err.message));
      return;
    }
    const plan = run();
    assert.equal(plan.order.kind === 'file' && plan.order.sortedBy ? 'chunk' : plan.order.kind, e.order);
    if (e.warning) assert.ok(plan.warnings.some((w) => e.warning!.test(w)), plan.warnings.join('\n'));
  });
}
