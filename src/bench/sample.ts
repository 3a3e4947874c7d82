import { open } from 'node:fs/promises';
import type { CharsetInfo } from '../chunking/charsets.js';
import { RecordScanner, type ScanFormat, type ScanTargets } from '../chunking/scanner.js';
import { openByteStream } from '../input/streams.js';
import type { InputSource } from '../input/source.js';

/**
 * Writes the input's header lines and its first `rows` records to `out`
 * (decompressed), cut at a true record boundary. Returns the records written.
 */
export async function firstRecordsToFile(
  source: InputSource,
  out: string,
  rows: number,
  ignoreLines: number,
  format: ScanFormat,
  charset: CharsetInfo,
  targets: ScanTargets,
): Promise<number> {
  const { stream } = await openByteStream(source, 1 << 20);
  const header = ignoreLines > 0 ? new RecordScanner(format, charset, undefined, true) : undefined;
  const scanner = new RecordScanner(format, charset, targets);
  const fh = await open(out, 'w');
  let carry: Buffer | undefined;
  let base = 0;
  try {
    for await (const block of stream) {
      const buf: Buffer = carry ? Buffer.concat([carry, block as Buffer]) : (block as Buffer);
      carry = undefined;
      let pos = 0;
      while (header && header.records < ignoreLines) {
        const r = header.scan(buf, pos, base, false, base + pos + 1);
        pos = r.pos;
        if (!r.atRecordEnd) break;
      }
      if (header && header.records < ignoreLines) {
        await fh.write(buf.subarray(0, pos));
        carry = buf.subarray(pos);
        base += pos;
        continue;
      }
      let end = pos;
      while (scanner.records < rows) {
        const r = scanner.scan(buf, end, base, false, base + end + 1);
        end = r.pos;
        if (!r.atRecordEnd) break;
      }
      if (scanner.records >= rows) {
        await fh.write(buf.subarray(0, end));
        return scanner.records;
      }
      // Bytes the scanner consumed are written (they belong to records up to N); the rest is scanned again with more input.
      await fh.write(buf.subarray(0, end));
      carry = buf.subarray(end);
      base += end;
    }
    if (carry?.length) {
      await fh.write(carry);
      scanner.scan(carry, 0, base, true);
      scanner.finish(base + carry.length);
    }
    return scanner.records;
  } finally {
    stream.destroy();
    await fh.close();
  }
}
