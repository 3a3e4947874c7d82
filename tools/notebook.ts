/**
 * Finds comments that read as a lab notebook and plan reasons that carry one machine's figures.
 * Lists the comment blocks of 8 lines or more under src/ (consecutive `//` lines or one `/* … *\/`)
 * that hold a figure with a unit or a word such as "measured", "tried", "runs", "median"; then the
 * plan reasons (string lines under src/plan/) holding a timing or speed-up figure or a `measured:` run.
 * Run: `node --import tsx tools/notebook.ts [DIR]` (`--all` also lists the long blocks without such words).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceFiles } from './imports.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// A folder other than src/ may be named, e.g. an older tree unpacked by `git archive` for a before/after count.
const src = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? join(root, 'src');
const MIN_LINES = 8;
const NOTEBOOK =
  /\b\d+(?:\.\d+)?\s?(?:s|ms|µs|us|ns|%|x|×|MB|GB|KB|MiB|GiB|KiB|min|seconds?|rows\/s|MB\/s)\b|\d(?:\.\d+)?x\b|\b(?:measured|tried|runs?|pairs|median|alternating|benchmark(?:ed)?)\b/i;
// Evidence proper: a timing or speed-up compared, or the words of a lab notebook.
const EVIDENCE = /\d\s?(?:s|ms) (?:of|against|and|for)|\d(?:\.\d+)?\s?[x×] (?:faster|slower|cheaper)|(?<!not )\bmeasured\b|\btried(?: and| out|:)|\b(?:was|were) tried\b|\b(?:alternating|medians?|pairs)\b/i;
// A timing or a speed-up ("1.5-1.9x faster", "5% less time", "1.1 s of"), not a rule's own factor ("a 2x margin").
const FIGURE = /\d(?:\.\d+)?(?:-\d+(?:\.\d+)?)?\s?(?:x|×|%) (?:faster|slower|less|more|than)|\d\s?s (?:of|less|more|against)|measured: /;

interface Block { file: string; line: number; lines: string[] }

function commentBlocks(file: string): Block[] {
  const text = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < text.length) {
    const t = text[i]!.trim();
    if (t.startsWith('/*')) {
      const start = i;
      while (i < text.length && !text[i]!.includes('*/')) i++;
      blocks.push({ file, line: start + 1, lines: text.slice(start, i + 1) });
      i++;
    } else if (t.startsWith('//')) {
      const start = i;
      while (i < text.length && text[i]!.trim().startsWith('//')) i++;
      blocks.push({ file, line: start + 1, lines: text.slice(start, i) });
    } else i++;
  }
  return blocks.filter((b) => b.lines.length >= MIN_LINES);
}

const all = process.argv.includes('--all');
const files = sourceFiles(src);
const long = files.flatMap(commentBlocks);
const notebook = long.filter((b) => NOTEBOOK.test(b.lines.join('\n')));
const evidence = long.filter((b) => EVIDENCE.test(b.lines.join('\n')));
for (const b of all ? long : notebook) {
  const text = b.lines.join('\n');
  const mark = EVIDENCE.test(text) ? '!' : NOTEBOOK.test(text) ? '*' : ' ';
  process.stdout.write(`${mark} ${String(b.lines.length).padStart(3)} lines  ${relative(root, b.file)}:${b.line}\n`);
}
process.stdout.write(`${long.length} comment blocks of ${MIN_LINES}+ lines under src/, ${notebook.length} with figures or measuring words (* or !), ${evidence.length} of them with compared timings or "measured", "tried", "median", "pairs" (!)\n`);

const reasons = files
  .filter((f) => relative(src, f).startsWith('plan'))
  .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((l, n) => ({ f, n: n + 1, l })))
  .filter(({ l }) => /^\s*(?:\S.*)?['`]/.test(l) && !/^\s*(?:\/\/|\*|\/\*)/.test(l) && FIGURE.test(l));
for (const { f, n } of reasons) process.stdout.write(`  reason  ${relative(root, f)}:${n}\n`);
process.stdout.write(`${reasons.length} plan-reason lines under src/plan/ with a figure or a measured: run\n`);
