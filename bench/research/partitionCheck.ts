/**
 * Verifies src/shard/partition.ts against the server: for each rule below it
 * creates a partitioned InnoDB table, loads generated keys with LOAD DATA
 * LOCAL (the path the loader's rows take), reads back which partition holds
 * each row (`SELECT … PARTITION (pN)`), and compares with partitionIndex().
 * Also reads latin1_swedish_ci's weights with WEIGHT_STRING and compares them
 * with the table keyHash.ts uses. Prints a summary per rule; with --fixture
 * FILE it writes a sample of the verified cases for the unit tests.
 *
 * Run: `node --import tsx bench/research/partitionCheck.ts [--fixture test/unit/fixtures/partition-cases.json]`
 * (a throwaway server is started unless DATABASE_URL is set).
 */
import { writeFileSync } from 'node:fs';
import mysql, { type Connection, type ResultSetHeader } from 'mysql2/promise';
import { Readable } from 'node:stream';
import { startThrowawayServer, type ThrowawayServer } from '../../src/devserver/server.js';
import { LATIN1_SWEDISH_CI_WEIGHTS, type KeyColumn } from '../../src/shard/keyHash.js';
import { prng } from '../../fixtures/prng.js';
import { partitionIndex, type PartitionColumn, type PartitionRule, type RangeValue, type ListValue } from '../../src/shard/partition.js';

interface ColumnSpec {
  sql: string;
  type: KeyColumn;
  values: (n: number) => Array<string | null>;
}

function intValues(bytes: 1 | 2 | 3 | 4 | 8, unsigned: boolean, seed: number): (n: number) => Array<string | null> {
  return (n) => {
    const rnd = prng(seed);
    const bits = BigInt(bytes * 8);
    const lo = unsigned ? 0n : -(1n << (bits - 1n));
    const hi = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
    const span = hi - lo + 1n;
    const out: Array<string | null> = [lo, hi, 0n, 1n, 2n, 32n, 255n, 256n, 0x2020n, 8224n, 538976288n, hi - 1n, lo + 1n].filter((v) => v >= lo && v <= hi).map(String);
    out.push(null, '007', '+5', '-0', '000');
    while (out.length < n) {
      const r = rnd();
      let v: bigint;
      if (r < 0.3) v = BigInt(Math.floor(rnd() * 2000)) - (unsigned ? 0n : 1000n);
      else if (r < 0.4) {
        // bytes that are spaces (0x20) at the end: the ALGORITHM=2 trailing-space rule
        v = BigInt(Math.floor(rnd() * 256)) | (0x20n << 8n);
      } else {
        const x = (BigInt(Math.floor(rnd() * 2 ** 32)) << 32n) | BigInt(Math.floor(rnd() * 2 ** 32));
        v = lo + (x % span);
      }
      if (v >= lo && v <= hi) out.push(String(v));
    }
    return out;
  };
}

const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !#$%&()*+,-./:;<=>?@[]^_`{|}~';

function stringValues(maxChars: number, seed: number): (n: number) => Array<string | null> {
  return (n) => {
    const rnd = prng(seed);
    const out: Array<string | null> = ['', ' ', 'a', 'A', 'a ', 'abc', 'ABC', 'abc  ', 'Zz', null, 'é', 'straße', '東京', 'x'.repeat(maxChars)];
    while (out.length < n) {
      const len = Math.floor(rnd() * (maxChars + 1));
      let s = '';
      for (let i = 0; i < len; i++) s += ASCII[Math.floor(rnd() * ASCII.length)];
      out.push(s);
    }
    return out;
  };
}

const INT_TYPES: Array<{ sql: string; bytes: 1 | 2 | 3 | 4 | 8 }> = [
  { sql: 'TINYINT', bytes: 1 },
  { sql: 'SMALLINT', bytes: 2 },
  { sql: 'MEDIUMINT', bytes: 3 },
  { sql: 'INT', bytes: 4 },
  { sql: 'BIGINT', bytes: 8 },
];

interface Case {
  name: string;
  columns: ColumnSpec[];
  partitionBy: string;
  rule: Omit<PartitionRule, 'columns'>;
  rows: number;
}

function intColumn(t: { sql: string; bytes: 1 | 2 | 3 | 4 | 8 }, unsigned: boolean, seed: number): ColumnSpec {
  return { sql: `${t.sql}${unsigned ? ' UNSIGNED' : ''}`, type: { kind: 'int', bytes: t.bytes, unsigned }, values: intValues(t.bytes, unsigned, seed) };
}

function cases(): Case[] {
  const out: Case[] = [];
  let seed = 1;
  for (const t of INT_TYPES) {
    for (const unsigned of [false, true]) {
      const col = (): ColumnSpec => intColumn(t, unsigned, seed++);
      const label = `${t.sql}${unsigned ? ' UNSIGNED' : ''}`;
      out.push({ name: `KEY ${label} /5`, columns: [col()], partitionBy: 'KEY (k0) PARTITIONS 5', rule: { method: 'KEY', expression: '`k0`', partitionCount: 5, keyAlgorithm: 2 }, rows: 3000 });
      out.push({ name: `KEY ALGORITHM=1 ${label} /7`, columns: [col()], partitionBy: 'KEY ALGORITHM=1 (k0) PARTITIONS 7', rule: { method: 'KEY', expression: '`k0`', partitionCount: 7, keyAlgorithm: 1 }, rows: 2000 });
      out.push({ name: `LINEAR KEY ${label} /6`, columns: [col()], partitionBy: 'LINEAR KEY (k0) PARTITIONS 6', rule: { method: 'LINEAR KEY', expression: '`k0`', partitionCount: 6, keyAlgorithm: 2 }, rows: 2000 });
      out.push({ name: `HASH ${label} /4`, columns: [col()], partitionBy: 'HASH (k0) PARTITIONS 4', rule: { method: 'HASH', expression: '`k0`', partitionCount: 4 }, rows: 2000 });
      out.push({ name: `HASH ${label} /3`, columns: [col()], partitionBy: 'HASH (k0) PARTITIONS 3', rule: { method: 'HASH', expression: '`k0`', partitionCount: 3 }, rows: 2000 });
      out.push({ name: `LINEAR HASH ${label} /5`, columns: [col()], partitionBy: 'LINEAR HASH (k0) PARTITIONS 5', rule: { method: 'LINEAR HASH', expression: '`k0`', partitionCount: 5 }, rows: 2000 });
    }
  }
  for (const parts of [2, 3, 8, 16]) {
    out.push({ name: `KEY BIGINT UNSIGNED /${parts}`, columns: [intColumn(INT_TYPES[4]!, true, seed++)], partitionBy: `KEY (k0) PARTITIONS ${parts}`, rule: { method: 'KEY', expression: '`k0`', partitionCount: parts, keyAlgorithm: 2 }, rows: 3000 });
    out.push({ name: `KEY INT /${parts}`, columns: [intColumn(INT_TYPES[3]!, false, seed++)], partitionBy: `KEY (k0) PARTITIONS ${parts}`, rule: { method: 'KEY', expression: '`k0`', partitionCount: parts, keyAlgorithm: 2 }, rows: 3000 });
  }
  const strings: Array<{ sql: string; type: KeyColumn }> = [
    { sql: 'VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci', type: { kind: 'string', collation: 'utf8mb4_general_ci', maxChars: 20 } },
    { sql: 'CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci', type: { kind: 'string', collation: 'utf8mb4_general_ci', maxChars: 10 } },
    { sql: 'VARCHAR(20) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci', type: { kind: 'string', collation: 'utf8mb3_general_ci', maxChars: 20 } },
    { sql: 'VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', type: { kind: 'string', collation: 'utf8mb4_bin', maxChars: 20 } },
    { sql: 'VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci', type: { kind: 'string', collation: 'latin1_swedish_ci', maxChars: 20 } },
    { sql: 'VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_bin', type: { kind: 'string', collation: 'latin1_bin', maxChars: 20 } },
    { sql: 'VARBINARY(20)', type: { kind: 'binary', maxBytes: 20, fixed: false } },
    { sql: 'BINARY(8)', type: { kind: 'binary', maxBytes: 8, fixed: true } },
  ];
  for (const s of strings) {
    const maxChars = s.type.kind === 'string' ? s.type.maxChars : s.type.kind === 'binary' ? s.type.maxBytes : 0;
    const col = (): ColumnSpec => ({ sql: s.sql, type: s.type, values: stringValues(maxChars, seed++) });
    out.push({ name: `KEY ${s.sql} /5`, columns: [col()], partitionBy: 'KEY (k0) PARTITIONS 5', rule: { method: 'KEY', expression: '`k0`', partitionCount: 5, keyAlgorithm: 2 }, rows: 3000 });
    out.push({ name: `KEY ALGORITHM=1 ${s.sql} /3`, columns: [col()], partitionBy: 'KEY ALGORITHM=1 (k0) PARTITIONS 3', rule: { method: 'KEY', expression: '`k0`', partitionCount: 3, keyAlgorithm: 1 }, rows: 1500 });
    out.push({ name: `LINEAR KEY ${s.sql} /4`, columns: [col()], partitionBy: 'LINEAR KEY (k0) PARTITIONS 4', rule: { method: 'LINEAR KEY', expression: '`k0`', partitionCount: 4, keyAlgorithm: 2 }, rows: 1500 });
  }
  out.push({
    name: 'KEY (INT, VARCHAR utf8mb4_general_ci) /7',
    columns: [intColumn(INT_TYPES[3]!, false, seed++), { sql: strings[0]!.sql, type: strings[0]!.type, values: stringValues(20, seed++) }],
    partitionBy: 'KEY (k0, k1) PARTITIONS 7',
    rule: { method: 'KEY', expression: '`k0`,`k1`', partitionCount: 7, keyAlgorithm: 2 },
    rows: 3000,
  });
  out.push({
    name: 'KEY (BIGINT UNSIGNED, SMALLINT) /9',
    columns: [intColumn(INT_TYPES[4]!, true, seed++), intColumn(INT_TYPES[1]!, false, seed++)],
    partitionBy: 'KEY (k0, k1) PARTITIONS 9',
    rule: { method: 'KEY', expression: '`k0`,`k1`', partitionCount: 9, keyAlgorithm: 2 },
    rows: 3000,
  });
  const rangeBounds: RangeValue[][] = [[-100n], [0n], [1000n], ['MAXVALUE']];
  out.push({
    name: 'RANGE INT',
    columns: [intColumn(INT_TYPES[3]!, false, seed++)],
    partitionBy: 'RANGE (k0) (PARTITION p0 VALUES LESS THAN (-100), PARTITION p1 VALUES LESS THAN (0), PARTITION p2 VALUES LESS THAN (1000), PARTITION p3 VALUES LESS THAN MAXVALUE)',
    rule: { method: 'RANGE', expression: '`k0`', partitionCount: 4, rangeBounds },
    rows: 2000,
  });
  out.push({
    name: 'RANGE COLUMNS (INT, INT)',
    columns: [intColumn(INT_TYPES[0]!, false, seed++), intColumn(INT_TYPES[0]!, false, seed++)],
    partitionBy:
      'RANGE COLUMNS (k0, k1) (PARTITION p0 VALUES LESS THAN (0, 0), PARTITION p1 VALUES LESS THAN (0, MAXVALUE), PARTITION p2 VALUES LESS THAN (50, 10), PARTITION p3 VALUES LESS THAN (MAXVALUE, MAXVALUE))',
    rule: { method: 'RANGE COLUMNS', expression: '`k0`,`k1`', partitionCount: 4, rangeBounds: [[0n, 0n], [0n, 'MAXVALUE'], [50n, 10n], ['MAXVALUE', 'MAXVALUE']] },
    rows: 2000,
  });
  const lists: Array<ListValue[][] | 'default'> = [[[null], [0n], [1n], [2n]], [[-1n], [-2n], [3n]], 'default'];
  out.push({
    name: 'LIST TINYINT (NULL, DEFAULT)',
    columns: [intColumn(INT_TYPES[0]!, false, seed++)],
    partitionBy: 'LIST (k0) (PARTITION p0 VALUES IN (NULL, 0, 1, 2), PARTITION p1 VALUES IN (-1, -2, 3), PARTITION p2 DEFAULT)',
    rule: { method: 'LIST', expression: '`k0`', partitionCount: 3, listValues: lists },
    rows: 1500,
  });
  out.push({
    name: 'LIST COLUMNS (TINYINT, TINYINT) DEFAULT',
    columns: [intColumn(INT_TYPES[0]!, false, seed++), intColumn(INT_TYPES[0]!, false, seed++)],
    partitionBy: 'LIST COLUMNS (k0, k1) (PARTITION p0 VALUES IN ((0, 0), (1, 1), (NULL, NULL)), PARTITION p1 VALUES IN ((0, 1), (2, 2)), PARTITION p2 DEFAULT)',
    rule: { method: 'LIST COLUMNS', expression: '`k0`,`k1`', partitionCount: 3, listValues: [[[0n, 0n], [1n, 1n], [null, null]], [[0n, 1n], [2n, 2n]], 'default'] },
    rows: 1500,
  });
  return out;
}

function tsvField(v: string | null): string {
  return v === null ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
}

/** One rule and a sample of its rows with the partition the server chose (the unit tests' fixture). */
export interface VerifiedCase {
  name: string;
  partitionBy: string;
  rule: PartitionRule;
  rows: Array<{ values: Array<string | null>; partition: number }>;
}

async function checkCase(conn: Connection, c: Case, index: number, sample: VerifiedCase[]): Promise<Record<string, unknown>> {
  const table = `pc_${index}`;
  const cols = c.columns.map((col, i) => `k${i} ${col.sql} NULL`).join(', ');
  await conn.query(`DROP TABLE IF EXISTS ${table}`);
  await conn.query(`CREATE TABLE ${table} (seq INT NOT NULL, ${cols}) ENGINE=InnoDB PARTITION BY ${c.partitionBy}`);
  const columnValues = c.columns.map((col) => col.values(c.rows));
  const rows = Array.from({ length: c.rows }, (_, r) => columnValues.map((vals) => vals[r % vals.length] ?? null));
  const tsv = rows.map((vals, r) => [String(r), ...vals.map(tsvField)].join('\t')).join('\n') + '\n';
  const [res] = await conn.query<ResultSetHeader>({
    sql: `LOAD DATA LOCAL INFILE 'keys' INTO TABLE ${table} CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' (seq, ${c.columns.map((_, i) => `k${i}`).join(', ')})`,
    infileStreamFactory: () => Readable.from([Buffer.from(tsv, 'utf8')]),
  });
  const warned = new Set<number>();
  if (res.warningStatus > 0) {
    const [w] = await conn.query('SHOW WARNINGS LIMIT 1000');
    for (const x of w as Array<{ Message: string }>) {
      const m = /at row (\d+)/.exec(x.Message);
      if (m) warned.add(Number(m[1]) - 1);
    }
  }
  const actual = new Map<number, number>();
  for (let p = 0; p < c.rule.partitionCount; p++) {
    const [r] = await conn.query(`SELECT seq FROM ${table} PARTITION (p${p})`);
    for (const x of r as Array<{ seq: number }>) actual.set(Number(x.seq), p);
  }
  const rule: PartitionRule = { ...c.rule, columns: c.columns.map((col, i): PartitionColumn => ({ name: `k${i}`, type: col.type })) };
  const verified: VerifiedCase = { name: c.name, partitionBy: c.partitionBy, rule, rows: [] };
  sample.push(verified);
  let compared = 0;
  let undef = 0;
  const mismatches: unknown[] = [];
  for (let r = 0; r < rows.length; r++) {
    const values = rows[r]!.map((v) => (v === null ? null : Buffer.from(v, 'utf8')));
    const expected = partitionIndex(rule, values);
    const got = actual.get(r);
    if (expected === undefined) {
      undef++;
      continue;
    }
    if (warned.has(r)) {
      mismatches.push({ row: r, values: rows[r], note: 'server warned but flatload evaluated it', expected, got });
      continue;
    }
    compared++;
    if (got !== expected) mismatches.push({ row: r, values: rows[r], expected, got });
    else if (r < 18 || r % Math.ceil(rows.length / 12) === 0) verified.rows.push({ values: rows[r]!, partition: got });
  }
  await conn.query(`DROP TABLE ${table}`);
  return { case: c.name, rows: rows.length, compared, notEvaluated: undef, warnedRows: warned.size, mismatches: mismatches.length, firstMismatches: mismatches.slice(0, 5) };
}

async function latin1Weights(conn: Connection): Promise<number[]> {
  const [rows] = await conn.query(
    'SELECT seq AS b, HEX(WEIGHT_STRING(CONVERT(UNHEX(LPAD(HEX(seq), 2, "0")) USING latin1) COLLATE latin1_swedish_ci)) AS w FROM seq_0_to_255',
  );
  return (rows as Array<{ b: number; w: string }>).map((r) => parseInt(r.w, 16));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fixture = args.includes('--fixture') ? args[args.indexOf('--fixture') + 1] : undefined;
  let server: ThrowawayServer | undefined;
  let url = process.env['DATABASE_URL'];
  if (!url) {
    server = await startThrowawayServer();
    url = server.url;
  }
  const conn = await mysql.createConnection({ uri: url, multipleStatements: true });
  try {
    await conn.query('CREATE DATABASE IF NOT EXISTS flatload_partition_check');
    await conn.query('USE flatload_partition_check');
    await conn.query("SET SESSION sql_mode = ''");
    const weights = await latin1Weights(conn);
    const diff = weights.map((w, i) => (w === LATIN1_SWEDISH_CI_WEIGHTS[i] ? -1 : i)).filter((i) => i >= 0);
    process.stdout.write(`latin1_swedish_ci weights from WEIGHT_STRING: ${diff.length === 0 ? 'identical to keyHash.ts' : `differ at bytes ${diff.join(', ')}`}\n`);
    process.stdout.write(`server: ${String(((await conn.query('SELECT VERSION() AS v'))[0] as Array<{ v: string }>)[0]!.v)}\n`);
    const sample: VerifiedCase[] = [];
    let total = 0;
    let bad = 0;
    for (const [i, c] of cases().entries()) {
      const r = await checkCase(conn, c, i, sample);
      total += Number(r['compared']);
      bad += Number(r['mismatches']);
      process.stdout.write(`${JSON.stringify(r)}\n`);
    }
    process.stdout.write(`TOTAL compared=${total} mismatches=${bad}\n`);
    if (fixture) {
      writeFileSync(fixture, `${JSON.stringify({ verifiedOn: 'MariaDB 10.11 (bench/research/partitionCheck.ts)', cases: sample }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}\n`);
      process.stdout.write(`wrote ${sample.reduce((n, x) => n + x.rows.length, 0)} rows of ${sample.length} rules to ${fixture}\n`);
    }
    await conn.query('DROP DATABASE flatload_partition_check');
  } finally {
    await conn.end();
    await server?.stop();
  }
}

await main();
