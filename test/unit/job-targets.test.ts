/**
 * The target a load's job resolves, from the facts it read once. Only a
 * Spider table asks the server anything more (its shard map, in the Spider
 * DB tests); these cases read nothing, so no server is needed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Prepared } from '../../src/introspect/target.js';
import { resolveTarget } from '../../src/job/targets/resolve.js';
import type { JobRequest, Opened } from '../../src/job/types.js';
import type { LoadOptions } from '../../src/config/loadOptions.js';
import { EventHub } from '../../src/report/events.js';

function opened(engine: string, galera: boolean): Opened {
  const prep = { db: 'd', display: 'd.t', table: { engine }, server: galera ? { galera: { nodeName: 'n1', clusterSize: 3 } } : {} } as unknown as Prepared;
  return { prep } as unknown as Opened;
}

const req: JobRequest = { o: { table: 't' } as LoadOptions, conn: {} as JobRequest['conn'], events: new EventHub(), signal: undefined, resumeCommand: '' };
const noShare = (): never => assert.fail('no share is run while resolving');

test('one server: single', async () => {
  assert.equal((await resolveTarget(req, opened('InnoDB', false), true, noShare)).kind, 'single');
});

test('a Galera node: galera', async () => {
  assert.equal((await resolveTarget(req, opened('InnoDB', true), true, noShare)).kind, 'galera');
});

test("a backend's share is never routed again, even when its table is a Spider table", async () => {
  assert.equal((await resolveTarget(req, opened('SPIDER', false), false, noShare)).kind, 'single');
});

test('--verify on one server says there is nothing to compare, and fails nothing', async () => {
  const target = await resolveTarget(req, opened('InnoDB', false), true, noShare);
  const report = { notes: [] as string[] } as unknown as Parameters<typeof target.verify>[0];
  assert.equal(await target.verify(report, {} as Parameters<typeof target.verify>[1]), undefined);
  assert.match(report.notes[0]!, /--verify compares the nodes of a Galera cluster or a Spider table's backends/);
});
