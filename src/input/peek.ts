import { PassThrough, type Readable } from 'node:stream';

/**
 * Reads the first bytes of a stream without losing them: returns them and a
 * stream that yields them again, then the rest (backpressure intact).
 */
export async function peek(stream: Readable, bytes: number): Promise<{ head: Buffer; stream: Readable }> {
  const parts: Buffer[] = [];
  let size = 0;
  const it = stream[Symbol.asyncIterator]();
  let done = false;
  while (size < bytes) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    const b = r.value as Buffer;
    parts.push(b);
    size += b.length;
  }
  const head = Buffer.concat(parts);
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  void (async () => {
    try {
      if (!out.write(head)) await new Promise((r) => out.once('drain', r));
      if (!done) {
        for (;;) {
          const r = await it.next();
          if (r.done) break;
          if (!out.write(r.value as Buffer)) await new Promise((res) => out.once('drain', res));
        }
      }
      out.end();
    } catch (err) {
      out.destroy(err as Error);
    }
  })();
  return { head, stream: out };
}
