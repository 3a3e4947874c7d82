/**
 * Repeated flags on the command line: a repeatable flag keeps every value
 * (the README's nightly job gives `--include` twice), any other keeps the last.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import yargs from 'yargs';
import { lastGivenWins, PARSER_CONFIGURATION } from '../../src/cli/repeated.js';

function parse(argv: string[]): Record<string, unknown> {
  const a = yargs(argv)
    .option('include', { type: 'string', array: true })
    .option('exclude', { type: 'string', array: true })
    .option('rename', { type: 'string', array: true })
    .option('replica', { type: 'string', array: true })
    .option('backend', { type: 'string', array: true })
    .option('max-lag', { type: 'string' })
    .option('database', { alias: 'D', type: 'string' })
    .option('json', { type: 'boolean' })
    .parserConfiguration(PARSER_CONFIGURATION)
    .parseSync();
  return lastGivenWins(a);
}

test('a repeatable flag keeps every value; any other flag given twice keeps its last', () => {
  const cases: Array<[string, string[], Record<string, unknown>]> = [
    ['--include twice', ['--include', 'orders*', '--include', 'customers'], { include: ['orders*', 'customers'] }],
    ['--include and --exclude interleaved', ['--include', 'a', '--exclude', 'x', '--include', 'b', '--exclude', 'y'], { include: ['a', 'b'], exclude: ['x', 'y'] }],
    ['--rename twice', ['--rename', 'a=b', '--rename', 'c=d'], { rename: ['a=b', 'c=d'] }],
    ['--replica twice', ['--replica', 'r1=mysql://h1', '--replica', 'mysql://h2'], { replica: ['r1=mysql://h1', 'mysql://h2'] }],
    ['--backend twice', ['--backend', 'b1=mysql://h1', '--backend', 'b2=mysql://h2'], { backend: ['b1=mysql://h1', 'b2=mysql://h2'] }],
    ['a comma list stays one value (split later)', ['--include', 'a,b'], { include: ['a,b'] }],
    ['a scalar twice: the last', ['--max-lag', '5', '--max-lag', '30'], { maxLag: '30', 'max-lag': '30' }],
    ['a scalar under its alias and its name: the last', ['-D', 'shop', '--database', 'crm'], { database: 'crm', D: 'crm' }],
    ['a boolean twice', ['--json', '--json'], { json: true }],
  ];
  for (const [name, argv, want] of cases) {
    const got = parse(argv);
    for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k], v, `${name}: ${k}`);
  }
});
