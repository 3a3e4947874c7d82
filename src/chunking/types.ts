/** One chunk of the input: whole records, a half-open byte range of the (decompressed) input. */
export interface ChunkSpec {
  /** 0-based, in input order. */
  index: number;
  /** First byte of the chunk's first record. */
  startByte: number;
  /** One past the last byte of the chunk's last record (its terminator included). */
  endByte: number;
  /** 1-based physical line number of startByte; 0 when the chunk's records come from anywhere in the file (sorted input). */
  firstLine: number;
  /** 0-based number of the chunk's first data record (header lines excluded). */
  firstRecord: number;
  /** Records in the chunk, as the server will count them. */
  records: number;
  /** Newline bytes in the chunk (a quoted field can span lines). */
  newlines: number;
}

/**
 * Where a chunk starts in the input file, for an error's context: nothing
 * when its records were gathered from all over the file by sorting, where
 * its byte range is a position in the sorted stream, not in the file.
 */
export function chunkPlace(chunk: ChunkSpec): { line?: number; byteOffset?: number } {
  return chunk.firstLine > 0 ? { line: chunk.firstLine, byteOffset: chunk.startByte } : {};
}

/** A chunk cut from a stream that cannot be re-read: it carries its bytes. */
export interface CutChunk extends ChunkSpec {
  buffers?: Buffer[];
}

export interface InputSummary {
  /** All bytes of the (decompressed) input. */
  totalBytes: number;
  /** Bytes skipped before the first chunk: a byte-order mark and --ignore-lines headers. */
  headerBytes: number;
  bomBytes: number;
  records: number;
  newlines: number;
  chunks: number;
}
