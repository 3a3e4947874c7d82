import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { ChunkSpec } from '../chunking/types.js';
import type { KeyContext } from './key.js';
import type { RunShape } from './cursor.js';
import type { SpillDir } from './spillDir.js';
import { META_BLOCK_BYTES, RUN_BLOCK_BYTES, runCodec } from './codec.js';

/** Bumped whenever run files or the manifest change shape: older runs are then sorted again. */
export const RUN_FORMAT_VERSION = 4;

/** One run: the input chunk it came from and the file holding it in key order. */
export interface RunInfo extends RunShape {
  /** The input chunk (its index, byte range, first line and record, records). */
  chunk: Pick<ChunkSpec, 'index' | 'startByte' | 'endByte' | 'firstLine' | 'firstRecord' | 'records'>;
  indexBytes: number;
  indexEntries: number;
  /** The chunk was already in key order. */
  ordered: boolean;
  /** Encoded keys, hex. */
  firstKey: string;
  lastKey: string;
  /** Of the whole run file. */
  digest: string;
  /** Of the input chunk's bytes, when they came from a stream that a rerun must show to be the same. */
  inputHash?: string | undefined;
}

export interface Manifest {
  version: number;
  /** Fingerprint of everything that decides the runs' bytes, and of the caller's job identity. */
  params: string;
  runs: RunInfo[];
  /** Every chunk of the input has its run. */
  complete: boolean;
}

const FILE = 'manifest.json';

/** Everything that decides what the runs hold: the key, the format, the index spacing and the job. */
export function runParams(ctx: KeyContext, sparseEvery: number, identity: string): string {
  const h = createHash('sha256');
  h.update(
    JSON.stringify({
      v: RUN_FORMAT_VERSION,
      codec: runCodec(),
      block: RUN_BLOCK_BYTES,
      metaBlock: META_BLOCK_BYTES,
      fields: ctx.spec.fields,
      numeric: ctx.spec.numeric,
      forms: ctx.spec.forms ?? null,
      ft: ctx.fmt.fieldTerm.toString('hex'),
      lt: ctx.fmt.lineTerm.toString('hex'),
      enc: ctx.fmt.enclosure,
      esc: ctx.fmt.escape,
      cs: ctx.cs.name,
      targets: ctx.targets,
      sparseEvery,
      identity,
    }),
  );
  return h.digest('hex');
}

export async function readManifest(spill: SpillDir): Promise<Manifest | undefined> {
  try {
    const m = JSON.parse(await readFile(spill.file(FILE), 'utf8')) as Manifest;
    return m.version === RUN_FORMAT_VERSION && Array.isArray(m.runs) ? m : undefined;
  } catch {
    return undefined; // none yet, or cut short by a crash: sort again
  }
}

/** Replaces the manifest atomically: a crash leaves the old one or the new one. */
export async function writeManifest(spill: SpillDir, m: Manifest): Promise<void> {
  const tmp = spill.file(`${FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(m));
  await rename(tmp, spill.file(FILE));
}

export function runFileName(chunkIndex: number): string {
  return `run-${String(chunkIndex).padStart(6, '0')}.bin`;
}
