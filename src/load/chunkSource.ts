import { Readable } from 'node:stream';
import type { Activity } from '../report/activity.js';
import type { CutChunk, InputSummary } from '../chunking/types.js';
import type { DigestKind } from '../input/digest.js';
import type { LocalInput } from '../input/spool.js';
import type { SortKey } from '../order/key.js';
import type { OrderedChunk } from '../order/merge.js';
import type { ChunkInput } from './chunkInput.js';

/** A record as it is sent: where it is in the bytes sent, and where it came from in the input. */
export interface SentRecord {
  /** Position in the chunk's sent bytes. */
  pos: number;
  /** Bytes, terminator included. */
  length: number;
  /** Absolute byte offset in the input. */
  offset: number;
  /** 1-based physical line in the input. */
  line: number;
}

/** A sent record's bytes, copied: a reject outlives its chunk, whose buffer the next chunk may reuse once it is done. */
export function copyOf(bytes: Buffer, rec: SentRecord): Buffer {
  return Buffer.from(bytes.subarray(rec.pos, rec.pos + rec.length));
}

/** Checks the input's content hash (the digest of every byte) against an earlier run's; throws to refuse. */
export type ContentCheck = (contentHash: string | undefined) => void;

/** The chunk's bytes as sent and its records in sent order. */
export interface ChunkRecords {
  bytes: Buffer;
  records: SentRecord[];
}

/**
 * Where a load's chunks come from: the input in file order, cut by byte
 * range (ChunkInput), or sorted by the clustered key and cut by key range
 * (OrderedInput). The executors only see this.
 */
export interface ChunkSource {
  readonly source: LocalInput;
  /** The whole input's counts, once scan() has run. */
  summary: InputSummary | undefined;
  /** The first 64 KiB of the input: the header lines for the reject file. */
  head: Buffer | undefined;
  /**
   * Reads (and for ordering, sorts) the whole input before anything is loaded;
   * throws the input's first error. `verify` sees the input's content hash once
   * every byte is read, before any sorting: a resume refuses other contents there.
   */
  scan(verify?: ContentCheck): Promise<void>;
  /** The digest of every byte of the input (src/input/digest.ts), once scan() has read them. */
  readonly contentHash: string | undefined;
  chunks(): AsyncGenerator<CutChunk>;
  /**
   * Chunks that carry a digest of their bytes (a streamed input's) take it as
   * `kind`: set before chunks() to the kind the resumed job's done chunks were stored with.
   */
  digestChunksWith?(kind: DigestKind): void;
  /** The chunk's bytes as a stream of pieces of about `pieceBytes` (each one LOCAL INFILE packet); a piece may be reused once the next is taken. */
  open(chunk: CutChunk, pieceBytes: number): Readable;
  /** The chunk's records in the order they are sent, with their input lines and offsets (rejects, warnings). */
  records(chunk: CutChunk): Promise<ChunkRecords>;
  /** The chunk's bytes in file order (resuming a chunk part of which landed); file order only. */
  readAll(chunk: CutChunk): Promise<Buffer>;
  /** The chunk is committed or given up: its memory may go. */
  release(chunk: CutChunk): void;
  /** How the input differs from what was scanned, or undefined. */
  changed(): string | undefined;
  /** Pulling a chunk is work (a merge, a gather) worth doing while the others load: see RunOptions.pullAhead. */
  readonly pullAhead?: boolean;
  /** The chunk's first and last clustered key, when the source knows them (ordered chunks). */
  keyBounds?(chunk: CutChunk): { lo: SortKey; hi: SortKey };
  /** The chunk before this one in file order, where its bytes can be read again (a plain file); undefined otherwise. */
  chunkBefore?(chunk: CutChunk): CutChunk | undefined;
  /** What scan() is doing now (reading for record boundaries, sorting): the job row shows it while it runs. */
  progress(): Activity;
}

/**
 * A ChunkSource over the input's ChunkInput that changes how chunks are made
 * or sent (sorted, streamed to files): the input's own facts are its.
 */
export abstract class OverChunkInput {
  constructor(protected readonly file: ChunkInput) {}

  get source(): LocalInput {
    return this.file.source;
  }

  get head(): Buffer | undefined {
    return this.file.head;
  }

  get summary(): InputSummary | undefined {
    return this.file.summary;
  }

  get contentHash(): string | undefined {
    return this.file.contentHash;
  }

  changed(): string | undefined {
    return this.file.changed();
  }

  progress(): Activity {
    return this.file.progress();
  }
}

/** A sorted chunk held in memory (or still being sorted), sent in pieces of at most pieceBytes. */
export function heldPieces(sorted: OrderedChunk | Promise<OrderedChunk>, pieceBytes: number): Readable {
  return Readable.from(
    (async function* () {
      const { bytes } = await sorted;
      for (let i = 0; i < bytes.length; i += pieceBytes) yield bytes.subarray(i, i + pieceBytes);
    })(),
    { objectMode: false },
  );
}
