import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { CrawlPlan } from '../../master/cli/crawl-options.js';
import { runClusterCrawl } from '../../master/cluster/run-cluster-crawl.js';

/** A scheduler's /crawl that accepts the POST, then answers each GET with the next of `answers`. */
async function fakeScheduler(answers: { status: number; body: unknown }[]) {
  let gets = 0;
  const server = createServer((req, res) => {
    const answer =
      req.method === 'POST'
        ? { status: 200, body: { accepted: 1 } }
        : (answers[Math.min(gets++, answers.length - 1)] as { status: number; body: unknown });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    target: { schedulerUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/crawlers`, token: 't' },
    gets: () => gets,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const plan = { request: { seeds: ['http://127.0.0.1:9/'] } } as unknown as CrawlPlan;
const away = { status: 503, body: { error: { code: 'FRONTIER_UNAVAILABLE', message: 'try again shortly' } } };
const done = {
  status: 200,
  body: { status: 'done', progress: {}, summary: { pages: 3 }, output: 'kafka:t' },
};

test('following a cluster crawl waits out 503 answers (a broker away) and ends with the summary', async () => {
  const scheduler = await fakeScheduler([away, away, done]);
  try {
    const result = await runClusterCrawl(plan, scheduler.target, { pollMs: 5 });
    assert.deepEqual(result, { summary: { pages: 3 }, output: 'kafka:t' });
    assert.equal(scheduler.gets(), 3);
  } finally {
    await scheduler.close();
  }
});

test('following a cluster crawl stops at an answer that waiting cannot help (500, 401)', async () => {
  for (const answer of [
    { status: 500, body: { error: { code: 'INTERNAL', message: 'the scheduler failed to answer' } } },
    { status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'bad token' } } },
  ]) {
    const scheduler = await fakeScheduler([answer, done]);
    try {
      await assert.rejects(runClusterCrawl(plan, scheduler.target, { pollMs: 5 }), {
        code: answer.body.error.code,
      });
      assert.equal(scheduler.gets(), 1);
    } finally {
      await scheduler.close();
    }
  }
});
