import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conditionHeaders } from '../../src/input/http.js';
import { backoffMs, isRemoteInput, maskInputUrl } from '../../src/input/remote.js';
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
