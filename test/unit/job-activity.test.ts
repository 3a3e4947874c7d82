/**
 * What a load's job row says it is doing before its first chunk (spooling,
 * scanning, sorting), as `flatload status` shows it, and when a new reading
 * of it is worth a write.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activityDue, activityText, jobStage, type Activity } from '../../src/report/activity.js';

const MiB = 1024 * 1024;
const sorting = (runs: number | null, bytes: number | null, totalBytes: number | null): Activity => ({ kind: 'sorting', bytes, totalBytes, runs });
const scanning = (bytes: number, totalBytes: number | null): Activity => ({ kind: 'scanning', bytes, totalBytes, runs: null });

test('the activity in words', () => {
  const cases: Array<[Activity, string]> = [
    [sorting(3, 412 * MiB, 800 * MiB), 'sorting: 3 runs, 412 MiB of 800 MiB'],
    [sorting(1, 7 * MiB, 105 * MiB), 'sorting: 1 run, 7.0 MiB of 105 MiB'],
    // A compressed input's decompressed size is known only at the end of its one pass.
    [sorting(12, 2 * 1024 * MiB, null), 'sorting: 12 runs, 2.0 GiB'],
    [sorting(0, null, 800 * MiB), 'sorting: 0 runs'],
    [sorting(null, null, 80 * MiB), 'sorting in memory'],
    [scanning(1536 * MiB, 4096 * MiB), 'scanning: 1.5 GiB of 4.0 GiB read'],
    [scanning(0, null), 'scanning: 0 B read'],
    [{ kind: 'spooling', bytes: null, totalBytes: null, runs: null }, 'spooling'],
  ];
  for (const [a, text] of cases) assert.equal(activityText(a), text, JSON.stringify(a));
});

test('a new reading is written when its kind changes at once, when its progress moved once a second, never when it is the same', () => {
  const at = (activity: Activity, atMs: number): { activity: Activity; atMs: number } => ({ activity, atMs });
  const cases: Array<[string, { activity: Activity; atMs: number } | undefined, Activity, number, boolean]> = [
    ['nothing written yet', undefined, scanning(0, 10), 0, true],
    ['scanning became sorting, a moment later', at(scanning(5, 10), 1000), sorting(0, 0, 10), 1001, true],
    ['more runs, within the second', at(sorting(1, 5, 10), 1000), sorting(2, 7, 10), 1999, false],
    ['more runs, a second later', at(sorting(1, 5, 10), 1000), sorting(2, 7, 10), 2000, true],
    ['the same, much later (a run that takes long)', at(sorting(2, 7, 10), 1000), sorting(2, 7, 10), 60_000, false],
    ['only the total became known', at(sorting(2, 7, null), 1000), sorting(2, 7, 10), 2500, true],
  ];
  for (const [what, last, next, now, due] of cases) assert.equal(activityDue(last, next, now, 1000), due, what);
});

test('where a job is: its phase, or its activity (with progress while a process holds it)', () => {
  const cases: Array<[string, { phase: string; activity: Activity | null; heldBy: number | null }, string]> = [
    ['sorting, running', { phase: 'created', activity: sorting(3, 3 * MiB, 9 * MiB), heldBy: 12 }, 'sorting: 3 runs, 3.0 MiB of 9.0 MiB'],
    ['sorting, its process gone', { phase: 'created', activity: sorting(3, 3 * MiB, 9 * MiB), heldBy: null }, 'sorting'],
    ['loading', { phase: 'prepared', activity: null, heldBy: 12 }, 'prepared'],
    ['a resume sorting again, its table prepared by the run before', { phase: 'prepared', activity: sorting(1, MiB, 9 * MiB), heldBy: 12 }, 'prepared, sorting: 1 run, 1.0 MiB of 9.0 MiB'],
    ['a row of an older flatload', { phase: 'created', activity: null, heldBy: null }, 'created'],
  ];
  for (const [what, j, stage] of cases) assert.equal(jobStage(j), stage, what);
});
