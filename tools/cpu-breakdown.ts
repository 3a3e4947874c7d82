/**
 * Where a load's client CPU goes: sums the self time of a V8 CPU profile
 * (`node --cpu-prof`) into the stages of the pipeline, per GB of input.
 *
 *   node --cpu-prof --cpu-prof-dir=prof dist/src/cli/main.js load FILE --table T --jobs 2
 *   node --import tsx tools/cpu-breakdown.ts prof/*.cpuprofile --bytes $(stat -c %s FILE)
 *   node --import tsx tools/cpu-breakdown.ts prof/*.cpuprofile --bytes N --from 0.6 --to 2.6
 *   node --import tsx tools/cpu-breakdown.ts prof/*.cpuprofile --timeline 0.25
 *
 * `--from`/`--to` (seconds from the profile's start) keep one phase of the
 * load; `--timeline S` prints, per S seconds, the busy time and its largest
 * stage, which is where the phases (start-up, the scan, the sort, the load)
 * show, and how long the server waited for the client before its first row.
 *
 * A profile covers JavaScript and the native calls it makes on its thread;
 * GC helper threads, libuv's file I/O threads and the kernel's side of the
 * socket are not in it, which is why the total is below the process's CPU.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Seconds from the profile's start, [from, to). */
export interface Window {
  from: number;
  to: number;
}

/** [stage, test on "functionName url"] in order: the first match names a sample's stage. */
export const STAGES: Array<[string, RegExp]> = [
  ['idle (waiting for the server or the disk)', /^\(idle\) /],
  ['garbage collection', /^\(garbage collector\) /],
  ['start-up (module loading and compiling)', /node:internal\/(modules|bootstrap)|^(compileSourceTextModule|wrapSafe|compileFunction|compileForInternalLoader) /],
  ['run compression (zstd)', /^(compressBlock|compressBlockInto|compressInto|encodeSync|compress2|compress) /],
  ['run decompression (zstd)', /^(decompressBlockInto|decompressInto|decodeSync|decompress) /],
  ['gathering records into key order (run writing)', /\/order\/runFile\.js/],
  ['key parsing', /\/order\/key\.js|^(integerKeys|plainInteger) /],
  ['sorting keys', /^(sortIntegers|radixSort\w*|sortChunk|sortRun) |\/order\/(radix|sortChunk|sortRun|sorters|temporal)\.js/],
  ['merging (cursors, heap, chunk assembly)', /\/order\/(merge|cursor|heap|copy|runs|split|manifest|spillDir)\.js|\/load\/orderedInput\.js/],
  ['planning (sampling the input, reading the server)', /\/(introspect|plan)\/|^isUtf8 /],
  ['scanning for record boundaries', /\/chunking\//],
  ['hashing the input (identity, chunk checks)', /crypto|\/input\/digest\.js|^(update|digest) (node:internal\/crypto|$)/],
  ['packet assembly and sending (mysql2, socket)', /node_modules\/mysql2|\/load\/(loadData|loadDataExecutor)\.js|^(writeBuffer|writev|writeGeneric|_copyActual|onwrite) |node:(net|internal\/stream_base_commons)/],
  ['file reads', /^(read|fstat|open|close|openFileHandle|readFileHandle) |node:internal\/fs/],
  ['bookkeeping (checkpoint, progress, report)', /\/(checkpoint|report|job)\/|node_modules\/cli-progress/],
  ['streams and the event loop', /node:internal\/(streams|process|timers|event_target|async_hooks)|node:events|^\(program\) /],
];

export function stageOf(functionName: string, url: string): string {
  const name = `${functionName || '(anonymous)'} ${url}`;
  for (const [stage, re] of STAGES) if (re.test(name)) return stage;
  return 'other';
}

/** Each sample: microseconds from the profile's start, its stage and its self time. */
function* samples(p: Profile): Generator<{ at: number; stage: string; us: number }> {
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  let at = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const us = p.timeDeltas[i] ?? 0;
    at += us;
    const cf = byId.get(p.samples[i]!);
    if (cf) yield { at, stage: stageOf(cf.functionName, cf.url), us };
  }
}

function add(m: Map<string, number>, stage: string, us: number): void {
  m.set(stage, (m.get(stage) ?? 0) + us);
}

/** Microseconds of self time per stage, of the samples taken within `window` (all when none). */
export function breakdown(p: Profile, window?: Window): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples(p)) if (!window || (s.at >= window.from * 1e6 && s.at < window.to * 1e6)) add(out, s.stage, s.us);
  return out;
}

const IDLE = STAGES[0]![0];

/** Per `step` seconds: busy seconds and the stage that took most of them. */
function timeline(p: Profile, step: number): void {
  const buckets: Array<Map<string, number>> = [];
  for (const s of samples(p)) add((buckets[Math.floor(s.at / (step * 1e6))] ??= new Map()), s.stage, s.us);
  console.log('| from s | busy s | largest stage | its s |');
  console.log('|---:|---:|---|---:|');
  for (let k = 0; k < buckets.length; k++) {
    const b = [...(buckets[k] ?? [])].filter(([stage]) => stage !== IDLE).sort((x, y) => y[1] - x[1]);
    const busy = b.reduce((a, [, v]) => a + v, 0);
    const top = b[0];
    console.log(`| ${(k * step).toFixed(2)} | ${(busy / 1e6).toFixed(2)} | ${top ? top[0] : '(idle)'} | ${top ? (top[1] / 1e6).toFixed(2) : ''} |`);
  }
}

function main(argv: string[]): void {
  const value = (flag: string): number | undefined => {
    const at = argv.indexOf(flag);
    return at >= 0 ? Number(argv[at + 1]) : undefined;
  };
  const valued = new Set(['--bytes', '--from', '--to', '--timeline'].map((f) => argv.indexOf(f) + 1).filter((i) => i > 0));
  const files = argv.filter((a, i) => !a.startsWith('--') && !valued.has(i));
  const profiles = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Profile);
  const step = value('--timeline');
  if (profiles.length > 0 && step !== undefined && step > 0) {
    for (const p of profiles) timeline(p, step);
    return;
  }
  const bytes = value('--bytes') ?? NaN;
  if (profiles.length === 0 || !(bytes > 0)) throw new Error('usage: node --import tsx tools/cpu-breakdown.ts PROFILE... (--bytes INPUT_BYTES [--from S] [--to S] | --timeline S)');
  const window = { from: value('--from') ?? 0, to: value('--to') ?? Number.POSITIVE_INFINITY };
  const total = new Map<string, number>();
  for (const p of profiles) for (const [k, v] of breakdown(p, window)) total.set(k, (total.get(k) ?? 0) + v);
  const busy = [...total].filter(([k]) => !k.startsWith('idle')).reduce((a, [, v]) => a + v, 0);
  const gb = bytes / 1e9;
  console.log('| stage | CPU s | s per GB | share of busy |');
  console.log('|---|---:|---:|---:|');
  for (const [k, v] of [...total].sort((a, b) => b[1] - a[1])) {
    if (k.startsWith('idle')) continue;
    console.log(`| ${k} | ${(v / 1e6).toFixed(2)} | ${(v / 1e6 / gb).toFixed(2)} | ${((100 * v) / busy).toFixed(1)}% |`);
  }
  console.log(`| all busy samples | ${(busy / 1e6).toFixed(2)} | ${(busy / 1e6 / gb).toFixed(2)} | 100% |`);
  const idle = total.get(IDLE) ?? 0;
  console.log(`\n(idle on the profiled thread: ${(idle / 1e6).toFixed(2)} s)`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
