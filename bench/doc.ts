import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { session, writeVerdict, type QuietSession } from './quiet.js';

/**
 * Replaces one marked section of a docs file, keeping the others (each bench
 * mode writes its own). Refuses (prints why, writes nothing, returns false)
 * when a run of the session started on a busy machine, unless the session is
 * forced, and then the written text says so.
 */
export function writeDocSection(path: string, name: string, body: string, quiet: QuietSession = session): boolean {
  const v = writeVerdict(quiet.starts, quiet.force);
  if (!v.write) {
    process.stderr.write(`not writing ${path} (section ${name}): ${v.refusal}\n`);
    quiet.refused.push(`${path} (${name})`);
    return false;
  }
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n\nEvery figure here was produced by `npm run bench` on the machine it names; rerun it to refresh.\n';
  // The note goes under the section's heading, where a reader of that section sees it.
  const [first = '', ...rest] = body.trim().split('\n');
  const text = !v.note ? body.trim() : first.startsWith('#') ? [first, '', v.note, ...rest].join('\n') : `${v.note}\n\n${body.trim()}`;
  const block = `${begin}\n${text}\n${end}`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  doc = i !== -1 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, doc);
  return true;
}
