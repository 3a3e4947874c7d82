import type { Readable } from 'node:stream';
import type { CutChunk } from '../chunking/types.js';
import type { KeyContext } from '../order/key.js';
import type { OrderedChunk } from '../order/merge.js';
import { sortAside, warmSortAside } from '../order/memorySort.js';
import { recordTerminator } from '../order/sortChunk.js';
import type { ChunkInput } from './chunkInput.js';
import { heldPieces, OverChunkInput, type ChunkRecords, type ChunkSource, type ContentCheck } from './chunkSource.js';
import { sentRecords } from './orderedInput.js';

/**
 * The input's chunks in file order, each sorted by the clustered key when it
 * is sent (OrderPlan `sortedBy`): read back from the file by range, sorted in
 * memory in the sort worker (this thread keeps feeding the other streams'
 * sockets meanwhile), and held until the chunk commits or is given up. Chunk
 * boundaries, numbering and resume are the file-order load's; only the order
 * of records inside a chunk changes, and records() maps the server's "row N"
 * back to the record's line and byte offset in the file.
 */
export class SortedChunks extends OverChunkInput implements ChunkSource {
  private readonly sorted = new Map<number, Promise<OrderedChunk>>();

  constructor(
    file: ChunkInput,
    private readonly key: KeyContext,
  ) {
    super(file);
  }

  scan(verify?: ContentCheck): Promise<void> {
    // The sort worker loads its modules while the input is scanned, not when the first chunk waits for it.
    warmSortAside();
    return this.file.scan(verify);
  }

  chunks(): AsyncGenerator<CutChunk> {
    return this.file.chunks();
  }

  /** The chunk's records in key order, sorted once however often it is asked for (sent, then its rows located). */
  private sortedOf(chunk: CutChunk): Promise<OrderedChunk> {
    let p = this.sorted.get(chunk.index);
    if (!p) {
      p = this.sort(chunk);
      // A failed sort is not kept: a retry reads the chunk again.
      p.catch(() => this.sorted.delete(chunk.index));
      this.sorted.set(chunk.index, p);
    }
    return p;
  }

  private async sort(chunk: CutChunk): Promise<OrderedChunk> {
    const length = chunk.endByte - chunk.startByte;
    // Room for a terminator after the input's last record, which a sort can move into the middle of the chunk.
    const bytes = await this.file.readAll(chunk, recordTerminator(this.key.fmt).length);
    const origin = { startByte: chunk.startByte, firstLine: chunk.firstLine };
    // One span: the chunk is cut already.
    return (await sortAside(bytes, length, this.key, chunk.records, origin, Number.MAX_SAFE_INTEGER, undefined)).chunk(0);
  }

  open(chunk: CutChunk, pieceBytes: number): Readable {
    return heldPieces(this.sortedOf(chunk), pieceBytes);
  }

  async records(chunk: CutChunk): Promise<ChunkRecords> {
    return sentRecords(await this.sortedOf(chunk));
  }

  /** File order, as the interface asks (a non-transactional table's partial chunk; not planned here). */
  readAll(chunk: CutChunk): Promise<Buffer> {
    return this.file.readAll(chunk);
  }

  release(chunk: CutChunk): void {
    this.sorted.delete(chunk.index);
  }
}
