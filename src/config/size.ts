import { FlatloadError } from '../errors/index.js';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

/**
 * Parses a byte size such as `64MiB`, `64M`, `1G`, `500kB`, `1048576`.
 * Single-letter suffixes are binary, as in MySQL option files (`max_allowed_packet=64M`).
 */
export function parseByteSize(text: string, optionName: string, zeroAllowed = false): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new FlatloadError('USAGE', `--${optionName}: "${text}" is not a size (examples: 64MiB, 1G, 500000)`);
  }
  const bytes = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes) || bytes < 0 || (bytes === 0 && !zeroAllowed)) {
    throw new FlatloadError('USAGE', `--${optionName}: "${text}" must be a ${zeroAllowed ? 'size' : 'positive size'}`);
  }
  return bytes;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}
