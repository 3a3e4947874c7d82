import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorReport, FlatloadError, formatError, maskInputUrl, maskUrlSecrets } from '../../src/errors/index.js';
import { maskPasswordArgs } from '../../src/cli/prompt.js';
import { resumeCommandLine } from '../../src/cli/resumeCommand.js';

test('every URL password in a text is masked, users and plain paths kept', () => {
  for (const [text, shown] of [
    ['cannot read https://u:secret@h/x.tsv: 503', 'cannot read https://u:***@h/x.tsv: 503'],
    ['a s3://AKIA:k%2Fey@b/k and http://v:p@h2/y', 'a s3://AKIA:***@b/k and http://v:***@h2/y'],
    ['http://u@h:8080/x.tsv', 'http://u@h:8080/x.tsv'],
    ['http://h/a:b@c', 'http://h/a:b@c'],
    ['/data/x:y@z.tsv', '/data/x:y@z.tsv'],
    ['mysql://root:pw@db:3306/app', 'mysql://root:***@db:3306/app'],
  ] as const) assert.equal(maskUrlSecrets(text), shown, text);
});

test('an error built with the input as given prints no password, in text or JSON', () => {
  const url = 'https://reader:pa55-s3cret@files.example/x.tsv.gz';
  const err = new FlatloadError('INPUT_MALFORMED', `bad record in ${url}`, { file: url, line: 3, hint: `fix ${url}`, resumeCommand: `flatload load ${url} --table t` });
  const text = formatError(err);
  assert.doesNotMatch(text, /pa55-s3cret/);
  assert.match(text, /file https:\/\/reader:\*\*\*@files\.example\/x\.tsv\.gz, line 3/);
  const json = JSON.stringify(errorReport(err));
  assert.doesNotMatch(json, /pa55-s3cret/);
  assert.doesNotMatch(formatError(new Error(`boom ${url}`)), /pa55-s3cret/);
});

// The userinfo is found as Node's URL parser finds it: the authority runs to the first '/', '?' or '#', the
// userinfo to the authority's LAST '@', the password from the userinfo's FIRST ':'. The whole password is masked.
const FOUND_AS_THE_PARSER_DOES: ReadonlyArray<readonly [string, string, string]> = [
  // name, one URL, masked
  ["'@' in the user", 'http://me@corp.com:TOPSECRETPW@host/us.tsv', 'http://me@corp.com:***@host/us.tsv'],
  ["'@' in the password", 'http://reader:pa@55-s3cret@host/private/us.tsv', 'http://reader:***@host/private/us.tsv'],
  ["'@' in both", 'https://a@b:c@d@host:8443/x.tsv?v=1', 'https://a@b:***@host:8443/x.tsv?v=1'],
  ["':' in the password", 'https://u:pa:ss:w@h/x', 'https://u:***@h/x'],
  ['percent-encoded user and password', 'https://me%40corp:p%40ss%3Aw%2F@h/x', 'https://me%40corp:***@h/x'],
  ['an empty password', 'https://u:@h/x', 'https://u:***@h/x'],
  ['an empty user', 'https://:tok@h/x', 'https://:***@h/x'],
  ['no password', 'http://me@corp.com@h:8080/x.tsv', 'http://me@corp.com@h:8080/x.tsv'],
  ['no userinfo', 'https://h:8080/x.tsv', 'https://h:8080/x.tsv'],
  ["an '@' after the path starts", 'http://h/a:b@c', 'http://h/a:b@c'],
  ["an '@' in the query", 'http://u:p@h/x?to=a:b@c', 'http://u:***@h/x?to=a:b@c'],
  ["an '@' in the fragment", 'http://h#a:b@c', 'http://h#a:b@c'],
  ['a quote in the password', "https://u:pa'ss@h/x", 'https://u:***@h/x'],
  ['mysql://', 'mysql://me@corp:p@w@db:3306/app', 'mysql://me@corp:***@db:3306/app'],
  ['mariadb://', 'mariadb://root:pw@db/app', 'mariadb://root:***@db/app'],
  ['s3://', 's3://AKIA:k%2Fey@b/k', 's3://AKIA:***@b/k'],
  ['a local path', '/data/x:y@z.tsv', '/data/x:y@z.tsv'],
];

test('one URL: the password the parser finds is masked whole, the user kept (maskInputUrl, maskUrlSecrets)', () => {
  for (const [name, url, shown] of FOUND_AS_THE_PARSER_DOES) {
    assert.equal(maskInputUrl(url), shown, name);
    assert.equal(maskUrlSecrets(url), shown, name);
  }
});

test("the masks agree with Node's URL parser: same user, host, path and query, the password now ***", () => {
  for (const [name, url] of FOUND_AS_THE_PARSER_DOES) {
    if (!/^[a-z]+:\/\//.test(url)) continue;
    const [given, shown] = [new URL(url), new URL(maskInputUrl(url))];
    assert.deepEqual([shown.username, shown.host, shown.pathname, shown.search, shown.hash], [given.username, given.host, given.pathname, given.search, given.hash], name);
    if (given.password !== '') assert.equal(shown.password, '***', name);
  }
});

test('in a message: every URL masked, each stopping at whitespace, punctuation after it kept', () => {
  for (const [text, shown] of [
    ['cannot read http://me@corp.com:TOPSECRETPW@host/us.tsv: 503', 'cannot read http://me@corp.com:***@host/us.tsv: 503'],
    ['cannot read http://reader:pa@55-s3cret@host: refused', 'cannot read http://reader:***@host: refused'],
    ['a http://a@b:c@d@h1/x, b https://v:q@h2 and s3://K:S@b/k.', 'a http://a@b:***@h1/x, b https://v:***@h2 and s3://K:***@b/k.'],
    ['(see http://u:p@h).', '(see http://u:***@h).'],
    ['"http://u:p@h/x" failed for user x@y', '"http://u:***@h/x" failed for user x@y'],
    ["'http://u:p@h' and 'http://v:q@h2'", "'http://u:***@h' and 'http://v:***@h2'"],
    ['http://u:p@h,http://v:q@h2/x', 'http://u:***@h,http://v:***@h2/x'],
    ['http://u:p@h;mysql://r:w@d/app', 'http://u:***@h;mysql://r:***@d/app'],
    ['file http://u@h:8080/x.tsv, line 3', 'file http://u@h:8080/x.tsv, line 3'],
    ['mail me@corp.com: a:b@c is no URL', 'mail me@corp.com: a:b@c is no URL'],
    ['already masked https://u:***@h/x', 'already masked https://u:***@h/x'],
    ['two lines https://u:p@h\nhttp://v:q@h2/x', 'two lines https://u:***@h\nhttp://v:***@h2/x'],
  ] as const) assert.equal(maskUrlSecrets(text), shown, text);
});

test('an error carrying a URL with a raw @ in its userinfo prints no password, in text or JSON', () => {
  for (const [url, secret] of [
    ['http://me@corp.com:TOPSECRETPW@host/us.tsv', 'TOPSECRETPW'],
    ['http://reader:pa@55-s3cret@host/private/us.tsv', '55-s3cret'],
  ] as const) {
    const err = new FlatloadError('INPUT_MALFORMED', `bad record in ${url}`, { file: url, line: 3, hint: `fix ${url}`, resumeCommand: resumeCommandLine(['load', url, '--table', 't'], '/w') });
    assert.ok(!formatError(err).includes(secret), url);
    assert.ok(!JSON.stringify(errorReport(err)).includes(secret), url);
    assert.ok(!formatError(new Error(`boom ${url}`)).includes(secret), url);
  }
});

test('the process title masks such passwords with x, same length, for an input, --url, --backend and --replica', () => {
  for (const [argv, shown] of [
    [['load', 'http://me@corp.com:TOPSECRETPW@host/us.tsv'], ['load', 'http://me@corp.com:xxxxxxxxxxx@host/us.tsv']],
    [['load', 'http://reader:pa@55-s3cret@host/private/us.tsv'], ['load', 'http://reader:xxxxxxxxxxxx@host/private/us.tsv']],
    [['--url', 'mysql://me@corp:p@w@db:3306/app'], ['--url', 'mysql://me@corp:xxx@db:3306/app']],
    [['--url=mariadb://a@b:c:d@db/app?ssl-mode=REQUIRED'], ['--url=mariadb://a@b:xxx@db/app?ssl-mode=REQUIRED']],
    [['--backend', 'b1=mysql://me@corp:pw@h:3307'], ['--backend', 'b1=mysql://me@corp:xx@h:3307']],
    [['--replica=east=mysql://v:p@2@h2'], ['--replica=east=mysql://v:xxx@h2']],
    [['--url', 'mysql://u:p w@h/db'], ['--url', 'mysql://u:xxx@h/db']],
    [['load', 'http://me@corp.com@h/x.tsv', 's3://b/k', '/data/x:y@z.tsv'], ['load', 'http://me@corp.com@h/x.tsv', 's3://b/k', '/data/x:y@z.tsv']],
  ] as const) assert.deepEqual(maskPasswordArgs(argv), shown, argv.join(' '));
});

test('the resume command drops such passwords, keeping the user', () => {
  for (const [argv, shown] of [
    [['load', 'http://me@corp.com:TOPSECRETPW@host/us.tsv'], 'http://me%40corp.com@host/us.tsv'],
    [['load', 'http://reader:pa@55-s3cret@host/private/us.tsv'], 'http://reader@host/private/us.tsv'],
    [['load', 'https://a@b:c:d@h/x'], 'https://a%40b@h/x'],
    [['load', 'f.tsv', '--url', 'mysql://me@corp:p@w@db:3306/app'], '--url mysql://me%40corp@db:3306/app'],
    [['load', 'http://me@corp.com@h/x.tsv'], 'load http://me@corp.com@h/x.tsv'],
  ] as const) {
    const line = resumeCommandLine(argv, '/w');
    assert.ok(line.includes(shown), line);
    assert.ok(!/TOPSECRET|s3cret|c:d|p@w/.test(line), line);
  }
});
