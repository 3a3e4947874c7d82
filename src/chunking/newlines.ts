/** Newline bytes in buf[start, end): physical lines, for line numbers in messages. */
export function countNewlines(buf: Buffer, start = 0, end = buf.length): number {
  let n = 0;
  let i = buf.indexOf(0x0a, start);
  while (i !== -1 && i < end) {
    n++;
    i = buf.indexOf(0x0a, i + 1);
  }
  return n;
}
