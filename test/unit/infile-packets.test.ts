import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { test } from 'node:test';
import { MAX_PAYLOAD, packetConnectionOf, sendPieces, type PacketConnection } from '../../src/db/infilePackets.js';

/** A stand-in for mysql2's connection: a socket that flushes each write after `delayMs`, and the sequence counter. */
function fakeConnection(sequenceId = 0, delayMs = 1): PacketConnection & { wire: Buffer[]; writes: number } {
  const wire: Buffer[] = [];
  const c = {
    wire,
    writes: 0,
    sequenceId,
    _bumpSequenceId(n: number) {
      c.sequenceId = (c.sequenceId + n) % 256;
    },
    stream: new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        c.writes++;
        // What a socket hands the kernel is a copy: what the source does to its memory later must not change it.
        wire.push(Buffer.from(chunk));
        setTimeout(cb, delayMs);
      },
    }),
  };
  return c;
}

/** The packets on the wire: [sequence id, payload]. */
function packets(wire: Buffer[]): Array<[number, Buffer]> {
  const all = Buffer.concat(wire);
  const out: Array<[number, Buffer]> = [];
  for (let p = 0; p < all.length; ) {
    const len = all.readUIntLE(p, 3);
    out.push([all[p + 3]!, all.subarray(p + 4, p + 4 + len)]);
    p += 4 + len;
  }
  return out;
}

/**
 * A source that makes each piece when the last is taken (make(i) → piece i, undefined at the end); one object
 * each, as a byte stream would merge pieces it holds at once.
 */
function source(make: (i: number) => Buffer | undefined): Readable {
  let i = 0;
  return new Readable({
    objectMode: true,
    highWaterMark: 1,
    read() {
      this.push(make(i++) ?? null);
    },
  });
}

function ended(s: Readable): Promise<'end' | Error> {
  s.resume();
  return new Promise((resolve) => s.on('end', () => resolve('end')).on('error', (e) => resolve(e)));
}

test('sendPieces: each piece one packet, numbered on from the connection and wrapping at 256; empty pieces send nothing', { timeout: 10_000 }, async () => {
  const c = fakeConnection(254);
  const pieces = [Buffer.from('1\ta\n'), Buffer.alloc(0), Buffer.from('2\tb\n3\tc\n'), Buffer.from('4\td\n')];
  const counted: number[] = [];
  const { stream } = sendPieces(source((i) => pieces[i]), c, (n) => counted.push(n));
  assert.equal(await ended(stream), 'end');
  assert.deepEqual(packets(c.wire), [
    [254, pieces[0]],
    [255, pieces[2]],
    [0, pieces[3]],
  ]);
  assert.equal(c.sequenceId, 1, 'the driver numbers the empty packet that ends the file next');
  assert.deepEqual(counted, [4, 0, 8, 4]);
});

test('sendPieces: a piece longer than a packet takes several, each under 2^24 - 1 bytes', { timeout: 10_000 }, async () => {
  const c = fakeConnection(3);
  const big = Buffer.alloc(MAX_PAYLOAD + 10, 7);
  big[MAX_PAYLOAD] = 9;
  const { stream } = sendPieces(Readable.from([big], { objectMode: false }), c, () => undefined);
  assert.equal(await ended(stream), 'end');
  const got = packets(c.wire);
  assert.deepEqual(
    got.map(([seq, p]) => [seq, p.length]),
    [
      [3, MAX_PAYLOAD],
      [4, 10],
    ],
  );
  assert.deepEqual(Buffer.concat(got.map(([, p]) => p)), big);
});

test('sendPieces: a piece is flushed before the one after the next is made, so a source may reuse its memory then', { timeout: 10_000 }, async () => {
  const c = fakeConnection(0, 3);
  // Two buffers used in turn, piece i overwriting piece i - 2: the file reader's ring, with fewer buffers.
  const ring = [Buffer.alloc(64), Buffer.alloc(64)];
  const made: string[] = [];
  const src = source((i) => {
    if (i === 20) return undefined;
    const b = ring[i % 2]!.fill(65 + i);
    made.push(b.toString());
    return b;
  });
  const { stream } = sendPieces(src, c, () => undefined);
  assert.equal(await ended(stream), 'end');
  assert.deepEqual(
    packets(c.wire).map(([, p]) => p.toString()),
    made,
  );
});

test('sendPieces: a source error fails the stream; after stop() nothing more is written and the stream neither ends nor fails', { timeout: 10_000 }, async () => {
  const c = fakeConnection();
  const failing = Readable.from(
    (async function* () {
      yield Buffer.from('1\n');
      throw new Error('disk read failed');
    })(),
    { objectMode: false },
  );
  const r = await ended(sendPieces(failing, c, () => undefined).stream);
  assert.ok(r instanceof Error && /disk read failed/.test(r.message));

  const d = fakeConnection(0, 5);
  let pulled = 0;
  const endless = Readable.from(
    (function* () {
      for (;;) {
        pulled++;
        yield Buffer.from('x\n');
      }
    })(),
    { objectMode: false, highWaterMark: 1 },
  );
  const sending = sendPieces(endless, d, () => undefined);
  let settled = false;
  sending.stream.on('end', () => (settled = true)).on('error', () => (settled = true));
  sending.stream.resume();
  await new Promise((resolve) => setTimeout(resolve, 30));
  sending.stop();
  const after = d.writes;
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(after > 0 && pulled > 0);
  assert.ok(d.writes <= after + 2, `at most the packet in flight when stopped (header and payload), saw ${d.writes - after} more writes`);
  assert.equal(settled, false);
});

test('packetConnectionOf: only a driver connection with the sequence counter, a socket and no compression', () => {
  const c = fakeConnection();
  assert.equal(packetConnectionOf({ connection: c }), c);
  const cases: Array<[string, unknown]> = [
    ['nothing', undefined],
    ['no inner connection', {}],
    ['no counter', { connection: { ...c, sequenceId: undefined } }],
    ['no way to move the counter', { connection: { ...c, _bumpSequenceId: undefined } }],
    ['no socket', { connection: { ...c, stream: undefined } }],
    ['the compressed protocol', { connection: { ...c, config: { compress: true } } }],
  ];
  for (const [why, conn] of cases) assert.equal(packetConnectionOf(conn), undefined, why);
});
