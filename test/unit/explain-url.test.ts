import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TaskView } from '../../shared/ports/frontier.js';
import type { Located } from '../../shared/protocol/why.js';
import { explainUrl, type ExplainDeps } from '../../shared/why/explain-url.js';
import { describeScope } from '../../shared/why/scope-rule.js';
import { createScope } from '../../shared/url/scope.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';

const NOW = Date.parse('2026-11-30T03:00:00Z');
const SEEDS = ['https://a.test/'];

function deps(tasks: Record<string, Partial<TaskView>>, more: Partial<ExplainDeps> = {}): ExplainDeps {
  const inScope = createScope('host', SEEDS);
  return {
    clock: () => NOW,
    scopeProblem: (u) => (inScope(u) ? null : describeScope('host', SEEDS)),
    frontier: {
      inspect: async (_runId, url) => {
        const t = tasks[url];
        return t
          ? {
              runId: 'default',
              url,
              state: 'queued',
              attempt: 1,
              lastError: null,
              availableAt: null,
              depth: 1,
              parentUrl: null,
              ...t,
            }
          : null;
      },
    },
    locate: () => null,
    crawlerOf: () => null,
    gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 1, delayMs: 1_000 }),
    ...more,
  };
}

describe('why not yet? (explainUrl)', () => {
  test('out of scope names the rule; in scope but never linked says so', async () => {
    const out = await explainUrl('https://b.test/x', deps({}));
    assert.equal(out.state, 'out-of-scope');
    assert.match(out.reason, /scope "host" follows only the seeds' hosts \(a\.test\)/);
    const unseen = await explainUrl('https://a.test/never', deps({}));
    assert.equal(unseen.state, 'not-discovered');
  });

  test('another spelling of a held URL is reported as a duplicate of it', async () => {
    const out = await explainUrl(
      'HTTPS://A.test:443/p#frag',
      deps({ 'https://a.test/p': { state: 'done' } }),
    );
    assert.equal(out.duplicateOf, 'https://a.test/p');
    assert.equal(out.state, 'done');
  });

  test('done, failed for good, robots-denied from the record, retrying with attempt and error', async () => {
    const d = deps({
      'https://a.test/ok': { state: 'done' },
      'https://a.test/bad': { state: 'failed', attempt: 3, lastError: 'TIMEOUT: no answer in 20 s' },
      'https://a.test/private': { state: 'failed', lastError: 'ROBOTS_DENIED: Disallow: /private (line 4)' },
      'https://a.test/later': {
        state: 'delayed',
        attempt: 2,
        lastError: 'HTTP_503: HTTP 503',
        availableAt: NOW + 60_000,
      },
    });
    assert.equal((await explainUrl('https://a.test/ok', d)).state, 'done');
    const bad = await explainUrl('https://a.test/bad', d);
    assert.equal(bad.state, 'failed');
    assert.match(bad.reason, /attempt 3: TIMEOUT/);
    assert.equal((await explainUrl('https://a.test/private', d)).state, 'robots-denied');
    const later = await explainUrl('https://a.test/later', d);
    assert.equal(later.state, 'retrying');
    assert.match(later.reason, /attempt 2 is due at 2026-11-30T03:01:00\.000Z; last error: HTTP_503/);
  });

  test('in flight names the crawler; buffered waits for politeness with the time it may start', async () => {
    const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 1, delayMs: 1_000 });
    gate.start('a.test', NOW - 200);
    gate.reportStart('a.test', NOW - 200);
    const lease = {
      runId: 'default',
      url: 'https://a.test/p',
      host: 'a.test',
      depth: 1,
      priority: 0,
      parentUrl: null,
      taskId: 't',
      leaseId: 'l',
      attempt: 1,
      lastError: null,
    };
    const flying: Located = { where: 'in-flight', lease, sessionId: 's1', sentAt: NOW - 200 };
    const inFlight = await explainUrl(
      'https://a.test/p',
      deps(
        { 'https://a.test/p': { state: 'leased' } },
        { gate, locate: () => flying, crawlerOf: () => 'box-42' },
      ),
    );
    assert.equal(inFlight.state, 'in-flight');
    assert.equal(inFlight.crawler?.crawlerId, 'box-42');
    const waiting = await explainUrl(
      'https://a.test/q',
      deps({ 'https://a.test/q': { state: 'leased' } }, { gate, locate: () => ({ where: 'buffer', lease }) }),
    );
    assert.equal(waiting.state, 'waiting');
    assert.match(waiting.reason, /1 requests in flight, the most allowed \(1\)/);
    gate.finish('a.test', NOW);
    const delayed = await explainUrl(
      'https://a.test/q',
      deps({ 'https://a.test/q': { state: 'leased' } }, { gate, locate: () => ({ where: 'buffer', lease }) }),
    );
    assert.match(delayed.reason, /next request may start at 2026-11-30T03:00:00\.900Z \(delay 1000 ms\)/);
    gate.defer('a.test', NOW + 30_000, 'HTTP 429 cool-down #1');
    const paused = await explainUrl('https://a.test/q', deps({ 'https://a.test/q': {} }, { gate }));
    assert.equal(paused.state, 'waiting');
    assert.match(paused.reason, /paused until 2026-11-30T03:00:30\.000Z \(HTTP 429 cool-down #1\)/);
  });

  test('robots: a disallowed URL names the line; a host waiting for robots.txt says so', async () => {
    const denied = await explainUrl(
      'https://a.test/private/x',
      deps({}, { robots: () => ({ state: 'disallowed', line: 4, rule: 'Disallow: /private' }) }),
    );
    assert.equal(denied.state, 'robots-denied');
    assert.match(denied.reason, /line 4: Disallow: \/private/);
    const fetching = await explainUrl(
      'https://a.test/y',
      deps({ 'https://a.test/y': {} }, { robots: () => ({ state: 'fetching' }) }),
    );
    assert.equal(fetching.state, 'waiting');
    assert.match(fetching.reason, /waiting for its host's robots\.txt/);
  });

  test('a URL that is not one is a typed error', async () => {
    await assert.rejects(explainUrl('not a url', deps({})), { name: 'InvalidInputError' });
  });
});
