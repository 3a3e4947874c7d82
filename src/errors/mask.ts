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

/**
 * Query parameters whose values are credentials: a presigned URL's signature,
 * key id and session token (AWS SigV4 and SigV2, Google Cloud Storage V4 and
 * V2, CloudFront's `Signature`), an Azure SAS's `sig`, and the generic names
 * of tokens, passwords and API keys. Compared in lower case, percent-decoded.
 */
const SECRET_PARAMS = [
  'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'awsaccesskeyid',
  'x-goog-signature', 'x-goog-credential', 'googleaccessid',
  'signature', 'sig',
  'token', 'access_token', 'id_token', 'refresh_token', 'private_token', 'auth_token', 'session_token',
  'password', 'passwd', 'pwd', 'secret', 'client_secret', 'api_key', 'apikey',
];

/**
 * Parameters a signer sets anew with every signature (when it signed, until
 * when it holds): no secret, but masked too, so that a fresh signed URL of the
 * same object is the same input, shown and resumed as one (docs/sources.md):
 * SigV4's and V4's date and lifetime, SigV2's and CloudFront's `Expires` and
 * `Policy`, an Azure SAS's start and expiry (`st`, `se`, and `skt`, `ske` of a
 * user delegation key).
 */
const PER_SIGNATURE_PARAMS = ['x-amz-date', 'x-amz-expires', 'x-goog-date', 'x-goog-expires', 'expires', 'policy', 'se', 'st', 'skt', 'ske'];

const MASKED_PARAMS = new Set([...SECRET_PARAMS, ...PER_SIGNATURE_PARAMS]);

/** Whether a query parameter of this name has its value masked (the name as it appears in the URL). */
export function isMaskedParam(name: string): boolean {
  let decoded = name.replace(/\+/g, ' ');
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    // a stray % is no escape: the name as written
  }
  return MASKED_PARAMS.has(decoded.trim().toLowerCase());
}

/** `name=value` after `?` or `&`, in one URL's query: the value runs to the next `&` or `#`. */
const PARAM_OF_URL = /([?&])([^=&#]+)=([^&#]+)/g;
/**
 * The same in a longer text, in or out of a URL: the value also ends at
 * whitespace and quotes, and sentence punctuation closing it (`sig=***:`) is
 * left after it — a signature or token never ends in one.
 */
const PARAM_IN_TEXT = /([?&])([^=&#\s"'<>`]+)=([^&#\s"'<>`]+)/g;
const CLOSING_PUNCTUATION = /[.,:;)\]]+$/;

const stars = (): string => '***';

/** The value of every masked parameter in `query` replaced by mask(value). */
function maskParams(query: string, pattern: RegExp, mask: (value: string) => string, inText: boolean): string {
  return query.replace(pattern, (m: string, sep: string, name: string, value: string) => {
    if (!isMaskedParam(name)) return m;
    const tail = inText ? (CLOSING_PUNCTUATION.exec(value)?.[0] ?? '') : '';
    const secret = tail.length < value.length ? value.slice(0, value.length - tail.length) : value;
    return `${sep}${name}=${mask(secret)}${secret === value ? '' : tail}`;
  });
}

/**
 * Every URL credential in the text replaced by mask(secret), `***` unless
 * told: the password of a `scheme://user:password@`, and the values of the
 * query parameters above (names in any case); users, hosts, paths and other
 * parameters kept. `whole`: the text is one URL (a command-line argument, an
 * input) rather than a message that may hold several among other words. The
 * one rule behind maskUrlSecrets, maskInputUrl, the process title and the
 * resume command.
 */
export function maskUrlCredentials(text: string, { mask = stars, whole = false }: { mask?: (secret: string) => string; whole?: boolean } = {}): string {
  const replace = (_m: string, scheme: string, userinfo: string): string => `${scheme}${maskUserinfo(userinfo, mask)}@`;
  if (!whole) return maskParams(text.replace(USERINFO_IN_TEXT, replace), PARAM_IN_TEXT, mask, true);
  const url = text.replace(USERINFO_OF_URL, replace);
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}${maskParams(url.slice(q), PARAM_OF_URL, mask, false)}`;
}

/** The names of the masked parameters in one URL's query whose value is `value` (any value when not given). */
export function maskedParamsOf(url: string, value?: string): string[] {
  const q = url.indexOf('?');
  if (q < 0) return [];
  return [...url.slice(q).matchAll(PARAM_OF_URL)].filter((m) => isMaskedParam(m[2]!) && (value === undefined || m[3] === value)).map((m) => m[2]!);
}

/** Whether the text, one URL, carries a password (perhaps an empty one: `u:@host`). */
export function urlHasPassword(url: string): boolean {
  const m = USERINFO_OF_URL.exec(url);
  return m !== null && m[2]!.includes(':');
}

/**
 * A URL's password and credential parameters replaced by `***` wherever they
 * appear in the text (a user alone is kept: it is no secret). Pure, and in the
 * lowest room, so that the one place errors are printed masks every URL an
 * error's message or context carries, whichever room built it.
 */
export function maskUrlSecrets(text: string): string {
  return maskUrlCredentials(text);
}

/** The URL with its user's password and its credential parameters replaced by `***`, when the text is one URL. */
export function maskInputUrl(url: string): string {
  return maskUrlCredentials(url, { whole: true });
}
