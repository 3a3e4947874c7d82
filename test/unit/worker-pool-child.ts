/** A worker for the pool's tests: echoes a number doubled, fails a FlatloadError on -1, dies on -2. */
import { parentPort } from 'node:worker_threads';
import { FlatloadError } from '../../src/errors/index.js';
import { toWire } from '../../src/order/workerPool.js';

parentPort!.on('message', (n: number) => {
  if (n === -2) throw new Error('died on purpose');
  if (n === -1) parentPort!.postMessage({ error: toWire(new FlatloadError('INPUT_MALFORMED', 'bad input', { line: 7, byteOffset: 99 })) });
  else parentPort!.postMessage({ ok: n * 2 });
});
