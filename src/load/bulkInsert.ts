/**
 * MariaDB's empty-table bulk insert (docs/rules.md#mariadb-empty-table-bulk-insert):
 * the load's one transaction, and what gives it up. Given up, it is rolled
 * back whole — the table is as empty as it was — and the job loads again by
 * chunks (job/run.ts), where bad rows are isolated and named.
 */
import type { PoolConnection } from 'mysql2/promise';
import { ER } from '../db/errnos.js';
import { selectNumber } from '../db/rows.js';
import { FlatloadError, type ErrorContext } from '../errors/index.js';

export function bulkAbandoned(why: string, context: ErrorContext = {}): FlatloadError {
  return new FlatloadError('BULK_ABANDONED', `MariaDB's bulk insert was given up and rolled back: ${why}`, context);
}

/**
 * Building the indexes found a duplicate in a UNIQUE one: 1180 "during COMMIT", which MariaDB 10.11
 * raises at the end of the statement, naming no row. The load by chunks will.
 */
export function bulkCommitFailure(err: FlatloadError): FlatloadError {
  if (err.context.serverErrno !== ER.ERROR_DURING_COMMIT) return err;
  return bulkAbandoned(`building its indexes failed (${err.message}), as it does for a duplicate key in a UNIQUE index`);
}

/** Innodb_bulk_operations: MariaDB counts a bulk insert when it begins, before its COMMIT (measured: docs/rules.md). */
function bulkOperations(conn: PoolConnection): Promise<number> {
  return selectNumber(conn, "SELECT VARIABLE_VALUE AS n FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_BULK_OPERATIONS'");
}

/**
 * Runs the load's first statement and checks the server took its bulk path.
 * Off it (another session's locks on the table, or rows in it), the session's
 * unique_checks=0 would let a duplicate in a UNIQUE secondary index in
 * unseen: the load is given up instead. Another session's bulk insert
 * starting at the same moment would hide a miss; nothing finer is readable
 * without the PROCESS privilege.
 */
export async function takingBulkPath<T>(conn: PoolConnection, chunk: number, load: () => Promise<T>): Promise<T> {
  const before = await bulkOperations(conn);
  const out = await load();
  if ((await bulkOperations(conn)) <= before) {
    throw bulkAbandoned('the server did not take its bulk path for the first chunk (another session held locks on the table, or it was not empty)', { chunk });
  }
  return out;
}
