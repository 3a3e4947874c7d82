/**
 * The INSERT fallback (--strategy insert, what a server with local_infile=OFF
 * gets) must give the table LOAD DATA gives: the same value conversions and
 * the same rejected lines. The reference is the server's own LOAD DATA
 * INFILE … IGNORE of the same file (LOCAL implies IGNORE), its warned rows
 * taken out as flatload rejects them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { createTestDatabase, tableDigest, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let dir: string;
before(async () => {
  db = await createTestDatabase('insfb');
  dir = mkdtempSync(join(tmpdir(), 'flatload-insfb-'));
});
after(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const COLS = `(id INT NOT NULL PRIMARY KEY, i INT NULL, u INT UNSIGNED NULL, t TINYINT NULL, d DECIMAL(6,2) NULL, f DOUBLE NULL,
  dt DATE NULL, ts DATETIME NULL, tm TIME NULL, y YEAR NULL, s VARCHAR(8) NULL, c CHAR(4) NULL, e ENUM('a','b') NULL, nn INT NOT NULL DEFAULT 7)`;

/** Field values LOAD DATA converts, truncates, clips or refuses: spaces around numbers, empty fields, out of range, bad dates, \N. */
const NUMBERS = ['42', ' 42 ', '42 ', ' 42', '', '\\N', '-0', '+5', '1e3', '99999999999', 'x1', '42abc', '0x10', '1,5', '.5', ' 3.25 ', '-1', '2147483648', 'NULL', '0', '007'];
const DATES = ['2024-01-02', '2024-02-30', '2024-1-2', '20240102', '0000-00-00', '24-01-02', '2024-01-02 10:00', '', '\\N', 'x', ' 2024-01-02 ', '2024-13-01'];
const TIMES = ['12:34:56', '838:59:59', '839:00:00', '', '\\N', '1:2', ' 10:00 ', '25:61:61', '123456'];
const YEARS = ['1999', '99', '0', '', '\\N', '2156', ' 2001 ', 'x'];
const TEXTS = ['abc', '', '\\N', 'abcdefghijkl', '  pad  ', 'é東京', 'NULL', 'tail  '];
const ENUMS = ['a', 'b', 'c', '', '\\N', ' a', 'A'];

/** A deterministic mix of every case, `n` rows; a field is its pool's first (clean) value nine times in ten. */
function conversionFile(n: number): string {
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed >>> 8;
  };
  const pick = <T>(xs: readonly T[]): T => (next() % 10 === 0 ? xs[next() % xs.length]! : xs[0]!);
  let s = '';
  for (let id = 1; id <= n; id++) {
    s += [id, pick(NUMBERS), pick(NUMBERS), pick(NUMBERS), pick(NUMBERS), pick(NUMBERS), pick(DATES), pick(DATES), pick(TIMES), pick(YEARS), pick(TEXTS), pick(TEXTS), pick(ENUMS), pick(['1', '\\N', '', ' 2 ', 'x'])].join('\t') + '\n';
  }
  return s;
}

/**
 * The server's own LOAD DATA INFILE … IGNORE into `ref`; returns the lines
 * it warned about (notes aside), which flatload rejects. With
 * --allow-truncation flatload keeps rows whose values were only changed.
 */
async function serverLoad(ref: string, file: string): Promise<Set<number>> {
  await db.conn.query('SET SESSION max_error_count = 65535');
  await db.conn.query(`LOAD DATA INFILE ? IGNORE INTO TABLE ${ref}`, [file]);
  const [ws] = await db.conn.query('SHOW WARNINGS');
  const lines = new Set<number>();
  for (const w of ws as Array<{ Level: string; Code: number; Message: string }>) {
    if (w.Level === 'Note') continue;
    const m = /\bat row (\d+)\b/.exec(w.Message);
    assert.ok(m, `a warning names its row: ${w.Message}`);
    lines.add(Number(m[1]));
  }
  return lines;
}

function rejectedLines(rejectFile: string): number[] {
  return readFileSync(`${rejectFile}.log`, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => Number(l.split('\t')[0]));
}

describe('--strategy insert converts values as LOAD DATA does', () => {
  const content = conversionFile(3000);
  for (const allowTruncation of [false, true]) {
    test(`3,000 rows of conversion cases${allowTruncation ? ', --allow-truncation' : ''}: the same table and the same rejected lines as the server's LOAD DATA`, async () => {
      const t = allowTruncation ? 'conv_allow' : 'conv';
      const ref = `${t}_ref`;
      for (const name of [t, ref]) await db.conn.query(`CREATE TABLE ${name} ${COLS} ENGINE=InnoDB`);
      const f = join(dir, `${t}.tsv`);
      writeFileSync(f, content);
      const warned = await serverLoad(ref, f);
      assert.ok(warned.size > 100 && warned.size < 2900, `the file has both clean and warned rows (${warned.size} warned)`);
      const rejects = join(dir, `${t}.rejects.tsv`);
      const args = ['load', f, '--table', t, '--strategy', 'insert', '--max-errors', '100000', '--chunk-size', '32KiB', '--jobs', '2', '--progress', 'none', '--skip-size-report', '--json', '--reject-file', rejects];
      if (allowTruncation) args.push('--allow-truncation');
      const r = await runCli(args, { env: { DATABASE_URL: db.url } });
      const rep = JSON.parse(r.stdout) as { rows: number; rejected: number };
      if (allowTruncation) {
        // Every warning here is a changed value (1264, 1265, 1366, 1292, 1263 …): all rows are kept, as the server kept them.
        assert.equal(r.code, 0, r.stderr);
        assert.equal(rep.rejected, 0);
      } else {
        assert.equal(r.code, 3, r.stderr);
        assert.deepEqual(rejectedLines(rejects), [...warned].sort((a, b) => a - b), 'the rows the server warned about, and only those');
        await db.conn.query(`DELETE FROM ${ref} WHERE id IN (?)`, [[...warned]]);
      }
      assert.deepEqual(await tableDigest(db.conn, t), await tableDigest(db.conn, ref));
      assert.equal(rep.rows, 3000 - (allowTruncation ? 0 : warned.size));
    });
  }
});
