/**
 * The throttle's pure parts: the option syntax, what SHOW SLAVE STATUS says
 * of the lag, the pause decision, the rate pacer, and the throttle itself
 * driven by a virtual clock and scripted readings (no real time passes: a
 * sleep moves the clock). Plus runChunks holding each chunk at the throttle.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pool } from 'mysql2/promise';
import type { CutChunk } from '../../src/chunking/types.js';
import { maskPasswordArgs } from '../../src/cli/prompt.js';
import { resumeCommandLine } from '../../src/cli/resumeCommand.js';
import { DEFAULT_MAX_PAUSE_MS, parseDuration, parseHeartbeatTable, parseMaxRate, parseReplicas, toThrottleOptions, type ThrottleOptions } from '../../src/config/throttle.js';
import { isFlatloadError } from '../../src/errors/index.js';
import { heartbeatLag, heartbeatLagOf, lagOf, lagSourceText, type LagReading } from '../../src/introspect/replicas.js';
import { runChunks } from '../../src/load/runner.js';
import { pauseCauses, PauseLedger, RatePacer, Throttle, type Readings } from '../../src/load/throttle.js';
import { EventHub, type LoadEvent } from '../../src/report/events.js';
import { ProgressState } from '../../src/report/progressState.js';

const usage = (re: RegExp) => (err: unknown): boolean => isFlatloadError(err) && err.code === 'USAGE' && re.test(err.message);

describe('--max-rate', () => {
  const cases: Array<[string, 'rows' | 'bytes', number]> = [
    ['50000rows/s', 'rows', 50_000],
    ['50k rows/s', 'rows', 50_000],
    ['2M rows/s', 'rows', 2_000_000],
    ['1row/s', 'rows', 1],
    ['20MB/s', 'bytes', 20_000_000],
    ['16MiB/s', 'bytes', 16 * 1024 * 1024],
    ['512 KiB/sec', 'bytes', 512 * 1024],
    ['1.5GB/s', 'bytes', 1.5e9],
    ['100b/s', 'bytes', 100],
  ];
  for (const [text, unit, perSecond] of cases) {
    test(text, () => assert.deepEqual(parseMaxRate(text), { unit, perSecond, text: text.trim() }));
  }
  const bad: Array<[string, RegExp]> = [
    ['50000', /is not a rate/],
    ['20M/s', /has an unknown unit "M"/],
    ['20/s', /has no unit/],
    ['fast', /is not a rate/],
    ['-5rows/s', /is not a rate/],
    ['0rows/s', /below one/],
    ['0.5rows/s', /below one/],
    ['20MB', /is not a rate/],
  ];
  for (const [text, re] of bad) test(`refuses ${text}`, () => assert.throws(() => parseMaxRate(text), usage(re)));
});

describe('--max-pause durations', () => {
  const cases: Array<[string, number]> = [
    ['90', 90_000],
    ['90s', 90_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['0.5', 500],
  ];
  for (const [text, ms] of cases) test(text, () => assert.equal(parseDuration(text, 'max-pause'), ms));
  for (const text of ['', '0', '0s', '15x', 'm', '15m junk', '-5m']) {
    test(`refuses "${text}"`, () => assert.throws(() => parseDuration(text, 'max-pause'), usage(/--max-pause/)));
  }
});

describe('throttle options', () => {
  test('replicas are named r1, r2 … unless NAME=URL names them', () => {
    const r = parseReplicas(['mysql://u:pw@h1:3307', 'east=mysql://h2', 'mysql://h3']);
    assert.deepEqual(r.map((x) => [x.name, x.url.host, x.url.port, x.url.password]), [
      ['r1', 'h1', 3307, 'pw'],
      ['east', 'h2', undefined, undefined],
      ['r3', 'h3', undefined, undefined],
    ]);
  });
  const bad: Array<[string, Parameters<typeof toThrottleOptions>[0], RegExp]> = [
    ['a name twice', { replica: ['a=mysql://h1', 'a=mysql://h2'] }, /--replica a is given twice/],
    ['no URL', { replica: 'h1:3306' }, /--replica r1 must start with mysql:\/\//],
    ['--max-lag without a replica', { maxLag: '5' }, /--max-lag needs the replicas/],
    ['a negative --max-lag', { replica: 'mysql://h', maxLag: '-1' }, /--max-lag must be a number >= 0/],
    ['--max-threads-running 0', { maxThreadsRunning: '0' }, /--max-threads-running must be a whole number >= 1/],
    ['--max-threads-running 2.5', { maxThreadsRunning: '2.5' }, /whole number/],
    ['a bad --max-rate', { maxRate: '10' }, /--max-rate/],
    ['a bad --max-pause', { maxPause: 'forever' }, /--max-pause/],
    ['--lag-heartbeat without a replica', { lagHeartbeat: 'percona.heartbeat' }, /--lag-heartbeat needs the replicas/],
    ['--lag-heartbeat without its database', { replica: 'mysql://h', lagHeartbeat: 'heartbeat' }, /--lag-heartbeat: "heartbeat" is not db\.table/],
  ];
  for (const [name, args, re] of bad) test(`refuses ${name}`, () => assert.throws(() => toThrottleOptions(args), usage(re)));
  test('defaults: 10 s of lag, 30 minutes of pause, nothing throttled', () => {
    assert.deepEqual(toThrottleOptions({}), { maxRate: undefined, replicas: [], maxLagSeconds: 10, maxThreadsRunning: undefined, maxPauseMs: DEFAULT_MAX_PAUSE_MS });
    assert.equal(DEFAULT_MAX_PAUSE_MS, 30 * 60 * 1000);
  });
  test('the last of a repeated option wins', () => {
    assert.equal(toThrottleOptions({ replica: 'mysql://h', maxLag: ['5', '7'] }).maxLagSeconds, 7);
  });
});

describe('--lag-heartbeat db.table', () => {
  const cases: Array<[string, string, string, string]> = [
    ['percona.heartbeat', 'percona', 'heartbeat', 'percona.heartbeat'],
    [' ops.hb ', 'ops', 'hb', 'ops.hb'],
    ['`my.db`.`heart beat`', 'my.db', 'heart beat', '`my.db`.`heart beat`'],
  ];
  for (const [text, db, table, shown] of cases) test(text, () => assert.deepEqual(parseHeartbeatTable(text), { db, table, text: shown }));
  for (const text of ['', 'heartbeat', 'a.b.c', '.heartbeat', 'percona.', '`unclosed.hb']) {
    test(`refuses "${text}"`, () => assert.throws(() => parseHeartbeatTable(text), usage(/--lag-heartbeat: .* is not db\.table/)));
  }
  test('given with a replica, it is the lag source; absent, the options are as before', () => {
    assert.deepEqual(toThrottleOptions({ replica: 'mysql://h', lagHeartbeat: ['x.y', 'percona.heartbeat'] }).lagHeartbeat, { db: 'percona', table: 'heartbeat', text: 'percona.heartbeat' });
    assert.equal('lagHeartbeat' in toThrottleOptions({ replica: 'mysql://h' }), false);
    assert.equal(lagSourceText(undefined, undefined), 'lag from Seconds_Behind_Master');
    assert.equal(lagSourceText({ db: 'percona', table: 'heartbeat', text: 'percona.heartbeat' }, '7'), 'lag from heartbeat percona.heartbeat (now, UTC, minus its ts for server_id 7)');
  });
});

describe('lag from a heartbeat ts and a clock', () => {
  const now = Date.UTC(2026, 11, 4, 18, 0, 10, 500);
  const cases: Array<[string, string, number | null]> = [
    ['pt-heartbeat --utc, microseconds', '2026-12-04T18:00:00.123456', 10.376544],
    ['no fraction', '2026-12-04T18:00:00', 10.5],
    ['a space for the T (NOW() written as is)', '2026-12-04 18:00:09.5', 1],
    ['a day back, across midnight', '2026-12-03T18:00:10.500000', 86_400],
    ['written the same instant', '2026-12-04T18:00:10.500000', 0],
    ['ahead of this clock: negative', '2026-12-04T18:00:12.000000', -1.5],
    ['a date that does not exist', '2026-02-30T18:00:00', null],
    ['an hour 24', '2026-12-04T24:00:00', null],
    ['a zone suffix pt-heartbeat never writes', '2026-12-04T18:00:00Z', null],
    ['not a timestamp', 'yesterday', null],
    ['empty', '', null],
  ];
  for (const [name, ts, lag] of cases) {
    test(name, () => {
      const got = heartbeatLag(ts, now);
      if (lag === null) assert.equal(got, null);
      else assert.ok(got !== null && Math.abs(got - lag) < 1e-6, `${got} vs ${lag}`);
    });
  }

  const hb = { db: 'percona', table: 'heartbeat', text: 'percona.heartbeat' };
  const running = [{ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: 0 }];
  const reading: Array<[string, Array<Record<string, unknown>>, string | null | undefined, number | null, RegExp]> = [
    ['replicating: the row\'s age to a tenth of a second, whatever Seconds_Behind_Master says', running, '2026-12-04T18:00:07.960000', 2.5, /^replicating$/],
    ['the SQL thread stopped: unknown, however fresh the row', [{ ...running[0], Slave_SQL_Running: 'No' }], '2026-12-04T18:00:10.400000', null, /SQL thread stopped/],
    ['the IO thread stopped: unknown', [{ ...running[0], Slave_IO_Running: 'No', Seconds_Behind_Master: null }], '2026-12-04T18:00:10.400000', null, /IO thread stopped/],
    ['Seconds_Behind_Master NULL while connecting: the heartbeat decides', [{ ...running[0], Seconds_Behind_Master: null }], '2026-12-04T18:00:00.500000', 10, /^replicating$/],
    ['no row for the primary\'s server_id', running, undefined, null, /no row in percona\.heartbeat for the primary's server_id 1/],
    ['a little ahead (the hosts\' clocks differ): no lag, not a negative one', running, '2026-12-04T18:00:12.000000', 0, /^replicating$/],
    ['an hour ahead (local time east of UTC): unknown, so it cannot hide a lag', running, '2026-12-04T19:00:10.500000', null, /ts "2026-12-04T19:00:10\.500000" in percona\.heartbeat is 3600 s ahead of UTC \(pt-heartbeat without --utc\?\)/],
    ['ts NULL', running, null, null, /ts "NULL" in percona\.heartbeat unreadable/],
    ['ts unreadable', running, 'soon', null, /ts "soon" in percona\.heartbeat unreadable/],
    ['not a replica', [], '2026-12-04T18:00:10.400000', null, /not a replica/],
  ];
  for (const [name, rows, ts, lag, state] of reading) {
    test(name, () => {
      const r = heartbeatLagOf('r1', rows, hb, '1', ts, now);
      assert.equal(r.lagSeconds, lag);
      assert.match(r.state, state);
    });
  }
});

describe('lag from SHOW SLAVE STATUS / SHOW REPLICA STATUS', () => {
  const cases: Array<[string, Array<Record<string, unknown>>, number | null, RegExp]> = [
    ['no row: not a replica', [], null, /not a replica/],
    ['replicating, 3 s behind', [{ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: 3 }], 3, /replicating/],
    ['MySQL 8.4 spelling', [{ Replica_IO_Running: 'Yes', Replica_SQL_Running: 'Yes', Seconds_Behind_Source: '42' }], 42, /replicating/],
    ['SQL thread stopped, lag column still a number', [{ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'No', Seconds_Behind_Master: 0 }], null, /SQL thread stopped/],
    ['IO thread stopped', [{ Slave_IO_Running: 'No', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: null }], null, /IO thread stopped/],
    ['connecting, lag NULL', [{ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: null }], null, /lag not reported/],
  ];
  for (const [name, rows, lag, state] of cases) {
    test(name, () => {
      const r = lagOf('r1', rows);
      assert.equal(r.lagSeconds, lag);
      assert.match(r.state, state);
    });
  }
});

describe('pause decisions', () => {
  const rep = (name: string, lagSeconds: number | null, state = 'replicating'): LagReading => ({ name, lagSeconds, state });
  const limits = { maxLagSeconds: 10, maxThreadsRunning: 20 };
  const cases: Array<[string, Readings, number, string[]]> = [
    ['every replica within the limit', { replicas: [rep('r1', 0), rep('r2', 10)] }, 0, []],
    ['one replica over', { replicas: [rep('r1', 0), rep('r2', 42)] }, 0, ['replica r2 lag 42 s']],
    ['an unknown lag counts as over', { replicas: [rep('r1', null, 'SQL thread stopped')] }, 0, ['replica r1 lag unknown (SQL thread stopped)']],
    ['both replicas over', { replicas: [rep('r1', 11), rep('r2', null, 'unreachable: refused')] }, 0, ['replica r1 lag 11 s', 'replica r2 lag unknown (unreachable: refused)']],
    ['Threads_running over, flatload\'s own excluded', { replicas: [], threadsRunning: 30 }, 4, ["Threads_running 26 (flatload's own excluded) over 20"]],
    ['Threads_running over only with flatload\'s own', { replicas: [], threadsRunning: 24 }, 4, []],
    ['Threads_running not read', { replicas: [] }, 0, []],
  ];
  for (const [name, readings, own, texts] of cases) {
    test(name, () => assert.deepEqual(pauseCauses(readings, limits, own).map((c) => c.text), texts));
  }
  test('without --max-threads-running the primary is not judged', () => {
    assert.deepEqual(pauseCauses({ replicas: [], threadsRunning: 1000 }, { maxLagSeconds: 10, maxThreadsRunning: undefined }, 0), []);
  });
});

describe('rate pacer (rate x time plus one chunk, never more)', () => {
  // [now ms, amount] → wait ms; 1,000 per second.
  const steps: Array<[number, number, number]> = [
    [0, 500, 0], // the first chunk goes at once
    [0, 500, 500], // the next waits until the first is paid for
    [100, 1000, 900], // booked after the second: it was paid at 1,000 ms
    [5000, 100, 0], // a quiet spell earns no burst beyond the chunk itself
    [5000, 100, 100],
  ];
  test('waits', () => {
    const p = new RatePacer(1000);
    assert.deepEqual(steps.map(([now, amount]) => p.reserve(amount, now)), steps.map((s) => s[2]));
  });
});

describe('pause ledger', () => {
  const c = (cause: string, text = cause): { cause: string; text: string } => ({ cause, text });
  test('time per cause, pauses counted once, changes reported', () => {
    const l = new PauseLedger();
    assert.equal(l.observe([], 0), undefined);
    assert.equal(l.observe([c('replica r1 lag', 'replica r1 lag unknown')], 1000), 'paused');
    assert.equal(l.observe([c('replica r1 lag', 'replica r1 lag unknown')], 2000), undefined);
    assert.equal(l.observe([c('replica r1 lag', 'replica r1 lag 40 s'), c('Threads_running')], 3000), 'changed');
    assert.equal(l.pausedFor(3500), 2500);
    assert.equal(l.observe([], 4000), 'resumed');
    assert.equal(l.observe([c('Threads_running')], 10_000), 'paused');
    assert.equal(l.observe([], 10_500), 'resumed');
    assert.equal(l.pauses, 2);
    assert.equal(l.pausedMs, 3500);
    assert.deepEqual([...l.byCause], [['replica r1 lag', 3000], ['Threads_running', 1500]]);
  });
});

/** A throttle on a virtual clock: sleeping moves the clock; each reading comes from the script by time. */
function virtualThrottle(options: Partial<ThrottleOptions>, lagAt: (ms: number) => number | null) {
  let now = 0;
  const events: LoadEvent[] = [];
  const hub = new EventHub();
  hub.on((e) => events.push(e));
  const reads: number[] = [];
  const t = new Throttle(
    { maxRate: undefined, replicas: [{ name: 'r1', url: { params: {} } }], maxLagSeconds: 10, maxThreadsRunning: undefined, maxPauseMs: 60_000, ...options },
    {
      now: () => now,
      sleep: (ms) => {
        now += ms;
        return Promise.resolve();
      },
      read: () => {
        reads.push(now);
        const lag = lagAt(now);
        return Promise.resolve({ replicas: [{ name: 'r1', lagSeconds: lag, state: lag === null ? 'SQL thread stopped' : 'replicating' }] });
      },
    },
    hub,
  );
  return { t, events, reads, clock: () => now, tick: (ms: number) => (now += ms) };
}

const chunk = (index: number, records = 100, bytes = 1000): CutChunk => ({ index, startByte: index * bytes, endByte: (index + 1) * bytes, firstLine: 1, firstRecord: index * records, records, newlines: records });

describe('throttle', () => {
  test('holds a chunk while the lag is unknown or over, lets it go when it falls, and says so', async () => {
    const { t, events, clock } = virtualThrottle({}, (ms) => (ms < 3000 ? null : ms < 5000 ? 42 : 2));
    await t.admit(chunk(0));
    assert.equal(clock(), 5000);
    assert.deepEqual(
      events.map((e) => (e.type === 'throttle' ? `${e.state}: ${e.reason}` : e.type)),
      ['paused: replica r1 lag unknown (SQL thread stopped)', 'paused: replica r1 lag 42 s', 'resumed: '],
    );
    const r = t.report();
    assert.deepEqual([r.pauses, r.pausedSeconds, r.causes], [1, 5, [{ cause: 'replica r1 lag', seconds: 5 }]]);
    // The progress line shows the pause while it lasts.
    const state = new ProgressState(0);
    state.apply(events[0]!, 0);
    assert.equal(state.paused, 'replica r1 lag unknown (SQL thread stopped)');
    state.apply(events[2]!, 5000);
    assert.equal(state.paused, undefined);
  });

  test('asks the replicas at most once a poll interval, however many streams wait', async () => {
    const { t, reads } = virtualThrottle({}, () => 0);
    await Promise.all([t.admit(chunk(0)), t.admit(chunk(1)), t.admit(chunk(2))]);
    assert.deepEqual(reads, [0]);
  });

  test('a pause longer than --max-pause stops, resumable, naming the replica', async () => {
    const { t, clock } = virtualThrottle({ maxPauseMs: 10_000 }, () => null);
    await assert.rejects(t.admit(chunk(0)), (err: unknown) => isFlatloadError(err) && err.code === 'THROTTLED' && err.exitCode === 4 && /paused 11 s, longer than --max-pause 10 s: replica r1 lag unknown \(SQL thread stopped\)/.test(err.message));
    assert.equal(clock(), 11_000);
    assert.equal(t.report().pausedSeconds, 11);
  });

  test('--max-rate in rows paces the chunks across streams', async () => {
    const { t, clock } = virtualThrottle({ replicas: [], maxRate: { unit: 'rows', perSecond: 100, text: '100rows/s' } }, () => 0);
    for (let i = 0; i < 4; i++) await t.admit(chunk(i, 100));
    // Four chunks of 100 rows at 100 rows/s: the first goes at once, each next one a second later.
    assert.equal(clock(), 3000);
    assert.equal(t.report().rateWaitSeconds, 3);
  });

  test('--max-rate in bytes counts each chunk\'s input bytes', async () => {
    const { t, clock } = virtualThrottle({ replicas: [], maxRate: { unit: 'bytes', perSecond: 500, text: '500b/s' } }, () => 0);
    await t.admit(chunk(0, 1, 1000));
    await t.admit(chunk(1, 1, 1000));
    assert.equal(clock(), 2000);
  });

  test('an abort ends the wait at once', async () => {
    const { t } = virtualThrottle({}, () => null);
    const ac = new AbortController();
    ac.abort();
    await t.admit(chunk(0), ac.signal);
    assert.equal(t.report().pauses, 0);
  });
});

describe('runChunks with a throttle', () => {
  const fakePool = {
    getConnection: () => Promise.resolve({ query: () => Promise.resolve([[], []]), release: () => undefined, destroy: () => undefined }),
  } as unknown as Pool;
  async function* chunks(n: number): AsyncIterable<CutChunk> {
    for (let i = 0; i < n; i++) yield chunk(i);
  }
  const execute = (c: CutChunk) => Promise.resolve({ records: c.records, rowsLoaded: c.records, rejected: 0, warnings: 0, bytes: c.endByte - c.startByte });

  test('every chunk is admitted before it runs and let go after', async () => {
    const log: string[] = [];
    const res = await runChunks({
      pool: fakePool,
      jobs: 2,
      chunks: chunks(3),
      execute: (c) => {
        log.push(`run ${c.index}`);
        return execute(c);
      },
      sessionSql: [],
      events: new EventHub(),
      throttle: {
        admit: (c) => {
          log.push(`admit ${c.index}`);
          return Promise.resolve();
        },
        done: () => log.push('done'),
      },
    });
    assert.equal(res.stoppedBy, undefined);
    assert.equal(res.totals.records, 300);
    for (let i = 0; i < 3; i++) assert.ok(log.indexOf(`admit ${i}`) < log.indexOf(`run ${i}`), log.join(', '));
    assert.equal(log.filter((l) => l === 'done').length, 3);
  });

  test('a pause that outlasts --max-pause stops the run after the chunks in flight, with that error', async () => {
    // The replica's SQL thread stops while the first chunk loads (which takes a virtual second).
    const { t, tick } = virtualThrottle({ maxPauseMs: 5000 }, (ms) => (ms === 0 ? 0 : null));
    let ran = 0;
    const res = await runChunks({
      pool: fakePool,
      jobs: 1,
      chunks: chunks(5),
      execute: (c) => {
        ran++;
        tick(1000);
        return execute(c);
      },
      sessionSql: [],
      events: new EventHub(),
      throttle: t,
    });
    assert.equal(ran, 1);
    assert.equal(res.stoppedBy?.code, 'THROTTLED');
  });
});

describe('--replica credentials', () => {
  test('masked in ps and dropped from the resume command, named or not', () => {
    const argv = ['load', 'f.tsv', '--replica', 'mysql://u:pw1@h1:3307/?ssl-mode=REQUIRED', '--replica=east=mysql://v:pw2@h2', '--replica', 'west=mysql://w:pw3@h3'];
    assert.deepEqual(maskPasswordArgs(argv).slice(2), ['--replica', 'mysql://u:xxx@h1:3307/?ssl-mode=REQUIRED', '--replica=east=mysql://v:xxx@h2', '--replica', 'west=mysql://w:xxx@h3']);
    const line = resumeCommandLine(argv, '/data');
    assert.doesNotMatch(line, /pw[1-3]/);
    assert.match(line, /--replica 'mysql:\/\/u@h1:3307\/\?ssl-mode=REQUIRED' --replica=east=mysql:\/\/v@h2 --replica west=mysql:\/\/w@h3/);
  });
});
