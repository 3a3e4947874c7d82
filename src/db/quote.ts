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
  return text === '' ? "''" : `_utf8mb4 0x${Buffer.from(text, 'utf8').toString('hex')}`;
}
