/**
 * Export discovery for remote inputs: an `s3://bucket/prefix/` or an
 * http(s) directory URL (listed), or remote files named one by one. The
 * same naming rules as a local directory (names.ts) group them into tables.
 */
import { FlatloadError } from '../errors/index.js';
import { listRemote, openAnyInput } from '../input/open.js';
import { isRemoteInput, maskInputUrl, type RemoteEntry } from '../input/remote.js';
import type { S3Settings } from '../input/s3.js';
import type { Discovered, PassedOver } from './discover.js';
import { groupFiles, isRejectFile, parseFileName } from './names.js';

/** Whether the command names remote inputs (all of them must be then: one export reads from one kind of place). */
export function namesRemote(args: readonly string[]): boolean {
  const remote = args.filter(isRemoteInput).length;
  if (remote > 0 && remote < args.length) throw new FlatloadError('USAGE', 'an export reads local files or remote ones, not both: name them all as URLs or all as paths');
  return remote > 0;
}

export async function discoverRemoteExport(args: readonly string[], manifest: string | undefined, s3: S3Settings): Promise<Discovered> {
  if (manifest !== undefined) throw new FlatloadError('USAGE', '--manifest names local files; remote exports are named by a prefix (s3://bucket/prefix/, https://host/dir/) or their URLs');
  const entries: RemoteEntry[] = [];
  const passedOver: PassedOver[] = [];
  for (const arg of args) {
    if (arg.endsWith('/')) {
      const listed = await listRemote(arg, s3);
      for (const e of listed) {
        if (isRejectFile(e.url)) passedOver.push({ path: maskInputUrl(e.url), reason: 'a reject file of an earlier run' });
        else if (parseFileName(e.url).kind === 'other') passedOver.push({ path: maskInputUrl(e.url), reason: 'not a data file or a .sql file' });
      }
      const found = listed.filter((e) => !isRejectFile(e.url) && parseFileName(e.url).kind !== 'other');
      if (found.length === 0) throw new FlatloadError('INPUT_NOT_FOUND', `no data files (.txt, .csv, .tsv, .dat, optionally .gz/.zst) under ${maskInputUrl(arg)}`, { file: maskInputUrl(arg) });
      entries.push(...found);
    } else {
      const { remote } = await openAnyInput(arg, s3);
      entries.push({ url: arg, sizeBytes: remote!.sizeBytes, mtimeMs: Math.round(remote!.mtimeMs ?? 0) });
    }
  }
  const byUrl = new Map(entries.map((e) => [e.url, e]));
  const tables = groupFiles(entries.map((e) => e.url)).map((t) => {
    // The bookkeeping and the messages see the URLs with any password masked; the loads get them as given.
    const sizes = t.files.map((f) => ({ path: maskInputUrl(f), sizeBytes: byUrl.get(f)!.sizeBytes, mtimeMs: Math.round(byUrl.get(f)!.mtimeMs) }));
    return { ...t, sizes, sizeBytes: sizes.reduce((a, s) => a + s.sizeBytes, 0) };
  });
  return { source: args.map(maskInputUrl).join(' '), tables, passedOver, missing: [] };
}
