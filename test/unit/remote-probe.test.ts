import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstByteSize, refusesHead, signsMethod } from '../../src/input/probe.js';

test('the size an answer to Range: bytes=0-0 gives: a 206 by Content-Range, a 416 of an empty object, a 200 by Content-Length', () => {
  // [status, Content-Range, Content-Length, size]
  for (const [status, range, length, size] of [
    [206, 'bytes 0-0/735701', '1', 735_701],
    [206, 'BYTES 0-0/1', '1', 1],
    [206, ' bytes 0-0/42 ', undefined, 42],
    // More than the byte asked for (a server may send more), still from byte 0 and inside the object.
    [206, 'bytes 0-1023/5000', '1024', 5000],
    [206, 'bytes 0-4999/5000', '5000', 5000],
    // No total, no header, not the first byte, past the end, a total of 0 for a byte sent: no size.
    [206, 'bytes 0-0/*', '1', undefined],
    [206, undefined, '1', undefined],
    [206, 'bytes 1-1/5000', '1', undefined],
    [206, 'bytes 0-5000/5000', '5001', undefined],
    [206, 'bytes 0-0/0', '1', undefined],
    [206, 'bytes=0-0/10', '1', undefined],
    [206, 'bytes 0-0/-1', '1', undefined],
    // An empty object: the byte asked for is past its end (RFC 9110 §15.5.17).
    [416, 'bytes */0', '0', 0],
    [416, 'bytes */10', undefined, undefined],
    [416, undefined, undefined, undefined],
    // A server without ranges: the whole object, sized by Content-Length; its Content-Range, if any, is not read.
    [200, undefined, '735701', 735_701],
    [200, undefined, '0', 0],
    [200, 'bytes 0-0/9', '735701', 735_701],
    [200, undefined, undefined, undefined],
    [200, undefined, '12abc', undefined],
    // Other statuses are the caller's to refuse.
    [403, 'bytes 0-0/10', '10', undefined],
    [304, undefined, '10', undefined],
  ] as const) assert.equal(firstByteSize(status, range, length), size, `${status} ${String(range)} ${String(length)}`);
});

test('HEAD refused as a method (403, 405, 501) rather than for the object', () => {
  for (const status of [403, 405, 501]) assert.equal(refusesHead(status), true, String(status));
  // Not found, unauthorised (the GET would be too), a precondition, the server failing: not the method's fault.
  for (const status of [200, 401, 404, 410, 412, 500, 503]) assert.equal(refusesHead(status), false, String(status));
});

test('a URL whose signature covers the method is never asked HEAD: S3 SigV4 and SigV2, Google V4 and V2; not an Azure SAS, CloudFront or a plain URL', () => {
  for (const [url, signs] of [
    ['https://b.s3.amazonaws.com/x.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20261203%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261203T010203Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=ab12', true],
    ['https://b.s3.amazonaws.com/x.tsv?x-amz-signature=ab12', true],
    ['https://b.s3.amazonaws.com/x.tsv?AWSAccessKeyId=AKIA&Expires=1764720000&Signature=abc%3D', true],
    ['https://storage.googleapis.com/b/x.tsv?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p&X-Goog-Signature=cd34', true],
    ['https://storage.googleapis.com/b/x.tsv?GoogleAccessId=sa%40p&Expires=1764720000&Signature=abc%3D', true],
    // An Azure SAS signs permissions, not the method (read allows HEAD); CloudFront's Signature goes with Key-Pair-Id.
    ['https://a.blob.core.windows.net/c/x.tsv?sv=2022-11-02&sr=b&sp=r&se=2026-12-04T00%3A00%3A00Z&sig=abc%3D', false],
    ['https://d111.cloudfront.net/x.tsv?Expires=1764720000&Signature=abc~&Key-Pair-Id=K2JCJMDEHXQW5F', false],
    ['https://h/x.tsv?Signature=abc', false],
    ['https://h/x.tsv?token=abc', false],
    ['https://u:p@h/x.tsv', false],
    ['https://h/X-Amz-Signature/x.tsv', false],
  ] as const) assert.equal(signsMethod(new URL(url)), signs, url);
});
