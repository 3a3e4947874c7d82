/**
 * Repeated flags. A repeatable flag (`--include a --include b`, two
 * `--replica`s) keeps every value; any other flag given twice keeps the last,
 * as the mysql client does. yargs cannot say both per option: with
 * `duplicate-arguments-array` off it also dropped all but the last value of a
 * repeatable flag, so it is on, and the scalars are brought back here. Pure.
 */

export const PARSER_CONFIGURATION = { 'camel-case-expansion': true, 'boolean-negation': false, 'duplicate-arguments-array': true } as const;

/** The options declared `array: true`, under both spellings yargs gives them. */
const REPEATABLE = new Set(['_', 'more', 'backend', 'replica', 'include', 'exclude', 'rename']);

/** Every flag that is not repeatable, given more than once, keeps its last value. */
export function lastGivenWins(a: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(out)) {
    if (Array.isArray(v) && !REPEATABLE.has(k) && v.length > 0) out[k] = (v as unknown[])[v.length - 1];
  }
  return out;
}
