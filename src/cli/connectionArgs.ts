import type { Argv } from 'yargs';

/** Connection flags with the mysql client's names. Shared by every command that connects. */
export function withConnectionOptions<T>(y: Argv<T>) {
  return y
    .option('url', { type: 'string', describe: 'mysql://user:password@host:port/db (default: $DATABASE_URL)', group: 'Connection:' })
    .option('host', { alias: 'h', type: 'string', describe: 'server host', group: 'Connection:' })
    .option('port', { alias: 'P', type: 'string', describe: 'server TCP port', group: 'Connection:' })
    .option('user', { alias: 'u', type: 'string', describe: 'user name', group: 'Connection:' })
    .option('password', {
      alias: 'p',
      type: 'string',
      describe: 'password; -p with no value prompts for it (insecure on the command line, as with mysql)',
      group: 'Connection:',
    })
    .option('socket', { alias: 'S', type: 'string', describe: 'Unix socket path', group: 'Connection:' })
    .option('database', { alias: 'D', type: 'string', describe: 'default database', group: 'Connection:' })
    .option('defaults-file', { type: 'string', describe: 'read only this option file ([client] section)', group: 'Connection:' })
    .option('defaults-extra-file', { type: 'string', describe: 'read this option file after the usual ones', group: 'Connection:' })
    .option('no-defaults', { type: 'boolean', describe: 'read no option files', group: 'Connection:' })
    .option('ssl-mode', {
      type: 'string',
      describe: 'DISABLED | PREFERRED | REQUIRED | VERIFY_CA | VERIFY_IDENTITY',
      group: 'Connection:',
    })
    .option('ssl-ca', { type: 'string', describe: 'CA certificate file (PEM)', group: 'Connection:' })
    .option('ssl-cert', { type: 'string', describe: 'client certificate file (PEM)', group: 'Connection:' })
    .option('ssl-key', { type: 'string', describe: 'client key file (PEM)', group: 'Connection:' });
}
