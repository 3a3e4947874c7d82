/**
 * The README's "Nightly job" example as a user runs it: its wrapper script,
 * taken from README.md itself (only the export's path, the log directory, the
 * replica's address, `flatload` and `mail` stand in for the real ones), run by
 * `sh` against a primary with its binary log on and a replica, the account's
 * password in ~/.my.cnf as the example says. An export like the one it
 * describes: CSV files with headers in another column order than the tables',
 * tables picked by --include/--exclude, one renamed into a staging name, and
 * mydumper's `metadata` with the exporter's counts. Then the two failures a
 * wrapper acts on: counts that do not match (exit 9, nothing swapped in) and a
 * replica that stops applying (exit 4, and the same command run again
 * completes).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLI } from '../support/cli.js';
import { tableDigest } from '../support/db.js';
import { startReplicaPair, type ReplicaPair } from '../support/replica.js';

const root = new URL('../..', import.meta.url).pathname;
let pair: ReplicaPair;
let work: string;
let home: string;
let logDir: string;

/** The tables the example loads (after --rename), and those it must leave alone. */
const LOADED = ['orders', 'orders_items', 'customers_staging'];
const UNTOUCHED = ['orders_tmp_scratch', 'audit_log', 'customers'];

interface Table {
  /** The table's name in the export (the file names and the metadata). */
  name: string;
  ddl: string;
  /** The header's order: not the table's. */
  header: string[];
  row: (i: number, night: number) => string[];
}

const TABLES: Table[] = [
  {
    name: 'orders',
    ddl: 'id INT NOT NULL PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2) NOT NULL, note VARCHAR(60) NULL',
    header: ['Note', 'total', 'ID', 'customer_id'],
    row: (i, n) => [`"night ${n}, order ""${i}"""`, `${(i * 3.17).toFixed(2)}`, String(i), String((i % 97) + 1)],
  },
  {
    name: 'orders_items',
    ddl: 'order_id INT NOT NULL, line INT NOT NULL, sku VARCHAR(20) NOT NULL, qty INT NOT NULL, PRIMARY KEY (order_id, line)',
    header: ['sku', 'qty', 'line', 'order_id'],
    row: (i, n) => [`SKU-${n}-${i % 500}`, String((i % 9) + 1), String((i % 3) + 1), String(Math.floor(i / 3) + 1)],
  },
  {
    name: 'orders_tmp_scratch',
    ddl: 'id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL',
    header: ['v', 'id'],
    row: (i) => [`tmp ${i}`, String(i)],
  },
  {
    name: 'customers',
    ddl: 'id INT NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, city VARCHAR(40) NULL',
    header: ['city', 'name', 'id'],
    row: (i, n) => [i % 5 === 0 ? '"Rome, IT"' : 'Oslo', `customer ${i} night ${n}`, String(i)],
  },
  {
    name: 'audit_log',
    ddl: 'id INT NOT NULL PRIMARY KEY, what VARCHAR(40) NOT NULL',
    header: ['what', 'id'],
    row: (i) => [`event ${i}`, String(i)],
  },
];

/** Rows per file: orders comes in two files, as mydumper splits a table. */
const FILES: Record<string, number[]> = { orders: [3000, 2500], orders_items: [4000], orders_tmp_scratch: [50], customers: [400], audit_log: [30] };

/**
 * Writes one night's export as mydumper does (`shop.t.NNNNN.csv`, with
 * --include-header) and its `metadata`. The counts and checksums are those of
 * the same files loaded by the server's own LOAD DATA INFILE into reference
 * tables (db `ref`); `lie` changes one table's recorded row count.
 */
async function writeExport(night: number, lie?: { table: string; rows: number }, fault?: { short?: string; bad?: string; uncounted?: string }): Promise<string> {
  const dir = join(work, `export-${night}${lie && !fault ? '-bad' : ''}`);
  mkdirSync(dir, { recursive: true });
  const p = pair.p;
  let metadata = '[config]\nquote-character = BACKTICK\n\n';
  for (const t of TABLES) {
    await p.query(`DROP TABLE IF EXISTS ref.${t.name}`);
    await p.query(`CREATE TABLE ref.${t.name} LIKE shop.${t.name}`);
    let first = 1;
    for (const [part, n] of FILES[t.name]!.entries()) {
      const file = join(dir, `shop.${t.name}.${String(part).padStart(5, '0')}.csv`);
      const lines = [t.header.join(','), ...Array.from({ length: n }, (_, k) => t.row(first + k, night).join(','))];
      if (fault?.short === t.name) lines.pop();
      writeFileSync(file, lines.map((l) => `${l}\r\n`).join(''));
      first += n;
      await p.query(`LOAD DATA INFILE ? INTO TABLE ref.${t.name} FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES (${t.header.join(',')})`, [file]);
      // A row the table cannot take (a word for a number), which the exporter counted.
      if (fault?.bad === t.name && part === 0) writeFileSync(file, `${t.header.map((h) => (/id$/i.test(h) ? 'not-a-number' : 'x')).join(',')}\r\n`, { flag: 'a' });
    }
    if (fault?.uncounted === t.name) continue;
    const ref = await tableDigest(p, `ref.${t.name}`);
    const rows = lie?.table === t.name ? lie.rows : Number(ref.count) + (fault?.bad === t.name ? 1 : 0);
    metadata += `[\`shop\`.\`${t.name}\`]\nreal_table_name=${t.name}\nrows = ${rows}\ndata_checksum = ${ref.checksum}\n\n`;
  }
  writeFileSync(join(dir, 'metadata'), metadata);
  return dir;
}

/**
 * The README's wrapper script, as printed there, with the export's path, the
 * log directory and the replica's address put in, `flatload` the built CLI
 * and `mail` a function that appends to mail.log. Each substitution must
 * find its text: a README that changed them fails here, not silently.
 */
function wrapperScript(maxPause?: string, extra: string[] = []): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const m = /```sh\n(#!\/bin\/sh\n# nightly-load\.sh\n[\s\S]*?)```/.exec(readme);
  assert.ok(m, 'README.md has the nightly-load.sh script');
  let s = m[1]!;
  const put = (from: string | RegExp, to: string): void => {
    const before = s;
    s = s.replace(from, to);
    assert.notEqual(s, before, `the README's script has ${String(from)}`);
  };
  put('dir=/exports/$(date +%F)', 'dir="$EXPORT_DIR"');
  put(/\/var\/log\/flatload/g, '"$LOG_DIR"');
  put('mysql://etl@db2', `mysql://etl@127.0.0.1:${pair.replica.port}`);
  if (maxPause) put('--max-pause 45m', `--max-pause ${maxPause}`);
  if (extra.length > 0) put('  --json >', `  --json ${extra.join(' ')} >`);
  const shims = `flatload() { "${process.execPath}" "${CLI}" "$@"; }\nmail() { printf 'subject: %s\\n' "$2" >> "$LOG_DIR/mail.log"; cat >> "$LOG_DIR/mail.log"; }\n`;
  return s.replace('#!/bin/sh\n', `#!/bin/sh\n${shims}`);
}

interface RunResult {
  code: number | null;
  /** What cron would have appended to nightly.log: the script's stdout and stderr. */
  log: string;
  /** /var/log/flatload/last.json, parsed. */
  report: ExportJson;
  mail: string;
}

interface ExportJson {
  status: string;
  tables: Array<{ table: string; status: string; rows: number; analyze?: { seconds: number; note: string | null }; check?: { source: string; expectedRows: number | null; rows: number; expectedChecksum: string | null; checksum: string | null; equal: boolean } }>;
  throttle?: { rules: string[]; replicas: Array<{ name: string; state: string }>; pausedSeconds: number; pauses: number; causes: Array<{ cause: string; seconds: number }> };
  notes: string[];
  error?: { code: string; message: string };
}

/** Runs the wrapper as cron would (`sh nightly-load.sh >> nightly.log 2>&1`), with a deadline. */
function runWrapper(exportDir: string, maxPause?: string, extra: string[] = []): Promise<RunResult> {
  const script = join(work, 'nightly-load.sh');
  writeFileSync(script, wrapperScript(maxPause, extra));
  rmSync(join(logDir, 'mail.log'), { force: true });
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, EXPORT_DIR: exportDir, LOG_DIR: logDir };
    const child = spawn('sh', [script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const json = readFileSync(join(logDir, 'last.json'), 'utf8');
      let report: ExportJson;
      try {
        report = JSON.parse(json) as ExportJson;
      } catch {
        reject(new Error(`last.json is not one JSON object:\n${json}\n${log}`));
        return;
      }
      const mailFile = join(logDir, 'mail.log');
      resolve({ code, log, report, mail: existsSync(mailFile) ? readFileSync(mailFile, 'utf8') : '' });
    });
  });
}

/** COUNT + CHECKSUM TABLE of every table of the shop, on one server. */
async function digests(server: 'p' | 'r', tables: readonly string[]): Promise<Record<string, { count: string; checksum: string }>> {
  const out: Record<string, { count: string; checksum: string }> = {};
  for (const t of tables) out[t] = await tableDigest(pair[server], `shop.${t}`);
  return out;
}

/** The night's tables are exact on the primary and on the replica: the reference tables' count and checksum. */
async function exactOnBoth(): Promise<void> {
  await pair.caughtUp();
  for (const t of LOADED) {
    const from = t === 'customers_staging' ? 'customers' : t;
    const ref = await tableDigest(pair.p, `ref.${from}`);
    assert.deepEqual(await tableDigest(pair.p, `shop.${t}`), ref, `shop.${t} on the primary`);
    assert.deepEqual(await tableDigest(pair.r, `shop.${t}`), ref, `shop.${t} on the replica`);
  }
}

async function yesterday(): Promise<void> {
  for (const t of [...TABLES.map((x) => x.name), 'customers_staging']) {
    const ddl = TABLES.find((x) => x.name === t)?.ddl ?? TABLES.find((x) => x.name === 'customers')!.ddl;
    await pair.p.query(`DROP TABLE IF EXISTS shop.${t}`);
    await pair.p.query(`CREATE TABLE shop.${t} (${ddl}) ENGINE=InnoDB`);
  }
  // Yesterday's rows: a table the example leaves out keeps them, one it loads loses them at the swap.
  await pair.p.query("INSERT INTO shop.orders (id, customer_id, total, note) VALUES (999999, 1, 1.00, 'yesterday')");
  await pair.p.query("INSERT INTO shop.customers_staging VALUES (999999, 'yesterday', NULL)");
  await pair.p.query("INSERT INTO shop.orders_tmp_scratch VALUES (1, 'yesterday')");
  await pair.p.query("INSERT INTO shop.audit_log VALUES (1, 'yesterday')");
  await pair.p.query("INSERT INTO shop.customers VALUES (1, 'the live table', NULL)");
  await pair.caughtUp();
}

before(async () => {
  pair = await startReplicaPair();
  work = mkdtempSync(join(tmpdir(), 'flatload-nightly-example-'));
  home = join(work, 'home');
  logDir = join(work, 'log');
  mkdirSync(home);
  mkdirSync(logDir);
  await pair.p.query('CREATE DATABASE shop');
  await pair.p.query('CREATE DATABASE ref');
  // The cron job's account, created on the primary (and so on the replica): its own database, and SLAVE MONITOR for the replica's status.
  await pair.p.query("CREATE USER 'etl'@'%' IDENTIFIED BY 'etl-secret'");
  await pair.p.query("GRANT ALL ON shop.* TO 'etl'@'%'");
  await pair.p.query("GRANT SLAVE MONITOR ON *.* TO 'etl'@'%'");
  // "as the etl user (its password in ~/.my.cnf)"
  writeFileSync(join(home, '.my.cnf'), `[client]\nhost=127.0.0.1\nport=${pair.primary.port}\nuser=etl\npassword=etl-secret\n`);
  chmodSync(join(home, '.my.cnf'), 0o600);
});

after(async () => {
  await pair?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the README's nightly job, against a primary with a replica", () => {
  test('loads the chosen tables exact on both servers, leaves the others alone; last.json carries the checks, the throttle and ANALYZE', { timeout: 240_000 }, async () => {
    await yesterday();
    const untouched = { p: await digests('p', UNTOUCHED), r: await digests('r', UNTOUCHED) };
    const dir = await writeExport(1);
    const res = await runWrapper(dir);
    assert.equal(res.code, 0, res.log);
    assert.equal(res.mail, '', 'no mail on a good night');
    await exactOnBoth();
    assert.deepEqual(await digests('p', UNTOUCHED), untouched.p, 'left-out tables unchanged on the primary');
    assert.deepEqual(await digests('r', UNTOUCHED), untouched.r, 'left-out tables unchanged on the replica');

    const r = res.report;
    assert.equal(r.status, 'ok', JSON.stringify(r));
    assert.deepEqual(r.tables.map((t) => t.table).sort(), LOADED.map((t) => `shop.${t}`).sort());
    for (const t of r.tables) {
      assert.equal(t.check?.equal, true, `${t.table}: ${JSON.stringify(t.check)}`);
      assert.match(t.check.source, /mydumper metadata/);
      assert.equal(t.check.rows, t.rows);
      assert.ok(t.check.checksum !== null && t.check.checksum === t.check.expectedChecksum, JSON.stringify(t.check));
      assert.ok(t.analyze && t.analyze.note === null, `${t.table}: ANALYZE ran after the swap's load into an empty shadow: ${JSON.stringify(t.analyze)}`);
    }
    assert.ok(r.throttle, 'a throttle object');
    assert.deepEqual(r.throttle.replicas.map((x) => x.name), ['r1']);
    assert.ok(r.throttle.rules.some((x) => /--replica r1/.test(x)) && r.throttle.rules.some((x) => /--max-threads-running 40/.test(x)), JSON.stringify(r.throttle.rules));
    assert.ok(r.throttle.rules.some((x) => /--max-pause 45 min/.test(x)), JSON.stringify(r.throttle.rules));
    assert.match(res.log, /throttle:/);
  });

  test('counts that do not match the metadata: exit 9, mailed, nothing swapped in on either server', { timeout: 240_000 }, async () => {
    await yesterday();
    const before = { p: await digests('p', [...LOADED, ...UNTOUCHED]), r: await digests('r', [...LOADED, ...UNTOUCHED]) };
    const dir = await writeExport(2, { table: 'orders_items', rows: 3999 });
    const res = await runWrapper(dir);
    assert.equal(res.code, 9, res.log);
    assert.match(res.mail, /subject: flatload: export does not match its counts/);
    assert.match(res.log, /shop\.orders_items does not match the export: 4,?000 rows, 3,?999 expected/);
    await pair.caughtUp();
    assert.deepEqual(await digests('p', [...LOADED, ...UNTOUCHED]), before.p, 'yesterday\'s tables on the primary');
    assert.deepEqual(await digests('r', [...LOADED, ...UNTOUCHED]), before.r, 'yesterday\'s tables on the replica');
    const bad = res.report.tables.find((t) => t.table === 'shop.orders_items');
    assert.equal(bad?.check?.equal, false, JSON.stringify(bad));
    assert.equal(bad.check.expectedRows, 3999);
    assert.ok(res.report.notes.some((n) => /no table was swapped in/.test(n)), JSON.stringify(res.report.notes));
  });

  test('a replica that stops applying: exit 4 past --max-pause, no mail; the same command run again completes exact', { timeout: 300_000 }, async () => {
    await yesterday();
    const dir = await writeExport(3);
    await pair.sqlThread('No');
    let first: RunResult;
    try {
      first = await runWrapper(dir, '2s');
    } finally {
      await pair.sqlThread('Yes');
    }
    assert.equal(first.code, 4, first.log);
    assert.equal(first.mail, '', 'exit 4 is left to the next run');
    assert.match(first.log, /longer than --max-pause 2 s: replica r1 lag unknown \(SQL thread stopped\)/);
    assert.match(first.log, /resume with: /);
    assert.equal(first.report.status, 'stopped', JSON.stringify(first.report));
    const again = await runWrapper(dir, '2s');
    assert.equal(again.code, 0, again.log);
    await exactOnBoth();
  });

  test('exit 9, then the export fetched again, whole: the same command loads it exact on both servers, no --restart needed', { timeout: 300_000 }, async () => {
    await yesterday();
    const before = { p: await digests('p', [...LOADED, ...UNTOUCHED]), r: await digests('r', [...LOADED, ...UNTOUCHED]) };
    // The exporter's file lacks the last row; its metadata counts the whole table.
    const dir = await writeExport(11, { table: 'orders_items', rows: 4000 }, { short: 'orders_items' });
    const bad = await runWrapper(dir);
    assert.equal(bad.code, 9, bad.log);
    assert.match(bad.log, /shop\.orders_items does not match the export: 3,?999 rows, 4,?000 expected/);
    await pair.caughtUp();
    assert.deepEqual(await digests('p', [...LOADED, ...UNTOUCHED]), before.p, 'yesterday\'s tables on the primary');
    assert.deepEqual(await digests('r', [...LOADED, ...UNTOUCHED]), before.r, 'yesterday\'s tables on the replica');
    // Fetched again, whole this time: a changed export is a new load, checked and published.
    await writeExport(11);
    const again = await runWrapper(dir);
    assert.equal(again.code, 0, again.log);
    await exactOnBoth();
  });

  test('a night stopped by the replica does not hold the next night: its export loads exact, the stopped one\'s shadow tables are gone', { timeout: 300_000 }, async () => {
    await yesterday();
    const stopped = await writeExport(12);
    await pair.sqlThread('No');
    let first: RunResult;
    try {
      first = await runWrapper(stopped, '2s');
    } finally {
      await pair.sqlThread('Yes');
    }
    assert.equal(first.code, 4, first.log);
    const next = await runWrapper(await writeExport(13));
    assert.equal(next.code, 0, next.log);
    await exactOnBoth();
    await pair.caughtUp();
    for (const conn of [pair.p, pair.r]) {
      const [t] = await conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME LIKE '%\\_\\_flatload%'");
      assert.deepEqual(t, [], 'no shadow table left');
    }
  });

  test('a rejected row: exit 3, mailed, swapped in, where the exporter gave no count; against its count, exit 9', { timeout: 300_000 }, async () => {
    await yesterday();
    const uncounted = await writeExport(14, undefined, { bad: 'customers', uncounted: 'customers' });
    const res = await runWrapper(uncounted);
    // flatload's 3 is mailed and the script ends with the mail's status: the night is not a failure.
    assert.match(res.mail, /subject: flatload: rejected rows/);
    assert.equal(res.code, 0, res.log);
    assert.equal(res.report.status, 'rejected-within-budget');
    assert.ok(existsSync(join(logDir, 'shop.customers_staging.rejects.txt')), res.log);
    await exactOnBoth();
    await yesterday();
    const counted = await writeExport(15, undefined, { bad: 'customers' });
    const res9 = await runWrapper(counted);
    assert.equal(res9.code, 9, res9.log);
    assert.match(res9.log, /shop\.customers_staging does not match the export: 400 rows, 401 expected/);
    assert.ok(res9.report.notes.some((n) => /no table was swapped in/.test(n)), JSON.stringify(res9.report.notes));
    const [[kept]] = (await pair.p.query("SELECT COUNT(*) AS n FROM shop.customers_staging WHERE name = 'yesterday'")) as unknown as [[{ n: unknown }]];
    assert.equal(String(kept.n), '1', 'yesterday\'s staging rows stay');
  });
});
