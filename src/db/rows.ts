import type { Queryable } from './control.js';

/**
 * The rows of a query, typed by the caller's description of its columns:
 * mysql2 returns them untyped, so this is the one place the description is
 * taken on trust.
 */
export async function selectRows<T>(conn: Queryable, sql: string, values?: unknown[]): Promise<T[]> {
  const [rows] = await conn.query(sql, values);
  return rows as T[];
}

/** The first row, if any. */
export async function selectOne<T>(conn: Queryable, sql: string, values?: unknown[]): Promise<T | undefined> {
  return (await selectRows<T>(conn, sql, values))[0];
}

/** A single number: COUNT(*), GET_LOCK(), a flag (0 when there is no row). */
export async function selectNumber(conn: Queryable, sql: string, values?: unknown[]): Promise<number> {
  const row = await selectOne<Record<string, unknown>>(conn, sql, values);
  const v = row === undefined ? undefined : Object.values(row)[0];
  return v === undefined || v === null ? 0 : Number(v);
}
