import { spawnSync } from 'node:child_process';
import type { Connection } from 'mysql2/promise';
import { serverCpuSeconds } from './measure.js';

export interface Settled {
  /** Time spent waiting for the server to come to rest. */
  seconds: number;
  /** Dirty InnoDB pages and checkpoint age (bytes of redo not yet checkpointed) found when the wait began. */
  dirtyPagesBefore: number;
  checkpointAgeBefore: number;
  /** False when a limit ran out first: the run that follows may pay for its predecessor. */
  quiet: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function status(admin: Connection, names: string[]): Promise<Map<string, number>> {
  const [rows] = await admin.query(
    `SELECT VARIABLE_NAME AS k, VARIABLE_VALUE AS v FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN (${names.map(() => '?').join(',')})`,
    names,
  );
  return new Map((rows as Array<{ k: string; v: string }>).map((r) => [r.k.toUpperCase(), Number(r.v)]));
}

async function hasRocksdb(admin: Connection): Promise<boolean> {
  const [rows] = await admin.query("SELECT SUPPORT AS s FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'");
  return (rows as Array<{ s: string }>).some((r) => r.s === 'YES' || r.s === 'DEFAULT');
}

/**
 * Brings the server to rest before a measured run, so no run pays for the
 * work its predecessor left behind: InnoDB's dirty pages written back
 * (innodb_max_dirty_pages_pct = 0 makes the page cleaner flush all of them,
 * a raised innodb_io_capacity makes it quick), the redo checkpoint caught up
 * with them, purge finished, MyRocks' memtables flushed, the OS's dirty file
 * pages synced, and — when the server's process is ours to watch — mariadbd
 * using no CPU for a full second (statistics recalculation, MyRocks
 * compactions and the background drop of a table's files all show up there,
 * not in any status variable). The server's settings are restored before
 * returning.
 */
export async function settle(admin: Connection, serverPid: number | undefined, limitSeconds = 180): Promise<Settled> {
  const t0 = Date.now();
  const [v] = await admin.query(
    'SELECT @@GLOBAL.innodb_max_dirty_pages_pct AS pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm AS lwm, @@GLOBAL.innodb_io_capacity AS io, @@GLOBAL.innodb_io_capacity_max AS iomax',
  );
  const saved = (v as Array<{ pct: number; lwm: number; io: number; iomax: number }>)[0]!;
  const rocksdb = await hasRocksdb(admin);
  if (rocksdb) await admin.query('SET GLOBAL rocksdb_force_flush_memtable_now = 1');
  const keys = ['INNODB_BUFFER_POOL_PAGES_DIRTY', 'INNODB_CHECKPOINT_AGE', 'INNODB_HISTORY_LIST_LENGTH'];
  const first = await status(admin, keys);
  const out: Settled = {
    seconds: 0,
    dirtyPagesBefore: first.get(keys[0]!) ?? 0,
    checkpointAgeBefore: first.get(keys[1]!) ?? 0,
    quiet: false,
  };
  // io_capacity_max first: io_capacity may not exceed it.
  await admin.query('SET GLOBAL innodb_io_capacity_max = 100000, innodb_io_capacity = 50000, innodb_max_dirty_pages_pct_lwm = 0, innodb_max_dirty_pages_pct = 0');
  try {
    // A checkpoint writes a few bytes of redo itself: "caught up" is an age of a few hundred bytes, not 0.
    for (;;) {
      const s = await status(admin, keys);
      if ((s.get(keys[0]!) ?? 0) === 0 && (s.get(keys[1]!) ?? 0) < 4096 && (s.get(keys[2]!) ?? 0) === 0) break;
      if (Date.now() - t0 > limitSeconds * 1000) return { ...out, seconds: (Date.now() - t0) / 1000 };
      await sleep(100);
    }
  } finally {
    await admin.query(
      `SET GLOBAL innodb_max_dirty_pages_pct = ${Number(saved.pct)}, innodb_max_dirty_pages_pct_lwm = ${Number(saved.lwm)}, innodb_io_capacity = ${Number(saved.io)}, innodb_io_capacity_max = ${Number(saved.iomax)}`,
    );
  }
  spawnSync('sync');
  let quietFor = 0;
  let cpu = serverCpuSeconds(serverPid);
  while (cpu !== null && quietFor < 1000) {
    if (Date.now() - t0 > limitSeconds * 1000) return { ...out, seconds: (Date.now() - t0) / 1000 };
    await sleep(500);
    const now = serverCpuSeconds(serverPid);
    if (now === null) break;
    // At most one clock tick in half a second (2% of a core): the server's idle timers, nothing else.
    quietFor = now - cpu <= 0.011 ? quietFor + 500 : 0;
    cpu = now;
  }
  return { ...out, seconds: (Date.now() - t0) / 1000, quiet: true };
}
