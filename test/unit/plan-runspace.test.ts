/**
 * The room the planner counts for compressed sorted runs: the uncompressed
 * bound scaled by the sample's ratio (with a margin, never above the bound),
 * and the ratio itself, measured on the sample laid out as a run.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sampleRunRatio } from '../../src/introspect/runRatio.js';
import { spillBytesEstimate } from '../../src/order/spillDir.js';
import { RUN_RATIO_MARGIN, runSpaceEstimate, runSpaceFactor, runSpaceText } from '../../src/plan/runSpace.js';

const MiB = 1 << 20;
const D = 368e6;
const R = 10e6;

test('without a sample ratio the runs are counted uncompressed', () => {
  assert.deepEqual(runSpaceEstimate(D, R, undefined), { bytes: spillBytesEstimate(D, R), ratio: undefined });
  assert.equal(runSpaceEstimate(D, R, Number.NaN).bytes, spillBytesEstimate(D, R));
  assert.equal(runSpaceEstimate(D, R, 0).bytes, spillBytesEstimate(D, R));
});

test('a sample ratio scales records and meta, with the margin, plus the fixed MiB', () => {
  const e = runSpaceEstimate(D, R, 0.4);
  assert.equal(e.ratio, 0.4);
  assert.equal(e.bytes, Math.ceil((spillBytesEstimate(D, R) - MiB) * 0.4 * RUN_RATIO_MARGIN) + MiB);
  assert.ok(e.bytes < 0.6 * spillBytesEstimate(D, R));
});

test('never more than the uncompressed bound, however badly the sample compresses', () => {
  assert.equal(runSpaceEstimate(D, R, 0.95).bytes, spillBytesEstimate(D, R));
  assert.equal(runSpaceEstimate(D, R, 1.02).bytes, spillBytesEstimate(D, R));
});

test('an empty input still counts the fixed MiB', () => {
  assert.equal(runSpaceEstimate(0, 0, 0.3).bytes, MiB);
});

test('the text the plan prints', () => {
  assert.equal(runSpaceText(D, runSpaceEstimate(D, R, 0.3), 36.8), `about ${Math.round(runSpaceEstimate(D, R, 0.3).bytes / 1e6)} MB of runs, compressed (sample ratio 0.30x)`);
  assert.match(runSpaceText(D, runSpaceEstimate(D, R, undefined), 36.8), /^about 459 MB of runs, counted uncompressed/);
  // A stream's size is unknown: per byte of it.
  assert.equal(runSpaceText(undefined, { bytes: 0, ratio: 0.4 }, 36.8), `runs of about ${runSpaceFactor(36.8, 0.4).toFixed(2)}x the decompressed size, compressed (sample ratio 0.40x)`);
  assert.ok(Math.abs(runSpaceFactor(36.8, 0.4) - 0.5 * (1 + 9 / 36.8)) < 0.01);
});

function lines(body: Buffer): Array<{ offset: number; length: number }> {
  const out: Array<{ offset: number; length: number }> = [];
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === 10) {
      out.push({ offset: start, length: i + 1 - start });
      start = i + 1;
    }
  }
  return out;
}

test('sampleRunRatio: rows of repeated text compress well, random bytes not at all', () => {
  const rows = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `${(i * 7919) % 100_000}\tactive\tgold\t0.5\t3\n`).join(''));
  const good = sampleRunRatio(rows, lines(rows))!;
  assert.ok(good > 0 && good < 0.5, String(good));
  const noise = Buffer.from(randomBytes(1 << 20).toString('base64').replace(/(.{60})/g, '$1\n'));
  const bad = sampleRunRatio(noise, lines(noise))!;
  assert.ok(bad > 0.7 && bad <= 1.01, String(bad));
  assert.equal(sampleRunRatio(Buffer.alloc(0), []), undefined);
});

test('sampleRunRatio is a function of the sample', () => {
  const rows = Buffer.from(Array.from({ length: 5000 }, (_, i) => `${i * 31}\tx${i % 17}\n`).join(''));
  assert.equal(sampleRunRatio(rows, lines(rows)), sampleRunRatio(rows, lines(rows)));
});
