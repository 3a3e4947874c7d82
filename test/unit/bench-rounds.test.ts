import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Measured } from '../../bench/measure.js';
import { formatRuns, inRounds, median, runsHeading, type RunResult } from '../../bench/rounds.js';
import { judge, type Measurement } from '../../bench/strategies.js';

const measured: Measured = { wallSeconds: 0, clientCpuSeconds: null, clientPeakRssBytes: null, serverCpuSeconds: null, stdout: '', stderr: '', code: 0 };
const run = (seconds: number, ok = true): RunResult => ({
  seconds,
  ok,
  note: ok ? '' : 'failed',
  load1: 1,
  settled: { seconds: 0, dirtyPagesBefore: 0, checkpointAgeBefore: 0, quiet: true },
  measured,
});

test('median: odd and even counts, order does not matter', () => {
  for (const [xs, m] of [
    [[3], 3],
    [[5, 1, 3], 3],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 1], 10],
  ] as Array<[number[], number]>) {
    assert.equal(median(xs), m, JSON.stringify(xs));
  }
});

test('inRounds: the order rotates, so no item always runs first or after the same one; each keeps its median', async () => {
  const order: string[] = [];
  const times: Record<string, number[]> = { a: [5, 7, 6], b: [1, 3, 2], c: [9, 9, 30] };
  const series = await inRounds(['a', 'b', 'c'], 3, async (x) => {
    order.push(x);
    return run(times[x]!.shift()!);
  });
  assert.deepEqual(order, ['a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b']);
  assert.deepEqual(
    series.map((s) => [s.item, s.median, s.ok]),
    [
      ['a', 6, true],
      ['b', 2, true],
      ['c', 9, true],
    ],
  );
});

test('formatRuns: the median, the min–max spread and every run in order; the heading states the rounds', () => {
  assert.equal(formatRuns({ item: 'a', runs: [run(13), run(11.9), run(12.3)], median: 12.3, ok: true }), '12.30 [11.9–13.0] (13.0, 11.9, 12.3)');
  assert.equal(formatRuns({ item: 'a', runs: [run(2)], median: 2, ok: true }), '2.00 (2.0)');
  assert.equal(formatRuns({ item: 'a', runs: [run(2), run(3, false)], median: 2.5, ok: false }), 'failed: failed');
  assert.equal(runsHeading(5), 'median s [min–max] (5 rounds, in order)');
  assert.equal(runsHeading(1), 'median s [min–max] (1 round, in order)');
});

test('inRounds: one failed run fails the series', async () => {
  let n = 0;
  const [s] = await inRounds(['x'], 3, async () => run(1, ++n !== 2));
  assert.equal(s!.ok, false);
});

const m = (label: string, seconds: number, naive = false, guarantee = 'exactly-once'): Measurement => ({
  label,
  naive,
  seconds,
  ok: true,
  strategy: naive ? 'naive' : 'load-data, 2 conn',
  guarantee: naive ? 'none' : guarantee,
  note: '',
  runs: [seconds],
  load: '0.50–0.90',
});

test('strategies verdict: a planner slower than a naive load is a defeat, whatever the naive load guarantees', () => {
  const cases: Array<{ planner: number; others: Measurement[]; naive: Measurement[]; expect: RegExp }> = [
    { planner: 10, others: [m('--jobs 1', 12)], naive: [m('client', 8, true)], expect: /NOT within 10% of the fastest; \*\*DEFEAT\*\*: 1\.25× slower than the naive client/ },
    { planner: 8, others: [m('--jobs 1', 12)], naive: [m('client', 10, true), m('2 clients', 9, true)], expect: /fastest or within 10%; 1\.13× the fastest naive load/ },
    // A weaker plan is not compared, a naive load always is.
    { planner: 10, others: [m('restart', 5, false, 'restart-required')], naive: [m('client', 10.5, true)], expect: /fastest or within 10%; 1\.05× the fastest naive load/ },
    { planner: 10, others: [], naive: [m('client', 9.5, true)], expect: /fastest or within 10%; \*\*DEFEAT\*\*: 1\.05× slower/ },
  ];
  for (const c of cases) {
    const rows = judge([m('(none)', c.planner), ...c.others], c.naive, 1000, '');
    assert.match(rows.at(-1)!, c.expect);
    assert.equal(rows.length, 2 + c.others.length + c.naive.length);
    for (const n of c.naive) assert.ok(rows.some((r) => r.startsWith(`| ${n.label} (naive)`)), 'naive loads are listed');
  }
});
