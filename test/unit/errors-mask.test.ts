import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorReport, FlatloadError, formatError, maskInputUrl, maskUrlSecrets } from '../../src/errors/index.js';
import { isMaskedParam, maskedParamsOf } from '../../src/errors/mask.js';
import { maskPasswordArgs } from '../../src/cli/prompt.js';
import { resumeCommandLine, SIGNED_URL_NOTE } from '../../src/cli/resumeCommand.js';

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

// A presigned URL's credentials are in its query: the values of those parameters are masked (names in any case,
// percent-decoded), with the per-signature date and lifetime, so a fresh signature of the same object reads the same.
const SIGNED: ReadonlyArray<readonly [string, string, string]> = [
  // name, one URL, masked
  [
    'AWS SigV4',
    'https://b.s3.amazonaws.com/x.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20261203%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261203T010203Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=0a1b2c3d',
    'https://b.s3.amazonaws.com/x.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Date=***&X-Amz-Expires=***&X-Amz-SignedHeaders=host&X-Amz-Signature=***',
  ],
  ['AWS session token', 'https://h/x?X-Amz-Security-Token=IQoJb3JpZ2luX2Vj%2B%2F%3D&X-Amz-Signature=ab', 'https://h/x?X-Amz-Security-Token=***&X-Amz-Signature=***'],
  ['AWS SigV2', 'https://b.s3.amazonaws.com/x?AWSAccessKeyId=AKIA&Expires=1700000000&Signature=vjb%2B%3D', 'https://b.s3.amazonaws.com/x?AWSAccessKeyId=***&Expires=***&Signature=***'],
  [
    'Google V4',
    'https://storage.googleapis.com/b/x.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p.iam.gserviceaccount.com%2F20261203%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20261203T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=7f8e',
    'https://storage.googleapis.com/b/x.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=***&X-Goog-Date=***&X-Goog-Expires=***&X-Goog-SignedHeaders=host&X-Goog-Signature=***',
  ],
  ['Google V2', 'https://storage.googleapis.com/b/x?GoogleAccessId=sa%40p&Expires=1700000000&Signature=abc%3D', 'https://storage.googleapis.com/b/x?GoogleAccessId=***&Expires=***&Signature=***'],
  [
    'Azure SAS',
    'https://acct.blob.core.windows.net/c/x.tsv?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-04T00:00:00Z&st=2026-12-03T00:00:00Z&spr=https&sig=AbC%2Bd%2F%3D',
    'https://acct.blob.core.windows.net/c/x.tsv?sv=2022-11-02&ss=b&srt=o&sp=r&se=***&st=***&spr=https&sig=***',
  ],
  ['CloudFront', 'https://d1.cloudfront.net/x.tsv?Expires=1700000000&Signature=a~b-c_&Key-Pair-Id=K2JCJMDEHXQW5F', 'https://d1.cloudfront.net/x.tsv?Expires=***&Signature=***&Key-Pair-Id=K2JCJMDEHXQW5F'],
  ['generic tokens', 'https://h/export?id=7&token=t0k&access_token=eyJh.eyJz.c2ln&api_key=k&format=tsv', 'https://h/export?id=7&token=***&access_token=***&api_key=***&format=tsv'],
  ['passwords', 'https://h/x?user=me&password=p%40ss&pwd=x&passwd=y', 'https://h/x?user=me&password=***&pwd=***&passwd=***'],
  ['names in any case', 'https://h/x?x-amz-signature=a&SIG=b&Token=c', 'https://h/x?x-amz-signature=***&SIG=***&Token=***'],
  ['a percent-encoded name', 'https://h/x?X%2DAmz%2DSignature=a&to%6Ben=b', 'https://h/x?X%2DAmz%2DSignature=***&to%6Ben=***'],
  ['the first parameter and the last', 'https://h/x?sig=a', 'https://h/x?sig=***'],
  ['an empty value (no secret)', 'https://h/x?token=&sig=b', 'https://h/x?token=&sig=***'],
  ['a fragment after it', 'https://h/x?sig=abc#part', 'https://h/x?sig=***#part'],
  ['with a password too', 'https://u:pw@h/x?sig=abc', 'https://u:***@h/x?sig=***'],
  ['names that only look alike', 'https://h/x?signature_version=4&tokens=2&mysig=3&sig2=4', 'https://h/x?signature_version=4&tokens=2&mysig=3&sig2=4'],
  ['in the path, not the query', 'https://h/token=abc/sig=def.tsv', 'https://h/token=abc/sig=def.tsv'],
];

test('one URL: the password the parser finds is masked whole, the user kept; the values of its credential parameters masked, every other parameter kept (maskInputUrl, maskUrlSecrets)', () => {
  for (const [name, url, shown] of [...FOUND_AS_THE_PARSER_DOES, ...SIGNED]) {
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

test('in a message: every URL masked (passwords, credential parameters), each stopping at whitespace, punctuation after it kept', () => {
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
    // Signed URLs: masked wherever they are, ending at whitespace and quotes, closing punctuation kept.
    ['cannot read https://h/x?X-Amz-Signature=abc: HTTP 403', 'cannot read https://h/x?X-Amz-Signature=***: HTTP 403'],
    ['already masked https://h/x?sig=***: HTTP 403', 'already masked https://h/x?sig=***: HTTP 403'],
    ['(see https://h/x?token=t0k).', '(see https://h/x?token=***).'],
    ["'https://h/x?sig=a','https://h/y?sig=b'", "'https://h/x?sig=***','https://h/y?sig=***'"],
    ['"https://h/x?a=1&sig=a" and <https://h/y?token=b>', '"https://h/x?a=1&sig=***" and <https://h/y?token=***>'],
    ['redirected to https://cdn/x?X-Amz-Credential=AKIA%2Fd&X-Amz-Signature=ab#f then', 'redirected to https://cdn/x?X-Amz-Credential=***&X-Amz-Signature=***#f then'],
    ['a JWT https://h/x?access_token=eyJh.eyJz.c2ln.', 'a JWT https://h/x?access_token=***.'],
    ['two lines https://h/x?sig=a\nhttps://u:p@h2/y?token=b', 'two lines https://h/x?sig=***\nhttps://u:***@h2/y?token=***'],
    ['no URL: a query alone ?token=abc&x=1', 'no URL: a query alone ?token=***&x=1'],
    ['file https://h/x.tsv?v=2, line 3', 'file https://h/x.tsv?v=2, line 3'],
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


test("the parameter masks agree with Node's URL parser: same names in the same order, each value kept or ***", () => {
  for (const [name, url] of SIGNED) {
    const [given, shown] = [new URL(url), new URL(maskInputUrl(url))];
    assert.deepEqual([...shown.searchParams.keys()], [...given.searchParams.keys()], name);
    assert.deepEqual([shown.host, shown.pathname, shown.hash], [given.host, given.pathname, given.hash], name);
    for (const [k, v] of given.searchParams) {
      assert.equal(shown.searchParams.get(k), isMaskedParam(k) && v !== '' ? '***' : v, `${name}: ${k}`);
    }
  }
});

test('a fresh signature of the same object masks to the same URL', () => {
  const sign = (date: string, sig: string): string => `https://b.s3.amazonaws.com/x.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F${date.slice(0, 8)}%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=${date}&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=${sig}`;
  assert.equal(maskInputUrl(sign('20261203T010203Z', 'aa11')), maskInputUrl(sign('20261204T235959Z', 'ff99')));
});

test('an error carrying a signed URL prints no signature, in text or JSON', () => {
  const url = 'https://b.s3.amazonaws.com/x.tsv?X-Amz-Credential=AKIAEXAMPLE%2F20261203&X-Amz-Signature=d34db33f&X-Amz-Security-Token=FQoGZXIvYXdz';
  const err = new FlatloadError('INPUT_MALFORMED', `bad record in ${url}`, { file: url, line: 3, hint: `fix ${url}`, resumeCommand: resumeCommandLine(['load', url, '--table', 't'], '/w') });
  for (const out of [formatError(err), JSON.stringify(errorReport(err)), formatError(new Error(`boom ${url}`))]) {
    assert.ok(!/d34db33f|AKIAEXAMPLE|FQoGZXIvYXdz/.test(out), out);
  }
});

test('the process title masks credential parameters with x, same length', () => {
  for (const [argv, shown] of [
    [['load', 'https://h/x?X-Amz-Signature=abcd&v=1'], ['load', 'https://h/x?X-Amz-Signature=xxxx&v=1']],
    [['load', 'https://u:pw@h/x?sig=a%2Bb'], ['load', 'https://u:xx@h/x?sig=xxxxx']],
    [['load', 'https://h/x?next=https://h2/y&token=abc'], ['load', 'https://h/x?next=https://h2/y&token=xxx']],
    [['load', 'https://h/x?v=1'], ['load', 'https://h/x?v=1']],
  ] as const) assert.deepEqual(maskPasswordArgs(argv), shown, argv.join(' '));
});

test('the resume command shows a signed URL with *** for its credentials and says to give a fresh one', () => {
  for (const [argv, shown, note] of [
    [['load', 'https://h/x.tsv?X-Amz-Date=20261203T010203Z&X-Amz-Signature=abc', '--table', 't'], "flatload load 'https://h/x.tsv?X-Amz-Date=***&X-Amz-Signature=***' --table t", true],
    [['load', 'https://u:pw@h/x.tsv?sig=abc', '--table', 't'], "flatload load 'https://u@h/x.tsv?sig=***' --table t", true],
    [['load', 'https://h/x.tsv?v=2', '--table', 't'], "flatload load 'https://h/x.tsv?v=2' --table t", false],
    [['load', 'https://u:pw@h/x.tsv', '--table', 't'], 'flatload load https://u@h/x.tsv --table t', false],
  ] as const) {
    const line = resumeCommandLine(argv, '/w');
    assert.ok(line.startsWith(`cd /w && ${shown}`), line);
    assert.equal(line.endsWith(`  ${SIGNED_URL_NOTE}`), note, line);
    assert.ok(!/abc|pw@|20261203/.test(line), line);
  }
});

test('maskedParamsOf names the masked parameters of a URL, or those holding the placeholder', () => {
  assert.deepEqual(maskedParamsOf('https://h/x?a=1&X-Amz-Signature=s&Token=t'), ['X-Amz-Signature', 'Token']);
  assert.deepEqual(maskedParamsOf('https://h/x?X-Amz-Date=***&X-Amz-Signature=***&v=***', '***'), ['X-Amz-Date', 'X-Amz-Signature']);
  assert.deepEqual(maskedParamsOf('https://h/x?sig=abc', '***'), []);
  assert.deepEqual(maskedParamsOf('https://h/x'), []);
});
