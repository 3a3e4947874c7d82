import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { pollUntil, running } from '../support/poll.js';
import type { Spawned } from '../support/spawn.js';

/** A child that exits with `code` after printing to stderr, shaped as spawnCli's result. */
function exiting(code: number): Spawned {
  const child = spawn(process.execPath, ['-e', `process.stderr.write('gave up'); process.exit(${code})`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (c, signal) => resolve({ code: c, signal, stdout: '', stderr })),
  );
  return { child, done };
}

test('a condition that holds ends the poll', async () => {
  let tries = 0;
  await pollUntil('third try', async () => ++tries === 3, { everyMs: 1 });
  assert.equal(tries, 3);
});

test('a condition that never holds fails at the deadline, naming what was awaited', async () => {
  await assert.rejects(pollUntil('the rows', async () => false, { timeoutMs: 30, everyMs: 5 }), /the rows: not reached within 0.03 s/);
});

test('a watched process that exits first fails the poll with its status and stderr, not at the deadline', async () => {
  const p = exiting(3);
  await assert.rejects(pollUntil('the rows', async () => false, { process: p, timeoutMs: 60_000 }), /the rows: the process exited first \(code 3, signal null\)\ngave up/);
  assert.equal(running(p), false);
});

test('a condition that came true as the process exited still counts', async () => {
  const p = exiting(0);
  await p.done;
  let tries = 0;
  await pollUntil('the rows', async () => ++tries > 1, { process: p, timeoutMs: 60_000 });
  assert.equal(tries, 2);
});

test('an alive check that turns false fails the poll at once, not at the deadline', async () => {
  let alive = true;
  let tries = 0;
  const poll = pollUntil('the spool', async () => (++tries === 2 ? ((alive = false), false) : false), { alive: () => alive, timeoutMs: 60_000, everyMs: 1 });
  await assert.rejects(poll, /the spool: what it waits on ended first/);
  assert.ok(tries < 10, `gave up after ${tries} tries`);
});
