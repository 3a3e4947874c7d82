import { randomBytes } from 'node:crypto';
import mysql, { type Connection } from 'mysql2/promise';
import { ddl } from '../../fixtures/generate.js';
import { resolveConnection } from '../../src/config/connection.js';
import { openSession, type OpenOptions } from '../../src/db/connect.js';

/** The server every database test talks to (set by test/run.ts or by the user). */
export function serverUrl(): string {
  const url = process.env['DATABASE_URL'];
  if (!url) throw new Error('DATABASE_URL is not set: run tests with `npm test`');
  return url;
}

export function hasRocksdb(): boolean {
  return process.env['FLATLOAD_TEST_ROCKSDB'] === '1';
}

/** A connection to the test server with LOCAL INFILE refused (tests use server-side LOAD DATA as the reference). */
export async function adminConnection(database?: string): Promise<Connection> {
  const u = new URL(serverUrl());
  return mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
    ...(database ? { database } : {}),
    multipleStatements: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    charset: 'utf8mb4',
    flags: ['-LOCAL_FILES'],
  });
}

export interface TestDatabase {
  name: string;
  /** DATABASE_URL pointing at this database. */
  url: string;
  conn: Connection;
  drop(): Promise<void>;
}

/** A fresh database with a unique name, so test files can run in parallel. */
export async function createTestDatabase(prefix = 't'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = await adminConnection();
  await admin.query(`CREATE DATABASE \`${name}\``);
  await admin.end();
  const conn = await adminConnection(name);
  const u = new URL(serverUrl());
  u.pathname = `/${name}`;
  return {
    name,
    url: u.toString(),
    conn,
    drop: async () => {
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      await conn.end().catch(() => undefined);
    },
  };
}

/** COUNT(*) and CHECKSUM TABLE, the pair every load test compares. */
export async function tableDigest(conn: Connection, table: string): Promise<{ count: string; checksum: string }> {
  const [c] = await conn.query(`SELECT COUNT(*) AS n FROM ${table}`);
  const [s] = await conn.query(`CHECKSUM TABLE ${table} EXTENDED`);
  return { count: String((c as Array<{ n: unknown }>)[0]!.n), checksum: String((s as Array<{ Checksum: unknown }>)[0]!.Checksum) };
}

/** Drops `name` and creates it again empty, with user_summary's definition (in `engine` if given, else the server's default). */
export async function freshUserSummary(conn: Connection, name: string, engine?: string): Promise<void> {
  await conn.query(`DROP TABLE IF EXISTS ${name}`);
  await conn.query(`${ddl('user_summary').replace('CREATE TABLE user_summary', `CREATE TABLE ${name}`)}${engine ? ` ENGINE=${engine}` : ''}`);
}

/** COUNT(*) of a table. */
export async function countRows(conn: Connection, name: string): Promise<number> {
  const [r] = await conn.query(`SELECT COUNT(*) AS n FROM ${name}`);
  return Number((r as Array<{ n: unknown }>)[0]!.n);
}

/** flatload's own session on the test database, as its loads open one (TLS off): for tests that drive its parts directly. */
export function openTestSession(db: TestDatabase, open: OpenOptions = {}): ReturnType<typeof openSession> {
  const u = new URL(db.url);
  const options = resolveConnection({ host: u.hostname, port: Number(u.port), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: db.name, sslMode: 'DISABLED' }, {}, new Map());
  return openSession(options, open);
}
