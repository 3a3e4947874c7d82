import { runSpaceText } from './runSpace.js';
import type { LoadPlan, PlanFacts } from './types.js';

/** Where the input comes from, how it is read, and the local disk the load needs for it. */
export interface SourceReading {
  /** The input as named (a URL's password masked). */
  source: string;
  over: 'local file' | 'http' | 's3' | 'standard input';
  /** ranges: re-read by byte range in parallel (no local copy); streamed: read once from its start (into --tmpdir, or cut as it is decompressed). */
  read: 'ranges' | 'streamed';
  /** Bytes in --tmpdir: the decompressed copy of a streamed input plus the sort's runs. */
  localDiskBytes: number;
  text: string;
}

function mb(n: number): string {
  return `${(n / 1e6).toFixed(n < 10e6 ? 1 : 0)} MB`;
}

/**
 * The plan's source line. A plain file or remote object is read in place by
 * byte range (a remote one twice over the network: the boundary scan, then
 * each chunk); a compressed one or standard input is streamed once into
 * --tmpdir, decompressed, and read by range from there.
 */
export function describeSource(facts: PlanFacts, plan: LoadPlan): SourceReading {
  const i = facts.input;
  const over = i.kind === 'stdin' ? 'standard input' : /^s3:\/\//i.test(i.path) ? 's3' : /^https?:\/\//i.test(i.path) ? 'http' : 'local file';
  const streamed = i.spooled === true;
  // A compressed file not spooled is decompressed once as it is read: into runs (key order) or chunk files (file order).
  const onePass = !streamed && (i.compression !== 'none' || i.kind === 'stdin');
  const spool = streamed ? (i.sizeBytes ?? 0) : 0;
  // A stream's decompressed size is unknown when it is planned: its runs are told per byte of it.
  const runs = plan.order.kind === 'key' && !plan.order.inMemory && i.sizeBytes !== undefined ? plan.order.spillBytes : 0;
  const chunkFiles = onePass && plan.order.kind !== 'key' ? (plan.concurrency + 1) * plan.chunkSizeBytes : 0;
  const how = streamed
    ? `streamed once${i.compression !== 'none' ? ` (${i.compression})` : ''} into --tmpdir, ${mb(spool)} decompressed, then read by ranges in parallel from there`
    : onePass
      ? `streamed once${i.compression !== 'none' ? ` (${i.compression}), decompressed as it is read` : ''}, no copy: ${plan.order.kind === 'key' ? 'sorted into runs in --tmpdir as it comes' : `cut into chunks as it comes, at most ${plan.concurrency + 1} waiting in --tmpdir`}`
      : over === 'local file'
      ? 'read by byte ranges in parallel, in place'
      : `read by byte ranges in parallel over ${over === 's3' ? 'S3' : 'HTTP'} (scanned once, then each chunk fetched; no local copy)`;
  const disk = [streamed ? `${mb(spool)} spool` : '', runs > 0 ? `${mb(runs)} sort runs` : onePass && plan.order.kind === 'key' && !plan.order.inMemory ? `sort ${runSpaceText(undefined, { bytes: 0, ratio: plan.order.runRatio }, i.avgRecordBytes)}` : '', chunkFiles > 0 ? `${mb(chunkFiles)} of chunks` : ''].filter((s) => s !== '').join(' + ');
  return {
    source: i.kind === 'stdin' ? 'standard input' : i.path,
    over,
    read: streamed || onePass ? 'streamed' : 'ranges',
    localDiskBytes: spool + runs + chunkFiles,
    text: `${i.kind === 'stdin' ? 'standard input' : i.path} (${over}): ${how}; local disk ${disk === '' ? 'none' : `${disk} in --tmpdir`}`,
  };
}
