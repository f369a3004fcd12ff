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

test('submitting to a scheduler that is not there fails SCHEDULER_UNREACHABLE, with the token and body as sent', async () => {
  const scheduler = await fakeScheduler([done]);
  const { port } = new URL(scheduler.target.schedulerUrl);
  await scheduler.close();
  await assert.rejects(
    runClusterCrawl(plan, { schedulerUrl: `ws://127.0.0.1:${port}/crawlers`, token: 't' }),
    {
      code: 'SCHEDULER_UNREACHABLE',
      message: new RegExp(
        `cannot reach the scheduler at http://127\\.0\\.0\\.1:${port}/crawl \\(.*ECONNREFUSED`,
      ),
    },
  );
});

test('the submit carries the bearer token and the plan as JSON, and the poll reads the summary', async () => {
  const seen: { method: string; auth: string; type: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        auth: req.headers.authorization ?? '',
        type: req.headers['content-type'] ?? '',
        body,
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.method === 'POST' ? { accepted: 1 } : done.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const result = await runClusterCrawl(
      plan,
      { schedulerUrl: `ws://127.0.0.1:${port}/crawlers`, token: 'secret-token' },
      { pollMs: 5 },
    );
    assert.deepEqual(result, { summary: { pages: 3 }, output: 'kafka:t' });
    assert.deepEqual(seen[0], {
      method: 'POST',
      auth: 'Bearer secret-token',
      type: 'application/json',
      body: JSON.stringify(plan.request),
    });
    assert.deepEqual(seen[1], { method: 'GET', auth: 'Bearer secret-token', type: '', body: '' });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
