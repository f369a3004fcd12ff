import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { SESSION_STORE_FILE } from '../../scheduler/runs/session-store.js';
import { startCli } from '../helpers/cli.js';
import { descendants, isAlive } from '../helpers/process-tree.js';
import { countByUrl, readRecords } from '../helpers/records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 200;

function safeRecords(out: string): ReturnType<typeof readRecords> {
  try {
    return readRecords(out);
  } catch {
    return [];
  }
}

/** Rows of the session store that hold the site's cookie (0 while there is no file yet). */
function savedSessions(out: string): number {
  const path = join(out, SESSION_STORE_FILE);
  if (!existsSync(path)) return 0;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT cookies FROM session_cookies').all() as { cookies: string }[];
    return rows.filter((row) => row.cookies.includes('"sid"')).length;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

/**
 * A site behind a session cookie: its home page sets it, every other page answers 403 without it.
 * The home page is fetched once in a crawl, so a crawl that forgot its session after a restart
 * would get 403 for every page left.
 */
describe('kill -9 during a crawl that keeps a session (sessionCookies)', () => {
  let server: Server;
  let origin: string;
  const requests = { home: 0, denied: 0 };
  const outs: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/robots.txt') {
        res.writeHead(404).end();
        return;
      }
      const page = (links: string[], headers: Record<string, string> = {}): void => {
        // Slow enough for the kill to come mid-crawl.
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/html', ...headers });
          res.end(`<!doctype html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body>`);
        }, 25);
      };
      if (url === '/') {
        requests.home += 1;
        page(['/p/0', '/p/1'], { 'set-cookie': 'sid=kept; Path=/; HttpOnly' });
      } else if (!/(^|; )sid=kept(;|$)/.test(req.headers.cookie ?? '')) {
        requests.denied += 1;
        res.writeHead(403, { 'content-type': 'text/plain' }).end('no session');
      } else {
        const n = Number(/^\/p\/(\d+)$/.exec(url)?.[1] ?? -1);
        page([2 * n + 2, 2 * n + 3].filter((m) => m < PAGES).map((m) => `/p/${m}`));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const out of outs) rmSync(out, { recursive: true, force: true });
  });

  test('the same command goes on with the session: no page after the restart is denied', async () => {
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-session-kill-'));
    outs.push(out);
    const args = [
      'crawl',
      `${origin}/`,
      '--out',
      out,
      '--allow-private',
      '--host-delay',
      '0',
      '--host-concurrency',
      '2',
      '--session-cookies',
      '--json',
    ];
    const first = startCli(args);
    const root = first.child.pid as number;
    // The session is written (within a second of the cookie being set), and the crawl goes on.
    await waitFor(() => savedSessions(out) === 1 && safeRecords(out).length >= 20, {
      timeoutMs: 30_000,
      message: 'the session written and 20 pages recorded',
    });
    const tree = [root, ...descendants(root).map((p) => p.pid)];
    for (const pid of tree) process.kill(pid, 'SIGKILL');
    await first.done;
    await waitFor(() => tree.every((pid) => !isAlive(pid)), { timeoutMs: 5_000, message: 'tree dead' });
    const before = countByUrl(safeRecords(out)).size;
    assert.ok(before < PAGES + 1, `killed mid-crawl (${before} pages)`);

    const second = await startCli(args).done;
    assert.equal(second.code, 0, second.stderr);
    const records = readRecords(out);
    const counts = countByUrl(records);
    assert.equal(counts.size, PAGES + 1, 'the home page and every page recorded');
    assert.deepEqual(
      [...counts].filter(([, n]) => n > 1),
      [],
      'no page recorded twice',
    );
    assert.deepEqual(
      records.filter((r) => r.status !== 200).map((r) => `${r.url} ${String(r.status)}`),
      [],
      'no page was denied',
    );
    assert.equal(requests.denied, 0);
    assert.equal(requests.home, 1, 'the home page was not fetched again');
  });
});
