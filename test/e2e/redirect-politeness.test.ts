import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';

const DELAY_MS = 300;
/** As the other politeness tests: a start may come this much early (the network, the server's own scheduling). */
const ALLOWANCE_MS = 20;
const SECTIONS = ['a', 'b', 'c', 'd'];

test('a site that redirects every page (/a to /a/) gets each request its host delay after the one before', async () => {
  // The start page links to /a ... /d; each redirects to its slash form, which is the page.
  const arrivals: { path: string; at: number }[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    arrivals.push({ path, at: Date.now() });
    if (path === '/') {
      const links = SECTIONS.map((s) => `<a href="/${s}">${s}</a>`).join(' ');
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${links}</body></html>`);
    } else if (SECTIONS.includes(path.slice(1))) {
      res.writeHead(301, { location: `${path}/` }).end();
    } else if (SECTIONS.some((s) => path === `/${s}/`)) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>here</body></html>');
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const out = mkdtempSync(join(tmpdir(), 'ackcrawl-redirect-politeness-'));
  try {
    const result = await runCli([
      'crawl',
      `http://127.0.0.1:${port}/`,
      '--out',
      out,
      '--allow-private',
      '--host-delay',
      String(DELAY_MS),
      '--host-concurrency',
      '2',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const records = readRecords(out);
    assert.equal(records.length, 1 + SECTIONS.length);
    for (const s of SECTIONS) {
      const record = records.find((r) => r.url === `http://127.0.0.1:${port}/${s}`);
      assert.equal(record?.finalUrl, `http://127.0.0.1:${port}/${s}/`, `/${s} followed to /${s}/`);
    }
    // Every page request, the redirects' second halves included (robots.txt is the gate's own
    // first request, not a page's).
    const pages = arrivals.filter((a) => a.path !== '/robots.txt');
    assert.equal(pages.length, 1 + 2 * SECTIONS.length, pages.map((a) => a.path).join(' '));
    const gaps = pages.slice(1).map((a, i) => ({ path: a.path, gap: a.at - (pages[i]?.at ?? 0) }));
    const early = gaps.filter((g) => g.gap < DELAY_MS - ALLOWANCE_MS);
    assert.deepEqual(early, [], `requests closer than ${DELAY_MS} ms: ${JSON.stringify(gaps)}`);
  } finally {
    server.closeAllConnections();
    server.close();
    rmSync(out, { recursive: true, force: true });
  }
});
