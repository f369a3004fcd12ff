import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crawlerConfigSchema } from '../../client/crawler/config.js';
import { concurrencyShares } from '../../client/crawler/scheduler-shares.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';

test('a crawler splits its concurrency evenly among its schedulers, at least one each', () => {
  assert.deepEqual(concurrencyShares(32, 1), [32]);
  assert.deepEqual(concurrencyShares(32, 3), [11, 11, 10]);
  assert.deepEqual(concurrencyShares(2, 3), [1, 1, 1]);
  assert.throws(() => concurrencyShares(0, 2), RangeError);
  assert.throws(() => concurrencyShares(4, 0), RangeError);
});

test('ACKCRAWL_SCHEDULER_URL takes one scheduler or a list; anything else is refused at start', () => {
  const urls = (value: string) =>
    loadConfig(crawlerConfigSchema, { ACKCRAWL_SCHEDULER_URL: value }).schedulerUrl;
  assert.deepEqual(urls('ws://127.0.0.1:8700/crawlers'), ['ws://127.0.0.1:8700/crawlers']);
  assert.deepEqual(urls('ws://a:1/crawlers, wss://b:2/crawlers ws://c:3/crawlers'), [
    'ws://a:1/crawlers',
    'wss://b:2/crawlers',
    'ws://c:3/crawlers',
  ]);
  assert.deepEqual(loadConfig(crawlerConfigSchema, {}).schedulerUrl, ['ws://127.0.0.1:8700/crawlers']);
  assert.throws(() => urls('http://a:1/crawlers'), ConfigError);
  assert.throws(() => urls('ws://a:1/crawlers ws://a:1/crawlers'), ConfigError);
  assert.throws(() => urls('not a url'), ConfigError);
});
