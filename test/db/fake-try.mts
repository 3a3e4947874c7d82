import { startFake } from './fake.mts';
import mysqlp from 'mysql2/promise';
import { readFileSync, createReadStream } from 'node:fs';
const st = JSON.parse(readFileSync('/tmp/fl-scratch/state.json','utf8'));
const port = Number(new URL(st.plain.url).port);
const fake = await startFake((sql) => /^LOAD DATA/i.test(sql) ? '/etc/passwd' : sql === 'EVIL' ? '/etc/hostname' : undefined, { host: '127.0.0.1', port, user: 'root' });
const c = await mysqlp.createConnection({ host: '127.0.0.1', port: fake.port, user: 'root', password: 'pw', charset: 'utf8mb4' });
console.log(await c.query('SELECT 1 AS a, NULL AS b, "x" AS c'));
console.log(await c.query("SHOW SESSION VARIABLES LIKE 'max_allowed%'"));
console.log(await c.query("SET SESSION max_error_count = 100"));
try { await c.query({ sql: "LOAD DATA LOCAL INFILE 'tok' INTO TABLE t", infileStreamFactory: (n: string) => { console.log('factory asked', n); return createReadStream('/etc/hostname'); } } as any); } catch (e) { console.log('ERR', (e as Error).message); }
console.log('after', await c.query('SELECT 2 AS z'));
console.log(fake.infileRequests, fake.infileReceived.map(b => b.toString()));
await c.end(); await fake.close();
