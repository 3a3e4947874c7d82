import { maskUrlPassword } from '../config/url.js';
import { urlHasPassword } from '../errors/mask.js';

/**
 * The command that resumes a stopped load: the same command line with every
 * credential removed (a password given with -p/--password or inside --url is
 * dropped; the user supplies it again the way they did the first time), run
 * from the directory the first one ran in, so relative paths (the input, the
 * reject file, option files) mean the same from anywhere.
 */
export function resumeCommandLine(argv: readonly string[], cwd: string): string {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    // argv is already in mysql form (normalizeMysqlStyleArgs): -p never takes the next word.
    if (a === '--password' || a === '-p') continue;
    if (a.startsWith('--password=') || (a.startsWith('-p') && a.length > 2 && !a.startsWith('--'))) continue;
    const strip = WITH_PASSWORD[a];
    if (strip && argv[i + 1] !== undefined) {
      out.push(a, strip(argv[++i]!));
      continue;
    }
    const eq = a.indexOf('=');
    const stripInline = eq > 0 && a.startsWith('--') ? WITH_PASSWORD[a.slice(0, eq)] : undefined;
    if (stripInline) {
      out.push(`${a.slice(0, eq + 1)}${stripInline(a.slice(eq + 1))}`);
      continue;
    }
    if (a === '--restart' || a === '--dry-run') continue;
    // An http(s) input's password goes the way of the database's: the user gives it again.
    out.push(/^https?:\/\//i.test(a) && urlHasPassword(a) ? stripUrlPassword(a) : a);
  }
  return `cd ${shellQuote(cwd)} && ${['flatload', ...out.map(shellQuote)].join(' ')}`;
}

/** `NAME=URL` with the URL's password removed. */
function stripBackendPassword(arg: string): string {
  const eq = arg.indexOf('=');
  return eq === -1 ? arg : `${arg.slice(0, eq + 1)}${stripUrlPassword(arg.slice(eq + 1))}`;
}

function stripUrlPassword(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '';
    return u.toString();
  } catch {
    // A list of nodes (h1:3306,h2:3306) is no URL to the parser; its password is cut out the same way.
    return (url.includes(',') ? maskUrlPassword(url, '') : undefined) ?? '<url>';
  }
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Options whose value may hold a password, and how to take it out. */
const WITH_PASSWORD: Record<string, (value: string) => string> = {
  '--url': stripUrlPassword,
  '--backend': stripBackendPassword,
  // --replica takes URL or NAME=URL.
  '--replica': (v) => (/^[A-Za-z0-9_$-]+=/.test(v) ? stripBackendPassword(v) : stripUrlPassword(v)),
};
