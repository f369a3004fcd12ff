import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';

const DELAY_MS = 300;
/** As the other politeness tests: a start may come this much early (the network, the server's own scheduling). */
const ALLOWANCE_MS = 20;

interface Site {
  server: Server;
  origin: string;
  arrivals: { path: string; at: number }[];
}

async function serve(answer: (path: string, res: import('node:http').ServerResponse) => void): Promise<Site> {
  const arrivals: Site['arrivals'] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    arrivals.push({ path, at: Date.now() });
    answer(path, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, arrivals };
}

const html = (res: import('node:http').ServerResponse, body: string): void => {
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${body}</body></html>`);
};

test("a found page's redirect to another host reaches it through the crawl: its robots.txt, its delay, once", async () => {
  // Host B: its robots.txt keeps crawlers out of /private/; five public pages.
  const b = await serve((path, res) => {
    if (path === '/robots.txt')
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
    else if (path.startsWith('/public/') || path.startsWith('/private/')) html(res, 'on b');
    else res.writeHead(404).end();
  });
  // Host A (another port: another host): its start page links to six paths that each redirect to B,
  // two of them to the same page.
  const targets: Record<string, string> = {
    '/go/1': '/public/1',
    '/go/2': '/public/2',
    '/go/3': '/public/3',
    '/go/4': '/public/4',
    '/go/1-again': '/public/1',
    '/go/private': '/private/secret',
  };
  const a = await serve((path, res) => {
    if (path === '/')
      html(
        res,
        Object.keys(targets)
          .map((p) => `<a href="${p}">${p}</a>`)
          .join(' '),
      );
    else if (targets[path]) res.writeHead(302, { location: `${b.origin}${targets[path]}` }).end();
    else if (path === '/robots.txt') res.writeHead(404).end();
    else res.writeHead(404).end();
  });
  const out = mkdtempSync(join(tmpdir(), 'ackcrawl-cross-host-redirect-'));
  try {
    const result = await runCli([
      'crawl',
      `${a.origin}/`,
      '--out',
      out,
      '--allow-private',
      // Both ports of 127.0.0.1 are one registrable "domain": both hosts are in scope.
      '--scope',
      'domain',
      '--host-delay',
      String(DELAY_MS),
      '--host-concurrency',
      '2',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const records = readRecords(out);
    const byUrl = new Map(records.map((r) => [r.url, r]));
    for (const [path, target] of Object.entries(targets)) {
      const record = byUrl.get(`${a.origin}${path}`);
      assert.equal(record?.status, 302, `${path} is recorded as the redirect it answered`);
      assert.equal(record?.outcome, 'ok');
      assert.deepEqual(record?.links, [`${b.origin}${target}`]);
    }
    const bPages = b.arrivals.filter((x) => x.path !== '/robots.txt');
    assert.deepEqual(
      bPages.map((x) => x.path).sort(),
      ['/public/1', '/public/2', '/public/3', '/public/4'],
      'each public target fetched once, the disallowed one never',
    );
    for (const n of [1, 2, 3, 4]) {
      const record = byUrl.get(`${b.origin}/public/${n}`);
      assert.equal(record?.status, 200, `/public/${n} has its own record`);
      assert.equal(record?.depth, 2, 'one hop below the redirect');
    }
    assert.equal(byUrl.get(`${b.origin}/private/secret`)?.error?.code, 'ROBOTS_DENIED');
    assert.ok(
      b.arrivals.findIndex((x) => x.path === '/robots.txt') === 0,
      `B's robots.txt was read before its pages: ${b.arrivals.map((x) => x.path).join(' ')}`,
    );
    const gaps = bPages.slice(1).map((x, i) => ({ path: x.path, gap: x.at - (bPages[i]?.at ?? 0) }));
    const early = gaps.filter((g) => g.gap < DELAY_MS - ALLOWANCE_MS);
    assert.deepEqual(early, [], `B's pages closer than ${DELAY_MS} ms: ${JSON.stringify(gaps)}`);
  } finally {
    for (const site of [a, b]) {
      site.server.closeAllConnections();
      site.server.close();
    }
    rmSync(out, { recursive: true, force: true });
  }
});

test("a redirect on the page's own host into a path its robots.txt disallows stops there", async () => {
  const site = await serve((path, res) => {
    if (path === '/robots.txt')
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
    else if (path === '/') html(res, '<a href="/old">old</a> <a href="/moved-on">moved on</a>');
    else if (path === '/old') res.writeHead(301, { location: '/private/login' }).end();
    else if (path === '/moved-on') res.writeHead(301, { location: '/new' }).end();
    else if (path === '/new' || path.startsWith('/private/')) html(res, 'a page');
    else res.writeHead(404).end();
  });
  const out = mkdtempSync(join(tmpdir(), 'ackcrawl-redirect-robots-'));
  try {
    // No delay: the hop is checked for robots.txt alone, and granted at once when allowed.
    const result = await runCli([
      'crawl',
      `${site.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--host-delay',
      '0',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const byUrl = new Map(readRecords(out).map((r) => [r.url, r]));
    const old = byUrl.get(`${site.origin}/old`);
    assert.equal(old?.status, 301, 'the page is recorded as the redirect it answered');
    assert.deepEqual(old?.links, [`${site.origin}/private/login`]);
    assert.equal(byUrl.get(`${site.origin}/private/login`)?.error?.code, 'ROBOTS_DENIED');
    const movedOn = byUrl.get(`${site.origin}/moved-on`);
    assert.equal(movedOn?.status, 200, 'an allowed redirect is followed inside the task');
    assert.equal(movedOn?.finalUrl, `${site.origin}/new`);
    assert.ok(
      !site.arrivals.some((a) => a.path.startsWith('/private/')),
      `nothing under /private/ was requested: ${site.arrivals.map((a) => a.path).join(' ')}`,
    );
  } finally {
    site.server.closeAllConnections();
    site.server.close();
    rmSync(out, { recursive: true, force: true });
  }
});
