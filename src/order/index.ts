/**
 * Ordering the input by the clustered key, out of core: runs (each chunk
 * sorted into a spill file), a k-way merge cut into chunks with disjoint key
 * ranges, and the one key comparator. See docs/ordering.md.
 */
export { compareKeys, decodeKey, formatKey, integerKey, recordKey, keyReader, type KeyContext, type KeyPart, type KeySpec, type SortKey } from './key.js';
export { inKeyOrder, sortChunk, type SortedChunk } from './sortChunk.js';
export { generateRuns, openRuns, fileChunkReader, runChunkBytes, RunSet, DEFAULT_SPARSE_EVERY, type RunOptions } from './runs.js';
export type { Manifest, RunInfo } from './manifest.js';
export { mergeRuns, collect, type ChunkSources, type MergeOptions, type OrderedChunk } from './merge.js';
export { splitKeys, planRanges, type KeyRange } from './split.js';
export { SpillDir, cleanupOnExit, spillBytesEstimate, META_BYTES_PER_RECORD, type SpillOptions } from './spillDir.js';
