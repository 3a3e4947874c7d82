import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { CHUNK_DIGEST, contentDigest, digestKindOf, digestOf } from '../../src/input/digest.js';

// BLAKE3's published test vectors (the reference implementation's test_vectors.json): the empty input, and 1 byte 0x00.
const KNOWN: Array<[string, Buffer, string]> = [
  ['empty', Buffer.alloc(0), 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'],
  ['one zero byte', Buffer.from([0]), '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213'],
];

test('BLAKE3 digests are the reference values, cut to 60 hex digits behind b3:', () => {
  for (const [name, bytes, hex] of KNOWN) assert.equal(digestOf([bytes]), `b3:${hex.slice(0, 60)}`, name);
});

test('a streamed chunk\'s digest is the same BLAKE3 cut to 37 hex digits: 40 characters, as SHA-1 hex took', () => {
  for (const [name, bytes, hex] of KNOWN) {
    const d = digestOf([bytes], 'blake3', CHUNK_DIGEST);
    assert.equal(d, `b3:${hex.slice(0, 37)}`, name);
    assert.equal(d.length, 40, name);
  }
  const bytes = Buffer.from('1\tone\n2\ttwo\n');
  assert.equal(digestOf([bytes], 'sha1', CHUNK_DIGEST), createHash('sha1').update(bytes).digest('hex'), 'an older flatload\'s value, taken again');
});

test('a digest taken in pieces equals the one taken whole, for both kinds', () => {
  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 2654435761) >>> 24));
  const cuts = [0, 1, 1023, 1024, 65_536, 200_001, bytes.length];
  const pieces = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
  for (const kind of ['blake3', 'sha256', 'sha1'] as const) {
    const whole = contentDigest(kind);
    whole.update(bytes);
    assert.equal(digestOf(pieces, kind), whole.digest(), kind);
  }
  assert.equal(digestOf([bytes], 'sha256'), createHash('sha256').update(bytes).digest('hex'));
  assert.equal(digestOf([bytes]).length, 63, 'fits the 64 characters the bookkeeping keeps');
});

test('the kind a stored value was taken with, in the input\'s slot and in a chunk\'s', () => {
  const cases: Array<[string | null | undefined, string, string]> = [
    [null, 'blake3', 'blake3'],
    [undefined, 'blake3', 'blake3'],
    ['', 'blake3', 'blake3'],
    [`b3:${'0'.repeat(60)}`, 'blake3', 'blake3'],
    [`b3:${'0'.repeat(37)}`, 'blake3', 'blake3'],
    ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'sha256', 'sha1'],
    ['da39a3ee5e6b4b0d3255bfef95601890afd80709', 'sha256', 'sha1'],
  ];
  for (const [stored, input, chunk] of cases) {
    assert.equal(digestKindOf(stored), input, `input ${String(stored)}`);
    assert.equal(digestKindOf(stored, CHUNK_DIGEST), chunk, `chunk ${String(stored)}`);
  }
});
