import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorReport, FlatloadError, formatError, maskUrlSecrets } from '../../src/errors/index.js';

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
