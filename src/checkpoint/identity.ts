import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import type { LoadOptions } from '../config/loadOptions.js';
import type { InputSource } from '../input/source.js';
import type { LocalInput } from '../input/spool.js';
import { describeShardMapChange, shardMapFingerprint, type ShardMap } from '../shard/map.js';

const MiB = 1024 * 1024;

/**
 * What identifies one load: the input, the target and every option that
 * changes which bytes go where. Two runs with equal identities are the same
 * job; a resume with a different one is refused, naming the difference.
 */
export interface JobIdentity {
  input: {
    path: string;
    kind: 'file' | 'stdin';
    sizeBytes: number | null;
    mtimeMs: number | null;
    /** sha256 of the first and last MiB (files only). */
    headTailSha256: string | null;
    /**
     * The digest (src/input/digest.ts) of everything read from standard input (its spooled copy): a
     * stream has no name, size or time of its own, so its content is its
     * identity. Absent for files.
     */
    contentHash?: string;
    /** A remote input's ETag (its size and Last-Modified are sizeBytes and mtimeMs). Absent for local inputs. */
    etag?: string;
    /**
     * Standard input read once as it loads: sha256 of its first MiB, all that
     * is known of it before the load. An unfinished job with the same start is
     * resumed, each committed chunk's bytes checked as they come again; a
     * finished one is trusted only once the whole stream was found the same
     * (spoolFinishedStdin in src/load/execute.ts). Absent otherwise.
     */
    headSha256?: string;
  };
  target: string;
  format: Record<string, string | number | boolean | null>;
  columns: string | null;
  chunkSizeBytes: number;
  strategy: string | null;
  /** --order: which records make up chunk N depends on it. */
  order: string;
  mode: string;
  onDuplicate: string;
  allowTruncation: boolean;
  /**
   * A load routed straight to a Spider table's backends: the shard map it
   * routed by (which rows go to which backend table) and, for one backend's
   * share, that backend. Absent for every other load, so their job ids stay
   * as they were.
   */
  route?: { map: ShardMap; backend?: string };
  /**
   * The n-th time (from 1) one export lists this input for this table again
   * (a manifest naming a file twice, a part that is a symlink to another):
   * each listing is a part of its own, loaded and resumed apart. Absent for
   * a first listing, so other job ids stay as they were.
   */
  repeat?: number;
}

/** The map as a job stores it: JSON (bounds are kept as the server's text in each partition's description). */
function storableShardMap(map: ShardMap): ShardMap {
  const { rangeBounds: _r, listValues: _l, ...rule } = map.rule;
  return { ...map, rule };
}

/**
 * The identity of a routed load (backend undefined) or of one backend's
 * share: the user's input and options, and the shard map. A share loads a
 * file split from the input, so it is the input's identity that counts.
 */
export function routedIdentity(of: JobIdentity, map: ShardMap, backend?: { input: JobIdentity['input']; key: string }): JobIdentity {
  return { ...of, ...(backend ? { input: backend.input } : {}), route: { map: storableShardMap(map), ...(backend ? { backend: backend.key } : {}) } };
}

/** sha256 over the first and last MiB of a file: a cheap "same contents" check beside size and mtime. */
export function headTailHash(path: string, sizeBytes: number): string {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(MiB, sizeBytes));
    readSync(fd, buf, 0, buf.length, 0);
    h.update(buf);
    if (sizeBytes > MiB) {
      const tail = Buffer.alloc(Math.min(MiB, sizeBytes - MiB));
      readSync(fd, tail, 0, tail.length, sizeBytes - tail.length);
      h.update(tail);
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

/**
 * The target as the server names it: `db.table` as given where table names
 * are case-sensitive (lower_case_table_names=0: `users` and `Users` are two
 * tables, two jobs), folded to lower case where the server folds them (1, 2).
 */
export function targetName(db: string, table: string, lowerCaseTableNames: number): string {
  const name = `${db}.${table}`;
  return lowerCaseTableNames === 0 ? name : name.toLowerCase();
}

export function jobIdentity(
  o: LoadOptions,
  source: InputSource,
  local: LocalInput,
  db: string,
  chunkSizeBytes: number,
  characterSet: string,
  lowerCaseTableNames: number,
): JobIdentity {
  const f = o.format;
  let path = source.path;
  if (source.kind === 'file' && !source.remote) {
    try {
      path = realpathSync(source.path);
    } catch {
      path = source.path;
    }
  }
  return {
    input: {
      path,
      kind: source.kind,
      sizeBytes: source.kind === 'stdin' ? (local.stream ? null : local.sizeBytes) : (source.sizeBytes ?? null),
      mtimeMs: source.mtimeMs === undefined ? null : Math.round(source.mtimeMs),
      // A remote object is identified by what its server says of its version (ETag, Last-Modified, size), not read for a hash.
      headTailSha256: source.kind === 'file' && !source.remote && source.sizeBytes !== undefined ? headTailHash(source.path, source.sizeBytes) : null,
      ...(source.kind === 'stdin' && local.contentHash ? { contentHash: local.contentHash } : {}),
      ...(source.kind === 'stdin' && local.stream && local.headSha256 ? { headSha256: local.headSha256 } : {}),
      ...(source.remote?.etag ? { etag: source.remote.etag } : {}),
    },
    target: targetName(db, o.table, lowerCaseTableNames),
    format: {
      fieldsTerminatedBy: f.fieldsTerminatedBy.toString('hex'),
      fieldsEnclosedBy: f.fieldsEnclosedBy.toString('hex'),
      fieldsEscapedBy: f.fieldsEscapedBy.toString('hex'),
      linesTerminatedBy: f.linesTerminatedBy.toString('hex'),
      ignoreLines: f.ignoreLines,
      characterSet,
      stripBom: o.stripBom,
    },
    columns: o.columns ? o.columns.map((c) => (c.isVariable ? `@${c.name}` : c.name)).join(',') : null,
    chunkSizeBytes,
    strategy: o.strategy ?? null,
    order: o.order,
    mode: o.mode,
    onDuplicate: o.onDuplicate,
    allowTruncation: o.allowTruncation,
  };
}

/**
 * The identity of standard input once it was copied whole (its start matched
 * a finished load's): by its content, as a `--spool` run would name it.
 */
export function spooledStdinIdentity(input: JobIdentity['input'], local: LocalInput): JobIdentity['input'] {
  const { headSha256: _start, ...rest } = input;
  return { ...rest, sizeBytes: local.sizeBytes, ...(local.contentHash ? { contentHash: local.contentHash } : {}) };
}

export function jobIdOf(identity: JobIdentity): string {
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 24);
}

/**
 * How this run's input differs in content from what an unfinished job's first
 * run read, when size, modification time and the first and last MiB agree
 * (a byte changed in the middle, the time put back): undefined when the same,
 * or when either hash is unknown (a job recorded by an older flatload).
 */
export function contentDifference(stored: string | null, now: string | undefined, stdin = false): string | undefined {
  if (!stored || !now || stored === now) return undefined;
  const hashes = `digest of every byte: ${stored.slice(0, 16)}… then, ${now.slice(0, 16)}… now`;
  if (stdin) return `standard input brought other bytes than the interrupted run read (${hashes})`;
  return `its contents differ from what the interrupted run read (${hashes}), though its size and modification time are the same`;
}

/** Human differences between a stored identity and this run's, for the refusal message. */
export function identityDifferences(stored: JobIdentity, now: JobIdentity): string[] {
  const out: string[] = [];
  const cmp = (label: string, a: unknown, b: unknown): void => {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${label}: ${JSON.stringify(a)} then, ${JSON.stringify(b)} now`);
  };
  cmp('input size', stored.input.sizeBytes, now.input.sizeBytes);
  cmp('input modification time', stored.input.mtimeMs, now.input.mtimeMs);
  if (stored.input.headTailSha256 !== now.input.headTailSha256) out.push('input contents (first/last MiB) differ');
  if (stored.input.headSha256 !== undefined && now.input.headSha256 !== undefined && stored.input.headSha256 !== now.input.headSha256) out.push('standard input brought other bytes (its first MiB differs)');
  if (stored.input.contentHash !== now.input.contentHash) {
    const spooled = stored.input.kind === 'stdin' && (stored.input.contentHash === undefined) !== (now.input.contentHash === undefined);
    out.push(spooled ? `standard input was ${stored.input.contentHash ? '' : 'not '}copied first (--spool) then, and is ${now.input.contentHash ? '' : 'not '}now` : 'standard input brought different contents');
  }
  cmp('input ETag (the object was replaced)', stored.input.etag, now.input.etag);
  cmp('input path', stored.input.path, now.input.path);
  cmp('target table', stored.target, now.target);
  for (const k of new Set([...Object.keys(stored.format), ...Object.keys(now.format)])) cmp(`format ${k}`, stored.format[k], now.format[k]);
  cmp('--columns', stored.columns, now.columns);
  cmp('chunk size', stored.chunkSizeBytes, now.chunkSizeBytes);
  cmp('--strategy', stored.strategy, now.strategy);
  cmp('--order', stored.order, now.order);
  cmp('--mode', stored.mode, now.mode);
  cmp('--on-duplicate', stored.onDuplicate, now.onDuplicate);
  cmp('--allow-truncation', stored.allowTruncation, now.allowTruncation);
  cmp('listing of the same input', stored.repeat ?? 0, now.repeat ?? 0);
  const [a, b] = [stored.route, now.route];
  if (!a !== !b) out.push(`route: ${a ? 'direct to the backends' : 'through the front'} then, ${b ? 'direct to the backends' : 'through the front'} now`);
  else if (a && b) {
    if (shardMapFingerprint(a.map) !== shardMapFingerprint(b.map)) {
      const change = describeShardMapChange(a.map, b.map);
      out.push(...(change.length > 0 ? change : ['the partitioning columns changed']).map((d) => `shard map: ${d}`));
    }
    cmp('backend', a.backend, b.backend);
  }
  return out;
}
