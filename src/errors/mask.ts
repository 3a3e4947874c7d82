/**
 * `scheme://` and the URL's userinfo, found as Node's URL parser (WHATWG)
 * finds it: the authority runs from `scheme://` to the first `/`, `?` or `#`,
 * and the userinfo is the authority up to its LAST `@` (the greedy run backs
 * off to it), so a user or a password may hold a raw `@`
 * (`http://me@corp.com:pw@host/`, `http://u:pa@55@host/`). The match ends at
 * that `@`: the host is scanned again, so a URL right after it is found too.
 * In a longer text the authority also ends at whitespace; quotes do not end
 * it (the parser takes them in a password), and a run that goes too far only
 * masks more, never less. It can never reach into a following URL: that
 * one's `://` ends it.
 */
const USERINFO_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s]*)@/gi;
/** The same, for a text that is one URL: anchored at its start, whitespace inside it (the parser encodes it). */
const USERINFO_OF_URL = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;

/** The userinfo with its password (everything after its FIRST `:`) replaced by mask(password); a user alone is kept as it is. */
function maskUserinfo(userinfo: string, mask: (password: string) => string): string {
  const colon = userinfo.indexOf(':');
  return colon < 0 ? userinfo : `${userinfo.slice(0, colon + 1)}${mask(userinfo.slice(colon + 1))}`;
}

const stars = (): string => '***';

/**
 * Every URL password in the text replaced by mask(password), `***` unless
 * told; users, hosts and everything else kept. `whole`: the text is one URL
 * (a command-line argument, an input) rather than a message that may hold
 * several among other words. The one rule behind maskUrlSecrets,
 * maskInputUrl, the process title and the resume command.
 */
export function maskUrlPasswords(text: string, { mask = stars, whole = false }: { mask?: (password: string) => string; whole?: boolean } = {}): string {
  const replace = (_m: string, scheme: string, userinfo: string): string => `${scheme}${maskUserinfo(userinfo, mask)}@`;
  return whole ? text.replace(USERINFO_OF_URL, replace) : text.replace(USERINFO_IN_TEXT, replace);
}

/** Whether the text, one URL, carries a password (perhaps an empty one: `u:@host`). */
export function urlHasPassword(url: string): boolean {
  const m = USERINFO_OF_URL.exec(url);
  return m !== null && m[2]!.includes(':');
}

/**
 * A URL's password replaced by `***` wherever one appears in the text (a user
 * alone is kept: it is no secret). Pure, and in the lowest room, so that the
 * one place errors are printed masks every URL an error's message or context
 * carries, whichever room built it.
 */
export function maskUrlSecrets(text: string): string {
  return maskUrlPasswords(text);
}

/** The URL with its user's password replaced by `***`, when the text is one URL (the mask anchored at its start). */
export function maskInputUrl(url: string): string {
  return maskUrlPasswords(url, { whole: true });
}
