import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskCookies } from '../../client/crawler/fetch/task-cookies.js';
import { parseFixedCookie, wireOfFixed } from '../../shared/protocol/fixed-cookies.js';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';

test('an empty jar answers no cookie and holds none', async () => {
  const jar = new TaskCookies();
  assert.equal(await jar.getCookieString('https://a.test/'), '');
  assert.equal(jar.empty, true);
  assert.deepEqual(await jar.forBrowser(), []);
});

test('cookies are matched by RFC 6265: host-only, domain, path, Secure', async () => {
  const jar = new TaskCookies();
  await jar.setCookie('host=1', 'https://www.a.test/x/page');
  await jar.setCookie('wide=2; Domain=a.test; Path=/', 'https://www.a.test/x/page');
  await jar.setCookie('deep=3; Path=/x', 'https://www.a.test/x/page');
  await jar.setCookie('safe=4; Secure; Path=/', 'https://www.a.test/');
  assert.equal(jar.empty, false);
  assert.equal(await jar.getCookieString('https://www.a.test/x/y'), 'host=1; deep=3; wide=2; safe=4');
  assert.equal(await jar.getCookieString('http://www.a.test/other'), 'wide=2');
  assert.equal(await jar.getCookieString('https://b.a.test/'), 'wide=2');
  assert.equal(await jar.getCookieString('https://b.test/'), '');
});

test('for the browser: a domain cookie gets its dot, expiry in seconds, SameSite spelled as Playwright does', async () => {
  const jar = new TaskCookies();
  const inAnHour = new Date(Date.now() + 3_600_000);
  await jar.setCookie(
    `wide=2; Domain=a.test; Path=/; Expires=${inAnHour.toUTCString()}; SameSite=lax`,
    'https://a.test/',
  );
  await jar.setCookie('host=1; HttpOnly; Secure; SameSite=Strict', 'https://a.test/dir/page');
  const byName = new Map((await jar.forBrowser()).map((c) => [c.name, c]));
  assert.deepEqual(byName.get('wide'), {
    name: 'wide',
    value: '2',
    domain: '.a.test',
    path: '/',
    expires: Math.floor(inAnHour.getTime() / 1000),
    httpOnly: false,
    secure: false,
    sameSite: 'Lax',
  });
  assert.deepEqual(byName.get('host'), {
    name: 'host',
    value: '1',
    domain: 'a.test',
    path: '/dir',
    expires: -1,
    httpOnly: true,
    secure: true,
    sameSite: 'Strict',
  });
});

test('an expired or deleted cookie is not handed on; a refused one never counts', async () => {
  const jar = new TaskCookies();
  await jar.setCookie('gone=1; Max-Age=0', 'https://a.test/');
  await jar.setCookie('=nameless', 'https://a.test/');
  await jar.setCookie('psl=1; Domain=test', 'https://a.test/');
  assert.equal(jar.empty, true);
  await jar.setCookie('kept=1', 'https://a.test/');
  await jar.setCookie('kept=1; Max-Age=0', 'https://a.test/');
  assert.deepEqual(await jar.forBrowser(), []);
  assert.equal(await jar.getCookieString('https://a.test/'), '');
});

test('a session: the jar starts with the cookies it is given, and gives back what it holds when set', async () => {
  const later = Date.now() + 3_600_000;
  const jar = new TaskCookies([
    {
      name: 'sid',
      value: 'abc',
      domain: 'a.test',
      path: '/',
      expires: null,
      hostOnly: true,
      secure: false,
      httpOnly: true,
    },
    {
      name: 'wide',
      value: '1',
      domain: 'a.test',
      path: '/',
      expires: later,
      hostOnly: false,
      secure: true,
      httpOnly: false,
      sameSite: 'lax',
    },
  ]);
  assert.equal(jar.empty, false);
  assert.equal(jar.changed, false, 'brought, not set');
  assert.equal(await jar.getCookieString('https://a.test/p'), 'sid=abc; wide=1');
  assert.equal(
    await jar.getCookieString('http://www.a.test/p'),
    '',
    'host-only stays on its host; Secure on https',
  );
  assert.equal(await jar.getCookieString('https://www.a.test/p'), 'wide=1');
  assert.equal((await jar.forBrowser()).length, 2, 'the browser gets them too');

  await jar.setCookie('sid=; Max-Age=0', 'https://a.test/logout');
  await jar.setCookie('step=2; Path=/checkout', 'https://a.test/checkout/start');
  assert.equal(jar.changed, true);
  const back = new Map((await jar.toWire()).map((c) => [c.name, c]));
  assert.ok((back.get('sid')?.expires ?? Infinity) <= Date.now(), 'a deletion goes back, expired');
  assert.deepEqual(back.get('wide'), {
    name: 'wide',
    value: '1',
    domain: 'a.test',
    path: '/',
    expires: later,
    hostOnly: false,
    secure: true,
    httpOnly: false,
    sameSite: 'lax',
  });
  assert.deepEqual(back.get('step'), {
    name: 'step',
    value: '2',
    domain: 'a.test',
    path: '/checkout',
    expires: null,
    hostOnly: true,
    secure: false,
    httpOnly: false,
  });
});

test("a run's own cookies start every jar; the session's put over them; only a change goes back", async () => {
  const fixed = [
    wireOfFixed(parseFixedCookie('.a.test sid=login')),
    wireOfFixed(parseFixedCookie('www.a.test pref=1; Path=/x; Secure')),
    wireOfFixed(parseFixedCookie('b.test key=b')),
  ];
  const plain = new TaskCookies(undefined, fixed);
  assert.equal(plain.session, false);
  assert.equal(await plain.getCookieString('https://www.a.test/x/y'), 'pref=1; sid=login');
  assert.equal(await plain.getCookieString('http://www.a.test/x/y'), 'sid=login', 'Secure: HTTPS only');
  assert.equal(
    await plain.getCookieString('https://c.a.test/'),
    'sid=login',
    'a domain cookie: subdomains too',
  );
  assert.equal(await plain.getCookieString('https://sub.b.test/'), '', 'host-only: that host alone');
  assert.equal(await plain.getCookieString('https://b.test/'), 'key=b');

  // A session that renewed the login: its value wins; the fixed ones never go back unchanged.
  const renewed = { ...fixed[0], value: 'renewed' } as WireCookie;
  const jar = new TaskCookies([renewed], fixed);
  assert.equal(await jar.getCookieString('https://a.test/'), 'sid=renewed');
  await jar.setCookie('step=2; Path=/', 'https://a.test/');
  assert.deepEqual((await jar.toWire()).map((c) => `${c.domain} ${c.name}=${c.value}`).sort(), [
    'a.test sid=renewed',
    'a.test step=2',
  ]);
  const untouched = new TaskCookies([], fixed);
  await untouched.setCookie('other=1', 'https://b.test/');
  assert.deepEqual(
    (await untouched.toWire()).map((c) => c.name),
    ['other'],
  );
});
