import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CookieSession } from '../../scheduler/runs/cookie-session.js';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';

const cookie = (name: string, domain: string, fields: Partial<WireCookie> = {}): WireCookie => ({
  name,
  value: `${name}-value`,
  domain,
  path: '/',
  expires: null,
  hostOnly: true,
  secure: false,
  httpOnly: false,
  ...fields,
});

const names = (cookies: readonly WireCookie[]): string[] => cookies.map((c) => c.name).sort();

test("a host's fetch starts with its own cookies and its parent domains', host-only ones of others left out", () => {
  const session = new CookieSession(() => 1_000);
  session.merge([
    cookie('own', 'www.a.test'),
    cookie('wide', 'a.test', { hostOnly: false }),
    cookie('apex', 'a.test'),
    cookie('other', 'b.test', { hostOnly: false }),
    cookie('deeper', 'x.www.a.test', { hostOnly: false }),
  ]);
  assert.deepEqual(names(session.forUrl('https://www.a.test/p?q=1')), ['own', 'wide']);
  assert.deepEqual(names(session.forUrl('https://a.test/')), ['apex', 'wide']);
  assert.deepEqual(names(session.forUrl('https://x.www.a.test/')), ['deeper', 'wide']);
  assert.deepEqual(names(session.forUrl('https://c.test/')), []);
  assert.deepEqual(names(session.forUrl('not a url')), []);
  assert.deepEqual(names(session.forUrl('http://127.0.0.1:8080/')), []);
});

test('a cookie set again replaces the first (by domain, path and name); an expired one deletes it', () => {
  let now = 1_000;
  const session = new CookieSession(() => now);
  session.merge([
    cookie('sid', 'a.test', { value: 'one' }),
    cookie('sid', 'a.test', { path: '/x', value: 'x' }),
  ]);
  session.merge([cookie('sid', 'a.test', { value: 'two' })]);
  assert.deepEqual(
    session
      .forUrl('https://a.test/')
      .map((c) => `${c.path} ${c.value}`)
      .sort(),
    ['/ two', '/x x'],
  );
  session.merge([cookie('sid', 'a.test', { expires: 500 })]);
  assert.deepEqual(
    session.forUrl('https://a.test/').map((c) => c.path),
    ['/x'],
  );
  session.merge([cookie('soon', 'a.test', { expires: 2_000 })]);
  assert.deepEqual(names(session.forUrl('https://a.test/')), ['sid', 'soon']);
  now = 2_000;
  assert.deepEqual(names(session.forUrl('https://a.test/')), ['sid'], 'expired at lookup');
  session.merge([cookie('sid', 'A.TEST', { path: '/x', expires: 0 })]);
  assert.deepEqual(session.forUrl('https://a.test/'), []);
  assert.equal(session.domains, 0, 'an emptied domain goes');
});

test('bounded: the oldest cookie of a full domain goes, and the domain used longest ago', () => {
  const session = new CookieSession(() => 0, { maxDomains: 2, maxPerDomain: 3, maxChars: 1_000_000 });
  session.merge(['a', 'b', 'c', 'd'].map((n) => cookie(n, 'a.test')));
  assert.deepEqual(names(session.forUrl('https://a.test/')), ['b', 'c', 'd']);
  session.merge([cookie('x', 'b.test')]);
  // a.test is used (a lookup), so b.test is the one used longest ago when c.test comes.
  session.forUrl('https://a.test/');
  session.merge([cookie('y', 'c.test')]);
  assert.equal(session.domains, 2);
  assert.deepEqual(names(session.forUrl('https://b.test/')), []);
  assert.deepEqual(names(session.forUrl('https://a.test/')), ['b', 'c', 'd']);
  assert.deepEqual(names(session.forUrl('https://c.test/')), ['y']);
});

test('bounded in characters: large cookies push out the domains used longest ago, and the count follows', () => {
  const session = new CookieSession(() => 0, { maxDomains: 100, maxPerDomain: 50, maxChars: 10_000 });
  const big = (name: string, domain: string) => cookie(name, domain, { value: 'v'.repeat(4_000) });
  session.merge([big('a', 'one.test'), big('b', 'two.test')]);
  assert.equal(session.domains, 2);
  session.merge([big('c', 'three.test')]);
  assert.equal(session.domains, 2, 'one.test went');
  assert.deepEqual(session.forUrl('https://one.test/'), []);
  assert.ok(session.size <= 10_000, `${session.size} characters`);
  // Replacing and deleting keep the count true.
  session.merge([cookie('c', 'three.test')]);
  session.merge([cookie('b', 'two.test', { expires: 0 })]);
  assert.equal(session.size, 'c'.length + 'c-value'.length + 'three.test'.length + 1);
});

test('the changes to write: each domain that changed, with its cookies now, or null once it holds none', () => {
  let now = 1_000;
  const session = new CookieSession(() => now, { maxDomains: 2, maxPerDomain: 50, maxChars: 1_000_000 });
  session.restore([cookie('kept', 'a.test'), cookie('gone', 'a.test', { expires: 500 })]);
  assert.deepEqual(session.takeChanges(), new Map(), 'what was restored is no change');
  assert.deepEqual(names(session.forUrl('https://a.test/')), ['kept']);

  session.merge([cookie('new', 'b.test')]);
  session.merge([cookie('kept', 'a.test', { expires: 0 })]);
  assert.deepEqual(
    session.takeChanges(),
    new Map([
      ['b.test', [cookie('new', 'b.test')]],
      ['a.test', null],
    ]),
  );
  assert.deepEqual(session.takeChanges(), new Map(), 'taken once');

  // A domain pushed out by the bound is a change too, as is one whose cookie expired when read.
  session.merge([cookie('late', 'c.test', { expires: 2_000 })]);
  session.merge([cookie('last', 'd.test')]);
  assert.deepEqual(
    session.takeChanges(),
    new Map([
      ['c.test', [cookie('late', 'c.test', { expires: 2_000 })]],
      ['b.test', null],
      ['d.test', [cookie('last', 'd.test')]],
    ]),
  );
  now = 3_000;
  assert.deepEqual(session.forUrl('https://c.test/'), []);
  const expired = session.takeChanges();
  assert.deepEqual(expired, new Map([['c.test', null]]));

  // Changes that could not be written are taken again, as the session holds them then.
  session.retake(expired.keys());
  session.merge([cookie('back', 'c.test')]);
  assert.deepEqual(session.takeChanges(), new Map([['c.test', [cookie('back', 'c.test')]]]));
});
