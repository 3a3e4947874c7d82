/**
 * The engine variants `flatload bench` compares, and the DDL rewriting that
 * makes each one from the table's own definition. Pure.
 */
export interface Variant {
  /** Short name, e.g. "innodb-page-compressed". */
  name: string;
  engine: string;
  /** Table options appended to CREATE TABLE. */
  tableOptions: string;
  /** MyRocks: the column family every index goes to, and its options. */
  rocksdbCf?: { name: string; options: string };
  label: string;
}

const ROCKSDB_ALGOS: Record<string, string> = {
  snappy: 'kSnappyCompression',
  zlib: 'kZlibCompression',
  lz4: 'kLZ4Compression',
  lz4hc: 'kLZ4HCCompression',
  zstd: 'kZSTD',
  zstdnotfinal: 'kZSTDNotFinalCompression',
  none: 'kNoCompression',
};

/** rocksdb_supported_compression_types ("Snappy,Zlib,LZ4,LZ4HC,ZSTDNotFinal") → the algorithms to try. */
export function rocksdbAlgorithms(supported: string | undefined): string[] {
  if (!supported) return [];
  return supported
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => ROCKSDB_ALGOS[s] !== undefined);
}

/** Every variant the server can run: engines it offers, MyRocks once per compression algorithm. */
export function variantsFor(engines: Record<string, string>, rocksdbCompression: string | undefined): Variant[] {
  const has = (e: string): boolean => ['YES', 'DEFAULT'].includes(engines[e] ?? '');
  const out: Variant[] = [];
  if (has('INNODB')) {
    out.push({ name: 'innodb', engine: 'InnoDB', tableOptions: 'ENGINE=InnoDB ROW_FORMAT=DYNAMIC', label: 'InnoDB' });
    out.push({ name: 'innodb-page-compressed', engine: 'InnoDB', tableOptions: 'ENGINE=InnoDB PAGE_COMPRESSED=1', label: 'InnoDB PAGE_COMPRESSED=1' });
    out.push({ name: 'innodb-compressed', engine: 'InnoDB', tableOptions: 'ENGINE=InnoDB ROW_FORMAT=COMPRESSED', label: 'InnoDB ROW_FORMAT=COMPRESSED' });
  }
  if (has('ROCKSDB')) {
    for (const algo of rocksdbAlgorithms(rocksdbCompression)) {
      const kind = ROCKSDB_ALGOS[algo]!;
      out.push({
        name: `rocksdb-${algo}`,
        engine: 'ROCKSDB',
        tableOptions: 'ENGINE=ROCKSDB',
        rocksdbCf: { name: `flatload_bench_${algo}`, options: `compression=${kind};bottommost_compression=${kind}` },
        label: `MyRocks ${algo}`,
      });
    }
  }
  if (has('ARIA')) out.push({ name: 'aria', engine: 'Aria', tableOptions: 'ENGINE=Aria', label: 'Aria' });
  if (has('MYISAM')) out.push({ name: 'myisam', engine: 'MyISAM', tableOptions: 'ENGINE=MyISAM', label: 'MyISAM' });
  if (has('TOKUDB')) out.push({ name: 'tokudb', engine: 'TokuDB', tableOptions: 'ENGINE=TokuDB', label: 'TokuDB' });
  return out;
}

/**
 * The table's own CREATE TABLE, renamed and re-targeted: its engine and
 * storage options replaced by the variant's, foreign keys dropped (they
 * would point at the user's tables, and MyRocks has none), and for MyRocks
 * every index put in the variant's column family.
 */
export function variantDdl(createSql: string, qualifiedName: string, v: Variant): string {
  let sql = createSql.replace(/^CREATE TABLE\s+(`(?:[^`]|``)+`|\S+)/i, `CREATE TABLE ${qualifiedName}`);
  const close = sql.lastIndexOf(')');
  let body = sql.slice(0, close);
  // Table options after the closing parenthesis are replaced wholesale, partitioning aside.
  const tail = sql.slice(close + 1);
  const partition = /\bPARTITION\s+BY\b[\s\S]*$/i.exec(tail)?.[0] ?? '';
  body = body
    .split('\n')
    .filter((line) => !/^\s*CONSTRAINT\s+\S+\s+FOREIGN KEY/i.test(line) && !/^\s*FOREIGN KEY/i.test(line))
    .join('\n')
    .replace(/,\s*$/, '');
  if (v.rocksdbCf) {
    const cf = v.rocksdbCf.name;
    body = body.replace(/^(\s*(?:PRIMARY KEY|UNIQUE KEY|KEY|INDEX|UNIQUE INDEX)\b[^\n]*?\))(\s+COMMENT\s+'[^']*')?(,?)\s*$/gim, `$1 COMMENT '${cf}'$3`);
  }
  sql = `${body}\n) ${v.tableOptions}${partition ? ` ${partition}` : ''}`;
  return sql;
}
