import { FlatloadError } from '../errors/index.js';

/**
 * Interprets a terminator/enclosure/escape value the way mysqlimport and
 * `mariadb-dump --tab` users write it: mysqlimport pastes the value into a SQL
 * string literal, so SQL literal escapes apply (`\t`, `\n`, `\r`, `\\`, `\0`,
 * `\Z`, `\b`, `\'`, `\"`; any other `\x` is `x`), a value starting with `0x`
 * is a hex constant, and a lone trailing backslash means a backslash (which is
 * how `--fields-escaped-by=\` works). The empty string stays empty.
 */
export function interpretEscapes(value: string, optionName: string): Buffer {
  if (/^0x/i.test(value)) {
    const hex = value.slice(2);
    if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-f]+$/i.test(hex)) {
      throw new FlatloadError('USAGE', `--${optionName}: "${value}" is not a valid hex constant`);
    }
    return Buffer.from(hex, 'hex');
  }
  const out: string[] = [];
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch !== '\\') {
      out.push(ch);
      continue;
    }
    const next = value[i + 1];
    if (next === undefined) {
      out.push('\\');
      break;
    }
    i++;
    out.push(SQL_ESCAPES[next] ?? (next === '%' || next === '_' ? `\\${next}` : next));
  }
  return Buffer.from(out.join(''), 'utf8');
}

const SQL_ESCAPES: Record<string, string> = {
  '0': '\0',
  "'": "'",
  '"': '"',
  b: '\b',
  n: '\n',
  r: '\r',
  t: '\t',
  Z: '\x1a',
  '\\': '\\',
};

/** The inverse, for messages and plan output: bytes as a readable escaped string. */
export function displayBytes(bytes: Buffer): string {
  let s = '';
  for (const b of bytes) {
    if (b === 0x09) s += '\\t';
    else if (b === 0x0a) s += '\\n';
    else if (b === 0x0d) s += '\\r';
    else if (b === 0x5c) s += '\\\\';
    else if (b === 0x00) s += '\\0';
    else if (b >= 0x20 && b < 0x7f) s += String.fromCharCode(b);
    else s += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return s;
}
