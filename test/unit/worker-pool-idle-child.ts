/** Starts a pool of the test worker, uses it `process.argv[2]` times, and leaves it open: the process must still exit. */
import { WorkerPool } from '../../src/order/workerPool.js';

const pool = new WorkerPool<number, number>(new URL('./worker-pool-child.ts', import.meta.url), 1);
for (let i = 0; i < Number(process.argv[2]); i++) await pool.run(i);
process.stdout.write('done\n');
