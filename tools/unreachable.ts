/**
 * The files under src/ that the shipped command never loads, from the imports
 * walked from src/cli/main.ts, with their line counts and the total.
 * Run: `node --import tsx tools/unreachable.ts`.
 */
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceFiles, unreachableFiles } from './imports.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const missed = unreachableFiles(src, join(src, 'cli', 'main.ts'));
for (const { file, lines } of missed) process.stdout.write(`${String(lines).padStart(6)}  ${relative(root, file)}\n`);
const total = missed.reduce((n, m) => n + m.lines, 0);
process.stdout.write(`${String(total).padStart(6)}  lines of src/ not reached from src/cli/main.ts (${missed.length} of ${sourceFiles(src).length} files)\n`);
