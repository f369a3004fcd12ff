import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settingsFromFlags } from '../../master/cli/crawl-flags.js';
import {
  fetchSettingsOf,
  parseCrawlSettings,
  settingFromText,
  settingToText,
} from '../../shared/crawl-settings/index.js';
import { InvalidInputError } from '../../shared/errors.js';
import { fixedCookiesSchema, parseFixedCookie, wireOfFixed } from '../../shared/protocol/fixed-cookies.js';

test('a cookie as text: domain name=value, then Path and Secure', () => {
  assert.deepEqual(parseFixedCookie('.example.com sid=abc123'), {
    domain: '.example.com',
    name: 'sid',
    value: 'abc123',
    path: '/',
    secure: false,
  });
  assert.deepEqual(parseFixedCookie('  app.example.com  token=a=b ; Path=/app ; secure '), {
    domain: 'app.example.com',
    name: 'token',
    value: 'a=b',
    path: '/app',
    secure: true,
  });
  assert.deepEqual(parseFixedCookie('127.0.0.1 empty='), {
    domain: '127.0.0.1',
    name: 'empty',
    value: '',
    path: '/',
    secure: false,
  });
});

test('what is not a cookie is BAD_COOKIE, and the message never shows the value', () => {
  for (const [line, why] of [
    ['sid=secret-1', /write it as "domain name=value"/],
    ['.com sid=secret-1', /a domain \(\.example\.com/],
    ['https://a.test/ sid=secret-1', /a host name/],
    ['a.test sid=secret-1; HttpOnly', /unknown attribute "HttpOnly"/],
    ['a.test sid=secret-1; Path=x', /a path starting with \//],
    ['a.test sid="secret-1"', /a cookie value/],
  ] as const) {
    assert.throws(
      () => parseFixedCookie(line),
      (err: unknown) => {
        assert.ok(err instanceof InvalidInputError, line);
        assert.equal(err.code, 'BAD_COOKIE');
        assert.match(err.message, why, line);
        assert.doesNotMatch(err.message, /secret-1/, line);
        return true;
      },
    );
  }
});

test('the setting: at most 50, one name per domain and path, as text and back, sent to crawlers when set', () => {
  const problems = (value: unknown) => {
    const parsed = fixedCookiesSchema.safeParse(value);
    return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
  };
  assert.deepEqual(
    problems([
      { name: 'sid', value: '1', domain: 'a.test' },
      { name: 'sid', value: '2', domain: 'A.test' },
      { name: 'sid', value: '3', domain: 'a.test', path: '/x' },
    ]),
    ['sid is given twice for A.test'],
  );
  assert.equal(
    problems(Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, value: '1', domain: 'a.test' }))).length,
    1,
  );
  const cookies = settingFromText('cookies', '.a.test sid=1\nb.test k=v; Secure\n');
  assert.deepEqual(settingFromText('cookies', settingToText('cookies', cookies)), cookies);
  const settings = parseCrawlSettings({ seeds: ['https://a.test/'], cookies });
  assert.deepEqual(fetchSettingsOf(settings).cookies, cookies);
  assert.equal(fetchSettingsOf(parseCrawlSettings({ seeds: ['https://a.test/'] })).cookies, undefined);
  assert.deepEqual(settingsFromFlags({ cookie: ['.a.test sid=1'] }).input, {
    cookies: [{ domain: '.a.test', name: 'sid', value: '1', path: '/', secure: false }],
  });
  assert.match(
    settingsFromFlags({ cookie: ['nope'] }).problems[0] ?? '',
    /^--cookie: cookie "nope": write it as/,
  );
});

test('as a jar takes it: a leading dot is a domain cookie, none a host-only one', () => {
  assert.deepEqual(wireOfFixed(parseFixedCookie('.A.test sid=1; Secure')), {
    name: 'sid',
    value: '1',
    domain: 'a.test',
    path: '/',
    expires: null,
    hostOnly: false,
    secure: true,
    httpOnly: false,
  });
  assert.equal(wireOfFixed(parseFixedCookie('www.a.test sid=1')).hostOnly, true);
});
