import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import {
  CRAWL_SETTING_KEYS,
  CrawlSettingsPatchSchema,
  CrawlSettingsSchema,
  crawlDefaults,
  fetchSettingsOf,
  mergeCrawlSettings,
  parseCrawlSettings,
  parseCrawlSettingsPatch,
  settingsProblems,
  type CrawlSettingKey,
  type SettingsProblem,
} from '../../shared/crawl-settings/index.js';
import { InvalidInputError } from '../../shared/errors.js';
import { fetchSettingsSchema } from '../../shared/protocol/messages.js';

const SEED = 'http://a.test/';

/** The problems parseCrawlSettings throws for `input` (fails the test when it does not throw). */
function problemsOf(
  input: unknown,
  parse: (input: unknown) => unknown = parseCrawlSettings,
): SettingsProblem[] {
  try {
    parse(input);
  } catch (err) {
    assert.ok(err instanceof InvalidInputError, String(err));
    assert.equal(err.code, 'INVALID_CRAWL');
    assert.equal(err.status, 400);
    return (err.details as { problems: SettingsProblem[] }).problems;
  }
  assert.fail(`accepted ${JSON.stringify(input)}`);
}

const fields = (problems: readonly SettingsProblem[]): string[] => problems.map((p) => p.field);

interface NumberBounds {
  type: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
}
const jsonSchema = z.toJSONSchema(CrawlSettingsSchema, { io: 'input' }) as {
  properties: Record<string, NumberBounds & { enum?: string[] }>;
  required: string[];
};
const numeric = CRAWL_SETTING_KEYS.filter((key) =>
  ['integer', 'number'].includes(jsonSchema.properties[key]?.type ?? ''),
);

describe('crawl settings: defaults', () => {
  test('only seeds are required; every other setting has its default (defaultCharset: unset)', () => {
    assert.deepEqual(jsonSchema.required, ['seeds']);
    const settings = parseCrawlSettings({ seeds: ['HTTP://A.test'] });
    assert.deepEqual(settings, { ...crawlDefaults(), seeds: [SEED] });
    const unset = CRAWL_SETTING_KEYS.filter((key) => key !== 'seeds' && settings[key] === undefined);
    assert.deepEqual(unset, ['defaultCharset']);
  });

  test('the defaults a user reads in the docs and gets (a sample)', () => {
    const d = crawlDefaults();
    assert.equal(d.scope, 'host');
    assert.equal(d.hostConcurrency, 2);
    assert.equal(d.hostDelayMs, 500);
    assert.equal(d.maxCrawlDelayMs, 30_000);
    assert.equal(d.retryDelayMs, 300_000);
    assert.equal(d.maxAttempts, 3);
    assert.equal(d.respectRobots, true);
    assert.equal(d.allowPrivate, false);
    assert.equal(d.priority, 5);
    assert.equal(d.priorityRule, 'breadth-first');
    assert.deepEqual(d.proxies, []);
  });

  test('crawlDefaults is fresh on each call (no list shared between crawls)', () => {
    const a = crawlDefaults();
    a.hostRules.push({ host: 'x.test' });
    assert.deepEqual(crawlDefaults().hostRules, []);
  });
});

describe('crawl settings: bounds', () => {
  test('every number refuses a value below its minimum and above its maximum, and takes both ends', () => {
    assert.ok(numeric.length >= 20, `numeric settings: ${numeric.join(', ')}`);
    for (const key of numeric) {
      const bounds = jsonSchema.properties[key] as NumberBounds;
      const low = bounds.minimum ?? bounds.exclusiveMinimum;
      assert.notEqual(low, undefined, `${key} has a lower bound`);
      const below = bounds.exclusiveMinimum ?? (bounds.minimum as number) - 1;
      assert.deepEqual(fields(problemsOf({ seeds: [SEED], [key]: below })), [key], `${key} = ${below}`);
      if (bounds.minimum !== undefined) parseCrawlSettings({ seeds: [SEED], [key]: bounds.minimum });
      if (bounds.maximum !== undefined && bounds.maximum < Number.MAX_SAFE_INTEGER) {
        parseCrawlSettings({ seeds: [SEED], [key]: bounds.maximum });
        assert.deepEqual(fields(problemsOf({ seeds: [SEED], [key]: bounds.maximum + 1 })), [key]);
      }
      if (bounds.type === 'integer') {
        assert.deepEqual(fields(problemsOf({ seeds: [SEED], [key]: 1.5 })), [key], `${key} = 1.5`);
      }
    }
  });

  test('named bounds: priority 0..9, link limits, host rule values', () => {
    assert.deepEqual(fields(problemsOf({ seeds: [SEED], priority: 10 })), ['priority']);
    assert.deepEqual(fields(problemsOf({ seeds: [SEED], maxUrlLength: 8193 })), ['maxUrlLength']);
    assert.deepEqual(fields(problemsOf({ seeds: [SEED], maxLinksPerPage: 100_001 })), ['maxLinksPerPage']);
    assert.deepEqual(fields(problemsOf({ seeds: [SEED], hostRules: [{ host: 'a.test', delayMs: -1 }] })), [
      'hostRules.0.delayMs',
    ]);
  });

  test('enums, booleans and strings take their own type only (text is for the text forms)', () => {
    for (const [key, bad] of [
      ['scope', 'everywhere'],
      ['priorityRule', 'random'],
      ['render', 'sometimes'],
      ['respectRobots', 'yes'],
      ['maxPages', '10'],
      ['userAgent', ''],
      ['userAgent', 'two\nlines'],
      ['defaultCharset', 'klingon'],
      ['allowAddresses', ['not-an-ip']],
      ['renderHosts', ['bad host!']],
    ] as const) {
      assert.deepEqual(
        fields(problemsOf({ seeds: [SEED], [key]: bad })).map((f) => f.split('.')[0]),
        [key],
        `${key} = ${JSON.stringify(bad)}`,
      );
    }
    assert.equal(parseCrawlSettings({ seeds: [SEED], defaultCharset: 'gb2312' }).defaultCharset, 'GBK');
  });

  test('seeds: at least one, each a URL the crawler can fetch, at most 10,000', () => {
    assert.deepEqual(fields(problemsOf({})), ['seeds']);
    assert.deepEqual(fields(problemsOf({ seeds: [] })), ['seeds']);
    assert.deepEqual(fields(problemsOf({ seeds: [SEED, 'ftp://a.test/', 'not a url'] })), [
      'seeds.1',
      'seeds.2',
    ]);
    assert.deepEqual(fields(problemsOf({ seeds: Array.from({ length: 10_001 }, () => SEED) })), ['seeds']);
  });

  test('a proxy problem names the proxy by its place, never its password', () => {
    const problems = problemsOf({ seeds: [SEED], proxies: ['http://127.0.0.1:1', 'smtp://u:hunter2@h:25'] });
    assert.deepEqual(fields(problems), ['proxies.1']);
    assert.ok(!JSON.stringify(problems).includes('hunter2'));
  });
});

describe('crawl settings: problems', () => {
  test('every problem at once, each by its dotted field; unknown names are typos, by name', () => {
    const problems = problemsOf({
      seeds: [],
      hostDelayMs: -1,
      hostRules: [{ host: 'a.test', delayMs: 'slow' }],
      hostDelay: 5,
    });
    assert.deepEqual(fields(problems).sort(), ['hostDelay', 'hostDelayMs', 'hostRules.0.delayMs', 'seeds']);
    assert.equal(problems.find((p) => p.field === 'hostDelay')?.message, 'unknown setting');
    for (const p of problems) assert.ok(p.message.length > 0);
  });

  test('settingsProblems reads any ZodError of the schema; the whole object is `settings`', () => {
    const parsed = CrawlSettingsSchema.safeParse([1, 2]);
    assert.equal(parsed.success, false);
    assert.deepEqual(fields(settingsProblems(parsed.error as z.ZodError)), ['settings']);
  });
});

describe('crawl settings: patch and merge', () => {
  const current = parseCrawlSettings({
    seeds: [SEED],
    maxPages: 10,
    hostDelayMs: 100,
    proxies: ['http://127.0.0.1:1'],
  });

  test('a patch applies no default: what it leaves out stays absent', () => {
    assert.deepEqual(parseCrawlSettingsPatch({}), {});
    assert.deepEqual(parseCrawlSettingsPatch({ maxPages: 3 }), { maxPages: 3 });
    assert.equal(Object.keys(CrawlSettingsPatchSchema.shape).length, CRAWL_SETTING_KEYS.length);
  });

  test('a patch is checked like the settings, field by field', () => {
    const problems = problemsOf(
      { maxPages: -1, seeds: [], scope: 'nowhere', typo: true },
      parseCrawlSettingsPatch,
    );
    assert.deepEqual(fields(problems).sort(), ['maxPages', 'scope', 'seeds', 'typo']);
  });

  test('merge takes the patch where it says something and keeps the rest', () => {
    const merged = mergeCrawlSettings(
      current,
      parseCrawlSettingsPatch({ maxPages: 3, proxies: [], seeds: ['http://b.test'] }),
    );
    assert.equal(merged.maxPages, 3);
    assert.deepEqual(merged.proxies, [], 'an empty list is a value: no proxies');
    assert.deepEqual(merged.seeds, ['http://b.test/']);
    assert.equal(merged.hostDelayMs, 100);
    assert.deepEqual(mergeCrawlSettings(current, {}), current);
    assert.equal(current.maxPages, 10, 'merge leaves its input alone');
  });
});

describe('crawl settings: what crawlers get', () => {
  test('fetchSettingsOf gives a valid welcome payload with the fetch settings', () => {
    const settings = parseCrawlSettings({
      seeds: [SEED],
      userAgent: 'me/1',
      userAgents: ['a/1', 'b/2'],
      proxies: ['socks5://127.0.0.1:1080'],
      maxBodyBytes: 1234,
      allowPrivate: true,
      defaultCharset: 'big5',
    });
    const fetch = fetchSettingsSchema.parse(fetchSettingsOf(settings));
    assert.equal(fetch.userAgent, 'me/1');
    assert.deepEqual(fetch.userAgents, ['a/1', 'b/2']);
    assert.deepEqual(fetch.proxies, ['socks5://127.0.0.1:1080']);
    assert.equal(fetch.maxBodyBytes, 1234);
    assert.equal(fetch.allowPrivate, true);
    assert.equal(fetch.defaultCharset, 'Big5');
    const plain = fetchSettingsOf(parseCrawlSettings({ seeds: [SEED] }));
    assert.equal('proxies' in plain, false, 'no proxies: none sent (older crawlers read it so)');
    assert.equal('userAgents' in plain, false);
    assert.equal('defaultCharset' in plain, false);
  });

  test('every fetch setting comes from a setting of the same name', () => {
    const settings = parseCrawlSettings({
      seeds: [SEED],
      userAgents: ['a'],
      proxies: ['http://127.0.0.1:1'],
      defaultCharset: 'gbk',
    });
    for (const [key, value] of Object.entries(fetchSettingsOf(settings))) {
      assert.deepEqual(value, settings[key as CrawlSettingKey], key);
    }
  });
});
