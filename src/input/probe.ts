/**
 * How an HTTP(S) source is first asked about its object, as pure rules: a
 * HEAD, or, where HEAD is refused, a GET of its first byte (`Range:
 * bytes=0-0`), which says the same (size, ETag, Last-Modified, ranges).
 */

/** The range the probe asks for when HEAD is refused: one byte, whose answer carries the object's size. */
export const FIRST_BYTE = 'bytes=0-0';

/**
 * Answers to a HEAD that refuse the method rather than the object: 403 (a URL
 * signed for GET: S3 and Google sign the method), 405 (not allowed), 501 (not
 * implemented). A GET of the first byte asks instead; its own 403 is the real error.
 */
export function refusesHead(status: number): boolean {
  return status === 403 || status === 405 || status === 501;
}

/**
 * Whether the URL's query signature covers the HTTP method, so that a HEAD
 * with it is refused for certain and is not sent: S3 SigV4 (`X-Amz-Signature`)
 * and SigV2 (`AWSAccessKeyId` with `Signature`), Google Cloud Storage V4
 * (`X-Goog-Signature`) and V2 (`GoogleAccessId` with `Signature`). An Azure
 * SAS (`sig`) and CloudFront's `Signature` do not sign the method.
 */
export function signsMethod(url: URL): boolean {
  const names = new Set([...url.searchParams.keys()].map((k) => k.toLowerCase()));
  return names.has('x-amz-signature') || names.has('x-goog-signature') || (names.has('signature') && (names.has('awsaccesskeyid') || names.has('googleaccessid')));
}

/**
 * The object's size as the answer to `Range: bytes=0-0` gives it: a 206's
 * Content-Range `bytes 0-0/SIZE`; a 416's `bytes *\/0`, an empty object (RFC
 * 9110 §15.5.17); a 200's Content-Length (a server without ranges sent the
 * whole object). Undefined when the answer gives none (`/*`, no header, or a
 * range that is not the first byte's).
 */
export function firstByteSize(status: number, contentRange: string | undefined, contentLength: string | undefined): number | undefined {
  const cr = (contentRange ?? '').trim();
  const m =
    status === 206 ? /^bytes 0-(\d+)\/(\d+)$/i.exec(cr)
    : status === 416 ? /^bytes \*\/(0)$/i.exec(cr)
    : status === 200 ? /^(\d+)$/.exec((contentLength ?? '').trim())
    : null;
  if (!m) return undefined;
  const size = Number(m[m.length - 1]);
  // A 206 holds at least the byte asked for and ends inside the object.
  if (status === 206 && (size === 0 || Number(m[1]) >= size)) return undefined;
  return size;
}
