/**
 * Child process for the spill directory tests (not a test file itself):
 * opens a spill directory, registers cleanupOnExit, writes a file, says
 * "ready" and then does what argv[3] says.
 *   wait      wait to be signalled (default signal handling)
 *   handled   the process has its own SIGINT handler, which exits 7 later
 *   exit      exit normally at once
 *   keep      unregister the cleanup, then exit
 */
import { writeFileSync } from 'node:fs';
import { cleanupOnExit, SpillDir } from '../../src/order/spillDir.js';

const [tmp, mode] = process.argv.slice(2);
const dir = await SpillDir.open({ jobId: 'child', tmpdir: tmp });
const unregister = cleanupOnExit(dir);
writeFileSync(dir.file('run-000000.bin'), 'x');
if (mode === 'handled') process.on('SIGINT', () => setTimeout(() => process.exit(7), 50));
process.stdout.write('ready\n');
if (mode === 'exit') process.exit(0);
if (mode === 'keep') {
  unregister();
  process.exit(0);
}
setInterval(() => undefined, 1000);
