import { RecordScanner } from '../chunking/scanner.js';
import type { LoadOptions } from '../config/loadOptions.js';
import type { Prepared } from '../introspect/target.js';

/** The input's header lines (--ignore-lines), which the reject file repeats so the same command loads it. */
export function headerBytes(head: Buffer | undefined, o: LoadOptions, prep: Prepared): Buffer {
  if (!head || o.format.ignoreLines === 0) return Buffer.alloc(0);
  const start = head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf && o.stripBom ? 3 : 0;
  const scanner = new RecordScanner(prep.scan, prep.charset, undefined, true);
  let pos = start;
  while (scanner.records < o.format.ignoreLines) {
    const r = scanner.scan(head, pos, 0, false, pos + 1);
    if (!r.atRecordEnd) return Buffer.alloc(0);
    pos = r.pos;
  }
  return Buffer.from(head.subarray(start, pos));
}

