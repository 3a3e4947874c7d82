#!/usr/bin/env node
/**
 * The client's CPU on a load in file order, by stage, without a server: the
 * boundary scan as a load runs it (ChunkInput: read, sha256, cut), then every
 * chunk read back by byte range in LOCAL INFILE pieces with each piece copied
 * into a packet as mysql2 does (a fresh buffer of piece + 4 header bytes).
 * Each stage's CPU-seconds (user+sys, process.cpuUsage) per GB of input; run
 * in a fresh process per measurement.
 *
 *   npm run build:dev && node dist/bench/research/sendPath.js FILE [--stage scan|send|both] [--piece-kib 256] [--chunk-mib 64]
 *
 * FILE is tab-separated with '\n' line ends (fixtures/generate.js --table user_summary).
 */
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Readable } from 'node:stream';
import { charsetInfo } from '../../src/chunking/charsets.js';
import type { CutChunk } from '../../src/chunking/types.js';
import { resolveFormat } from '../../src/config/format.js';
import { FlatloadError } from '../../src/errors/index.js';
import type { LocalInput } from '../../src/input/spool.js';
import { ChunkInput } from '../../src/load/chunkInput.js';

/** CPU-seconds since `since`, and how they split (user/sys). */
function cpu(since: NodeJS.CpuUsage, gb: number): string {
  const u = process.cpuUsage(since);
  const s = (u.user + u.system) / 1e6;
  return `${s.toFixed(2)} s = ${(s / gb).toFixed(2)} s/GB (user ${(u.user / 1e6).toFixed(2)}, sys ${(u.system / 1e6).toFixed(2)})`;
}

/** What mysql2's LOCAL INFILE sender does with each piece: a new packet buffer, the piece copied behind its header. */
async function sendLike(stream: Readable): Promise<number> {
  let bytes = 0;
  let check = 0;
  for await (const piece of stream) {
    const b = piece as Buffer;
    const packet = Buffer.allocUnsafe(b.length + 4);
    b.copy(packet, 4);
    check ^= packet[packet.length - 1]!;
    bytes += b.length;
  }
  return bytes + (check & 0);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      stage: { type: 'string', default: 'both' },
      'piece-kib': { type: 'string', default: '256' },
      'chunk-mib': { type: 'string', default: '64' },
    },
  });
  const path = positionals[0];
  if (!path) throw new FlatloadError('CONFIG', 'usage: sendPath.js FILE [--stage scan|send|both] [--piece-kib N] [--chunk-mib N]');
  const size = statSync(path).size;
  const gb = size / 1e9;
  const format = resolveFormat({});
  const charset = charsetInfo('utf8mb4')!;
  const local: LocalInput = {
    path,
    display: path,
    sizeBytes: size,
    compression: 'none',
    originalBytes: undefined,
    contentHash: undefined,
    spooled: false,
    dispose: () => undefined,
  };
  const input = new ChunkInput(
    local,
    {
      format: { fieldTerm: Buffer.from('\t'), lineTerm: Buffer.from('\n'), enclosure: -1, escape: 0x5c },
      charset,
      targets: { fields: 5, textField: [false, true, true, true, false] },
      chunkSizeBytes: Number(values['chunk-mib']) << 20,
      maxRecordBytes: 64 << 20,
      ignoreLines: 0,
      stripBom: true,
      file: path,
    },
    format,
  );
  const t0 = process.cpuUsage();
  const chunks: CutChunk[] = await input.chunkList();
  const line = [`${(size / 1e6).toFixed(0)} MB, ${chunks.length} chunks`, `scan ${cpu(t0, gb)}`];
  if (values.stage !== 'scan') {
    const t1 = process.cpuUsage();
    let sent = 0;
    for (const c of chunks) sent += await sendLike(input.open(c, Number(values['piece-kib']) << 10));
    if (sent !== size - (input.summary?.headerBytes ?? 0)) throw new FlatloadError('INTERNAL', `sent ${sent} of ${size} bytes`);
    line.push(`send ${cpu(t1, gb)}`);
  }
  const m = process.memoryUsage();
  line.push(`rss ${(m.rss / 1e6).toFixed(0)} MB`);
  process.stdout.write(`${line.join(', ')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
}
