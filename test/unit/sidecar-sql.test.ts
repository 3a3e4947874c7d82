import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sidecarPlan, splitSql } from '../../src/export/ddl.js';
import { isFlatloadError } from '../../src/errors/index.js';

const V = 101106; // MariaDB 10.11.6

test('the tokenizer: statements, their lines, and the SQL words the server would see', () => {
  const cases: Array<[name: string, sql: string, want: Array<[line: number, words: string]>]> = [
    ['plain statements', 'SET @a = 1;\nCREATE TABLE t (a int);', [[1, 'SET @a = 1'], [2, 'CREATE TABLE t ( a int )']]],
    ['-- and # comments are nothing', '-- DROP DATABASE x;\n# DROP DATABASE y;\nSET @a=1;', [[3, 'SET @a = 1']]],
    ['--x (no space) is not a comment', 'SET @a=1--1;', [[1, 'SET @a = 1 - - 1']]],
    ['a /* */ comment inside a statement is nothing', 'drop /*c*/ table victim;', [[1, 'drop table victim']]],
    ['a ; inside a plain comment does not end the statement', 'SET @a /* ; DROP DATABASE x; */ = 1;', [[1, 'SET @a = 1']]],
    ['an executable comment is SQL', '/*!50001 DROP TABLE victim2.keep */;', [[1, 'DROP TABLE victim2 . keep']]],
    ['/*M! … */ is SQL too', '/*M!100101 DROP DATABASE v */;', [[1, 'DROP DATABASE v']]],
    ['/*! without a version is always SQL', '/*! DROP DATABASE v */;', [[1, 'DROP DATABASE v']]],
    ['a version above the server\'s is a comment (the sandbox line)', '/*M!999999\\- enable the sandbox mode */\n/*!110000 DROP DATABASE v */;\nSET @a=1;', [[3, 'SET @a = 1']]],
    ['a ; inside a string or a quoted name does not end it', "CREATE TABLE `a;b` (c varchar(3) DEFAULT 'x;y');", [[1, "CREATE TABLE a;b ( c varchar ( 3 ) DEFAULT x;y )"]]],
    ['escaped and doubled quotes', "SET @a = 'it''s \\'; DROP', @b = \"q\\\";\";", [[1, "SET @a = it's '; DROP , @b = q\";"]]],
    ['a */ inside a string inside an executable comment', "/*!40101 SET @a = '*/ DROP' */;", [[1, 'SET @a = */ DROP']]],
    ['DELIMITER lines', 'DELIMITER ;;\nSET @a = 1; SET @b = 2;;\nDELIMITER ;\nSET @c = 3;', [[2, 'SET @a = 1 ; SET @b = 2'], [4, 'SET @c = 3']]],
    ['the last statement needs no delimiter', 'SET @a = 1', [[1, 'SET @a = 1']]],
    ['lines counted across comments and strings', "/* a\nb */\nSET @a = 'x\ny';\n\nSET @b = 2;", [[3, 'SET @a = x\ny'], [6, 'SET @b = 2']]],
    ['system variables', 'SET @OLD_SQL_MODE=@@SQL_MODE, @@session.time_zone = 1;', [[1, 'SET @OLD_SQL_MODE = @@SQL_MODE , @@session.time_zone = 1']]],
  ];
  for (const [name, sql, want] of cases) {
    const got = splitSql(sql, V).map((s) => [s.line, s.tokens.map((t) => t.value).join(' ')]);
    assert.deepEqual(got, want, name);
  }
});

test('malformed files are refused with their line: unclosed strings and comments, a statement ending inside /*! */', () => {
  const cases: Array<[sql: string, line: number, re: RegExp]> = [
    ["SET @a = 'x;\n", 1, /string that starts on line 1 is not closed/],
    ['SET @a = 1;\n/* open', 2, /comment that starts on line 2 is not closed/],
    ['\n`open', 2, /quoted name/],
    ['/*!40101 SET @a = 1; DROP DATABASE v */;', 1, /ends inside the \/\*! … \*\/ comment/],
    ['/*!40101 SET /*!40101 @a */ = 1 */;', 1, /inside another one/],
  ];
  for (const [sql, line, re] of cases) {
    assert.throws(() => splitSql(sql, V), (e: unknown) => isFlatloadError(e) && e.code === 'INPUT_MALFORMED' && e.context.line === line && re.test(e.message), sql);
  }
});

/** What mariadb-dump --tab writes for a table (10.11), with a trigger-free table. */
const DUMP = [
  '/*M!999999\\- enable the sandbox mode */ ',
  '-- MariaDB dump 10.19-11.4.4-MariaDB, for debian-linux-gnu (x86_64)',
  '--',
  '-- Host: 127.0.0.1    Database: src',
  '-- ------------------------------------------------------',
  '-- Server version\t10.11.6-MariaDB',
  '',
  '/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;',
  '/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;',
  '/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;',
  '/*!40101 SET NAMES utf8mb4 */;',
  "/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;",
  "/*!40103 SET TIME_ZONE='+00:00' */;",
  "/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='' */;",
  '/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;',
  '/*M!100616 SET @OLD_NOTE_VERBOSITY=@@NOTE_VERBOSITY, NOTE_VERBOSITY=0 */;',
  '',
  '--',
  '-- Table structure for table `orders`',
  '--',
  '',
  'DROP TABLE IF EXISTS `orders`;',
  '/*!40101 SET @saved_cs_client     = @@character_set_client */;',
  '/*!40101 SET character_set_client = utf8 */;',
  'CREATE TABLE `orders` (',
  '  `id` bigint(20) NOT NULL AUTO_INCREMENT,',
  "  `note` varchar(200) DEFAULT 'a;b' COMMENT 'it''s',",
  '  PRIMARY KEY (`id`)',
  ') ENGINE=InnoDB AUTO_INCREMENT=40001 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;',
  '/*!40101 SET character_set_client = @saved_cs_client */;',
  '',
  '/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;',
  '/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;',
  '/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;',
  '/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;',
  '/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;',
  '/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;',
  '/*M!100616 SET NOTE_VERBOSITY=@OLD_NOTE_VERBOSITY */;',
  '',
  '-- Dump completed on 2026-12-04 17:00:00',
  '',
].join('\n');

const plan = (sql: string, version = V) => sidecarPlan(sql, { file: 'orders.sql', db: 'shop', table: 'orders', serverVersion: version });

test("mysqldump's own file for a table: its SETs and its one CREATE TABLE run, its DROP TABLE of the same table does not", () => {
  const p = plan(DUMP);
  assert.equal(p.run.filter((s) => /CREATE TABLE/.test(s)).length, 1);
  assert.ok(p.run.every((s) => /^(\/\*M?!\d+ SET |CREATE TABLE `orders`)/.test(s)), p.run.join('\n'));
  assert.ok(!p.run.some((s) => /DROP/.test(s)));
  assert.match(p.run.find((s) => s.startsWith('CREATE'))!, /DEFAULT 'a;b' COMMENT 'it''s'/);
  assert.deepEqual([...p.sessionVariables].sort(), ['character_set_client', 'character_set_connection', 'character_set_results', 'collation_connection', 'note_verbosity', 'sql_mode', 'sql_notes', 'time_zone']);
  // On a server older than 10.6.16, the note_verbosity lines are comments: not run, nothing to set back.
  assert.ok(!plan(DUMP, 100500).sessionVariables.includes('note_verbosity'));
});

test('a .sql file that does more than create its table is refused, naming the statement and its line', () => {
  const create = 'CREATE TABLE orders (id int primary key);';
  const cases: Array<[name: string, sql: string, line: number, re: RegExp]> = [
    ['another table', `${create}\nCREATE TABLE victim (a int);`, 2, /"CREATE TABLE victim \(a int\)" is a second CREATE TABLE/],
    ['another table only', 'CREATE TABLE victim (a int);', 1, /creates another table than shop\.orders/],
    ['another database', 'CREATE TABLE other.orders (a int);', 1, /creates another table/],
    ['an INSERT', `${create}\nINSERT INTO orders VALUES (1);`, 2, /"INSERT INTO orders VALUES \(1\)" is not orders's CREATE TABLE/],
    ['DROP DATABASE', `DROP DATABASE victim1;\n${create}`, 1, /DROP DATABASE victim1/],
    ['a DROP in an executable comment', `${create}\n/*!50001 DROP TABLE victim2.keep */;`, 2, /drops another table than shop\.orders/],
    ['a DROP with a comment inside', `${create}\ndrop /*c*/ table victim;`, 2, /"drop \/\*c\*\/ table victim" drops another table/],
    ['a DROP of the table and another', `DROP TABLE IF EXISTS orders, victim;\n${create}`, 1, /drops another table/],
    ['a DROP of the same name in another database', `DROP TABLE other.orders;\n${create}`, 1, /drops another table/],
    ['CREATE … SELECT', 'CREATE TABLE orders SELECT * FROM mysql.user;', 1, /reads rows/],
    ['CREATE … (SELECT)', 'CREATE TABLE orders (SELECT 1 AS a);', 1, /reads rows/],
    ['CREATE … LIKE', 'CREATE TABLE orders LIKE other.t;', 1, /LIKE/],
    ['two statements inside one under DELIMITER', `DELIMITER ;;\nCREATE TABLE orders (a int); DROP DATABASE v;;`, 2, /more than one statement/],
    ['a trigger', `${create}\nDELIMITER ;;\n/*!50003 CREATE*/ /*!50003 TRIGGER tr BEFORE INSERT ON orders FOR EACH ROW SET @x = 1 */;;`, 3, /is not orders's CREATE TABLE/],
    ['SET GLOBAL', `SET GLOBAL local_infile = 1;\n${create}`, 1, /is not a SET of a session variable/],
    ['SET @@global', `SET @@global.max_connections = 1;\n${create}`, 1, /is not a SET/],
    ['SET of another session variable', `SET sql_log_bin = 0;\n${create}`, 1, /is not a SET/],
    ['SET PASSWORD', `SET PASSWORD = PASSWORD('x');\n${create}`, 1, /is not a SET/],
    ['SET STATEMENT … FOR', `SET STATEMENT sql_mode='' FOR DROP DATABASE v;\n${create}`, 1, /is not a SET/],
    ['a SET that calls a function', `SET @a = (SELECT sleep(1));\n${create}`, 1, /is not a SET/],
    ['a SET that calls a function without parentheses around it', `SET @a = sleep(1);\n${create}`, 1, /is not a SET/],
    ['USE', `USE mysql;\n${create}`, 1, /is not orders's CREATE TABLE/],
    ['a CALL in a live comment', `${create}\n/*!40000 CALL p() */;`, 2, /CALL p\(\)/],
    ['CREATE TEMPORARY TABLE', 'CREATE TEMPORARY TABLE orders (a int);', 1, /is not orders's CREATE TABLE/],
  ];
  for (const [name, sql, line, re] of cases) {
    assert.throws(
      () => plan(sql),
      (e: unknown) => isFlatloadError(e) && e.code === 'UNSUPPORTED' && e.context.line === line && e.context.file === 'orders.sql' && /^orders\.sql line \d+: /.test(e.message) && re.test(e.message) && /--run-sql-files/.test(e.context.hint ?? ''),
      name,
    );
  }
  assert.throws(() => plan('SET @a = 1;'), (e: unknown) => isFlatloadError(e) && /holds no CREATE TABLE for orders/.test(e.message));
});

test('what may pass: a DROP of the same table, a db-qualified name, IF NOT EXISTS, := and a version-gated DROP the server skips', () => {
  const cases: Array<[sql: string, runs: number]> = [
    ['DROP TABLE orders; CREATE TABLE orders (a int);', 1],
    ['DROP TABLE IF EXISTS `shop`.`orders`; CREATE TABLE IF NOT EXISTS shop.orders (a int);', 1],
    ['SET @a := 1, SESSION foreign_key_checks = 0, LOCAL unique_checks = DEFAULT; CREATE TABLE orders (a int CHECK (a LIKE 1));', 2],
    ['/*!110000 DROP DATABASE v */; CREATE TABLE orders (a int);', 1],
    ["SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'; SET CHARACTER SET utf8mb4; CREATE TABLE orders (a int);", 3],
  ];
  for (const [sql, runs] of cases) assert.equal(plan(sql).run.length, runs, sql);
  assert.equal(plan('/*!110000 DROP DATABASE v */; CREATE TABLE orders (a int);').run[0], 'CREATE TABLE orders (a int)');
  // A comment the server would skip is not sent at all: what runs is what was checked.
  assert.equal(plan('CREATE /* x */ TABLE orders (a int) /*!999999 , DROP x */;').run[0], 'CREATE   TABLE orders (a int)');
});
