import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPageRenderer,
  pagePath,
  parsePagePath,
  parseRedirectPath,
  type SiteShape,
} from '../../scripts/site/page-renderer.js';
import { startGeneratedSite } from '../../scripts/site/generated-site.js';

const shape: SiteShape = {
  pages: 500,
  linksPerPage: 20,
  pageBytes: 10_240,
  seed: 7,
  brokenLinks: false,
  redirectLinks: false,
};
const origin = 'http://127.0.0.1:1234';

function hrefs(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1] ?? '');
}

describe('generated site pages', () => {
  test('are deterministic and exactly pageBytes long', () => {
    const a = createPageRenderer(shape, origin);
    const b = createPageRenderer(shape, origin);
    for (const page of [0, 1, 250, 499]) {
      assert.deepEqual(a(page), b(page));
      assert.equal(a(page).length, 10_240);
    }
    assert.notDeepEqual(a(1), createPageRenderer({ ...shape, seed: 8 }, origin)(1));
  });

  test('link only to existing pages, and the whole site is reachable from /', () => {
    const render = createPageRenderer(shape, origin);
    const seen = new Set<number>([0]);
    const queue = [0];
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      const links = hrefs(render(page).toString('utf8'));
      assert.equal(links.length, 20);
      for (const href of links) {
        const url: URL = new URL(href, origin + pagePath(page));
        assert.equal(url.origin, origin);
        const target = parsePagePath(url.pathname, shape.pages);
        assert.notEqual(target, undefined, `${href} on page ${page}`);
        if (target !== undefined && !seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
    assert.equal(seen.size, shape.pages);
  });

  test('redirect links: every link but the home page’s goes through /r/n, and all pages are reached', () => {
    const render = createPageRenderer({ ...shape, redirectLinks: true }, origin);
    const seen = new Set<number>([0]);
    const queue = [0];
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      for (const href of hrefs(render(page).toString('utf8'))) {
        const url = new URL(href, origin + pagePath(page));
        if (url.pathname === pagePath(page) && url.hash !== '') continue; // '#top'
        const target = url.pathname === '/' ? 0 : parseRedirectPath(url.pathname, shape.pages);
        assert.notEqual(target, undefined, `${href} on page ${page} is / or /r/n`);
        if (target !== undefined && !seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
    assert.equal(seen.size, shape.pages);
    assert.equal(parseRedirectPath('/r/0', 10), undefined);
    assert.equal(parseRedirectPath('/r/9', 10), 9);
  });

  test('paths: / and /p/1../p/N-1 only', () => {
    assert.equal(parsePagePath('/', 10), 0);
    assert.equal(parsePagePath('/p/9', 10), 9);
    for (const bad of ['/p/0', '/p/10', '/p/01', '/p/', '/p/x', '/q/1', '/p/1/']) {
      assert.equal(parsePagePath(bad, 10), undefined, bad);
    }
  });
});

describe('startGeneratedSite', () => {
  test('serves pages, 404s unknown paths, 500s /error when asked to, and counts', async () => {
    const site = await startGeneratedSite({ pages: 20, brokenLinks: true });
    try {
      const home = await fetch(site.url);
      assert.equal(home.status, 200);
      assert.equal(home.headers.get('content-type'), 'text/html; charset=utf-8');
      const links = hrefs(await home.text());
      assert.ok(links.includes('/missing') && links.includes('/error'));
      assert.equal((await fetch(new URL('/p/19', site.url))).status, 200);
      assert.equal((await fetch(new URL('/p/20', site.url))).status, 404);
      assert.equal((await fetch(new URL('/missing', site.url))).status, 404);
      assert.equal((await fetch(new URL('/error', site.url))).status, 500);
      assert.deepEqual(site.stats(), { requests: 5, pageResponses: 2, distinctPages: 2, redirects: 0 });
      site.resetStats();
      assert.deepEqual(site.stats(), { requests: 0, pageResponses: 0, distinctPages: 0, redirects: 0 });
      assert.equal((await fetch(new URL('/r/3', site.url))).status, 404, 'no redirects unless asked');
    } finally {
      await site.close();
    }
  });

  test('with redirectLinks, /r/n answers a 301 to /p/n, counted', async () => {
    const site = await startGeneratedSite({ pages: 20, redirectLinks: true });
    try {
      const moved = await fetch(new URL('/r/7', site.url), { redirect: 'manual' });
      assert.equal(moved.status, 301);
      assert.equal(moved.headers.get('location'), '/p/7');
      const followed = await fetch(new URL('/r/8', site.url));
      assert.equal(followed.status, 200);
      assert.equal(new URL(followed.url).pathname, '/p/8');
      assert.equal((await fetch(new URL('/r/20', site.url), { redirect: 'manual' })).status, 404);
      assert.equal((await fetch(new URL('/robots.txt', site.url))).status, 404, 'no robots.txt unless asked');
      assert.deepEqual(site.stats(), { requests: 5, pageResponses: 1, distinctPages: 1, redirects: 2 });
    } finally {
      await site.close();
    }
  });

  test('with disallow, a robots.txt disallowing that path to every agent', async () => {
    const site = await startGeneratedSite({ pages: 5, disallow: '/private/' });
    try {
      const robots = await fetch(new URL('/robots.txt', site.url));
      assert.equal(robots.status, 200);
      assert.equal(await robots.text(), 'User-agent: *\nDisallow: /private/\n');
    } finally {
      await site.close();
    }
  });
});
