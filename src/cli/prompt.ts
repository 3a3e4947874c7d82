import { openSync, readSync, closeSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { FlatloadError } from '../errors/index.js';

/**
 * Reads a password from the terminal without echo, as the mysql client does.
 * It talks to /dev/tty, not stdin, because stdin may be the data (`load -`).
 */
export async function promptPassword(question: string): Promise<string> {
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'r+');
  } catch {
    throw new FlatloadError('CONFIG', '-p asks for a password, but there is no terminal to ask on', {
      hint: 'give the password in ~/.my.cnf, DATABASE_URL or .env instead',
    });
  }
  const stty = (arg: string): void => {
    spawnSync('stty', [arg], { stdio: [fd, 'ignore', 'ignore'] });
  };
  try {
    writeSync(fd, question);
    stty('-echo');
    const buf = Buffer.alloc(1);
    const bytes: number[] = [];
    for (;;) {
      const n = readSync(fd, buf, 0, 1, null);
      if (n === 0 || buf[0] === 0x0a || buf[0] === 0x0d) break;
      bytes.push(buf[0]!);
    }
    return Buffer.from(bytes).toString('utf8');
  } finally {
    stty('echo');
    writeSync(fd, '\n');
    closeSync(fd);
  }
}
