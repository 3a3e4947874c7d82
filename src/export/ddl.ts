/**
 * The statements of a mysqldump `t.sql` file: split at `;` (or the current
 * DELIMITER) outside quotes and comments, `--` and `#` comment lines
 * dropped, version comments (`/*!40101 … *\/`) kept — the server runs them.
 * DROP TABLE statements are left out: the file is only run to create a
 * table that is missing. Pure.
 */
export function ddlStatements(text: string): string[] {
  const out: string[] = [];
  let delimiter = ';';
  let cur = '';
  let i = 0;
  const push = (): void => {
    const s = cur.trim();
    cur = '';
    if (s !== '' && !/^DROP\s+TABLE\b/i.test(s)) out.push(s);
  };
  while (i < text.length) {
    const atLineStart = i === 0 || text[i - 1] === '\n';
    if (atLineStart && cur.trim() === '') {
      const lineEnd = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
      const line = text.slice(i, lineEnd);
      const m = /^\s*DELIMITER\s+(\S+)\s*$/i.exec(line);
      if (m) {
        delimiter = m[1]!;
        i = lineEnd + 1;
        continue;
      }
      if (/^\s*(--(\s|$)|#)/.test(line)) {
        i = lineEnd + 1;
        continue;
      }
    }
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' && c !== '`' ? 2 : 1;
      cur += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const j = end === -1 ? text.length : end + 2;
      if (text[i + 2] === '!') cur += text.slice(i, j);
      i = j;
      continue;
    }
    if (text.startsWith(delimiter, i)) {
      push();
      i += delimiter.length;
      continue;
    }
    cur += c;
    i++;
  }
  push();
  return out;
}
