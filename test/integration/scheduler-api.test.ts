import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchedulerApp } from '../../scheduler/http/app.js';
import { createHostPolicy } from '../../shared/http/request-guards.js';
import { InvalidInputError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import type { CrawlRequest, CrawlStatus } from '../../shared/protocol/crawl-api.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import type { RunReport } from '../../scheduler/runs/run-host.js';
import { runNotHosted } from '../../scheduler/runs/run-control.js';

const TOKEN = 'api-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { 'content-type': 'application/json' };

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: {
    error?: { code: string; message: string; problems?: { field: string; message: string }[] };
  } & Record<string, unknown>;
}

/**
 * The API as createSchedulerApp builds it, driven in-process through `app.callback()` on a
 * loopback server, with fakes for the scheduler behind it.
 */
describe('scheduler HTTP API (createSchedulerApp)', () => {
  let server: Server;
  let port: number;
  const submitted: CrawlRequest[] = [];
  const whyAsked: { url: string; runId: string | undefined }[] = [];
  const hostsAsked: { limit: number; runId: string | undefined }[] = [];
  const reports: RunReport[] = [
    {
      runId: 'r1',
      jobId: 'j1',
      state: 'paused',
      counters: { done: 2, failed: 0, queued: 5, inFlight: 0, pagesPerSecond: 0, notModified: 0 },
    },
  ];
  const status: CrawlStatus = {
    status: 'idle',
    progress: { done: 3 },
    summary: null,
    output: 'file:/secret/path',
  };

  const call = (
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: string | Buffer } = {},
  ): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...options.headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            let json: Answer['json'] = {};
            try {
              json = JSON.parse(text) as Answer['json'];
            } catch {
              // left empty: the test names what it expected
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });

  const post = (body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
    call('POST', '/crawl', {
      headers: { ...AUTH, ...JSON_TYPE, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const assertError = (answer: Answer, status: number, code: string): void => {
    assert.equal(answer.status, status, `${code}: ${answer.text}`);
    assert.equal(answer.json.error?.code, code, answer.text);
    assert.ok((answer.json.error?.message ?? '').length > 0);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    assert.ok(!/\n\s+at /.test(answer.text), 'no stack trace');
  };

  before(async () => {
    const app = createSchedulerApp({
      token: TOKEN,
      hosts: createHostPolicy({ listenHost: '127.0.0.1', allowedHosts: [] }),
      status: () => status,
      submit: async (req) => {
        submitted.push(req);
        return { accepted: req.seeds.length };
      },
      why: async (url, runId) => {
        whyAsked.push({ url, runId });
        if (url === 'boom') throw new Error('database file /var/lib/secret is locked');
        if (!url.startsWith('http'))
          throw new InvalidInputError('URL_INVALID', `not a valid absolute URL: ${url}`);
        return { url } as WhyAnswer;
      },
      runHosts: (limit, runId) => {
        hostsAsked.push({ limit, runId });
        if (runId === 'gone') throw runNotHosted(runId);
        return { runId: runId ?? 'default', at: new Date(0).toISOString(), items: [], note: 'none' };
      },
      runs: () => reports,
      logger: silentLogger(),
    });
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('/health is open and says nothing else', async () => {
    const answer = await call('GET', '/health');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { status: 'ok' });
  });

  test('every other route needs the bearer token', async () => {
    for (const [method, path] of [
      ['GET', '/crawl'],
      ['POST', '/crawl'],
      ['GET', '/why?url=http://a.test/'],
      ['GET', '/hosts?runId=r1'],
      ['GET', '/runs'],
    ] as const) {
      const variants: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${TOKEN}0` },
        { authorization: TOKEN },
      ];
      for (const headers of variants) {
        const answer = await call(method, path, {
          headers: { ...JSON_TYPE, ...headers },
          ...(method === 'POST' ? { body: '{}' } : {}),
        });
        assertError(answer, 401, 'UNAUTHORIZED');
        assert.match(String(answer.headers['www-authenticate']), /^Bearer/);
      }
    }
    const ok = await call('GET', '/crawl', { headers: AUTH });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, status);
  });

  test('GET /runs lists the hosted runs; GET /why takes an optional runId, checked', async () => {
    const runs = await call('GET', '/runs', { headers: AUTH });
    assert.equal(runs.status, 200, runs.text);
    assert.deepEqual(runs.json, { runs: reports });
    const why = await call('GET', '/why?url=http://a.test/&runId=r1', { headers: AUTH });
    assert.equal(why.status, 200, why.text);
    assert.deepEqual(whyAsked.at(-1), { url: 'http://a.test/', runId: 'r1' });
    await call('GET', '/why?url=http://a.test/', { headers: AUTH });
    assert.deepEqual(whyAsked.at(-1), { url: 'http://a.test/', runId: undefined });
    const bad = await call('GET', '/why?url=http://a.test/&runId=../x', { headers: AUTH });
    assertError(bad, 400, 'FRONTIER_BAD_RUN_ID');
  });

  test('GET /hosts takes an optional runId and a limit of 1-100, checked; a run not hosted is 404', async () => {
    const answer = await call('GET', '/hosts?runId=r1&limit=5', { headers: AUTH });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.runId, 'r1');
    assert.deepEqual(hostsAsked.at(-1), { limit: 5, runId: 'r1' });
    await call('GET', '/hosts', { headers: AUTH });
    assert.deepEqual(hostsAsked.at(-1), { limit: 20, runId: undefined });
    for (const limit of ['0', '101', '2.5', 'x']) {
      assertError(await call('GET', `/hosts?limit=${limit}`, { headers: AUTH }), 400, 'INVALID_REQUEST');
    }
    assertError(await call('GET', '/hosts?runId=../x', { headers: AUTH }), 400, 'FRONTIER_BAD_RUN_ID');
    assertError(await call('GET', '/hosts?runId=gone', { headers: AUTH }), 404, 'RUN_NOT_HOSTED');
  });

  test('POST /crawl with a valid body is accepted', async () => {
    const answer = await post({ seeds: ['http://a.test/'], maxPages: 5 });
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual(answer.json, { accepted: 1 });
    assert.equal(submitted.at(-1)?.maxPages, 5);
  });

  test('a cross-origin request from a web page is refused with 403', async () => {
    const before = submitted.length;
    const pages: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: `http://localhost:${port}` },
    ];
    for (const headers of pages) {
      assertError(await post({ seeds: ['http://a.test/'] }, headers), 403, 'CROSS_ORIGIN');
    }
    // A page of the scheduler's own origin is not refused for its origin (it has no such pages).
    assert.equal(
      (await post({ seeds: ['http://a.test/'] }, { origin: `http://127.0.0.1:${port}` })).status,
      202,
    );
    assert.equal(submitted.length, before + 1, 'only the same-origin request reached the scheduler');
  });

  test('a Host that is not a loopback name is refused (DNS rebinding)', async () => {
    for (const host of [
      'evil.example',
      `rebind.evil.example:${port}`,
      '10.0.0.5',
      'localhost.evil.example',
    ]) {
      assertError(await call('GET', '/health', { headers: { host } }), 403, 'HOST_NOT_ALLOWED');
      assertError(await post({ seeds: ['http://a.test/'] }, { host }), 403, 'HOST_NOT_ALLOWED');
    }
    for (const host of [`localhost:${port}`, `[::1]:${port}`, '127.0.0.1', `127.0.0.2:${port}`]) {
      assert.equal((await call('GET', '/health', { headers: { host } })).status, 200, host);
    }
  });

  test('a POST that is not application/json is refused with 415', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      assertError(
        await post(JSON.stringify({ seeds: ['http://a.test/'] }), { 'content-type': type }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
    }
    const noType = await call('POST', '/crawl', { headers: AUTH, body: '{"seeds":["http://a.test/"]}' });
    assertError(noType, 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.equal(
      (await post({ seeds: ['http://a.test/'] }, { 'content-type': 'application/json; charset=utf-8' }))
        .status,
      202,
    );
  });

  /**
   * POSTs `totalBytes` of body in 64 KiB chunks, the way a large upload goes, and stops writing as
   * soon as the answer arrives (the scheduler answers 413 without reading the rest).
   */
  const upload = (totalBytes: number, headers: Record<string, string>): Promise<Answer> =>
    new Promise((resolve, reject) => {
      let answered = false;
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/crawl',
          headers: { host: `127.0.0.1:${port}`, ...headers },
        },
        (res) => {
          answered = true;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              json: JSON.parse(text) as Answer['json'],
            }),
          );
        },
      );
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        if (answered) return;
        if (sent >= totalBytes) return void req.end();
        sent += chunk.length;
        req.write(chunk, () => setTimeout(pump, 1));
      };
      pump();
    });

  test('bodies over 1 MiB are refused with 413, declared or streamed', async () => {
    const size = 3 * 1024 * 1024;
    assertError(
      await upload(size, { ...AUTH, ...JSON_TYPE, 'content-length': String(size) }),
      413,
      'REQUEST_TOO_LARGE',
    );
    assertError(
      await upload(size, { ...AUTH, ...JSON_TYPE, 'transfer-encoding': 'chunked' }),
      413,
      'REQUEST_TOO_LARGE',
    );
    // At the limit is fine (and then judged as JSON; white space, as unknown fields are refused).
    const padded = `{"seeds": ["http://a.test/"]${' '.repeat(1024 * 1024 - 100)}}`;
    assert.equal((await post(padded)).status, 202);
  });

  test('bad JSON or an invalid crawl is a 400 with a code, never a 500', async () => {
    assertError(await post('{"seeds": ['), 400, 'BAD_JSON');
    assertError(await post(''), 400, 'BAD_JSON');
    assertError(await post({ seeds: [] }), 400, 'INVALID_CRAWL');
    assertError(await post({ seeds: ['http://a.test/'], maxPages: -1 }), 400, 'INVALID_CRAWL');
    assertError(await post([1, 2, 3]), 400, 'INVALID_CRAWL');
    // Every problem, field by field, in the answer.
    const bad = await post({
      seeds: ['ftp://a.test/'],
      maxPages: -1,
      hostRules: [{ host: 'a.test', delayMs: 'x' }],
      pad: 1,
    });
    assertError(bad, 400, 'INVALID_CRAWL');
    assert.deepEqual(bad.json.error?.problems?.map((p) => p.field).sort(), [
      'hostRules.0.delayMs',
      'maxPages',
      'pad',
      'seeds.0',
    ]);
    assert.ok(bad.json.error?.problems?.every((p) => p.message.length > 0));
    // A time limit has no owner on a scheduler's own crawl: refused, not ignored.
    const timed = await post({ seeds: ['http://a.test/'], maxDurationMs: 60_000 });
    assertError(timed, 400, 'INVALID_CRAWL');
    assert.deepEqual(
      timed.json.error?.problems?.map((p) => p.field),
      ['maxDurationMs'],
    );
    assert.match(
      timed.json.error?.problems?.[0]?.message ?? '',
      /not timed: give the limit to a job of the master/,
    );
    assertError(await call('GET', '/why', { headers: AUTH }), 400, 'MISSING_URL');
    assertError(await call('GET', '/why?url=nope', { headers: AUTH }), 400, 'URL_INVALID');
  });

  test('a failure of the scheduler is a 500 without its internals; unknown routes and methods are JSON too', async () => {
    const failed = await call('GET', '/why?url=boom', { headers: AUTH });
    assertError(failed, 500, 'INTERNAL');
    assert.ok(!failed.text.includes('/var/lib/secret'), 'the error message stays in the log');
    assertError(await call('GET', '/nowhere', { headers: AUTH }), 404, 'NOT_FOUND');
    const wrongMethod = await call('DELETE', '/crawl', { headers: AUTH });
    assertError(wrongMethod, 405, 'METHOD_NOT_ALLOWED');
    assert.match(String(wrongMethod.headers.allow), /GET/);
  });
});
