import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { OWNER_FILE, ownerGone, readOwner, removeStaleScratch, thisProcess, type ProcessProbe, type ScratchOwner } from '../../src/input/owner.js';
import { SpillDir } from '../../src/order/spillDir.js';

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'owner-test-'));
  roots.push(d);
  return d;
}

/** Processes 100 (started at tick 500) and 200 (started at 900) are alive; 300's start cannot be read. */
const probe: ProcessProbe = {
  alive: (pid) => pid === 100 || pid === 200 || pid === 300,
  start: (pid) => (pid === 100 ? '500' : pid === 200 ? '900' : null),
};
const here = { host: 'h1', boot: 'b1' };
const owner = (o: Partial<ScratchOwner>): ScratchOwner => ({ host: 'h1', boot: 'b1', pid: 100, start: '500', ...o });

test('whose directory may be removed: only an owner on this host that is certainly gone', () => {
  const cases: Array<[name: string, o: ScratchOwner | undefined, gone: boolean]> = [
    ['no marker: not known to be flatload\'s', undefined, false],
    ['the owner is alive', owner({}), false],
    ['no process of that id', owner({ pid: 42 }), true],
    ['the id was reused: a process of another start time', owner({ start: '499' }), true],
    ['alive, start time unreadable now: in doubt, kept', owner({ pid: 300, start: '1' }), false],
    ['alive, no start time recorded: kept', owner({ start: null }), false],
    ['another host (a shared tmpdir): never', owner({ host: 'h2', pid: 42 }), false],
    ['another boot of this host: every process of it is gone', owner({ boot: 'b0' }), true],
    ['no boot id recorded: by the process', owner({ boot: null }), false],
  ];
  for (const [name, o, gone] of cases) assert.equal(ownerGone(o, here, probe), gone, name);
});

function scratch(parent: string, name: string, o: ScratchOwner | undefined): string {
  const d = join(parent, name);
  mkdirSync(d);
  writeFileSync(join(d, 'input'), 'data');
  if (o) writeFileSync(join(d, OWNER_FILE), JSON.stringify(o));
  return d;
}

test('stale scratch directories: removed when flatload\'s and their owner is gone, nothing else', () => {
  const p = dir();
  const me = thisProcess();
  const dead = { ...me, pid: 42 };
  scratch(p, 'flatload-spool-dead', dead);
  scratch(p, 'flatload-order-deadjob', dead);
  scratch(p, 'flatload-stale-1-aa', dead);
  scratch(p, 'flatload-spool-live', { ...me, pid: 100, start: '500' });
  scratch(p, 'flatload-order-job.claim-100', dead);
  scratch(p, 'flatload-order-job.claim-43', dead);
  scratch(p, 'flatload-spool-nomarker', undefined);
  scratch(p, 'flatload-spool-otherhost', { ...dead, host: `${me.host}-not` });
  scratch(p, 'someone-else', dead);
  writeFileSync(join(p, 'flatload-spool-file'), 'a file');
  const target = scratch(p, 'target', dead);
  symlinkSync(target, join(p, 'flatload-spool-link'));
  const removed = removeStaleScratch(p, { alive: (pid) => pid === 100, start: () => '500' });
  assert.deepEqual(removed.map((r) => r.slice(p.length + 1)).sort(), ['flatload-order-deadjob', 'flatload-order-job.claim-43', 'flatload-spool-dead', 'flatload-stale-1-aa']);
  assert.deepEqual(readdirSync(p).sort(), ['flatload-order-job.claim-100', 'flatload-spool-file', 'flatload-spool-link', 'flatload-spool-live', 'flatload-spool-nomarker', 'flatload-spool-otherhost', 'someone-else', 'target']);
  assert.ok(existsSync(join(target, 'input')), 'a symlink is not followed');
});

test("a job's own spill directory, left by its killed run, stays for its rerun to reuse; another job's goes", () => {
  const p = dir();
  const dead = { ...thisProcess(), pid: 42 };
  scratch(p, 'flatload-order-job7', dead);
  scratch(p, 'flatload-order-job8', dead);
  scratch(p, 'flatload-spool-x', dead);
  const removed = removeStaleScratch(p, { alive: () => false, start: () => null }, (name) => name === 'flatload-order-job7');
  assert.deepEqual(removed.map((r) => r.slice(p.length + 1)).sort(), ['flatload-order-job8', 'flatload-spool-x']);
  assert.deepEqual(readdirSync(p), ['flatload-order-job7']);
});

test('with the real process table: this process\'s directory stays, a finished process\'s goes', () => {
  const p = dir();
  const child = spawnSync(process.execPath, ['-e', '0']);
  assert.equal(child.status, 0);
  const mine = scratch(p, 'flatload-spool-mine', thisProcess());
  scratch(p, 'flatload-spool-exited', { ...thisProcess(), pid: child.pid, start: '1' });
  assert.deepEqual(removeStaleScratch(p).map((r) => r.slice(p.length + 1)), ['flatload-spool-exited']);
  assert.ok(existsSync(join(mine, 'input')));
});

test('a rerun takes over its spill directory from a dead owner: the runs stay, the marker names the rerun', async () => {
  const p = dir();
  const d = scratch(p, 'flatload-order-job7', { ...thisProcess(), pid: 42 });
  const spill = await SpillDir.open({ jobId: 'job7', tmpdir: p });
  assert.equal(spill.path, d);
  assert.equal(readOwner(d)?.pid, process.pid);
  assert.deepEqual(readdirSync(d).sort(), [OWNER_FILE, 'input']);
  assert.deepEqual(removeStaleScratch(p), [], 'now owned by a live process');
});
