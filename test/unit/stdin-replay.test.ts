import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { StdinReplay } from '../../src/input/stdinReplay.js';

async function all(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of stream) parts.push(b as Buffer);
  return Buffer.concat(parts);
}

test('standard input: looks at its start are replayed to the load\'s one pass, which gets every byte once', async () => {
  const data = Buffer.from(Array.from({ length: 3 << 18 }, (_, i) => `${i}\n`).join(''));
  let opened = 0;
  const pieces = [data.subarray(0, 1000), data.subarray(1000, 700_000), data.subarray(700_000)];
  const r = new StdinReplay(async () => (opened++, { stream: Readable.from(pieces), compression: 'none' }));
  assert.equal(await r.headSha256(1 << 20), createHash('sha256').update(data.subarray(0, 1 << 20)).digest('hex'));
  const look = (await r.open(false)).stream;
  let seen = 0;
  for await (const b of look) {
    seen += (b as Buffer).length;
    if (seen > 500) break;
  }
  assert.ok(seen > 500);
  assert.ok((await all((await r.open(true)).stream)).equals(data), 'the load pass reads the input from its first byte, whole');
  assert.equal(opened, 1, 'standard input is opened once');
  await assert.rejects(r.open(false), /cannot be read again/);
});

test('a start shorter than the bytes asked for hashes what there is', async () => {
  const r = new StdinReplay(async () => ({ stream: Readable.from([Buffer.from('a\tb\n')]), compression: 'none' }));
  assert.equal(await r.headSha256(1 << 20), createHash('sha256').update('a\tb\n').digest('hex'));
  assert.equal((await all((await r.open(true)).stream)).toString(), 'a\tb\n');
});

test('--columns header and the sample read the input\'s first MiB once between them', async () => {
  const { readHeader } = await import('../../src/introspect/input.js');
  const { charsetInfo } = await import('../../src/chunking/charsets.js');
  let opens = 0;
  const replay = new StdinReplay(async () => ({ stream: Readable.from([Buffer.from('id\tname\n1\ta\n')]), compression: 'none' }));
  const source = {
    path: '-',
    kind: 'stdin' as const,
    compression: 'none' as const,
    sizeBytes: undefined,
    mtimeMs: undefined,
    seekable: false,
    replay: { open: (last: boolean) => (opens++, replay.open(last)), headSha256: (n: number) => replay.headSha256(n) },
  };
  const format = { fieldTerm: Buffer.from('\t'), lineTerm: Buffer.from('\n'), enclosure: -1, escape: 0x5c };
  const cs = charsetInfo('utf8mb4')!;
  assert.deepEqual((await readHeader(source, format, cs, false))?.names, ['id', 'name']);
  assert.deepEqual((await readHeader(source, format, cs, false))?.names, ['id', 'name']);
  assert.equal(opens, 1);
});
