import type { Argv } from 'yargs';

/** mysqlimport's format flag names and value conventions. */
export function withFormatOptions<T>(y: Argv<T>) {
  return y
    .option('dialect', { type: 'string', describe: 'preset: default | csv | tsv | csv-unix (MySQL Shell definitions)', group: 'Format:' })
    .option('fields-terminated-by', { type: 'string', describe: "field separator, e.g. '\\t' or ','", group: 'Format:' })
    .option('fields-enclosed-by', { type: 'string', describe: "quote character, e.g. '\"'", group: 'Format:' })
    .option('fields-optionally-enclosed-by', { type: 'string', describe: 'quote character (OPTIONALLY ENCLOSED BY)', group: 'Format:' })
    .option('fields-escaped-by', { type: 'string', describe: "escape character ('' for none)", group: 'Format:' })
    .option('lines-terminated-by', { type: 'string', describe: "record terminator, e.g. '\\n' or '\\r\\n'", group: 'Format:' })
    .option('ignore-lines', { type: 'string', describe: 'header lines to skip', group: 'Format:' })
    .option('columns', { alias: 'c', type: 'string', describe: 'comma-separated target columns (@name discards a field), or header: the first line names them (matched case-insensitively; --ignore-lines defaults to 1)', group: 'Format:' })
    .option('skip-fields', { type: 'string', describe: 'with --columns header: comma-separated header fields to discard (fields the table lacks are an error otherwise)', group: 'Format:' })
    .option('character-set', { type: 'string', describe: "the file's character set (LOAD DATA CHARACTER SET)", group: 'Format:' })
    .option('keep-bom', { type: 'boolean', describe: 'keep a leading UTF-8 byte-order mark as data (default: skip it)', group: 'Format:' });
}
