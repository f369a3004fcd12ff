import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CRAWL_SETTINGS_DOC_PATH, renderCrawlSettingsDoc } from '../../scripts/docs/crawl-settings.js';
import { envName } from '../../shared/config/load.js';
import { CRAWL_SETTING_KEYS, CrawlSettingsSchema } from '../../shared/crawl-settings/index.js';

test('docs/crawl-settings.md is generated from the schema', () => {
  assert.equal(
    readFileSync(CRAWL_SETTINGS_DOC_PATH, 'utf8'),
    renderCrawlSettingsDoc(),
    'run: npm run docs:generate',
  );
});

test('every setting has a description and a row with its variable', () => {
  const doc = renderCrawlSettingsDoc();
  for (const key of CRAWL_SETTING_KEYS) {
    assert.ok(CrawlSettingsSchema.shape[key].description, `${key} has .describe()`);
    assert.match(doc, new RegExp(`^\\| \`${key}\` \\|.*\`${envName(key)}\``, 'm'), key);
  }
});
