import { charsetInfo } from '../chunking/charsets.js';
import { FlatloadError } from '../errors/index.js';
import type { KeyContext } from './key.js';
import type { RunInfo } from './manifest.js';
import { writeRun } from './runFile.js';
import type { SortScratch } from './scratch.js';
import { recordTerminator, sortChunk } from './sortChunk.js';

/** One chunk to sort into a run: everything but its bytes and the key (plain data, so it can go to a worker). */
export interface SortJob {
  chunk: RunInfo['chunk'];
  /** The run file's name and full path. */
  file: string;
  path: string;
  sparseEvery: number;
  inputHash?: string | undefined;
}

/** Sorts a chunk's bytes and writes its run; returns the manifest entry. */
export async function sortRun(bytes: Buffer, job: SortJob, key: KeyContext, scratch: SortScratch): Promise<RunInfo> {
  const sorted = sortChunk(bytes, key, scratch, job.chunk.records);
  if (sorted.table.ends.length !== job.chunk.records) {
    // The cutter counted this chunk's records in an earlier read of the same bytes.
    throw new FlatloadError('INPUT_MALFORMED', `the input changed while it was read: chunk ${job.chunk.index} held ${job.chunk.records} records, now ${sorted.table.ends.length}`, {
      chunk: job.chunk.index,
      byteOffset: job.chunk.startByte,
    });
  }
  const layout = await writeRun(job.path, bytes, sorted, job.sparseEvery, recordTerminator(key.fmt), scratch);
  return {
    file: job.file,
    chunk: job.chunk,
    records: layout.records,
    recordBytes: layout.recordBytes,
    metaBytes: layout.metaBytes,
    indexBytes: layout.indexBytes,
    recordFileBytes: layout.recordFileBytes,
    metaFileBytes: layout.metaFileBytes,
    fileBytes: layout.fileBytes,
    indexEntries: layout.indexEntries,
    maxRecordBytes: layout.maxRecordBytes,
    maxKeyBytes: layout.maxKeyBytes,
    intKeys: layout.intKeys,
    ordered: sorted.ordered,
    firstKey: layout.firstKey.toString('hex'),
    lastKey: layout.lastKey.toString('hex'),
    digest: layout.digest,
    ...(job.inputHash === undefined ? {} : { inputHash: job.inputHash }),
  };
}

/** A KeyContext as plain data (a worker rebuilds it; the character set goes by name). */
export interface KeyData {
  spec: KeyContext['spec'];
  fieldTerm: string;
  lineTerm: string;
  enclosure: number;
  escape: number;
  charset: string;
  targets: { fields: number; textField: boolean[] };
}

export function keyData(k: KeyContext): KeyData {
  return {
    spec: k.spec,
    fieldTerm: k.fmt.fieldTerm.toString('hex'),
    lineTerm: k.fmt.lineTerm.toString('hex'),
    enclosure: k.fmt.enclosure,
    escape: k.fmt.escape,
    charset: k.cs.name,
    targets: { fields: k.targets.fields, textField: [...k.targets.textField] },
  };
}

export function keyFromData(d: KeyData): KeyContext {
  const cs = charsetInfo(d.charset);
  if (!cs) throw new FlatloadError('INTERNAL', `unknown character set ${d.charset} in a sort worker`);
  return {
    spec: d.spec,
    fmt: { fieldTerm: Buffer.from(d.fieldTerm, 'hex'), lineTerm: Buffer.from(d.lineTerm, 'hex'), enclosure: d.enclosure, escape: d.escape },
    cs,
    targets: d.targets,
  };
}
