import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExportMember, StoredExport } from '../../src/checkpoint/exports.js';
import type { StoredJob } from '../../src/checkpoint/store.js';
import { changedFiles, interruptedExport, jobOfThen, sameFiles, type ChangedFile } from '../../src/job/exportRerun.js';
import { missingTables, parseSelection } from '../../src/export/select.js';

const member = (target: string, files: Array<[string, number, number]>, loadTarget = target): ExportMember => ({
  target,
  loadTarget,
  files: files.map(([path, sizeBytes, mtimeMs]) => ({ path, sizeBytes, mtimeMs })),
});

const then = [member('s.a', [['/x/a.txt', 10, 100]]), member('s.b', [['/x/b.0.txt', 20, 200], ['/x/b.1.txt', 30, 300], ['/x/b.0.txt', 20, 200]])];

test('the same export: the same tables, load targets and paths, whatever their sizes and times', () => {
  const cases: Array<[string, ExportMember[], boolean]> = [
    ['identical', then, true],
    ['a file touched', [member('s.a', [['/x/a.txt', 10, 999]]), then[1]!], true],
    ['a file rewritten', [member('s.a', [['/x/a.txt', 11, 999]]), then[1]!], true],
    ['another path', [member('s.a', [['/y/a.txt', 10, 100]]), then[1]!], false],
    ['a table fewer', [then[0]!], false],
    ['another load target (swap)', [member('s.a', [['/x/a.txt', 10, 100]], 's.a__flatload_new'), then[1]!], false],
  ];
  for (const [what, now, same] of cases) assert.equal(sameFiles(then, now), same, what);
});

test('the files whose size or time changed, with the listing of a repeated file', () => {
  const now = [member('s.a', [['/x/a.txt', 10, 100]]), member('s.b', [['/x/b.0.txt', 20, 200], ['/x/b.1.txt', 30, 301], ['/x/b.0.txt', 21, 200]])];
  assert.deepEqual(changedFiles(then, now), [
    { member: 1, index: 1, repeat: 0, path: '/x/b.1.txt', then: { sizeBytes: 30, mtimeMs: 300 } },
    { member: 1, index: 2, repeat: 1, path: '/x/b.0.txt', then: { sizeBytes: 20, mtimeMs: 200 } },
  ]);
  assert.deepEqual(changedFiles(then, then), []);
});

const stored = (exportId: string, state: StoredExport['state'], mode = 'append', members = then): StoredExport => ({
  exportId, source: '/x', mode, state, phase: 'prepared', members, startedAt: '', updatedAt: '', finishedAt: null, message: null, owner: null, heldBy: null,
});

test('the interrupted export a new one continues: unfinished, same mode and files, the newest', () => {
  const touched = [member('s.a', [['/x/a.txt', 10, 999]]), then[1]!];
  const cases: Array<[string, StoredExport[], string | undefined]> = [
    ['none', [], undefined],
    ['a finished one is not interrupted', [stored('x1', 'done')], undefined],
    ['a superseded one neither', [stored('x1', 'abandoned')], undefined],
    ['another mode', [stored('x1', 'interrupted', 'swap')], undefined],
    ['other files', [stored('x1', 'running', 'append', [then[0]!])], undefined],
    ['itself', [stored('xnow', 'running')], undefined],
    ['killed (still running in the bookkeeping)', [stored('x1', 'running')], 'x1'],
    ['the newest of two', [stored('x1', 'failed'), stored('x2', 'interrupted')], 'x2'],
  ];
  for (const [what, list, id] of cases) assert.equal(interruptedExport(list, 'append', touched, 'xnow')?.exportId, id, what);
});

test("the interrupted run's job for a file: the same listing of the file as it was then", () => {
  const job = (jobId: string, sizeBytes: number, mtimeMs: number, repeat?: number): StoredJob =>
    ({ jobId, identity: { input: { sizeBytes, mtimeMs }, ...(repeat ? { repeat } : {}) } }) as unknown as StoredJob;
  const c: ChangedFile = { member: 0, index: 0, repeat: 0, path: '/x/a.txt', then: { sizeBytes: 10, mtimeMs: 100 } };
  const cases: Array<[string, StoredJob[], ChangedFile, string | undefined]> = [
    ['no job', [], c, undefined],
    ['a job of the file as it is now (newest first)', [job('now', 10, 999), job('then', 10, 100)], c, 'then'],
    ['a job of another version only', [job('other', 11, 100)], c, undefined],
    ['the second listing', [job('first', 10, 100), job('second', 10, 100, 1)], { ...c, repeat: 1 }, 'second'],
  ];
  for (const [what, jobs, file, id] of cases) assert.equal(jobOfThen(jobs, file)?.jobId, id, what);
});

test("mydumper's metadata tables without a data file: an error unless the selection leaves them out", () => {
  const lost = [{ db: 'md', table: 'tc', fileTable: 'tc', rows: 5000, file: '/d/metadata' }];
  const cases: Array<[string, Record<string, string>, boolean]> = [
    ['no selection', {}, true],
    ['--exclude by name', { exclude: 'tc' }, false],
    ['--exclude by db.table', { exclude: 'md.tc' }, false],
    ['--exclude a pattern', { exclude: 't*' }, false],
    ['--include it', { include: 'tc' }, true],
    ['--include others only', { include: 'ta' }, false],
    ['--exclude another', { exclude: 'ta' }, true],
  ];
  for (const [what, flags, error] of cases) {
    const e = missingTables(lost, parseSelection(flags));
    assert.equal(e !== undefined, error, what);
    if (e) {
      assert.equal(e.code, 'EXPECTATION_MISMATCH');
      assert.match(e.message, /md\.tc \(5000 rows\)/);
    }
  }
  assert.equal(missingTables([], parseSelection({})), undefined);
});
