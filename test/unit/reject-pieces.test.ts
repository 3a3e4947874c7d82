import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rejectPieces } from '../../src/checkpoint/store.js';

describe('rejected rows stored in pieces that each fit one statement under max_allowed_packet', () => {
  // [JSON bytes, max_allowed_packet, pieces (0: kept in the chunk row)]
  const cases: Array<[string, number, number]> = [
    ['', 1 << 20, 0],
    ['x'.repeat(10_000), 1 << 20, 0],
    ['x'.repeat(530_000), 1 << 20, 2],
    ['x'.repeat(4_000_000), 1 << 20, 8],
    ['é'.repeat(300_000), 1 << 20, 2],
    ['x'.repeat(5000), 1024, 5],
  ];
  for (const [json, packet, n] of cases) {
    test(`${Buffer.byteLength(json)} bytes, max_allowed_packet ${packet}: ${n || 'no'} pieces`, () => {
      const pieces = rejectPieces(json, packet);
      assert.equal(pieces?.length ?? 0, n);
      if (!pieces) return;
      for (const p of pieces) assert.ok(p.length * 2 + 4096 <= Math.max(packet, 4096 + 2048), `a piece of ${p.length} bytes travels as hex within the packet`);
      assert.equal(Buffer.concat(pieces).toString('utf8'), json, 'split at bytes, joined back whole (characters split across pieces too)');
    });
  }
  test('no rejects: nothing stored', () => assert.equal(rejectPieces(null, 1 << 20), undefined));
});
