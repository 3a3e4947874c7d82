/**
 * Server and client error numbers flatload acts on, by the names the
 * servers give them (MariaDB include/mysqld_error.h and
 * https://mariadb.com/kb/en/mariadb-error-code-reference/; CR_* from the
 * client library; a few MySQL-only numbers noted as such). One place, so a
 * number means the same everywhere it is used.
 */
export const ER = {
  /** "Can't create table" (errno 150: a foreign key that cannot be made). */
  CANT_CREATE_TABLE: 1005,
  DISK_FULL: 1021,
  DUP_KEY: 1022,
  GET_ERRNO: 1030,
  DBACCESS_DENIED: 1044,
  /** Galera: "WSREP has not yet prepared node for application use". */
  UNKNOWN_COM: 1047,
  BAD_NULL: 1048,
  TABLE_EXISTS: 1050,
  BAD_TABLE: 1051,
  SERVER_SHUTDOWN: 1053,
  DUP_FIELDNAME: 1060,
  DUP_KEYNAME: 1061,
  DUP_ENTRY: 1062,
  CANT_DROP_FIELD_OR_KEY: 1091,
  UNKNOWN_ERROR: 1105,
  UNKNOWN_TABLE: 1109,
  RECORD_FILE_FULL: 1114,
  TABLEACCESS_DENIED: 1142,
  COLUMNACCESS_DENIED: 1143,
  NO_SUCH_TABLE: 1146,
  /** LOAD DATA LOCAL refused (local_infile=OFF). */
  NOT_ALLOWED_COMMAND: 1148,
  /** A statement larger than max_allowed_packet (the server then drops the connection). */
  NET_PACKET_TOO_LARGE: 1153,
  DUP_UNIQUE: 1169,
  /** "Got error N during COMMIT": MariaDB's bulk insert found a duplicate in a UNIQUE index at COMMIT; Galera's write-set limits. */
  ERROR_DURING_COMMIT: 1180,
  LOCK_WAIT_TIMEOUT: 1205,
  LOCK_DEADLOCK: 1213,
  CANNOT_ADD_FOREIGN: 1215,
  ROW_IS_REFERENCED: 1217,
  /** Over the account's MAX_USER_CONNECTIONS. */
  USER_LIMIT_REACHED: 1226,
  SPECIFIC_ACCESS_DENIED: 1227,
  WARN_TOO_FEW_RECORDS: 1261,
  /** "'db.v' is not of type 'BASE TABLE'": a view where a table was expected. */
  WRONG_OBJECT: 1347,
  WARN_TOO_MANY_RECORDS: 1262,
  WARN_NULL_TO_NOTNULL: 1263,
  WARN_DATA_OUT_OF_RANGE: 1264,
  WARN_DATA_TRUNCATED: 1265,
  TRUNCATED_WRONG_VALUE: 1292,
  /** MyRocks: rocksdb_max_row_locks reached ("Got error … from storage engine"). */
  GET_ERRMSG: 1296,
  INVALID_CHARACTER_STRING: 1300,
  QUERY_INTERRUPTED: 1317,
  NO_DEFAULT_FOR_FIELD: 1364,
  TRUNCATED_WRONG_VALUE_FOR_FIELD: 1366,
  DATA_TOO_LONG: 1406,
  /** A parent row still referenced by a foreign key (DELETE, DROP). */
  ROW_IS_REFERENCED_2: 1451,
  WRONG_VALUE_FOR_TYPE: 1411,
  /** Spider: a backend cannot be reached. */
  CONNECT_TO_FOREIGN_DATA_SOURCE: 1429,
  FOREIGN_DUPLICATE_KEY: 1557,
  DUP_ENTRY_WITH_KEY_NAME: 1586,
  /** "Non-ASCII separator arguments are not fully supported": once per statement, about the statement. */
  WARN_NON_ASCII_SEPARATOR: 1638,
  DATA_OUT_OF_RANGE: 1690,
  TRUNCATE_ILLEGAL_FK: 1701,
  /** "Failed to open the referenced table". */
  FK_CANNOT_OPEN_PARENT: 1824,
  CANNOT_CONVERT_CHARACTER: 1918,
  CONNECTION_KILLED: 1927,
  /** MySQL 8: LOAD DATA LOCAL disabled on the client side. */
  CLIENT_LOCAL_FILES_DISABLED: 3948,
  CONSTRAINT_FAILED: 4025,
  /** MySQL 8: disconnected for inactivity. */
  CLIENT_INTERACTION_TIMEOUT: 4031,
  /** MyRocks bulk load: rows not in key order (reported when it is finalised). */
  KEYS_OUT_OF_ORDER: 4054,
  /** MyRocks bulk load: the ingested file overlaps existing keys. */
  OVERLAPPING_KEYS: 4055,
  /** MariaDB: LOAD DATA LOCAL disabled by the server's local_infile. */
  LOAD_INFILE_CAPABILITY_DISABLED: 4166,
} as const;

/** Client-side (libmysql / mysql2) numbers. */
export const CR = {
  SERVER_GONE: 2006,
  SERVER_LOST: 2013,
} as const;
