import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FlatloadError } from '../../src/errors/index.js';
import { credentialsFor, describeChain, isRedirect, MAX_REDIRECTS, redirectTarget } from '../../src/input/redirect.js';

const chainOf = (...urls: string[]): URL[] => urls.map((u) => new URL(u));

test('the statuses followed: 301, 302, 303, 307, 308; not 300, 304, 305 or any other', () => {
  for (const [status, followed] of [
    [301, true],
    [302, true],
    [303, true],
    [307, true],
    [308, true],
    [300, false],
    [304, false],
    [305, false],
    [306, false],
    [200, false],
    [206, false],
    [404, false],
  ] as const) assert.equal(isRedirect(status), followed, String(status));
});

test('a Location is resolved against the URL that sent it: relative, absolute, scheme-relative; the fragment dropped', () => {
  // [the URL redirecting, Location, where it leads]
  for (const [from, location, to] of [
    ['http://h/a/b.tsv', '/exports/us.tsv', 'http://h/exports/us.tsv'],
    ['http://h/a/b.tsv', 'c.tsv', 'http://h/a/c.tsv'],
    ['http://h/a/b.tsv', '../c.tsv', 'http://h/c.tsv'],
    ['http://h:8080/a/b', '?v=2', 'http://h:8080/a/b?v=2'],
    ['http://h/a', '//cdn.example/x.tsv.gz', 'http://cdn.example/x.tsv.gz'],
    ['https://h/a', '//cdn.example/x', 'https://cdn.example/x'],
    ['http://h/a', 'https://cdn.example/x?X-Amz-Signature=ab', 'https://cdn.example/x?X-Amz-Signature=ab'],
    ['http://h/a', ' /x.tsv ', 'http://h/x.tsv'],
    ['http://h/a', '/x.tsv#part', 'http://h/x.tsv'],
    ['http://u:p@h/a', '/b', 'http://u:p@h/b'],
  ] as const) {
    const next = redirectTarget(chainOf(from), 302, location);
    assert.ok(next instanceof URL, `${from} + ${location}: ${String(next)}`);
    assert.equal(next.href, to, `${from} + ${location}`);
  }
});

test('a chain that cannot end well is an INPUT_UNREADABLE naming it (passwords masked)', () => {
  const deep = Array.from({ length: MAX_REDIRECTS + 1 }, (_, i) => `http://h/${i}`);
  // [chain so far, Location, what the message says]
  for (const [chain, location, says] of [
    [['http://h/a'], undefined, 'HTTP 302 without a Location to follow (http://h/a)'],
    [['http://h/a'], '  ', 'HTTP 302 without a Location to follow'],
    [['http://h/a'], 'http://[nope/', 'with a Location that is no URL: "http://[nope/"'],
    [['http://h/a'], 'ftp://h/x.tsv', 'redirected to a ftp: URL, which flatload does not follow (http://h/a → ftp://h/x.tsv)'],
    [['http://h/a'], 'file:///etc/passwd', 'redirected to a file: URL'],
    [['https://h/a'], 'http://h/a', 'redirected from https to plain http (https://h/a → http://h/a)'],
    [['https://u:secret@h/a', 'https://h2/b'], 'http://h3/c', 'redirected from https to plain http (https://u:***@h/a → https://h2/b → http://h3/c)'],
    [['http://h/a'], '/a', 'redirect loop: http://h/a → http://h/a'],
    [['http://h/a', 'http://h/b'], 'a#x', 'redirect loop: http://h/a → http://h/b → http://h/a'],
    [['http://h/a?x=1', 'http://h/b'], '/a?x=1', 'redirect loop'],
    [deep, '/next', `more than ${MAX_REDIRECTS} redirects: http://h/0 → http://h/1 →`],
  ] as const) {
    const e = redirectTarget(chainOf(...chain), 302, location);
    assert.ok(e instanceof FlatloadError, `${chain.join(' → ')} + ${String(location)}: ${String(e)}`);
    assert.equal(e.code, 'INPUT_UNREADABLE');
    assert.ok(e.message.includes(says), e.message);
    assert.ok(!e.message.includes('secret'), e.message);
  }
});

test('not a loop: the same path with another query, http to https, and exactly the most redirects allowed', () => {
  for (const [chain, location] of [
    [['http://h/a?x=1'], '/a?x=2'],
    [['http://h/a'], 'https://h/a'],
    [Array.from({ length: MAX_REDIRECTS }, (_, i) => `http://h/${i}`), '/last'],
  ] as const) assert.ok(redirectTarget(chainOf(...chain), 301, location) instanceof URL, `${chain.join(' → ')} + ${location}`);
});

test('credentials go only to the origin named (scheme, host and port), or with a redirect that names its own', () => {
  const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  // [URL named, the hop asked, the Authorization sent]
  for (const [named, hop, sent] of [
    ['http://u:p@h/a', 'http://u:p@h/b', basic('u', 'p')],
    ['http://u:p@h/a', 'http://h/b', basic('u', 'p')],
    ['http://u:p@h:80/a', 'http://h/b', basic('u', 'p')],
    ['http://u:p@h/a', 'http://h:8080/b', undefined],
    ['http://u:p@h/a', 'https://h/b', undefined],
    ['http://u:p@h/a', 'http://h2/b', undefined],
    ['http://u:p@h/a', 'http://v:q@h2/b', basic('v', 'q')],
    ['http://h/a', 'http://h/b', undefined],
    ['http://me%40corp:p%3Aw@h/a', 'http://h/b', basic('me@corp', 'p:w')],
    ['http://u@h/a', 'http://h/b', basic('u', '')],
  ] as const) assert.equal(credentialsFor(new URL(named), new URL(hop)), sent, `${named} → ${hop}`);
});

test('a chain is named with every password masked', () => {
  assert.equal(describeChain(chainOf('http://u:pw@h/a', 'https://cdn/b')), 'http://u:***@h/a → https://cdn/b');
});
