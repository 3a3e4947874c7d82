/**
 * An append-mode export run again after files of its interrupted run were
 * copied again (a re-copy, an rsync, an S3 re-upload: a new modification
 * time, maybe new bytes). Its identity (exportIdOf) is then a new one, but
 * what the interrupted run loaded is still in the tables. Checked before
 * anything changes: a file that run loaded whole is already loaded when its
 * bytes are the same (the digest its job stored, docs/resume.md), and stops
 * the export (exit 2) when they are not, as does a file it loaded in part.
 */
import type { ExportMember, StoredExport } from '../checkpoint/exports.js';
import { CheckpointStore, type StoredJob } from '../checkpoint/store.js';
import type { Queryable } from '../db/control.js';
import { selectNumber } from '../db/rows.js';
import { FlatloadError } from '../errors/index.js';
import { readGaleraFacts } from '../introspect/cluster.js';
import { contentDigest, digestKindOf } from '../input/digest.js';
import { openAnyInput } from '../input/open.js';
import type { S3Settings } from '../input/s3.js';
import { openByteStream } from '../input/streams.js';
import { stillLoadedIn } from './ladder.js';

/** A file whose size or modification time is not what the interrupted run recorded. */
export interface ChangedFile {
  /** Index of the member (table) and of the file in it. */
  member: number;
  index: number;
  /** The n-th earlier listing of the same file for the table (a job's `repeat`). */
  repeat: number;
  path: string;
  then: { sizeBytes: number; mtimeMs: number };
}

/** The same tables, loaded into the same places from the same paths: the files may have changed, the export not. */
export function sameFiles(a: readonly ExportMember[], b: readonly ExportMember[]): boolean {
  const shape = (ms: readonly ExportMember[]): string => JSON.stringify(ms.map((m) => [m.target, m.loadTarget, m.files.map((f) => f.path)]));
  return shape(a) === shape(b);
}

/** The files of `now` whose size or time differ from `then` (the same files, as sameFiles says). Pure. */
export function changedFiles(then: readonly ExportMember[], now: readonly ExportMember[]): ChangedFile[] {
  const out: ChangedFile[] = [];
  now.forEach((m, member) =>
    m.files.forEach((f, index) => {
      const old = then[member]!.files[index]!;
      if (old.sizeBytes === f.sizeBytes && old.mtimeMs === f.mtimeMs) return;
      const repeat = m.files.slice(0, index).filter((g) => g.path === f.path).length;
      out.push({ member, index, repeat, path: f.path, then: { sizeBytes: old.sizeBytes, mtimeMs: old.mtimeMs } });
    }),
  );
  return out;
}

/** The interrupted export these members continue: not finished, the same mode and files, the newest. Pure. */
export function interruptedExport(stored: readonly StoredExport[], mode: string, members: readonly ExportMember[], exportId: string): StoredExport | undefined {
  return stored.filter((e) => e.exportId !== exportId && e.state !== 'done' && e.state !== 'abandoned' && e.mode === mode && sameFiles(e.members, members)).at(-1);
}

/** The interrupted run's job for this file: the same listing, of the file as it was then. Pure. */
export function jobOfThen(jobs: readonly StoredJob[], c: ChangedFile): StoredJob | undefined {
  return jobs.find((j) => (j.identity.repeat ?? 0) === c.repeat && j.identity.input.sizeBytes === c.then.sizeBytes && j.identity.input.mtimeMs === c.then.mtimeMs);
}

/** Whether the file now holds the bytes the finished job read: its ETag for a remote object, else the digest of every byte. */
async function sameBytes(job: StoredJob, given: string, s3: S3Settings): Promise<boolean> {
  const source = await openAnyInput(given, s3);
  const etag = job.identity.input.etag;
  if (etag && source.remote?.etag && !etag.startsWith('W/')) return etag === source.remote.etag && job.identity.input.sizeBytes === source.remote.sizeBytes;
  if (!job.inputHash) return false;
  const d = contentDigest(digestKindOf(job.inputHash));
  const { stream } = await openByteStream(source, 1 << 20);
  for await (const piece of stream) d.update(piece as Uint8Array);
  return d.digest() === job.inputHash;
}

export interface RerunTarget {
  db: string;
  table: string;
  /** The files as given (URLs unmasked), beside their members' masked paths. */
  files: readonly string[];
}

/**
 * The files of an interrupted export that are already loaded though their
 * times changed (keys `member#file`), with a note for each; throws
 * RESUME_MISMATCH before anything changes when one must not load again.
 */
export async function checkChangedFiles(
  control: Queryable,
  interrupted: StoredExport,
  members: readonly ExportMember[],
  targets: readonly RerunTarget[],
  o: { bookkeepingSchema: string | undefined; s3: S3Settings },
): Promise<{ loaded: Set<string>; notes: string[] }> {
  const loaded = new Set<string>();
  const notes: string[] = [];
  const changed = changedFiles(interrupted.members, members);
  if (changed.length === 0) return { loaded, notes };
  const fold = (await selectNumber(control, 'SELECT @@lower_case_table_names AS n')) !== 0;
  const cluster = (await readGaleraFacts(control).catch(() => undefined)) !== undefined;
  const refused: string[] = [];
  for (const c of changed) {
    const t = targets[c.member]!;
    const m = members[c.member]!;
    const store = new CheckpointStore(control, o.bookkeepingSchema ?? t.db);
    if (!(await CheckpointStore.exists(control, store.schema))) continue;
    const job = jobOfThen(await store.findAll(m.loadTarget, c.path, fold), c);
    const was = `${c.path} (loaded into ${m.target} by job ${job?.jobId ?? '?'} of the interrupted export ${interrupted.exportId})`;
    if (!job) continue;
    if (job.state !== 'done') {
      // Its own resume takes a new time with the same bytes (and checks them again); other bytes it refuses, but only once
      // the tables before it have loaded more: refused here, before anything changes.
      const started = job.phase !== 'created' || (await store.doneChunks(job.jobId)).size > 0;
      if (started && !(job.inputHash && job.identity.input.sizeBytes === m.files[c.index]!.sizeBytes && (await sameBytes(job, t.files[c.index]!, o.s3)))) {
        refused.push(`${was}: in part; its contents changed since`);
      }
      continue;
    }
    // A table emptied since takes the file again whatever its bytes; one that still holds its rows, only the same bytes.
    const still = await stillLoadedIn(control, job, { db: t.db, table: t.table, mode: 'append', cluster });
    if (!still.ok) {
      if (still.reload) notes.push(`${m.target}: loading ${c.path} again: the interrupted run loaded it, but ${still.why}`);
      else refused.push(`${was}: whole, but ${still.why}`);
    } else if (await sameBytes(job, t.files[c.index]!, o.s3)) {
      loaded.add(`${c.member}#${c.index}`);
      notes.push(`${m.target}: ${c.path} has a new modification time but the same bytes as the interrupted run loaded (job ${job.jobId}): already loaded`);
    } else refused.push(`${was}: whole; its contents changed since`);
  }
  if (refused.length > 0) {
    throw new FlatloadError('RESUME_MISMATCH', `the files changed since the interrupted run of this export, which loaded:\n    ${refused.join('\n    ')}\n  loading them again would add their rows on top of those already loaded; nothing was changed`, {
      hint: 'put back the files the interrupted run read and run the same command to finish it; or, to load these files instead, empty those tables first (or use --mode replace)',
    });
  }
  return { loaded, notes };
}

/**
 * A new export (no row of its own) in append mode: the interrupted run of the
 * same files it supersedes, if any, checked (checkChangedFiles).
 */
export async function supersede(
  control: Queryable,
  stored: readonly StoredExport[],
  exportId: string,
  members: readonly ExportMember[],
  targets: readonly RerunTarget[],
  o: { bookkeepingSchema: string | undefined; s3: S3Settings },
): Promise<{ loaded: Set<string>; notes: string[]; superseded: string | undefined }> {
  const before = interruptedExport(stored, 'append', members, exportId);
  if (!before) return { loaded: new Set(), notes: [], superseded: undefined };
  return { ...(await checkChangedFiles(control, before, members, targets, o)), superseded: before.exportId };
}
