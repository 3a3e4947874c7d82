import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { FlatloadError } from '../errors/index.js';
import type { Compression } from './source.js';

/** What a pass over standard input gets: the decompressed bytes from the start, and what they were compressed with. */
export type OpenedStream = { stream: Readable; compression: Compression };

/**
 * Standard input read in one pass, with its start readable again: the plan
 * samples the first MiB (and `--columns header` reads its header) before the
 * load's pass begins, and that pass must see those bytes too. The bytes read
 * before the last pass are kept in memory (a sample's worth); the last pass
 * (`open(true)`) replays them, then reads on without keeping anything.
 */
export class StdinReplay {
  private base: Promise<{ it: AsyncIterator<unknown>; compression: Compression }> | undefined;
  private readonly held: Buffer[] = [];
  private ended = false;
  private lastOpened = false;

  constructor(private readonly openRaw: () => Promise<OpenedStream>) {}

  private opened(): Promise<{ it: AsyncIterator<unknown>; compression: Compression }> {
    this.base ??= this.openRaw().then(({ stream, compression }) => ({ it: stream[Symbol.asyncIterator](), compression }));
    return this.base;
  }

  /** A pass from the first byte; `last`: the load's own pass, after which standard input cannot be read again. */
  async open(last: boolean): Promise<OpenedStream> {
    if (this.lastOpened) {
      throw new FlatloadError('INTERNAL', 'standard input was read to its end already: it cannot be read again');
    }
    this.lastOpened = last;
    const { compression } = await this.opened();
    return { stream: Readable.from(last ? this.drain() : this.replay(), { objectMode: false, highWaterMark: 1 << 20 }), compression };
  }

  /**
   * sha256 of the first `bytes` of the input (all of it when shorter), read
   * and kept for the load's pass: what tells one stream from another before
   * it is read to its end (see JobIdentity.input.headSha256).
   */
  async headSha256(bytes: number): Promise<string> {
    const h = createHash('sha256');
    let left = bytes;
    for await (const b of (await this.open(false)).stream) {
      const buf = b as Buffer;
      h.update(buf.length > left ? buf.subarray(0, left) : buf);
      left -= Math.min(left, buf.length);
      if (left === 0) break;
    }
    return h.digest('hex');
  }

  /** The kept bytes, then more, kept too (a sample stops after its first MiB: it is never much). */
  private async *replay(): AsyncGenerator<Buffer> {
    const { it } = await this.opened();
    for (let i = 0; ; ) {
      if (i < this.held.length) {
        yield this.held[i++]!;
        continue;
      }
      if (this.ended) return;
      const r = await it.next();
      if (r.done) {
        this.ended = true;
        return;
      }
      this.held.push(r.value as Buffer);
    }
  }

  /** The kept bytes, let go as they are handed on, then the rest of standard input. */
  private async *drain(): AsyncGenerator<Buffer> {
    const { it } = await this.opened();
    for (let b = this.held.shift(); b !== undefined; b = this.held.shift()) yield b;
    while (!this.ended) {
      const r = await it.next();
      if (r.done) {
        this.ended = true;
        return;
      }
      yield r.value as Buffer;
    }
  }
}
