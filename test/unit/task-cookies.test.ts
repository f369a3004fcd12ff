import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskCookies } from '../../client/crawler/fetch/task-cookies.js';

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
