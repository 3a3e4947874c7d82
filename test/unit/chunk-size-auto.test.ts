/** The chunk size without --chunk-size: about 1/16 of a file, 1–64 MiB; 16 MiB for a stream of unknown size (README, Memory). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { autoChunkSize } from '../../src/load/execute.js';

const MiB = 1 << 20;

test('a file: about 1/16 of it, between 1 MiB and 64 MiB', () => {
  assert.equal(autoChunkSize(0), MiB);
  assert.equal(autoChunkSize(368e6), 22 * MiB);
  assert.equal(autoChunkSize(10e9), 64 * MiB);
});

test('a stream of unknown size: 16 MiB, so (jobs + 1) chunks and the runs stay small', () => {
  assert.equal(autoChunkSize(undefined), 16 * MiB);
});
