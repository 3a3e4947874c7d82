import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Replaces one marked section of docs/benchmarks.md, keeping the others (each bench mode writes its own). */
export function writeDocSection(path: string, name: string, body: string): void {
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n\nEvery figure here was produced by `npm run bench` on the machine it names; rerun it to refresh.\n';
  const block = `${begin}\n${body.trim()}\n${end}`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  doc = i !== -1 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, doc);
}
