/**
 * measureTableSizes against the real test server: the same compressible
 * 200k-row file loaded (server-side LOAD DATA INFILE) into InnoDB, InnoDB
 * PAGE_COMPRESSED, InnoDB ROW_FORMAT=COMPRESSED, Aria, MyISAM and MyRocks.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { isFlatloadError } from '../../src/errors/index.js';
import { quoteId } from '../../src/db/quote.js';
import { measureTableSizes, sizeRatio, type SizeFigure, type TableSizes } from '../../src/introspect/sizes.js';
import { adminConnection, createTestDatabase, hasRocksdb, serverUrl, type TestDatabase } from '../support/db.js';

const ROWS = 200_000;
const COLUMNS = '(id INT NOT NULL PRIMARY KEY, name VARCHAR(64), city VARCHAR(32), note VARCHAR(200), n INT, KEY k_city (city))';

function positive(f: SizeFigure, what: string): number {
  assert.ok(f.bytes !== null && f.bytes > 0, `${what}: expected > 0, got ${JSON.stringify(f)}`);
  return f.bytes;
}

function show(label: string, s: TableSizes): void {
  const b = (f: SizeFigure): string => (f.bytes === null ? 'null' : String(f.bytes));
  process.stderr.write(
    `# ${label}: data ${b(s.dataBytes)} index ${b(s.indexBytes)} file ${b(s.fileBytes)} allocated ${b(s.allocatedBytes)} ` +
      `on-disk ${s.onDiskBytes ?? 'null'} (${s.onDiskSource}) flush ${s.flushMs ?? '-'} ms\n`,
  );
}

describe('measureTableSizes', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let dir: string;
  let file: string;
  let inputBytes: number;
  const sizes = new Map<string, TableSizes>();

  before(async () => {
    db = await createTestDatabase('sizes');
    dir = mkdtempSync(join(tmpdir(), 'flatload-sizes-'));
    file = join(dir, 'data.tsv');
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];
    const cities = ['Amsterdam', 'Berlin', 'Copenhagen', 'Dublin', 'Edinburgh', 'Frankfurt', 'Geneva', 'Helsinki'];
    const parts: string[] = [];
    let chunk = '';
    for (let i = 1; i <= ROWS; i++) {
      const w = (k: number): string => words[(i * 7 + k * 13) % words.length]!;
      chunk += `${i}\tuser ${w(1)} ${w(2)}\t${cities[i % cities.length]!}\tthe quick ${w(3)} fox jumps over the lazy ${w(4)} dog again and again ${w(5)} ${w(6)}\t${i % 1000}\n`;
      if (chunk.length > 1 << 20) {
        parts.push(chunk);
        chunk = '';
      }
    }
    parts.push(chunk);
    writeFileSync(file, parts.join(''));
    inputBytes = statSync(file).size;
  });

  after(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function load(table: string, options: string): Promise<void> {
    await db.conn.query(`CREATE TABLE ${quoteId(table)} ${COLUMNS} ${options}`);
    await db.conn.query(`LOAD DATA INFILE ? INTO TABLE ${quoteId(table)}`, [file]);
    const [r] = await db.conn.query(`SELECT COUNT(*) AS n FROM ${quoteId(table)}`);
    assert.equal(String((r as Array<{ n: unknown }>)[0]!.n), String(ROWS));
  }

  test('InnoDB: every figure is there, allocated ≈ file', async () => {
    await load('inno', 'ENGINE=InnoDB');
    const s = await measureTableSizes(db.conn, db.name, 'inno');
    show('InnoDB', s);
    assert.equal(s.engine, 'InnoDB');
    positive(s.dataBytes, 'data');
    positive(s.indexBytes, 'index');
    const fileBytes = positive(s.fileBytes, 'file');
    const alloc = positive(s.allocatedBytes, 'allocated');
    // Not sparse: the filesystem may count a few extent-metadata blocks on top of the file length (ext4: +40 KiB for 40 MiB).
    assert.ok(alloc <= fileBytes * 1.01, `allocated ${alloc} vs file ${fileBytes}`);
    assert.ok(fileBytes >= s.dataBytes.bytes! + s.indexBytes.bytes!, 'the file holds the data and index pages');
    assert.equal(s.onDiskBytes, alloc);
    assert.match(s.onDiskSource, /ALLOCATED_SIZE/);
    sizes.set('inno', s);
  });

  test('InnoDB PAGE_COMPRESSED=1: allocates much less than it spans after the flush', async () => {
    await load('pc', 'ENGINE=InnoDB PAGE_COMPRESSED=1');
    const before = await measureTableSizes(db.conn, db.name, 'pc', { flush: false });
    show('InnoDB page-compressed, not flushed', before);
    assert.match(before.allocatedBytes.note ?? '', /flush: false/);
    const s = await measureTableSizes(db.conn, db.name, 'pc');
    show('InnoDB page-compressed', s);
    assert.match(s.createOptions ?? '', /PAGE_COMPRESSED/i);
    positive(s.dataBytes, 'data');
    const fileBytes = positive(s.fileBytes, 'file');
    const alloc = positive(s.allocatedBytes, 'allocated');
    assert.ok(alloc <= fileBytes, `allocated ${alloc} <= file ${fileBytes}`);
    const plain = sizes.get('inno');
    assert.ok(plain?.allocatedBytes.bytes, 'needs the plain InnoDB figures');
    assert.ok(alloc < plain.allocatedBytes.bytes * 0.6, `page-compressed ${alloc} vs plain ${plain.allocatedBytes.bytes}`);
    assert.ok(sizeRatio(inputBytes, s.onDiskBytes)! > sizeRatio(inputBytes, plain.onDiskBytes)!);
    sizes.set('pc', s);
  });

  test('InnoDB ROW_FORMAT=COMPRESSED: smaller pages, smaller file', async () => {
    await load('rfc', 'ENGINE=InnoDB ROW_FORMAT=COMPRESSED');
    const s = await measureTableSizes(db.conn, db.name, 'rfc');
    show('InnoDB row-compressed', s);
    assert.equal(s.rowFormat, 'Compressed');
    positive(s.dataBytes, 'data');
    positive(s.indexBytes, 'index');
    const fileBytes = positive(s.fileBytes, 'file');
    const alloc = positive(s.allocatedBytes, 'allocated');
    assert.ok(alloc <= fileBytes * 1.01);
    assert.ok(fileBytes < sizes.get('inno')!.fileBytes.bytes!, 'compressed pages make a smaller file');
  });

  for (const [engine, table, files] of [
    ['Aria', 'aria', /\.MAD\+\.MAI/],
    ['MyISAM', 'myisam', /\.MYD\+\.MYI/],
  ] as const) {
    test(`${engine}: file lengths`, async () => {
      await load(table, `ENGINE=${engine}`);
      const s = await measureTableSizes(db.conn, db.name, table);
      show(engine, s);
      assert.equal(s.engine, engine);
      const data = positive(s.dataBytes, 'data');
      const index = positive(s.indexBytes, 'index');
      assert.equal(s.fileBytes.bytes, data + index);
      assert.match(s.fileBytes.source, files);
      assert.equal(s.allocatedBytes.bytes, s.fileBytes.bytes);
      assert.ok(s.allocatedBytes.note, 'allocated = file length is flagged');
      assert.equal(s.onDiskBytes, data + index);
      // Nearly incompressible storage: the table is about as big as the input.
      const ratio = sizeRatio(inputBytes, s.onDiskBytes)!;
      assert.ok(ratio > 0.5 && ratio < 2, `ratio ${ratio}`);
    });
  }

  test('MyRocks: SST bytes appear after the flush and are much smaller than InnoDB', { skip: !hasRocksdb() && 'MyRocks is not loaded' }, async () => {
    // A plain (non bulk-load) LOAD: the rows sit in the memtable until it is flushed.
    await load('rocks', 'ENGINE=ROCKSDB');
    const before = await measureTableSizes(db.conn, db.name, 'rocks', { flush: false });
    show('MyRocks, not flushed', before);
    assert.match(before.fileBytes.note ?? '', /flush: false/);
    const s = await measureTableSizes(db.conn, db.name, 'rocks');
    show('MyRocks', s);
    assert.equal(s.engine.toUpperCase(), 'ROCKSDB');
    const sst = positive(s.fileBytes, 'SST bytes');
    assert.ok(sst >= (before.fileBytes.bytes ?? 0));
    assert.match(s.fileBytes.source, /ROCKSDB_SST_PROPS/);
    assert.equal(s.allocatedBytes.bytes, sst);
    const data = positive(s.dataBytes, 'data');
    positive(s.indexBytes, 'index (k_city)');
    // The engine's own per-index statistics and the SST properties describe the same files.
    assert.ok(Math.abs(data + s.indexBytes.bytes! - sst) < sst * 0.25, `stats ${data}+${s.indexBytes.bytes} vs SST ${sst}`);
    const inno = sizes.get('inno')!.onDiskBytes!;
    assert.ok(sst * 2 < inno, `MyRocks ${sst} vs InnoDB ${inno}`);
    assert.ok(sizeRatio(inputBytes, sst)! > 1, 'compressible input gets smaller');
  });

  test('partitioned InnoDB: the partition tablespaces are summed', async () => {
    await db.conn.query(
      'CREATE TABLE part (id INT NOT NULL PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB PARTITION BY RANGE (id) ' +
        'SUBPARTITION BY HASH (id) SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (1000), PARTITION p1 VALUES LESS THAN MAXVALUE)',
    );
    await db.conn.query("INSERT INTO part VALUES (1, 'a'), (2000, 'b')");
    const s = await measureTableSizes(db.conn, db.name, 'part');
    const fileBytes = positive(s.fileBytes, 'file');
    assert.match(s.fileBytes.note ?? '', /sum of 4 partition/);
    assert.ok(fileBytes >= 4 * 16384);
  });

  test('a table name that needs the filename encoding (@00xx) is found', async () => {
    const name = 'odd-name é.$x';
    await db.conn.query(`CREATE TABLE ${quoteId(name)} (id INT PRIMARY KEY) ENGINE=InnoDB`);
    await db.conn.query(`INSERT INTO ${quoteId(name)} VALUES (1), (2)`);
    const s = await measureTableSizes(db.conn, db.name, name);
    positive(s.fileBytes, 'file');
    positive(s.allocatedBytes, 'allocated');
    if (hasRocksdb()) {
      const r = `${name} rocks`;
      await db.conn.query(`CREATE TABLE ${quoteId(r)} (id INT PRIMARY KEY) ENGINE=ROCKSDB`);
      await db.conn.query(`INSERT INTO ${quoteId(r)} VALUES (1), (2)`);
      const rs = await measureTableSizes(db.conn, db.name, r);
      positive(rs.fileBytes, 'MyRocks SST bytes');
    }
  });

  test('an unknown table is a FlatloadError UNKNOWN_TABLE', async () => {
    await assert.rejects(measureTableSizes(db.conn, db.name, 'no_such_table'), (err: unknown) => isFlatloadError(err) && err.code === 'UNKNOWN_TABLE');
  });

  test('without PROCESS/RELOAD/SUPER: unavailable figures are null with a note, never a guess', async () => {
    const user = `sz_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(9).toString('base64url');
    const admin = await adminConnection();
    try {
      await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
      await admin.query(`GRANT SELECT, INSERT ON ${quoteId(db.name)}.* TO ?@?`, [user, '%']);
      const u = new URL(serverUrl());
      const conn = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user, password, database: db.name });
      try {
        const s = await measureTableSizes(conn, db.name, 'inno');
        show('InnoDB as a user without PROCESS', s);
        assert.equal(s.fileBytes.bytes, null);
        assert.match(s.fileBytes.note ?? '', /PROCESS/);
        assert.equal(s.allocatedBytes.bytes, null);
        assert.match(s.allocatedBytes.note ?? '', /PROCESS/);
        positive(s.dataBytes, 'data (ANALYZE needs only SELECT+INSERT)');
        assert.equal(s.onDiskBytes, s.dataBytes.bytes! + s.indexBytes.bytes!);
        assert.match(s.onDiskSource, /DATA_LENGTH\+INDEX_LENGTH/);

        const a = await measureTableSizes(conn, db.name, 'aria');
        assert.match(a.fileBytes.note ?? '', /FLUSH TABLES failed.*RELOAD/);
        if (hasRocksdb()) {
          const r = await measureTableSizes(conn, db.name, 'rocks');
          assert.match(r.fileBytes.note ?? '', /rocksdb_force_flush_memtable_now failed/);
          assert.match(r.dataBytes.note ?? '', /rocksdb_force_flush_memtable_now failed/);
        }
      } finally {
        await conn.end();
      }
    } finally {
      await admin.query('DROP USER IF EXISTS ?@?', [user, '%']).catch(() => undefined);
      await admin.end();
    }
  });
});
