/**
 * When a job's lease row on a Galera cluster may be taken by another run.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { leaseTakeable, parseOwner, type LeaseRow } from '../../src/checkpoint/lease.js';

describe('parseOwner', () => {
  const cases: Array<[string, { host: string; pid: number } | undefined]> = [
    ['alice@box1 pid 4242', { host: 'box1', pid: 4242 }],
    ['box1 pid 7', { host: 'box1', pid: 7 }],
    ['alice@box1.example.com pid 1', { host: 'box1.example.com', pid: 1 }],
    ['something else', undefined],
    ['alice@box1 pid', undefined],
  ];
  for (const [text, want] of cases) test(text, () => assert.deepEqual(parseOwner(text), want));
});

describe('leaseTakeable', () => {
  const row = (owner: string, expired: boolean): LeaseRow => ({ owner, token: 't', expired, expiresAt: '2026-01-01 00:00:00.000' });
  const alive = new Set([100]);
  const isAlive = (pid: number): boolean => alive.has(pid);
  const cases: Array<[string, LeaseRow, boolean]> = [
    ['expired, whoever held it', row('bob@elsewhere pid 100', true), true],
    ['live owner on another machine', row('bob@elsewhere pid 1', false), false],
    ['owner on this machine, process alive', row('bob@here pid 100', false), false],
    ['owner on this machine, process gone', row('bob@here pid 555', false), true],
    ['unparseable owner, not expired', row('a flatload', false), false],
  ];
  for (const [name, r, want] of cases) test(name, () => assert.equal(leaseTakeable(r, 'here', isAlive), want));
});
