import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { newOverOld, resolveBaseline } from '../../bench/competitors.js';
import { writeDocSection } from '../../bench/doc.js';
import { estimateSeconds, type Mode } from '../../bench/estimate.js';
import { formatEstimate, formatSpread, QuietSession, waitQuiet, writeVerdict } from '../../bench/quiet.js';
import { cachedInput, cachePaths, diskBytes, withPeakDisk } from '../../bench/scale.js';

const dir = mkdtempSync(join(tmpdir(), 'flatload-bench-quiet-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const sequence = (xs: number[]) => () => (xs.length > 1 ? xs.shift()! : xs[0]!);

test('writeVerdict: quiet runs write; one run at 1.0 or more refuses, naming it and its load; --force writes and says so', () => {
  assert.deepEqual(writeVerdict([{ label: 'a', load1: 0.2 }, { label: 'b', load1: 0.99 }], false), { write: true, refusal: '', note: '' });
  const busy = [{ label: 'a', load1: 0.3 }, { label: 'innodb: flatload --jobs 2', load1: 1.0 }];
  const no = writeVerdict(busy, false);
  assert.equal(no.write, false);
  assert.match(no.refusal, /1 of 2 runs .*innodb: flatload --jobs 2 \(load average 1\.00\).*--force/);
  const forced = writeVerdict(busy, true);
  assert.equal(forced.write, true);
  assert.match(forced.note, /load average 1\.00 at start \(innodb: flatload --jobs 2\): not a quiet-machine figure/);
});

test('writeDocSection: refused after a busy run (the file untouched), written with the note under --force', () => {
  const doc = join(dir, 'bench.md');
  writeFileSync(doc, '# Benchmarks\n\nkept\n');
  const s = new QuietSession(sequence([0.4, 2.5]));
  s.start('first');
  assert.equal(writeDocSection(doc, 'x', 'quiet body', s), true);
  assert.match(readFileSync(doc, 'utf8'), /kept[\s\S]*<!-- bench:x:begin -->\nquiet body\n<!-- bench:x:end -->/);
  s.start('second');
  const before = readFileSync(doc, 'utf8');
  assert.equal(writeDocSection(doc, 'x', 'busy body', s), false);
  assert.equal(readFileSync(doc, 'utf8'), before);
  assert.deepEqual(s.refused, [`${doc} (x)`]);
  s.force = true;
  assert.equal(writeDocSection(doc, 'x', 'busy body', s), true);
  assert.match(readFileSync(doc, 'utf8'), /<!-- bench:x:begin -->\n> load average 2\.50 at start \(second\): not a quiet-machine figure \(written with --force\)\.\n\nbusy body\n<!-- bench:x:end -->/);
  assert.equal(writeDocSection(doc, 'y', '## Heading\n\nbusy body', s), true);
  assert.match(readFileSync(doc, 'utf8'), /<!-- bench:y:begin -->\n## Heading\n\n> load average 2\.50 at start \(second\): not a quiet-machine figure \(written with --force\)\.\n\nbusy body\n<!-- bench:y:end -->/);
});

test('waitQuiet: starts at once when quiet, waits for the load to drop, refuses after the wait unless forced', async () => {
  const log: string[] = [];
  assert.equal(await waitQuiet({ read: () => 0.5, waitSeconds: 10, force: false, log: (l) => log.push(l) }), 0.5);
  assert.equal(log.length, 0);
  assert.equal(await waitQuiet({ read: sequence([1.7, 1.2, 0.6]), waitSeconds: 10, pollMs: 5, force: false, log: (l) => log.push(l) }), 0.6);
  assert.match(log.join('\n'), /1-minute load average 1\.70 .*waiting up to 10 s/);
  await assert.rejects(waitQuiet({ read: () => 1.0, waitSeconds: 0.05, pollMs: 5, force: false, log: () => undefined }), /not quiet: 1-minute load average 1\.00 after waiting 0\.05 s/);
  assert.equal(await waitQuiet({ read: () => 3, waitSeconds: 0.05, pollMs: 5, force: true, log: () => undefined }), 3);
});

test('formatSpread and formatEstimate', () => {
  assert.equal(formatSpread([12.3]), '12.30 s (1 round)');
  assert.equal(formatSpread([13, 11.9, 12.3]), '12.30 s median, 11.90–13.00 over 3 rounds');
  assert.equal(formatSpread([4, 1, 3, 2], 'x'), '2.50 x median, 1.00–4.00 over 4 rounds');
  assert.equal(formatSpread([]), 'no runs');
  assert.equal(formatEstimate(40), '~40 s');
  assert.equal(formatEstimate(1500), '~25 min');
  assert.equal(formatEstimate(7200), '~2.0 h');
});

test('estimateSeconds: every mode has one, growing with rows and rounds', () => {
  const modes: Mode[] = ['comparison', 'strategies', 'cluster', 'engines', 'export', 'memory', 'scale'];
  for (const mode of modes) {
    const e = (rows: number, repeat: number): number => estimateSeconds({ mode, rows, repeat, only: ['innodb', 'innodb-small'], baseline: false, naiveSeconds: 300, memoryGB: 2 });
    assert.ok(Number.isFinite(e(3e6, 5)) && e(3e6, 5) > 0, mode);
    if (mode !== 'memory') assert.ok(e(3e6, 5) > e(1e6, 5), `${mode} grows with rows`);
    if (mode !== 'memory' && mode !== 'engines') assert.ok(e(3e6, 5) > e(3e6, 1), `${mode} grows with rounds`);
  }
});

test('newOverOld: below 1 the new checkout is faster', () => {
  assert.equal(newOverOld(8, 10), 'new/old time 0.80 (the new one 1.25× faster)');
  assert.equal(newOverOld(12, 10), 'new/old time 1.20 (the new one 1.20× slower)');
});

test('resolveBaseline: a built checkout is named by its short hash; a directory without a build is refused', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const empty = join(dir, 'not-built');
  mkdirSync(empty);
  assert.throws(() => resolveBaseline(empty), /--baseline .*not-built: no .*dist\/src\/cli\/main\.js; build that checkout first/);
  if (existsSync(join(root, 'dist/src/cli/main.js'))) {
    const hash = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    assert.match(resolveBaseline(root).name, new RegExp(`^flatload@${hash}(\\+dirty)?$`));
  }
});

test('cachedInput: generated once, reused at the right size, made again when the size is wrong', async () => {
  const cache = join(dir, 'cache');
  const first = await cachedInput(cache, 1000);
  assert.equal(first.reused, false);
  assert.equal(first.file, cachePaths(cache, 1000).unsorted);
  assert.equal(readFileSync(first.file, 'utf8').split('\n').length, 1001);
  const again = await cachedInput(cache, 1000);
  assert.equal(again.reused, true);
  writeFileSync(first.file, 'truncated\n');
  const remade = await cachedInput(cache, 1000);
  assert.equal(remade.reused, false);
  assert.equal(readFileSync(remade.file).length, first.meta.bytes);
});

test('withPeakDisk: the peak is seen even when the files are gone by the end', async () => {
  const d = join(dir, 'tmpdir');
  mkdirSync(d);
  const { peakBytes } = await withPeakDisk(
    d,
    async () => {
      writeFileSync(join(d, 'run-1'), Buffer.alloc(1 << 20, 1));
      await new Promise((r) => setTimeout(r, 300));
      rmSync(join(d, 'run-1'));
    },
    10,
  );
  assert.ok(peakBytes >= 1 << 20, `peak ${peakBytes}`);
  assert.equal(diskBytes(d), 0);
});

test('--baseline in the comparison: every scenario gets the other checkout with each flag set of this one', async () => {
  const { scenarios } = await import('../../bench/comparison.js');
  const files = { unsorted: 'u.tsv', sorted: 's.tsv', parts: new Map<string, string[]>() };
  const baseline = { cli: '/old/dist/src/cli/main.js', name: 'flatload@abc1234' };
  for (const sc of scenarios(files, 2, 'new.js', baseline)) {
    const old = sc.competitors.filter((c) => c.role === 'old');
    assert.deepEqual(
      old.map((c) => [c.name, c.newName]),
      [
        ['flatload@abc1234 (defaults)', 'flatload (defaults)'],
        ['flatload@abc1234 --jobs 2', 'flatload --jobs 2'],
      ],
      sc.id,
    );
    for (const c of old) assert.ok(sc.competitors.some((n) => n.name === c.newName && n.role === 'flatload'));
  }
  assert.ok(scenarios(files, 2, 'new.js').every((sc) => sc.competitors.every((c) => c.role !== 'old')));
});

test('quietStart: a run waits for the load average to drop under 1.0 (up to waitSeconds), then records it; with no wait it records at once', async () => {
  const s = new QuietSession(sequence([1.6, 1.3, 0.8]));
  s.waitSeconds = 5;
  s.pollMs = 1;
  assert.equal(await s.quietStart('after a long run'), 0.8);
  const t = new QuietSession(sequence([1.6, 0.8]));
  assert.equal(await t.quietStart('no wait'), 1.6);
  const u = new QuietSession(() => 2);
  u.waitSeconds = 0.05;
  u.pollMs = 10;
  assert.equal(await u.quietStart('never quiet'), 2);
  assert.equal(u.busy().length, 1);
});

test('comparisonSection: a run of every case writes the comparison; an --only run a section of its own subset', async () => {
  const { comparisonSection, SCENARIOS } = await import('../../bench/comparison.js');
  assert.equal(comparisonSection([...SCENARIOS]), 'comparison');
  assert.equal(comparisonSection(['innodb']), 'comparison-only-innodb');
  // The same subset in another order is the same section, so a rerun replaces it.
  assert.equal(comparisonSection(['user3', 'innodb']), comparisonSection(['innodb', 'user3']));
  assert.notEqual(comparisonSection(['innodb']), comparisonSection(['innodb', 'user3']));
});
