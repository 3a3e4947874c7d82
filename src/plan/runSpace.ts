import { spillBytesEstimate } from '../order/spillDir.js';

/** The sample's ratio is scaled by this: a MiB from the start may compress better than the rest. */
export const RUN_RATIO_MARGIN = 1.25;

export interface RunSpace {
  /** Bytes the compressed runs are planned to take in --tmpdir (the room checked before the sort). */
  bytes: number;
  /** The sample's compressed / raw ratio it assumed; undefined: no sample, runs counted uncompressed. */
  ratio: number | undefined;
}

/**
 * Room for the sorted runs of an input of `inputBytes` and `records`: the
 * uncompressed bound (records, meta, index) times the sample's ratio with a
 * margin, never more than the bound (a block that does not compress is
 * stored at about its size) and never less than the fixed MiB the index
 * and block tables round to.
 */
export function runSpaceEstimate(inputBytes: number, records: number, sampleRatio: number | undefined): RunSpace {
  const bound = spillBytesEstimate(inputBytes, records);
  if (sampleRatio === undefined || !Number.isFinite(sampleRatio) || sampleRatio <= 0) return { bytes: bound, ratio: undefined };
  const fixed = 1 << 20;
  const factor = Math.min(1, sampleRatio * RUN_RATIO_MARGIN);
  return { bytes: Math.ceil((bound - fixed) * factor) + fixed, ratio: sampleRatio };
}

/** "compressed (sample ratio 0.38x)", or what the figure assumed without a sample. */
export function runSpaceHow(ratio: number | undefined): string {
  return ratio === undefined ? 'counted uncompressed: no sample to measure how the rows compress' : `compressed (sample ratio ${ratio.toFixed(2)}x)`;
}

/** Runs per byte of input when its size is unknown (a stream): the same bound and ratio, per record of the sample's average size. */
export function runSpaceFactor(avgRecordBytes: number | undefined, sampleRatio: number | undefined): number {
  const avg = avgRecordBytes ?? 32;
  return runSpaceEstimate(avg * 1e9, 1e9, sampleRatio).bytes / (avg * 1e9);
}

/** The runs the plan counts with: "about N MB of runs, compressed (…)", or per byte of a stream whose size is unknown. */
export function runSpaceText(sizeBytes: number | undefined, space: RunSpace, avgRecordBytes: number | undefined): string {
  if (sizeBytes === undefined) return `runs of about ${runSpaceFactor(avgRecordBytes, space.ratio).toFixed(2)}x the decompressed size, ${runSpaceHow(space.ratio)}`;
  return `about ${Math.round(space.bytes / 1e6).toLocaleString('en-US')} MB of runs, ${runSpaceHow(space.ratio)}`;
}
