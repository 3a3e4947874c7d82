/**
 * The layer rule: which room under src/ may import which.
 *
 * A room is a folder directly under src/ (subfolders belong to it). Each has
 * a rank; a file may import from its own room and from rooms of LOWER rank,
 * never from a higher one, nor from another room of the same rank:
 *
 *   shared utilities, below everything, in this order:
 *     0 errors      imports no room
 *     1 config      may import errors
 *     2 db          may import errors, config (db/connect reads connection options)
 *   the pipeline, each stage may import the stages before it and the shared ones:
 *     3 input → 4 chunking → 5 order | shard → 6 introspect → 7 plan → 8 report → 9 checkpoint → 10 load
 *     (order and shard sit side by side between chunking and introspect: neither imports the other).
 *     The data flows input → … → plan → load → checkpoint → report, but the load stage is what
 *     drives the other two: it writes each chunk's bookkeeping row (checkpoint) and emits the
 *     progress events and reject rows (report). So report and checkpoint sit below load and know
 *     nothing of it; report (events, reject file, summary types) sits below checkpoint, which
 *     emits notes while it resolves a job.
 *   on top, may import everything below them:
 *     11 export | devserver → 12 job → 13 bench → 14 cli
 *     (export holds a whole export's stages, as load holds a table's; devserver starts a throwaway
 *     server: neither imports the other. job runs every kind of job up one ladder — a table on one
 *     server, a Galera cluster or a Spider table, or a whole export — so it sits above both load and
 *     export; bench is what `flatload bench` compares).
 *
 * Every import counts: value and type-only imports, re-exports and dynamic
 * import() of a literal path. src/ is the product that ships: nothing in it
 * imports from outside src/ (fixtures/, bench/, dev/, test/ are not shipped).
 * A room that is not in RANK fails the test: place a new room on purpose.
 *
 * KNOWN_VIOLATIONS are the imports that break the rule today. The list must
 * be exact: the test fails on an import that breaks the rule and is not
 * listed, and also on a listed one that no longer exists (delete it from the
 * list when you fix it), so it can only shrink.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importSpecifiers, sourceFiles, unreachableFiles } from '../../tools/imports.js';

const RANK: Readonly<Record<string, number>> = {
  errors: 0,
  config: 1,
  db: 2,
  input: 3,
  chunking: 4,
  order: 5,
  shard: 5,
  introspect: 6,
  plan: 7,
  report: 8,
  checkpoint: 9,
  load: 10,
  export: 11,
  devserver: 11,
  job: 12,
  bench: 13,
  cli: 14,
};

/** "importing file -> imported file", paths relative to src/. */
const KNOWN_VIOLATIONS: readonly string[] = [];

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const srcDir = join(root, 'src');

/** The room of a path relative to src/, or undefined for a path outside src/. */
function roomOf(fromSrc: string): string | undefined {
  if (fromSrc.startsWith('..')) return undefined;
  const parts = fromSrc.split('/');
  return parts.length > 1 ? parts[0] : '';
}

/** Why importing `to` from `from` (paths relative to src/) breaks the rule, or undefined when it does not. */
export function layerViolation(from: string, to: string): string | undefined {
  const a = roomOf(from);
  const b = roomOf(to);
  if (a === undefined) throw new Error(`${from} is not under src/`);
  if (a === '' || RANK[a] === undefined) return `${from} is in no known room: add its room to RANK in test/unit/layers.test.ts`;
  if (a === b) return undefined;
  if (b === undefined) return `${a} imports ${to}, outside src/: the shipped package holds only src/`;
  if (b === '' || RANK[b] === undefined) return `${to} is in no known room: add its room to RANK in test/unit/layers.test.ts`;
  if (RANK[b] < RANK[a]) return undefined;
  return RANK[b] === RANK[a] ? `${a} and ${b} sit side by side: neither imports the other` : `${a} (rank ${RANK[a]}) imports ${b} (rank ${RANK[b]}), a later room`;
}

/** Every import of every src/ file that breaks the rule, "from -> to" with the reason. */
function currentViolations(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of sourceFiles(srcDir)) {
    const from = relative(srcDir, file);
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue; // packages and node: builtins
      const to = relative(srcDir, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
      const why = layerViolation(from, to);
      if (why) out.set(`${from} -> ${to}`, why);
    }
  }
  return out;
}

/** The test's verdict: violations not in the list, and listed ones that are gone. */
export function compareWithKnown(found: ReadonlyMap<string, string>, known: readonly string[]): { added: string[]; gone: string[] } {
  const listed = new Set(known);
  return {
    added: [...found].filter(([k]) => !listed.has(k)).map(([k, why]) => `${k}: ${why}`),
    gone: known.filter((k) => !found.has(k)),
  };
}

describe('the rule', () => {
  const cases: Array<[string, string, boolean]> = [
    ['errors/index.ts', 'config/format.ts', false],
    ['config/connection.ts', 'errors/index.ts', true],
    ['config/loadOptions.ts', 'db/quote.ts', false],
    ['db/connect.ts', 'config/connection.ts', true],
    ['db/connect.ts', 'plan/sql.ts', false],
    ['input/source.ts', 'errors/index.ts', true],
    ['input/source.ts', 'chunking/scanner.ts', false],
    ['chunking/cut.ts', 'input/source.ts', true],
    ['order/sort.ts', 'chunking/scanner.ts', true],
    ['order/sort.ts', 'shard/split.ts', false],
    ['shard/split.ts', 'order/sort.ts', false],
    ['introspect/input.ts', 'order/sort.ts', true],
    ['introspect/server.ts', 'plan/needs.ts', false],
    ['plan/planner.ts', 'introspect/types.ts', true],
    ['plan/rules/innodb.ts', 'plan/sql.ts', true],
    ['plan/planner.ts', 'load/apply.ts', false],
    ['load/runner.ts', 'plan/types.ts', true],
    ['load/runner.ts', 'report/events.ts', true],
    ['load/apply.ts', 'checkpoint/store.ts', true],
    ['checkpoint/store.ts', 'load/runner.ts', false],
    ['checkpoint/store.ts', 'report/events.ts', true],
    ['job/ladder.ts', 'checkpoint/store.ts', true],
    ['job/table.ts', 'load/apply.ts', true],
    ['job/export.ts', 'export/stages.ts', true],
    ['export/stages.ts', 'job/run.ts', false],
    ['load/execute.ts', 'job/ladder.ts', false],
    ['checkpoint/store.ts', 'job/ladder.ts', false],
    ['export/stages.ts', 'load/execute.ts', true],
    ['load/execute.ts', 'export/stages.ts', false],
    ['cli/commands/load.ts', 'job/run.ts', true],
    ['job/run.ts', 'cli/commands/load.ts', false],
    ['report/rejectFile.ts', 'load/isolate.ts', false],
    ['report/events.ts', 'checkpoint/store.ts', false],
    ['introspect/sizes.ts', 'devserver/server.ts', false],
    ['cli/commands/bench.ts', '../fixtures/generate.ts', false],
    ['load/execute.ts', '../fixtures/generate.ts', false],
    ['devserver/server.ts', '../dev/galera.ts', false],
    ['bench/sample.ts', 'chunking/scanner.ts', true],
    ['bench/variants.ts', 'cli/commands/bench.ts', false],
    ['cli/commands/bench.ts', 'bench/variants.ts', true],
    ['cli/commands/bench.ts', 'devserver/server.ts', true],
    ['cli/commands/load.ts', 'load/execute.ts', true],
    ['newroom/x.ts', 'errors/index.ts', false],
    ['load/x.ts', 'newroom/y.ts', false],
    ['main.ts', 'errors/index.ts', false],
  ];
  for (const [from, to, ok] of cases) {
    test(`${from} -> ${to}: ${ok ? 'allowed' : 'refused'}`, () => {
      assert.equal(layerViolation(from, to) === undefined, ok, layerViolation(from, to));
    });
  }

  test('import statements are found in every form, comments are not read', () => {
    const text = [
      "import { a } from '../plan/sql.js';",
      "import type { B } from '../plan/types.js';",
      'import {',
      '  c,',
      "  d } from '../db/quote.js';",
      "export { e } from '../errors/index.js';",
      "export * from './x.js';",
      "import './side-effect.js';",
      "const m = await import('../load/runner.js');",
      " * import { f } from '../cli/main.js';",
      "import mysql from 'mysql2/promise';",
    ].join('\n');
    assert.deepEqual(importSpecifiers(text), [
      '../plan/sql.js',
      '../plan/types.js',
      '../db/quote.js',
      '../errors/index.js',
      './x.js',
      './side-effect.js',
      '../load/runner.js',
      'mysql2/promise',
    ]);
  });

  test('the known list can only shrink', () => {
    const found = new Map([
      ['a/x.ts -> b/y.ts', 'why'],
      ['c/x.ts -> d/y.ts', 'why'],
    ]);
    assert.deepEqual(compareWithKnown(found, ['a/x.ts -> b/y.ts', 'c/x.ts -> d/y.ts']), { added: [], gone: [] });
    assert.deepEqual(compareWithKnown(found, ['a/x.ts -> b/y.ts']), { added: ['c/x.ts -> d/y.ts: why'], gone: [] });
    assert.deepEqual(compareWithKnown(found, ['a/x.ts -> b/y.ts', 'c/x.ts -> d/y.ts', 'e/x.ts -> f/y.ts']), { added: [], gone: ['e/x.ts -> f/y.ts'] });
  });
});

test('src/ imports follow the layers, except exactly the known violations', () => {
  const files = sourceFiles(srcDir);
  assert.ok(files.length > 50, `only ${files.length} files under src/`);
  const { added, gone } = compareWithKnown(currentViolations(), KNOWN_VIOLATIONS);
  assert.deepEqual(added, [], `imports that break the layer rule (see the header of test/unit/layers.test.ts):\n${added.join('\n')}`);
  assert.deepEqual(gone, [], `fixed, so delete from KNOWN_VIOLATIONS in test/unit/layers.test.ts:\n${gone.join('\n')}`);
});

test('src/ holds the product: under 300 lines of it are never loaded by src/cli/main.ts', () => {
  const missed = unreachableFiles(srcDir, join(srcDir, 'cli', 'main.ts'));
  const lines = missed.reduce((n, m) => n + m.lines, 0);
  const list = missed.map((m) => `${m.lines} ${relative(srcDir, m.file)}`).join('\n');
  assert.ok(lines < 300, `${lines} lines of src/ are not reached from the shipped command (benchmarks, research and dev tools go to bench/ or dev/):\n${list}`);
});

test('checkpoint/ is storage only: the job rows, identities, locks and leases (what to resume is decided in job/ and load/)', () => {
  const storage = ['exports.ts', 'identity.ts', 'lease.ts', 'lock.ts', 'store.ts'];
  assert.deepEqual(readdirSync(join(srcDir, 'checkpoint')).sort(), storage);
});
