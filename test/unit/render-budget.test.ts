import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_RENDER_MS, renderSettings } from '../../client/crawler/render/render-budget.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';

const settings = {
  userAgent: 'ackcrawl-test',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 5_000,
  totalTimeoutMs: 10_000,
  maxRedirects: 5,
  maxBodyBytes: 1024,
  allowPrivate: true,
} satisfies FetchSettings;

test('a render gets what its document’s fetch left of the page’s total time, at least a second', () => {
  assert.equal(renderSettings(settings, undefined), settings, 'no fetch before it: the whole time');
  assert.equal(renderSettings(settings, 0), settings);
  const after = renderSettings(settings, 2_500);
  assert.equal(after.totalTimeoutMs, 7_500);
  assert.equal(after.maxBodyBytes, 1024, 'the other settings are kept');
  assert.equal(settings.totalTimeoutMs, 10_000, 'the crawl’s settings are not changed');
  assert.equal(renderSettings(settings, 9_900).totalTimeoutMs, MIN_RENDER_MS);
  assert.equal(renderSettings(settings, 60_000).totalTimeoutMs, MIN_RENDER_MS);
});
