/**
 * The four reference tables `flatload bench --fixture NAME` takes its table
 * definition from, and the repository's data generator (fixtures/generate.ts)
 * writes files for: user_summary and user3 from the published TokuDB / InnoDB /
 * MyRocks load comparisons, sysbench's sbtest, iibench's purchases_index.
 *
 * Each is one CREATE TABLE with no database, no ENGINE, no charset clause and
 * no trailing semicolon, so `fixtureDdl('sbtest') + ' ENGINE=RocksDB'` is valid.
 */
export const FIXTURE_TABLES = ['user_summary', 'user3', 'sbtest', 'purchases_index'] as const;
export type FixtureTable = (typeof FIXTURE_TABLES)[number];

const DDL: Readonly<Record<FixtureTable, string>> = {
  user_summary: `CREATE TABLE user_summary (
  user_id bigint unsigned NOT NULL,
  weight varchar(5),
  level varchar(20),
  beat_rate varchar(12),
  level_num int,
  UNIQUE KEY u_user_id (user_id)
)`,
  user3: `CREATE TABLE user3 (
  id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id bigint unsigned NOT NULL,
  weight varchar(5),
  level varchar(20),
  beat_rate varchar(12),
  level_num int,
  UNIQUE KEY u_user_id (user_id)
)`,
  sbtest: `CREATE TABLE sbtest (
  id int NOT NULL AUTO_INCREMENT,
  k int NOT NULL DEFAULT 0,
  c char(120) NOT NULL DEFAULT '',
  pad char(60) NOT NULL DEFAULT '',
  PRIMARY KEY (id),
  KEY k_1 (k)
)`,
  purchases_index: `CREATE TABLE purchases_index (
  transactionid int NOT NULL AUTO_INCREMENT,
  dateandtime datetime,
  cashregisterid int NOT NULL,
  customerid int NOT NULL,
  productid int NOT NULL,
  price float NOT NULL,
  data varchar(4000),
  PRIMARY KEY (transactionid),
  KEY marketsegment (price, customerid),
  KEY registersegment (cashregisterid, price, customerid),
  KEY pdc (price, dateandtime, customerid)
)`,
};

export function isFixtureTable(name: string): name is FixtureTable {
  return (FIXTURE_TABLES as readonly string[]).includes(name);
}

/** The CREATE TABLE statement of a reference table. */
export function fixtureDdl(table: FixtureTable): string {
  return DDL[table];
}
