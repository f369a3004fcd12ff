import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAgents, type Agents } from '../../client/crawler/fetch/agents.js';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';
import { Fetcher, type FetchedPage } from '../../client/crawler/fetch/fetcher.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { DEFAULT_MAX_LINKS_PER_PAGE } from '../../shared/protocol/link-limits.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { startHostileServer, type HostileServer } from '../fixtures/hostile-server.js';
import { GUARD_MARK, installLoopbackGuard } from '../helpers/loopback-guard.js';
import { waitFor } from '../helpers/wait-for.js';

installLoopbackGuard();

const MAX_BODY = 1024 * 1024;
const settings: FetchSettings = {
  userAgent: 'ackcrawl-test/1',
  connectTimeoutMs: 1_000,
  // Above the drip's 1 s between bytes, so the drip is ended by the total limit, not by silence.
  responseTimeoutMs: 1_500,
  totalTimeoutMs: 3_000,
  maxRedirects: schedulerConfigSchema.parse({}).maxRedirects,
  maxBodyBytes: MAX_BODY,
  allowPrivate: false,
  allowAddresses: ['127.0.0.1'],
};

async function failure(promise: Promise<FetchedPage>): Promise<{ err: FetchError; ms: number }> {
  const started = Date.now();
  try {
    const page = await promise;
    assert.fail(`the fetch should have failed, got HTTP ${page.status}`);
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return { err, ms: Date.now() - started };
  }
}

describe('Fetcher against hostile servers', () => {
  let server: HostileServer;
  const agents: Agents[] = [];
  let fetcher: Fetcher;
  const fetcherWith = (overrides: Partial<FetchSettings>): Fetcher => {
    const s = { ...settings, ...overrides };
    const a = createAgents(s);
    agents.push(a);
    return new Fetcher(s, a);
  };
  const http = (path: string): string => `${server.origin}${path}`;
  const raw = (path: string): string => `${server.rawOrigin}${path}`;
  const record = async (url: string): Promise<PageRecord> => {
    const frame = await processTask(
      { taskId: 't', url, depth: 0, attempt: 1, parentUrl: null },
      { fetcher, crawlerId: 'test' },
    );
    return JSON.parse(decodeOutcomeFrame(frame).record.toString('utf8')) as PageRecord;
  };

  before(async () => {
    server = await startHostileServer({
      bigBytes: 4 * MAX_BODY,
      bombBytes: 64 * MAX_BODY,
      manyLinks: 20_000,
    });
    fetcher = fetcherWith({});
  });

  after(async () => {
    for (const a of agents) {
      a.http.destroy();
      a.https.destroy();
    }
    await server.close();
  });

  test('the default redirect limit is 10 (a 20-hop chain exceeds it)', () => {
    assert.equal(settings.maxRedirects, 10);
  });

  test('slow drip (1 byte/s): a retriable TIMEOUT at the total limit', async () => {
    const { err, ms } = await failure(fetcher.fetch(http('/drip')));
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.retriable, true);
    assert.match(err.message, /request/);
    assert.ok(ms >= settings.totalTimeoutMs - 100 && ms < settings.totalTimeoutMs + 1_000, `${ms} ms`);
  });

  test('headers then silence: a retriable TIMEOUT after the silence limit, before the total one', async () => {
    const { err, ms } = await failure(fetcher.fetch(http('/silence')));
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.retriable, true);
    assert.match(err.message, /socket/);
    assert.ok(ms < settings.totalTimeoutMs, `${ms} ms`);
  });

  test('status line at 1 byte/s: a retriable TIMEOUT before the total limit', async () => {
    const { err, ms } = await failure(fetcher.fetch(raw('/raw/drip-status')));
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.retriable, true);
    assert.ok(ms < settings.totalTimeoutMs, `${ms} ms`);
  });

  test('endless 1xx informational responses: a retriable TIMEOUT at the response limit', async () => {
    const { err, ms } = await failure(fetcher.fetch(raw('/raw/endless-1xx')));
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.retriable, true);
    assert.ok(ms < settings.totalTimeoutMs, `${ms} ms`);
  });

  test('endless body: BODY_TOO_LARGE at the cap, and the server is no longer read', async () => {
    const { err } = await failure(fetcher.fetch(http('/endless')));
    assert.equal(err.code, 'BODY_TOO_LARGE');
    assert.equal(err.retriable, false);
    assert.equal(err.httpStatus, 200);
    // Once the connection is gone the server's writes stop: what it sent stays bounded.
    let last = -1;
    await waitFor(
      async () => {
        const now = server.endlessBytesSent();
        const stable = now === last;
        last = now;
        await new Promise((resolve) => setTimeout(resolve, 100));
        return stable;
      },
      { timeoutMs: 5_000, message: 'the endless body to stop being sent' },
    );
    assert.ok(last < MAX_BODY + 16 * 1024 * 1024, `sent ${last} bytes`);
  });

  test('a body over the cap: BODY_TOO_LARGE, with a Content-Length (before reading) or without', async () => {
    const declared = await failure(fetcher.fetch(http('/big-declared')));
    assert.equal(declared.err.code, 'BODY_TOO_LARGE');
    assert.match(declared.err.message, /declared/);
    const chunked = await failure(fetcher.fetch(http('/big-chunked')));
    assert.equal(chunked.err.code, 'BODY_TOO_LARGE');
    assert.equal(chunked.err.retriable, false);
  });

  for (const kind of ['gzip', 'deflate', 'br']) {
    test(`${kind} bomb: BODY_TOO_LARGE after decompression, quickly`, async () => {
      const { err, ms } = await failure(fetcher.fetch(http(`/bomb-${kind}`)));
      assert.equal(err.code, 'BODY_TOO_LARGE');
      assert.equal(err.retriable, false);
      assert.match(err.message, /after decompression/);
      assert.ok(ms < 2_000, `${ms} ms`);
    });
  }

  test('a body that is not in its declared Content-Encoding: a final BAD_CONTENT_ENCODING', async () => {
    for (const path of ['/bad-gzip', '/bad-br']) {
      const { err } = await failure(fetcher.fetch(http(path)));
      assert.equal(err.code, 'BAD_CONTENT_ENCODING', `${path}: ${err.message}`);
      assert.equal(err.retriable, false, path);
    }
  });

  test('a Content-Encoding that is not decoded (unknown, or stacked): a final UNSUPPORTED_CONTENT_ENCODING', async () => {
    for (const path of ['/unknown-encoding', '/double-gzip']) {
      const { err } = await failure(fetcher.fetch(http(path)));
      assert.equal(err.code, 'UNSUPPORTED_CONTENT_ENCODING', `${path}: ${err.message}`);
      assert.equal(err.retriable, false, path);
      assert.equal(err.httpStatus, 200, path);
    }
    // identity is no encoding at all
    assert.equal((await fetcher.fetch(http('/ok'))).status, 200);
  });

  test('redirect loops and a 20-hop chain: a final TOO_MANY_REDIRECTS', async () => {
    for (const path of ['/loop', '/loop-a', '/chain/20']) {
      const { err } = await failure(fetcher.fetch(http(path)));
      assert.equal(err.code, 'TOO_MANY_REDIRECTS', path);
      assert.equal(err.retriable, false, path);
    }
  });

  test('a 20-hop chain is followed when maxRedirects allows 20', async () => {
    const page = await fetcherWith({ maxRedirects: 20 }).fetch(http('/chain/20'));
    assert.equal(page.status, 200);
    assert.equal(page.redirects.length, 20);
    assert.equal(page.finalUrl, http('/chain/0'));
  });

  test('redirects to private, link-local, mapped and unspecified addresses: ADDRESS_BLOCKED, never connected', async () => {
    const before = server.requests.length;
    for (const path of ['/to-10', '/to-metadata', '/to-192', '/to-mapped', '/to-zero', '/to-ipv6-loopback']) {
      const { err, ms } = await failure(fetcher.fetch(http(path)));
      assert.equal(err.code, 'ADDRESS_BLOCKED', `${path}: ${err.message}`);
      assert.equal(err.retriable, false, path);
      assert.ok(ms < 500, `${path}: refused before any connect attempt, ${ms} ms`);
    }
    // Three of them point back at this server: none of them arrived.
    assert.ok(!server.requests.slice(before).includes('/canary'), 'the canary was never requested');
    // The allowed address itself is fetched.
    assert.equal((await fetcher.fetch(http('/ok'))).status, 200);
  });

  test('without an allow list, the fixture address itself is refused', async () => {
    const strict = fetcherWith({ allowAddresses: [] });
    const { err } = await failure(strict.fetch(http('/ok')));
    assert.equal(err.code, 'ADDRESS_BLOCKED');
  });

  test('redirects to another scheme or to a Location that is not a URL: final, with their own code', async () => {
    const ftp = await failure(fetcher.fetch(http('/to-ftp')));
    assert.equal(ftp.err.code, 'UNSUPPORTED_REDIRECT');
    assert.equal(ftp.err.retriable, false);
    const bad = await failure(fetcher.fetch(http('/to-bad-url')));
    assert.equal(bad.err.code, 'BAD_REDIRECT');
    assert.equal(bad.err.retriable, false);
  });

  test('malformed status lines and headers: a final BAD_HTTP_RESPONSE', async () => {
    const cases = [
      raw('/raw/bad-status'),
      raw('/raw/garbage'),
      raw('/raw/two-lengths'),
      raw('/raw/length-and-chunked'),
      raw('/raw/bad-chunked'),
      raw('/raw/nul-header'),
      raw('/raw/bad-header-name'),
      raw('/raw/huge-header'),
      http('/long-header'),
    ];
    for (const url of cases) {
      const { err } = await failure(fetcher.fetch(url));
      assert.equal(err.code, 'BAD_HTTP_RESPONSE', `${url}: ${err.message}`);
      assert.equal(err.retriable, false, url);
    }
  });

  test('connections closed or reset before the response is complete: a retriable CONNECTION_RESET', async () => {
    for (const path of [
      '/raw/close-before-bytes',
      '/raw/reset-headers',
      '/raw/reset-body',
      '/raw/truncated',
    ]) {
      const { err } = await failure(fetcher.fetch(raw(path)));
      assert.equal(err.code, 'CONNECTION_RESET', `${path}: ${err.message}`);
      assert.equal(err.retriable, true, path);
    }
  });

  test('10,000-deep nesting: an ok record, and the link at the bottom is found', async () => {
    const r = await record(http('/deep'));
    assert.equal(r.outcome, 'ok');
    assert.deepEqual(r.links, [http('/found-at-the-bottom')]);
  });

  test('invalid UTF-8 in a page declared UTF-8: an ok record, bad bytes as U+FFFD, exact bytes hashed', async () => {
    const r = await record(http('/bad-utf8'));
    assert.equal(r.outcome, 'ok');
    assert.equal(r.bodyEncoding, 'utf8');
    assert.match(r.body ?? '', /caf\uFFFD/);
    assert.deepEqual(r.links, [http('/after-bad-bytes')]);
    assert.equal(r.bodyBytes, Buffer.byteLength('<!doctype html><p>caf') + 5 + 40);
  });

  test('a huge number of links under the body cap: an ok record, the first links kept, the rest counted', async () => {
    const r = await record(http('/many-links'));
    assert.equal(r.outcome, 'ok');
    assert.equal(r.links.length, DEFAULT_MAX_LINKS_PER_PAGE);
    assert.equal(r.links[0], 'http://links.invalid/0');
    assert.equal(r.linksDropped?.overLimit, 20_000 - DEFAULT_MAX_LINKS_PER_PAGE);
  });

  test('the test guard itself: an unfiltered fetcher cannot leave loopback in these tests', async () => {
    const open = fetcherWith({ allowPrivate: true });
    const { err } = await failure(open.fetch('http://10.0.0.1/'));
    assert.match(err.message, new RegExp(GUARD_MARK));
  });
});
