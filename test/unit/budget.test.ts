/**
 * ErrorBudget: the --max-errors budget every connection shares. A chunk
 * reserves its rejects just before it commits and gives them back if it
 * fails after reserving.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFlatloadError } from '../../src/errors/index.js';
import { ErrorBudget } from '../../src/load/budget.js';

const where = { file: 'orders.csv', chunk: 3, line: 120, byteOffset: 4096 };

/** Each step: reserve n rejects (true: the reservation is kept, false: released at once); what happens. */
type Step = { reserve: number; keep?: boolean; expect: 'ok' | 'over' } | { releaseFirst: true };

const cases: Array<{ name: string; max: number; alreadyUsed?: number; steps: Step[]; rejected: number }> = [
  { name: 'max 0: any reject is over', max: 0, steps: [{ reserve: 1, expect: 'over' }], rejected: 0 },
  { name: 'max 0: a chunk without rejects always passes', max: 0, steps: [{ reserve: 0, expect: 'ok' }, { reserve: 0, expect: 'ok' }], rejected: 0 },
  { name: 'exactly at the limit passes, one more is over', max: 5, steps: [{ reserve: 2, expect: 'ok' }, { reserve: 3, expect: 'ok' }, { reserve: 1, expect: 'over' }], rejected: 5 },
  { name: 'a chunk that would go over reserves nothing', max: 5, steps: [{ reserve: 4, expect: 'ok' }, { reserve: 2, expect: 'over' }, { reserve: 1, expect: 'ok' }], rejected: 5 },
  { name: 'rejects of an earlier run (resume) count', max: 10, alreadyUsed: 9, steps: [{ reserve: 1, expect: 'ok' }, { reserve: 1, expect: 'over' }], rejected: 10 },
  { name: 'resumed past the limit: a chunk without rejects still passes', max: 3, alreadyUsed: 7, steps: [{ reserve: 0, expect: 'ok' }, { reserve: 1, expect: 'over' }], rejected: 7 },
  { name: 'a released reservation frees its room', max: 4, steps: [{ reserve: 3, keep: false, expect: 'ok' }, { reserve: 4, expect: 'ok' }], rejected: 4 },
  { name: 'releasing twice gives back once', max: 4, steps: [{ reserve: 2, expect: 'ok' }, { reserve: 2, expect: 'ok' }, { releaseFirst: true }, { releaseFirst: true }, { reserve: 2, expect: 'ok' }, { reserve: 1, expect: 'over' }], rejected: 4 },
];

for (const c of cases) {
  test(`ErrorBudget: ${c.name}`, () => {
    const budget = new ErrorBudget(c.max, c.alreadyUsed);
    const releases: Array<() => void> = [];
    for (const step of c.steps) {
      if ('releaseFirst' in step) {
        releases[0]!();
        continue;
      }
      const reserve = (): (() => void) => budget.reserve(step.reserve, where, '');
      if (step.expect === 'over') {
        assert.throws(reserve, (e: unknown) => isFlatloadError(e) && e.code === 'ROWS_REJECTED', `reserve(${step.reserve}) with ${budget.rejected} used of ${c.max}`);
        continue;
      }
      const release = reserve();
      if (step.keep === false) release();
      else releases.push(release);
    }
    assert.equal(budget.rejected, c.rejected);
    assert.equal(budget.max, c.max);
  });
}

test('ErrorBudget: the refusal names the total, the limit, where, the detail and what to do', () => {
  const budget = new ErrorBudget(2, 1);
  try {
    budget.reserve(3, where, 'line 121: Data truncated for column `qty`');
    assert.fail('expected ROWS_REJECTED');
  } catch (e) {
    assert.ok(isFlatloadError(e));
    assert.equal(e.code, 'ROWS_REJECTED');
    assert.equal(e.message, '4 rejected row(s) exceed --max-errors 2; the chunk was rolled back and the load stopped:\nline 121: Data truncated for column `qty`');
    assert.deepEqual({ file: e.context.file, chunk: e.context.chunk, line: e.context.line, byteOffset: e.context.byteOffset }, where);
    assert.match(e.context.hint ?? '', /--max-errors/);
  }
  assert.throws(() => budget.reserve(2, { file: 'f', chunk: 0 }, ''), { message: /^3 rejected row\(s\) exceed --max-errors 2; the chunk was rolled back and the load stopped$/ });
});
