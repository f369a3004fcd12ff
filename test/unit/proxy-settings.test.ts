import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createUserAgentRotation } from '../../client/crawler/fetch/user-agents.js';
import { planCrawl } from '../../master/cli/crawl-options.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError, InvalidInputError } from '../../shared/errors.js';
import { crawlRequestSchema } from '../../shared/protocol/crawl-api.js';
import { fetchSettingsSchema } from '../../shared/protocol/messages.js';
import {
  normalizeProxyUrl,
  proxyUrlProblem,
  proxyUrlSchema,
  redactProxyUrl,
} from '../../shared/protocol/proxy-url.js';

describe('proxy URLs', () => {
  test('accepts the supported schemes, with or without credentials', () => {
    for (const url of [
      'http://127.0.0.1:3128',
      'https://proxy.example:8443/',
      'socks4://10.0.0.1:1080',
      'socks4a://10.0.0.1:1080',
      'socks5://user:pass@10.0.0.1:1080',
      'socks5h://[::1]:1080',
    ]) {
      assert.equal(proxyUrlProblem(url), null, url);
    }
  });

  test('refuses other schemes, paths, queries, missing hosts and bad encodings, never echoing the URL', () => {
    for (const url of [
      'ftp://u:hunter2@host:21',
      'http://u:hunter2@host:3128/path',
      'http://u:hunter2@host:3128/?q=1',
      'socks5://u:hunter2@',
      'http://u:%zz@host:1',
      'not a url hunter2',
      '',
    ]) {
      const problem = proxyUrlProblem(url);
      assert.ok(problem, url);
      assert.ok(!problem.includes('hunter2'), problem);
      const parsed = proxyUrlSchema.safeParse(url);
      assert.equal(parsed.success, false);
      assert.ok(!JSON.stringify(parsed.error?.issues).includes('hunter2'));
    }
  });

  test('redaction keeps scheme, host and port only', () => {
    assert.equal(redactProxyUrl('socks5://user:pw@10.0.0.1:1080'), 'socks5://10.0.0.1:1080');
    assert.equal(redactProxyUrl('http://user:pw@proxy.example:3128/'), 'http://proxy.example:3128');
    assert.equal(redactProxyUrl('http://[::1]:8080'), 'http://[::1]:8080');
    assert.equal(redactProxyUrl('not a url, pw'), '[invalid proxy URL]');
  });

  test('credentials are percent-encoded so lists split on commas and spaces keep them whole', () => {
    const url = normalizeProxyUrl('http://a,b:p%2Cw,x y@h:1');
    assert.equal(url, 'http://a%2Cb:p%2Cw%2Cx%20y@h:1/');
    assert.equal(normalizeProxyUrl(url), url, 'idempotent');
    assert.equal(decodeURIComponent(new URL(url).password), 'p,w,x y');
  });
});

describe('proxy and User-Agent settings', () => {
  test('scheduler config: ACKCRAWL_PROXIES is a list, ACKCRAWL_USER_AGENTS one per line', () => {
    const config = loadConfig(schedulerConfigSchema, {
      ACKCRAWL_PROXIES: 'socks5://u:p@127.0.0.1:1080, http://127.0.0.1:3128',
      ACKCRAWL_USER_AGENTS: 'Mozilla/5.0 (X11; Linux x86_64) a, b\nsecond/2\n\n',
      ACKCRAWL_PROXY_MAX_FAILURES: '5',
    });
    assert.deepEqual(config.proxies, ['socks5://u:p@127.0.0.1:1080', 'http://127.0.0.1:3128/']);
    assert.deepEqual(config.userAgents, ['Mozilla/5.0 (X11; Linux x86_64) a, b', 'second/2']);
    assert.equal(config.proxyMaxFailures, 5);
    assert.equal(config.proxyCooloffMs, 60_000);
  });

  test('scheduler config: a bad proxy is a ConfigError naming the variable, not the password', () => {
    try {
      loadConfig(schedulerConfigSchema, {
        ACKCRAWL_PROXIES: 'http://127.0.0.1:3128 gopher://u:hunter2@h:70',
      });
      assert.fail('should throw');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /proxies\.1 \(ACKCRAWL_PROXIES\): unsupported proxy scheme/);
      assert.ok(!err.message.includes('hunter2'));
    }
  });

  test('crawl API: proxies and userAgents are validated, and a bad proxy is not echoed', () => {
    const ok = crawlRequestSchema.parse({
      seeds: ['http://a.example/'],
      proxies: ['socks5h://u:p@127.0.0.1:1080'],
      userAgents: ['one/1', 'two/2'],
    });
    assert.deepEqual(ok.proxies, ['socks5h://u:p@127.0.0.1:1080']);
    const bad = crawlRequestSchema.safeParse({
      seeds: ['http://a.example/'],
      proxies: ['smtp://u:hunter2@h:25'],
    });
    assert.equal(bad.success, false);
    assert.ok(!JSON.stringify(bad.error?.issues).includes('hunter2'));
  });

  test('the wire settings stay readable by crawlers without the new fields', () => {
    const base = {
      userAgent: 'ua',
      connectTimeoutMs: 1,
      responseTimeoutMs: 1,
      totalTimeoutMs: 1,
      maxRedirects: 0,
      maxBodyBytes: 1,
      allowPrivate: false,
    };
    assert.ok(fetchSettingsSchema.safeParse(base).success);
    assert.ok(
      fetchSettingsSchema.safeParse({ ...base, proxies: ['http://127.0.0.1:1'], userAgents: ['a'] }).success,
    );
    assert.equal(fetchSettingsSchema.safeParse({ ...base, proxies: ['nope'] }).success, false);
  });

  test('CLI: repeated --user-agent is identity plus rotation; one is identity only', () => {
    const raw = { out: '.', processes: '1', concurrency: '1', hostDelay: '0' };
    const one = planCrawl(['http://a.example/'], { ...raw, userAgent: ['only/1'] }, { needsOutDir: false });
    assert.equal(one.settings.userAgent, 'only/1');
    assert.deepEqual(one.settings.userAgents, []);
    const many = planCrawl(
      ['http://a.example/'],
      { ...raw, userAgent: ['first/1', 'second/2'], proxy: ['socks5://127.0.0.1:1080'] },
      { needsOutDir: false },
    );
    assert.equal(many.settings.userAgent, 'first/1');
    assert.deepEqual(many.settings.userAgents, ['first/1', 'second/2']);
    assert.deepEqual(many.settings.proxies, ['socks5://127.0.0.1:1080']);
    assert.throws(
      () =>
        planCrawl(
          ['http://a.example/'],
          { ...raw, proxy: ['http://x:hunter2@h:1/p'] },
          { needsOutDir: false },
        ),
      (err: unknown) =>
        err instanceof InvalidInputError &&
        /--proxy #1/.test(err.message) &&
        !err.message.includes('hunter2'),
    );
  });
});

describe('User-Agent rotation', () => {
  test('cycles through the list, one per request', () => {
    const next = createUserAgentRotation({ userAgent: 'id/1', userAgents: ['a', 'b', 'c'] });
    assert.deepEqual(
      Array.from({ length: 7 }, () => next()),
      ['a', 'b', 'c', 'a', 'b', 'c', 'a'],
    );
  });

  test('without a list, every request is the identity', () => {
    for (const userAgents of [undefined, []]) {
      const next = createUserAgentRotation({ userAgent: 'id/1', userAgents });
      assert.deepEqual([next(), next()], ['id/1', 'id/1']);
    }
  });
});
