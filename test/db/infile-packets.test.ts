/**
 * LOCAL INFILE data written to the socket by flatload (src/db/infilePackets.ts)
 * against the real server and the mysql2 of the lockfile: the driver still has
 * what the writer needs (else loads fall back to the driver's own, copying path),
 * pieces of any size arrive whole and in order, and the connection stays in step
 * for the statements after.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { openPool } from '../../src/db/connect.js';
import { MAX_PAYLOAD, packetConnectionOf } from '../../src/db/infilePackets.js';
import { runLoadData } from '../../src/load/loadData.js';
import { selectRows } from '../../src/db/rows.js';
import { createTestDatabase, openTestSession, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let pool: Pool;

before(async () => {
  db = await createTestDatabase('packets');
  const { session, conn } = await openTestSession(db, { localInfile: true });
  conn.destroy();
  pool = openPool(session, 1, { localInfile: true });
  await db.conn.query('CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB');
});

after(async () => {
  await pool?.end();
  await db?.drop();
});

/** Rows k = from..to-1 as TSV. */
function rows(from: number, to: number): Buffer {
  let s = '';
  for (let k = from; k < to; k++) s += `${k}\tvalue ${k}\n`;
  return Buffer.from(s);
}

async function load(conn: PoolConnection, pieces: Buffer[]): Promise<number> {
  const r = await runLoadData({
    conn,
    sql: "LOAD DATA LOCAL INFILE 'piece-test' INTO TABLE t",
    fileToken: 'piece-test',
    open: () => Readable.from(pieces, { objectMode: true }),
    onBytes: () => undefined,
    maxWarnings: 10,
  });
  return r.affectedRows;
}

test('the lockfile mysql2 gives the writer its connection, and pieces of every size load whole', { timeout: 60_000 }, async () => {
  const conn = await pool.getConnection();
  try {
    assert.ok(packetConnectionOf(conn), 'mysql2 no longer exposes the sequence counter and socket: loads use its copying path');
    // Small pieces cut mid-row, an empty piece, and one larger than a packet (21 MB of rows).
    const big = rows(1000, 1_000_000);
    assert.ok(big.length > MAX_PAYLOAD);
    const head = rows(0, 1000);
    const pieces = [head.subarray(0, 7), head.subarray(7, 100), Buffer.alloc(0), head.subarray(100), big];
    assert.equal(await load(conn, pieces), 1_000_000);
    // The connection is in step: the next statements run and see the rows.
    const [sum] = await selectRows<{ n: string; s: string }>(conn, 'SELECT COUNT(*) AS n, SUM(k) AS s FROM t');
    assert.equal(Number(sum!.n), 1_000_000);
    assert.equal(Number(sum!.s), (999_999 * 1_000_000) / 2);
    const [odd] = await selectRows<{ v: string }>(conn, 'SELECT v FROM t WHERE k = 4099');
    assert.equal(odd!.v, 'value 4099');
    assert.equal(await load(conn, [rows(1_000_000, 1_000_010)]), 10);
  } finally {
    conn.release();
  }
});
