import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAgents, type Agents } from '../../client/crawler/fetch/agents.js';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { startHostileServer, type HostileServer } from '../fixtures/hostile-server.js';
import { installLoopbackGuard } from '../helpers/loopback-guard.js';

installLoopbackGuard();

const settings: FetchSettings = {
  userAgent: 'ackcrawl-test/1',
  connectTimeoutMs: 1_000,
  responseTimeoutMs: 1_500,
  totalTimeoutMs: 3_000,
  maxRedirects: 10,
  maxBodyBytes: 1024 * 1024,
  allowPrivate: false,
  allowAddresses: ['127.0.0.1'],
};

/**
 * A server that resets one URL every time, on a connection it otherwise keeps alive: to the
 * client each reset looks like a stale kept-alive socket (see fetcher-stale-socket.test.ts), which
 * is sent once more on a fresh socket. That resend must not happen on every attempt.
 */
describe('Fetcher: a URL whose server resets every connection', () => {
  let server: HostileServer;
  const agents: Agents[] = [];
  const fetcher = (): Fetcher => {
    const a = createAgents(settings);
    agents.push(a);
    return new Fetcher(settings, a);
  };
  const resets = (): number => server.requests.filter((p) => p === '/reset-always').length;

  before(async () => {
    server = await startHostileServer({ bigBytes: 1024, bombBytes: 1024, manyLinks: 1 });
  });
  after(async () => {
    for (const a of agents) {
      a.http.destroy();
      a.https.destroy();
    }
    await server.close();
  });

  /** One attempt as a crawler makes it: a kept-alive socket from an earlier page, then the URL. */
  async function attempt(f: Fetcher, route: Parameters<Fetcher['fetch']>[1] = {}): Promise<FetchError> {
    await f.fetch(`${server.origin}/ok`);
    try {
      await f.fetch(`${server.origin}/reset-always`, route);
    } catch (err) {
      assert.ok(err instanceof FetchError);
      return err;
    }
    assert.fail('the reset URL answered');
  }

  test('three attempts on one crawler: at most one request per attempt after the first reset', async () => {
    server.requests.length = 0;
    const f = fetcher();
    for (let i = 0; i < 3; i++) {
      const err = await attempt(f);
      assert.equal(err.code, 'CONNECTION_RESET');
      assert.equal(err.retriable, true);
    }
    // The first attempt went out on the kept-alive socket of /ok, was reset and sent once more on
    // a fresh socket (a stale socket looks just like this); attempts 2 and 3 cost one request each.
    assert.equal(resets(), 4, `requested ${resets()} times for 3 attempts`);
  });

  test('an attempt whose previous one was reset (another crawler) sends its request once', async () => {
    server.requests.length = 0;
    const err = await attempt(fetcher(), { resendOnStaleSocket: false });
    assert.equal(err.code, 'CONNECTION_RESET');
    assert.equal(resets(), 1);
  });

  test('processTask passes the last attempt’s CONNECTION_RESET on as "do not resend"', async () => {
    const hooks: unknown[] = [];
    const spy = {
      fetch: (_url: string, h?: unknown) => {
        hooks.push(h);
        return Promise.reject(new FetchError('CONNECTION_RESET', 'read ECONNRESET'));
      },
    };
    const task = { taskId: 't', url: `${server.origin}/reset-always`, depth: 0, parentUrl: null };
    const frame = await processTask(
      { ...task, attempt: 2, lastErrorCode: 'CONNECTION_RESET' },
      { fetcher: spy, crawlerId: 'test' },
    );
    assert.equal(decodeOutcomeFrame(frame).header.failure?.code, 'CONNECTION_RESET');
    await processTask({ ...task, attempt: 2, lastErrorCode: 'TIMEOUT' }, { fetcher: spy, crawlerId: 'test' });
    await processTask({ ...task, attempt: 1 }, { fetcher: spy, crawlerId: 'test' });
    assert.deepEqual(
      hooks.map((h) => (h as { resendOnStaleSocket?: boolean }).resendOnStaleSocket),
      [false, undefined, undefined],
    );
  });
});
