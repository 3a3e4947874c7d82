/**
 * A primary with its binary log on and a second MariaDB replicating from it,
 * both throwaway servers started by the test, with the waits a replica test
 * needs (the SQL thread stopped or running, the replica caught up), each with
 * a deadline.
 */
import mysql, { type Connection } from 'mysql2/promise';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
import { pollUntil } from './poll.js';

export interface ReplicaPair {
  primary: ThrowawayServer;
  replica: ThrowawayServer;
  /** root on the primary and on the replica. */
  p: Connection;
  r: Connection;
  /** Stops or starts the replica's SQL thread and waits until SHOW SLAVE STATUS says so. */
  sqlThread(state: 'Yes' | 'No'): Promise<void>;
  /** Waits until the replica has applied everything the primary logged so far. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

export const connectRoot = (s: ThrowawayServer): Promise<Connection> =>
  mysql.createConnection({ host: s.host, port: s.port, user: 'root', supportBigNumbers: true, bigNumberStrings: true, flags: ['-LOCAL_FILES'] });

export async function startReplicaPair(): Promise<ReplicaPair> {
  const small = { innodbBufferPoolSize: '64M', innodbLogFileSize: '48M' };
  const primary = await startThrowawayServer({ ...small, extraArgs: ['--log-bin=primary-bin', '--server-id=1', '--binlog-format=ROW'] });
  let replica: ThrowawayServer | undefined;
  try {
    replica = await startThrowawayServer({ ...small, extraArgs: ['--server-id=2', '--skip-slave-start'] });
  } catch (e) {
    await primary.stop();
    throw e;
  }
  const p = await connectRoot(primary);
  const r = await connectRoot(replica);

  const sqlThread = async (state: 'Yes' | 'No'): Promise<void> => {
    await r.query(state === 'Yes' ? 'START SLAVE SQL_THREAD' : 'STOP SLAVE SQL_THREAD');
    await pollUntil(`the replica's SQL thread ${state === 'Yes' ? 'running' : 'stopped'}`, async () => {
      const [rows] = await r.query('SHOW SLAVE STATUS');
      return (rows as Array<{ Slave_SQL_Running: string }>)[0]?.Slave_SQL_Running === state;
    }, { everyMs: 50, timeoutMs: 30_000 });
  };

  const caughtUp = async (): Promise<void> => {
    const [m] = await p.query('SHOW MASTER STATUS');
    const { File, Position } = (m as Array<{ File: string; Position: string }>)[0]!;
    await pollUntil('the replica caught up with the primary', async () => {
      const [rows] = await r.query('SHOW SLAVE STATUS');
      const s = (rows as Array<{ Relay_Master_Log_File: string; Exec_Master_Log_Pos: string }>)[0]!;
      return s.Relay_Master_Log_File === File && Number(s.Exec_Master_Log_Pos) >= Number(Position);
    }, { everyMs: 100, timeoutMs: 60_000 });
  };

  const [m] = await p.query('SHOW MASTER STATUS');
  const { File, Position } = (m as Array<{ File: string; Position: string }>)[0]!;
  await r.query(`CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='root', MASTER_PASSWORD='', MASTER_LOG_FILE='${File}', MASTER_LOG_POS=${Position}, MASTER_USE_GTID=no`);
  await r.query('START SLAVE');

  const stop = async (): Promise<void> => {
    await p.end().catch(() => undefined);
    await r.end().catch(() => undefined);
    await replica.stop();
    await primary.stop();
  };
  return { primary, replica, p, r, sqlThread, caughtUp, stop };
}
