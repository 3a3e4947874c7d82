/**
 * A URL's password replaced by `***` wherever one appears in the text (a user
 * alone is kept: it is no secret). Pure, and in the lowest room, so that the
 * one place errors are printed masks every URL an error's message or context
 * carries, whichever room built it.
 */
export function maskUrlSecrets(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^:@/?#\s]*:)([^@/?#\s]*)@/gi, '$1***@');
}

/** The URL with its user's password replaced by `***`, when the text is one URL (the mask anchored at its start). */
export function maskInputUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:)([^@/?#]*)@/i, '$1***@');
}
