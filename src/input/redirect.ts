import { FlatloadError } from '../errors/index.js';
import { maskInputUrl } from '../errors/mask.js';

/** Redirects followed for one request before it fails: curl's own default for -L is 50; browsers stop near 20. */
export const MAX_REDIRECTS = 10;

/** The answers that send a GET or HEAD elsewhere with the same method (RFC 9110 §15.4). 300, 304 and 305 are not redirects to follow. */
export function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** The chain of URLs a request went through, masked, for messages: `A → B → C`. */
export function describeChain(chain: readonly URL[]): string {
  return chain.map((u) => maskInputUrl(u.href)).join(' → ');
}

/**
 * Where a redirect from the last URL of `chain` leads: its Location resolved
 * against that URL (a relative one too), or the error that ends the chain — no
 * or a bad Location, a scheme other than http(s), https → http (the rest of the
 * chain would be readable and forgeable on the way), a URL already in the chain
 * (a loop), or more than MAX_REDIRECTS redirects.
 */
export function redirectTarget(chain: readonly URL[], status: number, location: string | undefined): URL | FlatloadError {
  const from = chain[chain.length - 1]!;
  const where = describeChain(chain);
  const fail = (why: string, hint?: string): FlatloadError => new FlatloadError('INPUT_UNREADABLE', `cannot read ${maskInputUrl(chain[0]!.href)}: ${why}`, { file: maskInputUrl(chain[0]!.href), ...(hint ? { hint } : {}) });
  if (location === undefined || location.trim() === '') return fail(`HTTP ${status} without a Location to follow (${where})`);
  let to: URL;
  try {
    to = new URL(location.trim(), from);
  } catch {
    return fail(`HTTP ${status} with a Location that is no URL: ${JSON.stringify(maskInputUrl(location))} (${where})`);
  }
  if (to.protocol !== 'http:' && to.protocol !== 'https:') return fail(`redirected to a ${to.protocol.slice(0, -1)}: URL, which flatload does not follow (${where} → ${maskInputUrl(to.href)})`);
  if (from.protocol === 'https:' && to.protocol === 'http:') {
    return fail(`redirected from https to plain http (${where} → ${maskInputUrl(to.href)}): refused, the rest would travel unencrypted`, 'have the server redirect to an https:// URL, or name the final URL yourself if plain http is really meant');
  }
  to.hash = '';
  if (chain.some((u) => sameResource(u, to))) return fail(`redirect loop: ${where} → ${maskInputUrl(to.href)}`, 'the server sends the request in a circle: fix its redirects');
  if (chain.length > MAX_REDIRECTS) return fail(`more than ${MAX_REDIRECTS} redirects: ${where} → ${maskInputUrl(to.href)}`, 'name a URL closer to the file');
  return to;
}

/** Two URLs that name the same resource (a fragment never reaches the server). */
function sameResource(a: URL, b: URL): boolean {
  return a.origin === b.origin && a.pathname === b.pathname && a.search === b.search;
}

/**
 * The basic-auth credentials a request to `hop` carries: the user and password
 * in its own URL, else those of the URL the user named when `hop` has the same
 * origin (scheme, host and port), else none — a redirect never hands them to
 * another server, as curl does not without --location-trusted.
 */
export function credentialsFor(named: URL, hop: URL): string | undefined {
  const from = hop.username || hop.password ? hop : hop.origin === named.origin ? named : undefined;
  if (!from || !(from.username || from.password)) return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(from.username)}:${decodeURIComponent(from.password)}`).toString('base64')}`;
}
