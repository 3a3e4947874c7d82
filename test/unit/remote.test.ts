import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conditionHeaders } from '../../src/input/http.js';
import { Readable } from 'node:stream';
import { FlatloadError } from '../../src/errors/index.js';
import { backoffMs, contentRangeFailure, isRemoteInput, maskInputUrl, RemoteFailure, resumingRead, type FetchRange } from '../../src/input/remote.js';
import { parseS3Url, s3Endpoint } from '../../src/input/s3.js';
import { resumeCommandLine } from '../../src/cli/resumeCommand.js';
import { maskPasswordArgs } from '../../src/cli/prompt.js';
import { defaultRejectPath } from '../../src/report/rejectFile.js';

test('remote inputs are told from paths by their scheme', () => {
  for (const [text, remote] of [
    ['https://h/x.tsv', true],
    ['HTTP://h/x.tsv', true],
    ['s3://b/k', true],
    ['./s3:/x', false],
    ['/data/x.tsv', false],
    ['-', false],
  ] as const) assert.equal(isRemoteInput(text), remote, text);
});

test("a URL's password is masked, its user kept", () => {
  for (const [text, shown] of [
    ['https://u:secret@h/x.tsv', 'https://u:***@h/x.tsv'],
    ['http://u@h:8080/x.tsv', 'http://u@h:8080/x.tsv'],
    ['http://h/a:b@c', 'http://h/a:b@c'],
    ['https://:tok@h/x', 'https://:***@h/x'],
  ] as const) assert.equal(maskInputUrl(text), shown, text);
});

test('the resume command and the process title carry no input password', () => {
  const argv = ['load', 'https://u:secret@h/x.tsv', '--table', 't'];
  assert.doesNotMatch(resumeCommandLine(argv, '/w'), /secret/);
  assert.match(resumeCommandLine(argv, '/w'), /https:\/\/u@h\/x\.tsv/);
  assert.doesNotMatch(maskPasswordArgs(argv).join(' '), /secret/);
});

test('the reject file of a remote input goes to the working directory, named after the object', () => {
  for (const [input, path] of [
    ['https://h/exports/orders.csv.gz?sig=1', 'orders.rejects.csv'],
    ['s3://b/nightly/orders.tsv', 'orders.rejects.tsv'],
    ['https://h/', 't.rejects.txt'],
    ['/data/orders.csv', '/data/orders.rejects.csv'],
  ] as const) assert.equal(defaultRejectPath(input, 't'), path, input);
});

test('reads are conditional on the version first seen: a strong ETag, else Last-Modified', () => {
  assert.deepEqual(conditionHeaders('"abc"', 'Tue, 01 Dec 2026 10:00:00 GMT'), { 'if-match': '"abc"' });
  assert.deepEqual(conditionHeaders('W/"abc"', 'Tue, 01 Dec 2026 10:00:00 GMT'), { 'if-unmodified-since': 'Tue, 01 Dec 2026 10:00:00 GMT' });
  assert.deepEqual(conditionHeaders(undefined, undefined), {});
});

test('s3 URLs and endpoints', () => {
  assert.deepEqual(parseS3Url('s3://bucket/a/b.tsv'), { bucket: 'bucket', key: 'a/b.tsv' });
  assert.deepEqual(parseS3Url('s3://bucket/prefix/'), { bucket: 'bucket', key: 'prefix/' });
  assert.deepEqual(parseS3Url('s3://bucket'), { bucket: 'bucket', key: '' });
  assert.throws(() => parseS3Url('s3:///k'), /s3:\/\/bucket\/key/);
  const env = { AWS_ENDPOINT_URL: 'http://all:1', AWS_ENDPOINT_URL_S3: 'http://s3:2' };
  assert.equal(s3Endpoint({ endpoint: 'http://flag:3' }, env), 'http://flag:3');
  assert.equal(s3Endpoint({}, env), 'http://s3:2');
  assert.equal(s3Endpoint({}, { AWS_ENDPOINT_URL: 'http://all:1' }), 'http://all:1');
  assert.equal(s3Endpoint({}, {}), undefined);
});

test('backoff doubles to at most 5 s, with jitter below the step', () => {
  for (const [attempt, lo, hi] of [
    [1, 100, 200],
    [2, 200, 400],
    [3, 400, 800],
    [10, 2500, 5000],
  ] as const) {
    assert.equal(backoffMs(attempt, 0), lo);
    assert.equal(backoffMs(attempt, 1), hi);
  }
});

/** A transport over a buffer whose answers follow a script: each entry cuts the body after that many bytes, or fails. */
function scripted(data: Buffer, script: Array<number | RemoteFailure | Error>): { fetch: FetchRange; asked: Array<[number, number]> } {
  const asked: Array<[number, number]> = [];
  const fetch: FetchRange = (start, end) => {
    asked.push([start, end]);
    const step = script.shift();
    if (step instanceof Error) return Promise.reject(step);
    const body = data.subarray(start, step === undefined ? end : Math.min(end, start + step));
    const pieces = [];
    for (let i = 0; i < body.length; i += 7) pieces.push(body.subarray(i, i + 7));
    return Promise.resolve(Readable.from(pieces));
  };
  return { fetch, asked };
}

async function collect(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of r) parts.push(b as Buffer);
  return Buffer.concat(parts);
}

const data = Buffer.from(Array.from({ length: 500 }, (_, i) => i % 251));
const noWait = (): Promise<void> => Promise.resolve();

test('resumingRead: bodies cut short and resets are asked again from the byte reached; the bytes are exact', async () => {
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const { fetch, asked } = scripted(data, [30, reset, 0, 100, new RemoteFailure('HTTP 503', 'transient')]);
  const got = await collect(resumingRead(fetch, 10, 400, 'x', () => undefined, noWait));
  assert.ok(got.equals(data.subarray(10, 400)));
  assert.deepEqual(asked, [[10, 400], [40, 400], [40, 400], [40, 400], [140, 400], [140, 400]]);
});

test('resumingRead: a changed object is INPUT_CHANGED at once; a fatal failure passes its error through', async () => {
  let why: string | undefined;
  const changed = scripted(data, [50, new RemoteFailure('x was replaced', 'changed')]);
  await assert.rejects(collect(resumingRead(changed.fetch, 0, 400, 'x', (w) => (why = w), noWait)), (e: Error & { code?: string; context?: { byteOffset?: number } }) => e.code === 'INPUT_CHANGED' && e.context?.byteOffset === 50);
  assert.equal(why, 'x was replaced');
  const denied = new FlatloadError('ACCESS_DENIED', 'HTTP 403');
  const fatal = scripted(data, [new RemoteFailure('HTTP 403', 'fatal', denied)]);
  await assert.rejects(collect(resumingRead(fatal.fetch, 0, 400, 'x', () => undefined, noWait)), (e) => e === denied);
});

test('resumingRead: gives up after 6 failures in a row without a byte, not while bytes keep coming', async () => {
  const stuck = scripted(data, [20, 0, 0, 0, 0, 0, 0, 0]);
  await assert.rejects(collect(resumingRead(stuck.fetch, 0, 400, 'x', () => undefined, noWait)), (e: Error & { code?: string }) => e.code === 'INPUT_UNREADABLE' && /6 attempts in a row at byte 20/.test(e.message));
  // The first request brought 20 bytes before it broke: it counts as the first of the six.
  assert.equal(stuck.asked.length, 6);
  const slow = scripted(data, Array.from({ length: 40 }, () => 10));
  assert.ok((await collect(resumingRead(slow.fetch, 0, 400, 'x', () => undefined, noWait))).equals(data.subarray(0, 400)));
});

test('a 206 answer must hold the bytes asked for: its Content-Range is checked, start, end and total', { timeout: 10_000 }, () => {
  // [header, start, end (exclusive), size] → undefined when it fits, else the kind of failure.
  for (const [header, start, end, size, kind] of [
    ['bytes 0-99/1000', 0, 100, 1000, undefined],
    ['bytes 200-999/1000', 200, 1000, 1000, undefined],
    ['bytes 200-499/*', 200, 1000, 1000, undefined],
    // Fewer bytes than asked: the loop asks again for the rest.
    ['bytes 200-299/1000', 200, 1000, 1000, undefined],
    ['BYTES 5-9/10', 5, 10, 10, undefined],
    // Another start (rounded down, or past the byte asked for), an end past the one asked for.
    ['bytes 0-999/1000', 200, 1000, 1000, 'transient'],
    ['bytes 300-999/1000', 200, 1000, 1000, 'transient'],
    ['bytes 200-1000/1000', 200, 1000, 1000, 'transient'],
    ['bytes 200-199/1000', 200, 1000, 1000, 'transient'],
    // Missing or unparsable.
    [undefined, 0, 100, 1000, 'transient'],
    ['', 0, 100, 1000, 'transient'],
    ['bytes */1000', 0, 100, 1000, 'transient'],
    ['bytes=0-99/1000', 0, 100, 1000, 'transient'],
    ['0-99/1000', 0, 100, 1000, 'transient'],
    // Another total: the object changed, whatever the range.
    ['bytes 0-99/1001', 0, 100, 1000, 'changed'],
    ['bytes 0-999/1001', 200, 1000, 1000, 'changed'],
  ] as const) {
    const f = contentRangeFailure(header, start, end, size, 'https://h/x.tsv');
    assert.equal(f?.kind, kind, `${header} for [${start}, ${end}) of ${size}`);
    if (kind === 'transient') assert.ok(f!.message.includes(`https://h/x.tsv answered bytes=${start}-${end - 1} with Content-Range`), f!.message);
  }
});
