/**
 * Quick exclusive statements on a live table ask for the lock a second at a
 * time: which statements, the pauses between tries, the message naming the
 * sessions waited for, and the stop past --max-pause. The server side (a
 * reader not held up, a real transaction named) is test/db/lock-wait.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isFlatloadError } from '../../src/errors/index.js';
import { describeHolders, pauseAfterTry, queryWhenUnlocked, TRY_WAIT_SECONDS } from '../../src/load/lockWait.js';
import { briefExclusiveLocks, type Op } from '../../src/plan/ops.js';

const t = { db: 'shop', table: 'orders' };
const s = { db: 'shop', table: 'orders__flatload_new' };

describe('briefExclusiveLocks', () => {
  const cases: Array<[Op, string[]]> = [
    [{ kind: 'truncate', table: t }, ['orders']],
    [{ kind: 'drop-table', table: s, ifExists: true }, ['orders__flatload_new']],
    [{ kind: 'swap-tables', target: t, shadow: s, old: { db: 'shop', table: 'orders__flatload_old' } }, ['orders', 'orders__flatload_new']],
    [{ kind: 'swap-set', swaps: [{ target: t, shadow: s, old: s }] }, ['orders', 'orders__flatload_new']],
    [{ kind: 'drop-indexes', table: t, indexes: [] }, ['orders']],
    [{ kind: 'disable-keys', table: t }, ['orders']],
    [{ kind: 'auto-increment-after-input', table: t, firstValue: '1' }, ['orders']],
    // Builds and rebuilds: a short wait giving up at their end would throw the work away.
    [{ kind: 'add-indexes', table: t, indexes: [] }, []],
    [{ kind: 'enable-keys', table: t }, []],
    [{ kind: 'drop-column', table: t, column: 'id' }, []],
    [{ kind: 'add-auto-increment-key', table: t, column: 'id', columnType: 'BIGINT', after: null }, []],
    // Row locks, or a shared lock only.
    [{ kind: 'delete-all', table: t }, []],
    [{ kind: 'create-like', table: s, like: t }, []],
  ];
  for (const [op, tables] of cases) {
    test(op.kind, () => assert.deepEqual(briefExclusiveLocks(op).map((r) => r.table), tables));
  }
});

test('pauses between tries grow to 15 s', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 20].map(pauseAfterTry), [1000, 2000, 4000, 8000, 15000, 15000, 15000]);
});

describe('describeHolders', () => {
  test('names each session, idle or running', () => {
    assert.equal(
      describeHolders([
        { id: 12, user: 'app', host: '10.0.0.5:4242', openSeconds: 312, info: null },
        { id: 13, user: 'bi', host: 'localhost', openSeconds: 40, info: 'SELECT  *\n FROM orders' },
      ]),
      'connection 12 (app@10.0.0.5:4242), in a transaction for 5.2 min, idle; connection 13 (bi@localhost), in a transaction for 40 s, running: SELECT * FROM orders',
    );
  });
  test('says what else holds a lock when no transaction does', () => {
    assert.match(describeHolders([]), /no open transaction found \(a LOCK TABLES/);
  });
});

/** A control connection refusing the lock `refusals` times (errno 1205), then taking it; the holders query answers one session. */
function fakeControl(refusals: number): { queries: string[]; query: (sql: string) => Promise<[unknown, unknown]> } {
  const queries: string[] = [];
  let left = refusals;
  return {
    queries,
    query(sql: string) {
      queries.push(sql);
      if (sql.includes('INNODB_TRX')) return Promise.resolve([[{ id: 7, user: 'bi', host: 'localhost', open_seconds: 50, info: null }], []]);
      if (left-- > 0) return Promise.reject(Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205 }));
      return Promise.resolve([{}, []]);
    },
  };
}

function clock(): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } {
  let at = 0;
  const slept: number[] = [];
  return { now: () => at, sleep: (ms) => ((at += ms), slept.push(ms), Promise.resolve()), slept };
}

describe('queryWhenUnlocked', () => {
  test('asks a second at a time, notes the wait and the lock', async () => {
    const c = fakeControl(3);
    const k = clock();
    const notes: string[] = [];
    await queryWhenUnlocked(c, 'TRUNCATE TABLE `shop`.`orders`', [t], { maxPauseMs: 60_000, mariadb: true, note: (m) => notes.push(m), ...k });
    const tries = c.queries.filter((q) => q.startsWith('SET STATEMENT'));
    assert.equal(tries.length, 4);
    assert.equal(tries[0], `SET STATEMENT lock_wait_timeout = ${TRY_WAIT_SECONDS} FOR TRUNCATE TABLE \`shop\`.\`orders\``);
    assert.deepEqual(k.slept, [1000, 2000, 4000]);
    assert.equal(notes.length, 2);
    assert.match(notes[0]!, /^TRUNCATE TABLE waits for other sessions to let go of `shop`.`orders` \(connection 7 \(bi@localhost\), in a transaction for 50 s, idle\)/);
    assert.match(notes[1]!, /got the lock on `shop`.`orders` after 7 s/);
  });

  test('stops past --max-pause, resumable, naming who held the table', async () => {
    const c = fakeControl(1000);
    const k = clock();
    await assert.rejects(
      queryWhenUnlocked(c, 'RENAME TABLE a TO b', [t], { maxPauseMs: 20_000, mariadb: true, note: () => undefined, ...k }),
      (err: unknown) => isFlatloadError(err) && err.code === 'LOCK_WAIT' && err.exitCode === 4 && /longer than --max-pause 20 s: connection 7 \(bi@localhost\)/.test(err.message),
    );
  });

  test('Ctrl-C between tries stops the wait: interrupted, resumable', async () => {
    const c = fakeControl(1000);
    const k = clock();
    const stop = new AbortController();
    const sleep = (ms: number): Promise<void> => (stop.abort(), k.sleep(ms));
    await assert.rejects(
      queryWhenUnlocked(c, 'RENAME TABLE a TO b', [t], { maxPauseMs: 60_000, mariadb: true, note: () => undefined, now: k.now, sleep, signal: stop.signal }),
      (err: unknown) => isFlatloadError(err) && err.code === 'INTERRUPTED' && err.exitCode === 4 && /interrupted while waiting for other sessions to let go of `shop`.`orders`/.test(err.message),
    );
    assert.equal(c.queries.filter((q) => q.startsWith('SET STATEMENT')).length, 1);
  });

  test('a statement failing otherwise fails at once', async () => {
    const c = { query: () => Promise.reject(Object.assign(new Error('no such table'), { errno: 1146 })) };
    await assert.rejects(queryWhenUnlocked(c, 'TRUNCATE TABLE x', [t], { maxPauseMs: 1000, mariadb: true, note: () => undefined, ...clock() }), /no such table/);
  });

  test('other servers run the statement as it is', async () => {
    const c = fakeControl(0);
    await queryWhenUnlocked(c, 'TRUNCATE TABLE x', [t], { maxPauseMs: 1000, mariadb: false, note: () => undefined, ...clock() });
    assert.deepEqual(c.queries, ['TRUNCATE TABLE x']);
  });
});
