import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLinkFilter, defaultPriority } from '../../scheduler/outcomes/link-filter.js';
import { hostOfNormalized as hostKey } from '../../shared/url/host-of-normalized.js';
import { hostOf, normalizeUrl } from '../../shared/url/normalize.js';

const inExample = (url: string): boolean => url.startsWith('https://example.test/');
const parent = { runId: 'default', url: 'https://example.test/', depth: 0 };

describe('createLinkFilter', () => {
  test('keeps in-scope links as tasks one level deeper, with their parent and host', () => {
    const filter = createLinkFilter({ inScope: inExample, maxDepth: 0 });
    const tasks = filter(
      ['https://example.test/a', 'https://elsewhere.test/b', 'https://example.test/c?x=1'],
      parent,
    );
    assert.deepEqual(tasks, [
      {
        runId: 'default',
        url: 'https://example.test/a',
        host: 'example.test',
        depth: 1,
        parentUrl: parent.url,
        priority: 2,
      },
      {
        runId: 'default',
        url: 'https://example.test/c?x=1',
        host: 'example.test',
        depth: 1,
        parentUrl: parent.url,
        priority: 2,
      },
    ]);
  });

  test('maxDepth: links of a page at the limit are dropped; 0 means no limit', () => {
    const limited = createLinkFilter({ inScope: () => true, maxDepth: 2 });
    assert.equal(
      limited(['https://example.test/x'], { runId: 'default', url: 'https://example.test/p', depth: 1 })
        .length,
      1,
    );
    assert.deepEqual(
      limited(['https://example.test/x'], { runId: 'default', url: 'https://example.test/p', depth: 2 }),
      [],
    );

    const unlimited = createLinkFilter({ inScope: () => true, maxDepth: 0 });
    const deep = unlimited(['https://example.test/x'], {
      runId: 'default',
      url: 'https://example.test/p',
      depth: 500,
    });
    assert.equal(deep[0]?.depth, 501);
  });

  test('default priority is breadth first: shallower pages rank higher', () => {
    assert.ok(
      defaultPriority({ runId: 'default', url: 'u', host: 'h', depth: 1, parentUrl: null }) >
        defaultPriority({ runId: 'default', url: 'u', host: 'h', depth: 2, parentUrl: null }),
    );
  });

  test('a custom priority function sees the task without its priority and decides it', () => {
    const seen: unknown[] = [];
    const filter = createLinkFilter({
      inScope: () => true,
      maxDepth: 0,
      priority: (task) => {
        seen.push(task);
        return task.url.endsWith('.pdf') ? -100 : 10;
      },
    });
    const tasks = filter(['https://example.test/a.pdf', 'https://example.test/b'], parent);
    assert.deepEqual(
      tasks.map((t) => t.priority),
      [-100, 10],
    );
    assert.deepEqual(seen[0], {
      runId: 'default',
      url: 'https://example.test/a.pdf',
      host: 'example.test',
      depth: 1,
      parentUrl: parent.url,
    });
  });

  test('links without an authority are dropped even when the scope would accept them', () => {
    const filter = createLinkFilter({ inScope: () => true, maxDepth: 0 });
    assert.deepEqual(filter(['mailto:someone@example.test', 'not a url'], parent), []);
  });
});

describe('hostOfNormalized', () => {
  test('agrees with hostOf on normalised URLs', () => {
    for (const raw of [
      'HTTP://Example.TEST:80/a',
      'https://example.test.:8443/x?y#z',
      'http://u:p@[2001:DB8::1]:81/',
      'http://bücher.example/',
      'https://a@b@example.test/x',
    ]) {
      const url = normalizeUrl(raw);
      assert.equal(hostKey(url), hostOf(url), url);
    }
  });

  test('host with port, no path, query or fragment', () => {
    assert.equal(hostKey('https://example.test/a/b'), 'example.test');
    assert.equal(hostKey('http://example.test:8080/a'), 'example.test:8080');
    assert.equal(hostKey('http://example.test:8080'), 'example.test:8080');
    assert.equal(hostKey('http://example.test?q=1'), 'example.test');
    assert.equal(hostKey('http://example.test#top'), 'example.test');
  });

  test('userinfo is not part of the host, even with @ or : in it', () => {
    assert.equal(hostKey('https://user:pa:ss@example.test:8443/x'), 'example.test:8443');
    assert.equal(hostKey('https://a@b@example.test/x'), 'example.test');
  });

  test('an @ after the authority (path, query, fragment) is not userinfo', () => {
    assert.equal(hostKey('https://example.test/people/@alice'), 'example.test');
    assert.equal(hostKey('https://example.test?mail=a@b.test'), 'example.test');
    assert.equal(hostKey('https://example.test#a@b'), 'example.test');
  });

  test('IPv6 literals keep their brackets and port', () => {
    assert.equal(hostKey('http://[::1]:8080/x'), '[::1]:8080');
    assert.equal(hostKey('http://[2001:db8::1]/'), '[2001:db8::1]');
    assert.equal(hostKey('http://u:p@[2001:db8::1]:81/'), '[2001:db8::1]:81');
  });

  test('different ports of one host are different politeness keys', () => {
    assert.notEqual(hostKey('http://example.test:8080/'), hostKey('http://example.test:8081/'));
  });

  test('no scheme separator: null', () => {
    assert.equal(hostKey('mailto:a@example.test'), null);
    assert.equal(hostKey('/relative/path'), null);
  });
});
