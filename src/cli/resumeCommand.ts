import { maskUrlPassword } from '../config/url.js';
import { maskedParamsOf, maskInputUrl, urlHasPassword } from '../errors/mask.js';

/**
 * What follows the resume command of a load from a signed URL: its signature
 * is shown as `***`, and a signed URL expires anyway, so the user gives a
 * fresh one of the same object (the load resumes while the object is the same).
 */
export const SIGNED_URL_NOTE = '# *** marks what is not repeated: put a freshly signed URL of the same object in place of the input URL';

/**
 * The command that resumes a stopped load: the same command line with every
 * credential removed (a password given with -p/--password or inside --url is
 * dropped; the user supplies it again the way they did the first time), run
 * from the directory the first one ran in, so relative paths (the input, the
 * reject file, option files) mean the same from anywhere. A signed input URL
 * is shown with its credential parameters as `***` and SIGNED_URL_NOTE after
 * the command: a shell comment, so the line stays one to paste and edit.
 */
export function resumeCommandLine(argv: readonly string[], cwd: string): string {
  const out: string[] = [];
  let signed = false;
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
    if (!/^https?:\/\//i.test(a)) {
      out.push(a);
      continue;
    }
    // An http(s) input's password goes the way of the database's: the user gives it again; so does its signature.
    const url = urlHasPassword(a) ? stripUrlPassword(a) : a;
    signed ||= maskedParamsOf(url).length > 0;
    out.push(maskInputUrl(url));
  }
  return `cd ${shellQuote(cwd)} && ${['flatload', ...out.map(shellQuote)].join(' ')}${signed ? `  ${SIGNED_URL_NOTE}` : ''}`;
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
