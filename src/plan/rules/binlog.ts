/**
 * Whether the load's rows go to the binary log (`--binlog on|off`, default
 * the server's own setting). `off` is `SET SESSION sql_log_bin = 0` on every
 * loading connection (and the load's control connection, so its TRUNCATE,
 * shadow table and RENAME stay off the log too: a replica that got the
 * RENAME without the rows would swap in an empty table). It needs BINLOG
 * ADMIN on MariaDB 10.5.2+ (MDEV-21957), SUPER before and on MySQL
 * (plan/needs.ts), checked before anything changes. Pure.
 */
import type { ServerFacts } from '../../introspect/types.js';
import { FlatloadError } from '../../errors/index.js';
import { step, type Step } from '../ops.js';

export type BinlogChoice = 'on' | 'off' | undefined;

export interface BinlogDecision {
  session: Step[];
  reason: string;
  warnings: string[];
}

const isOn = (v: string | undefined): boolean => ['1', 'ON'].includes(String(v ?? '').toUpperCase());

/** log_bin, and sql_log_bin as sessions start with it. */
function binlogSettings(server: ServerFacts): { logBin: boolean; sessionOn: boolean } {
  return { logBin: isOn(server.variables['log_bin']), sessionOn: server.variables['sql_log_bin'] === undefined || isOn(server.variables['sql_log_bin']) };
}

/** Whether the load's rows reach the binary log (and so the replicas). */
export function writesBinlog(server: ServerFacts, choice: BinlogChoice): boolean {
  const { logBin, sessionOn } = binlogSettings(server);
  return logBin && choice !== 'off' && (choice === 'on' || sessionOn);
}

export function planBinlog(server: ServerFacts, choice: BinlogChoice, galera: boolean): BinlogDecision {
  const { logBin, sessionOn } = binlogSettings(server);
  const state = `log_bin=${logBin ? 'ON' : 'OFF'}, sql_log_bin=${sessionOn ? 'ON' : 'OFF'}`;
  const galeraNote = galera ? '; on a Galera cluster sql_log_bin does not stop the rows from replicating to the other nodes' : '';
  if (choice === 'off') {
    if (!logBin) return { session: [], reason: `binary log: off, as asked (--binlog off); the server writes none anyway (${state})${galeraNote}`, warnings: [] };
    return {
      session: [step({ kind: 'set-session', name: 'sql_log_bin', value: '0' }, '--binlog off: the load is not written to the binary log')],
      reason: `binary log: off (--binlog off): SET SESSION sql_log_bin = 0 on every connection of the load (the server has ${state})${galeraNote}`,
      warnings: ['--binlog off: the rows (and this load\'s TRUNCATE, shadow table and RENAME) are not written to the binary log, so replicas will not receive them: load the replicas yourself, or they stay as they were'],
    };
  }
  if (choice === 'on' && !logBin) {
    throw new FlatloadError('UNSUPPORTED', `--binlog on: the server writes no binary log (log_bin=OFF), so replicas would not receive the rows`, { hint: 'leave out --binlog to load without one, or enable log_bin on the server' });
  }
  if (choice === 'on' && !sessionOn) {
    return {
      session: [step({ kind: 'set-session', name: 'sql_log_bin', value: '1' }, '--binlog on: the account\'s sessions start with sql_log_bin=0')],
      reason: `binary log: on (--binlog on): SET SESSION sql_log_bin = 1, since sessions start with it off (${state})`,
      warnings: [],
    };
  }
  const why = choice === 'on' ? 'as asked (--binlog on)' : "the server's own setting (--binlog off leaves the rows out of it)";
  return { session: [], reason: `binary log: ${logBin && sessionOn ? 'on, replicas receive the rows' : 'off'}, ${why} (${state})${galeraNote}`, warnings: [] };
}
