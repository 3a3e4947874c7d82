/**
 * Identifier and literal quoting. Every name that reaches SQL (from flags,
 * headers or the server) goes through quoteId; every value through
 * quoteString or a `?` placeholder.
 */
export function quoteId(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}

export function quoteQualified(db: string | undefined, table: string): string {
  return db === undefined ? quoteId(table) : `${quoteId(db)}.${quoteId(table)}`;
}

/**
 * A SQL string literal for bytes, safe whatever sql_mode says about
 * backslashes: printable ASCII other than quote and backslash is written as
 * is; anything else makes the whole literal a hex literal.
 */
export function quoteBytes(bytes: Buffer): string {
  for (const b of bytes) {
    if (b < 0x20 || b > 0x7e || b === 0x27 || b === 0x5c) return bytes.length === 0 ? "''" : `0x${bytes.toString('hex')}`;
  }
  return `'${bytes.toString('latin1')}'`;
}

/** A string literal for text (UTF-8 on a utf8mb4 connection), hex-encoded so no escaping mode matters. */
export function quoteString(text: string): string {
  return text === '' ? "''" : quoteInCharset(Buffer.from(text, 'utf8'), 'utf8mb4');
}

/**
 * Bytes in a named character set as a string literal (`_latin1 0xe9`): the
 * server converts it to a column's set as it converts LOAD DATA's input.
 */
export function quoteInCharset(bytes: Buffer, characterSet: string): string {
  const cs = characterSet.replace(/[^a-z0-9_]/gi, '');
  return bytes.length === 0 ? `_${cs}''` : `_${cs} 0x${bytes.toString('hex')}`;
}
