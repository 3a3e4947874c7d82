import { displayBytes } from '../config/escapes.js';
import type { FileFormat } from '../config/format.js';

export interface SniffProblem {
  message: string;
  byteOffset: number;
  line: number;
  hint: string;
}

function lineAt(head: Buffer, offset: number): number {
  let n = 1;
  for (let i = head.indexOf(0x0a); i !== -1 && i < offset; i = head.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * Looks at the first bytes of the (decompressed) input for mistakes the
 * server would not report: a binary or UTF-16 file, or a line terminator
 * that does not match the file's (a CRLF file read with '\n' puts a '\r'
 * into every row's last field without a warning).
 */
export function sniffInput(head: Buffer, format: FileFormat): SniffProblem | undefined {
  if (head.length === 0) return undefined;
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    return {
      message: 'the input is UTF-16 (it starts with a UTF-16 byte-order mark), which LOAD DATA cannot read',
      byteOffset: 0,
      line: 1,
      hint: 'convert it first, e.g. iconv -f UTF-16 -t UTF-8',
    };
  }
  const nul = head.indexOf(0);
  if (nul !== -1) {
    return {
      message: 'the input contains NUL bytes: it looks like a binary file, not text (the text format writes NUL as \\0)',
      byteOffset: nul,
      line: lineAt(head, nul),
      hint: 'check the file, or decompress it first if it is compressed in a format flatload does not read',
    };
  }
  const lt = format.linesTerminatedBy;
  const lf = countOf(head, Buffer.from('\n'));
  const crlf = countOf(head, Buffer.from('\r\n'));
  if (lt.equals(Buffer.from('\n')) && lf >= 2 && crlf === lf) {
    const at = head.indexOf('\r\n');
    return {
      message: "every line ends in \\r\\n but --lines-terminated-by is '\\n': the \\r would become part of each row's last field",
      byteOffset: at,
      line: lineAt(head, at),
      hint: "use --lines-terminated-by '\\r\\n' (or --dialect csv / tsv)",
    };
  }
  if (lt.length > 0 && head.length >= 64 * 1024 && head.indexOf(lt) === -1 && lf >= 2) {
    return {
      message: `no line terminator '${displayBytes(lt)}' in the first ${head.length} bytes, though the input has line breaks`,
      byteOffset: 0,
      line: 1,
      hint: lf > crlf ? "the file's lines end in '\\n': use --lines-terminated-by '\\n'" : 'check --lines-terminated-by',
    };
  }
  return undefined;
}

function countOf(buf: Buffer, needle: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) n++;
  return n;
}
