/**
 * Differential fuzzing against the server-validated emulator: the corpus
 * chunking-fuzz.json (made by tools/chunking-fuzz-gen.py, which documents how to
 * regenerate it or run a bigger one via FLATLOAD_FUZZ_CORPUS) holds random
 * inputs and options with the record ends MariaDB's reader finds. The scanner
 * and the cutter must find exactly those.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cutCase, describe, readCases, rng, scanCase, type ScanCase } from './chunking-support.js';

const extra = process.env['FLATLOAD_FUZZ_CORPUS'];
const cases: ScanCase[] = extra ? readCases(pathToFileURL(extra).href) : readCases('./chunking-fuzz.json');

function report(failures: string[]): void {
  if (failures.length) assert.fail(`${failures.length} of ${cases.length} cases differ from the server:\n${failures.slice(0, 12).join('\n')}`);
}

test('corpus is big enough to mean something', () => {
  assert.ok(cases.length >= 300, `only ${cases.length} cases`);
  assert.ok(cases.some((c) => c.openQuote !== null));
  assert.ok(cases.some((c) => c.ignore > 0));
  assert.ok(new Set(cases.map((c) => c.charset)).size >= 8);
});

test('RecordScanner finds the record ends and open quotes the server does', () => {
  const failures: string[] = [];
  for (const c of cases) {
    const got = scanCase(c);
    const open = got.openQuote ?? null;
    if (JSON.stringify(got.ends) !== JSON.stringify(c.ends) || open !== c.openQuote) {
      failures.push(`  ${describe(c)}\n    expected ends ${JSON.stringify(c.ends)} open ${c.openQuote}, got ${JSON.stringify(got.ends)} open ${open}`);
    }
  }
  report(failures);
});

test('cutChunks: one record per chunk over tiny and odd blocks gives the same ends', async () => {
  const rand = rng(42);
  const failures: string[] = [];
  for (const c of cases) {
    const block = [1, 2, 3, 4, 5, 7, 13, 1 << 16][Math.floor(rand() * 8)]!;
    const r = await cutCase(c, 1, block);
    const ends = r.chunks.map((ch) => ch.endByte);
    let bad: string | undefined;
    if (c.openQuote !== null) {
      if (r.error?.code !== 'INPUT_MALFORMED' || r.error.context.byteOffset !== c.openQuote) bad = `expected unterminated quote at ${c.openQuote}, got ${String(r.error)}`;
      else if (JSON.stringify(ends) !== JSON.stringify(c.ends.slice(0, ends.length))) bad = `ends before the error ${JSON.stringify(ends)}`;
    } else if (r.error) bad = `unexpected ${String(r.error)}`;
    else if (JSON.stringify(ends) !== JSON.stringify(c.ends)) bad = `got ${JSON.stringify(ends)}`;
    if (bad) failures.push(`  ${describe(c)} block=${block}\n    expected ${JSON.stringify(c.ends)}: ${bad}`);
  }
  report(failures);
});

test('cutChunks: any chunk size cuts only at server record ends', async () => {
  const rand = rng(7);
  const failures: string[] = [];
  for (const c of cases) {
    if (c.openQuote !== null) continue;
    const len = c.hex.length / 2;
    const size = 1 + Math.floor(rand() * (len + 1));
    const block = 1 + Math.floor(rand() * 9);
    const r = await cutCase(c, size, block);
    const ends = new Set(c.ends);
    const bad = r.error ? String(r.error) : r.chunks.find((ch) => !ends.has(ch.endByte));
    const total = r.chunks.reduce((s, ch) => s + ch.records, 0);
    if (bad !== undefined || total !== c.ends.length) {
      failures.push(`  ${describe(c)} chunk=${size} block=${block}: ${JSON.stringify(r.chunks.map((ch) => [ch.startByte, ch.endByte, ch.records]))} vs ${JSON.stringify(c.ends)}`);
    }
  }
  report(failures);
});
