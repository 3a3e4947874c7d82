/**
 * The one job ladder's runner: the rungs in order, where a climb ends, and
 * which stops are recorded under each kind's rules. The hooks here only
 * note what they were asked; the kinds' own hooks are run by the DB tests
 * (load, resume, export, spider).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { climb, RUNGS, type Found, type LadderJob, type StopRules } from '../../src/job/climb.js';
import { FlatloadError } from '../../src/errors/index.js';

const TABLE: StopRules = { recordThrownIn: ['prepared', 'started', 'loaded'], loadRecordsItsStops: true, verifyGatesFinish: false, resumeThrownFrom: 'prepared' };
const EXPORT: StopRules = { recordThrownIn: ['found', 'prepared', 'started', 'loaded', 'reported', 'verified', 'finished'], loadRecordsItsStops: false, verifyGatesFinish: true, resumeThrownFrom: null };

interface Script {
  rules: StopRules;
  found?: Found;
  endsAtFound?: boolean;
  throwIn?: string;
  stoppedBy?: FlatloadError;
  mismatch?: FlatloadError;
}

/** A job whose hooks log their calls; returns the log and the job. */
function scripted(s: Script): { log: string[]; job: LadderJob<string> } {
  const log: string[] = [];
  const rung = (name: string) => async (): Promise<void> => {
    log.push(name);
    if (s.throwIn === name) throw new FlatloadError('SERVER_ERROR', `${name} failed`);
  };
  const job: LadderJob<string> = {
    kind: 'table',
    doing: 'loading',
    rules: s.rules,
    hold: rung('hold'),
    find: async () => {
      await rung('find')();
      return s.found ?? 'fresh';
    },
    endsAtFound: async (found) => (s.endsAtFound ? `ended at found: ${found}` : undefined),
    prepare: rung('prepare'),
    start: rung('start'),
    load: async () => {
      await rung('load')();
      return s.stoppedBy;
    },
    report: async (stoppedBy) => {
      await rung('report')();
      if (stoppedBy) log.push(`report saw ${stoppedBy.code}`);
    },
    verify: async () => {
      await rung('verify')();
      return s.mismatch;
    },
    finish: rung('finish'),
    mark: async (state, e) => void log.push(`mark ${state}: ${e.message}`),
    withResume: (e) => e.withContext({ resumeCommand: 'flatload again' }),
    result: (error) => `result ${error ? `${error.code}${error.context.resumeCommand ? ' resumable' : ''}` : 'ok'}`,
    release: async (thrown) => void log.push(`release${thrown ? ` after ${thrown.code}` : ''}`),
  };
  return { log, job };
}

test('the rungs, in order', () => {
  assert.deepEqual(RUNGS, ['held', 'found', 'prepared', 'started', 'loaded', 'reported', 'verified', 'finished']);
});

test('a clean climb calls every rung once, in order, then releases', async () => {
  const { log, job } = scripted({ rules: TABLE });
  assert.equal(await climb(job), 'result ok');
  assert.deepEqual(log, ['hold', 'find', 'prepare', 'start', 'load', 'report', 'verify', 'finish', 'release']);
});

test('already done: the climb ends at found, nothing loads, the job is still released', async () => {
  const { log, job } = scripted({ rules: TABLE, found: 'done', endsAtFound: true });
  assert.equal(await climb(job), 'ended at found: done');
  assert.deepEqual(log, ['hold', 'find', 'release']);
});

test('a stop the load came through: reported, recorded unless the load recorded it, resumable, not finished', async () => {
  const stop = new FlatloadError('INTERRUPTED', 'interrupted');
  const table = scripted({ rules: TABLE, stoppedBy: stop });
  assert.equal(await climb(table.job), 'result INTERRUPTED resumable');
  assert.deepEqual(table.log, ['hold', 'find', 'prepare', 'start', 'load', 'report', 'report saw INTERRUPTED', 'release']);
  const exp = scripted({ rules: EXPORT, stoppedBy: stop });
  assert.equal(await climb(exp.job), 'result INTERRUPTED resumable');
  assert.deepEqual(exp.log, ['hold', 'find', 'prepare', 'start', 'load', 'report', 'report saw INTERRUPTED', 'mark interrupted: interrupted', 'release']);
});

test('a mismatch keeps an export from finishing (recorded failed); a table job still finishes and ends with it', async () => {
  const mismatch = new FlatloadError('EXPECTATION_MISMATCH', 'rows differ');
  const exp = scripted({ rules: EXPORT, mismatch });
  assert.equal(await climb(exp.job), 'result EXPECTATION_MISMATCH');
  assert.deepEqual(exp.log.slice(-3), ['verify', 'mark failed: rows differ', 'release']);
  const table = scripted({ rules: TABLE, mismatch });
  assert.equal(await climb(table.job), 'result EXPECTATION_MISMATCH');
  assert.deepEqual(table.log.slice(-3), ['verify', 'finish', 'release']);
});

test("a thrown error is recorded only in the kind's rungs, and carries the resume command only from the kind's rung on", async () => {
  const cases: Array<[string, StopRules, string, boolean, boolean]> = [
    // [what, rules, rung that throws, recorded, carries the resume command]
    ['a table, in its load', TABLE, 'load', true, true],
    ['a table, while its input is scanned or sorted (its row written when it was prepared)', TABLE, 'start', true, true],
    ['a table, while its input is prepared', TABLE, 'prepare', true, true],
    ['a table, while it is found', TABLE, 'find', false, false],
    ['an export, while held', EXPORT, 'hold', false, false],
    ['an export, while prepared', EXPORT, 'prepare', true, false],
    ['an export, in its load', EXPORT, 'load', true, false],
  ];
  for (const [what, rules, rung, recorded, resumable] of cases) {
    const { log, job } = scripted({ rules, throwIn: rung });
    await assert.rejects(climb(job), (e: FlatloadError) => (e.context.resumeCommand === 'flatload again') === resumable, what);
    const expected = recorded ? [`mark failed: ${rung} failed`, 'release after SERVER_ERROR'] : [rung, 'release after SERVER_ERROR'];
    assert.deepEqual(log.slice(-2), expected, what);
  }
});
