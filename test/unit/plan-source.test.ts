import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planLoad } from '../../src/plan/planner.js';
import { describeSource } from '../../src/plan/source.js';
import type { PlanFacts } from '../../src/plan/types.js';
import * as F from './facts/index.js';

test('the plan names the source, how it is read and the local disk it needs', () => {
  const base = F.input('u3.tsv (no id)');
  const size = base.sizeBytes ?? 0;
  const cases = [
    { name: 'local plain file', input: { ...base, path: '/data/u3.tsv' }, over: 'local file', read: 'ranges', disk: 0, text: /in place; local disk none/ },
    { name: 'plain over HTTP', input: { ...base, path: 'https://u:***@h/u3.tsv' }, over: 'http', read: 'ranges', disk: 0, text: /over HTTP .*no local copy/ },
    { name: 'plain in S3', input: { ...base, path: 's3://b/u3.tsv' }, over: 's3', read: 'ranges', disk: 0, text: /over S3/ },
    { name: 'gzip over HTTP', input: { ...base, path: 'https://h/u3.tsv.gz', compression: 'gzip' as const, spooled: true }, over: 'http', read: 'streamed', disk: size, text: /streamed once \(gzip\) into --tmpdir/ },
    { name: 'standard input', input: { ...base, path: '-', kind: 'stdin' as const, spooled: true }, over: 'standard input', read: 'streamed', disk: size, text: /^standard input/ },
  ];
  for (const c of cases) {
    const facts: PlanFacts = { server: F.mariadb1011(), table: F.table('user3', 'InnoDB'), input: c.input };
    const plan = planLoad(facts, { ...F.planOptions(), order: 'file' });
    const s = describeSource(facts, plan);
    assert.equal(s.over, c.over, c.name);
    assert.equal(s.read, c.read, c.name);
    assert.equal(s.localDiskBytes, c.disk, c.name);
    assert.match(s.text, c.text, c.name);
  }
});

test('sort runs in --tmpdir count toward the local disk', () => {
  const input = { ...F.input('us.tsv'), path: 's3://b/us.tsv.gz', compression: 'gzip' as const, spooled: true };
  const facts: PlanFacts = { server: F.mariadb1011(), table: F.table('user_summary', 'InnoDB'), input };
  const plan = planLoad(facts, { ...F.planOptions(), order: 'key', sortMemoryBytes: 0 });
  assert.ok(plan.order.kind === 'key' && !plan.order.inMemory && plan.order.spillBytes > 0, JSON.stringify(plan.order));
  const s = describeSource(facts, plan);
  assert.equal(s.localDiskBytes, (input.sizeBytes ?? 0) + plan.order.spillBytes);
  assert.match(s.text, /spool \+ .* sort runs in --tmpdir/);
});
