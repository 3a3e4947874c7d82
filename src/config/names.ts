/**
 * Table names as users write them on the command line: `db.table`, either
 * part backquoted (as quoteQualified writes them), so names with dots read back.
 */
/** Splits `db.table` (either part may be backquoted) into its parts. */
export function splitQualifiedName(text: string): { db: string | undefined; table: string } | undefined {
  const parts: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '`') {
      let name = '';
      i++;
      for (;;) {
        if (i >= text.length) return undefined;
        if (text[i] === '`') {
          if (text[i + 1] === '`') {
            name += '`';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        name += text[i++];
      }
      parts.push(name);
    } else {
      const dot = text.indexOf('.', i);
      const end = dot === -1 ? text.length : dot;
      parts.push(text.slice(i, end));
      i = end;
    }
    if (i < text.length) {
      if (text[i] !== '.') return undefined;
      i++;
      if (i === text.length) return undefined;
    }
  }
  if (parts.length === 1 && parts[0]) return { db: undefined, table: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { db: parts[0], table: parts[1] };
  return undefined;
}
