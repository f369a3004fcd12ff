import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { planCrawl } from '../../master/cli/crawl-options.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { crawlDefaults, settingFromText, settingToText } from '../../shared/crawl-settings/index.js';
import { ConfigError, InvalidInputError } from '../../shared/errors.js';

describe('crawl settings as text (environment, command line)', () => {
  test('each kind is read off the schema; text that is no value stays text for the schema to refuse', () => {
    assert.equal(settingFromText('hostDelayMs', '250'), 250);
    assert.equal(settingFromText('hostDelayMs', 'soon'), 'soon');
    assert.equal(settingFromText('hostDelayMs', ' '), ' ');
    assert.equal(settingFromText('allowPrivate', 'yes'), true);
    assert.equal(settingFromText('allowPrivate', 'OFF'), false);
    assert.equal(settingFromText('allowPrivate', 'ture'), 'ture');
    assert.deepEqual(settingFromText('renderHosts', 'a.test, *.b.test  c.test'), [
      'a.test',
      '*.b.test',
      'c.test',
    ]);
    assert.deepEqual(settingFromText('userAgents', 'A/1 (x, y)\nB/2\n'), ['A/1 (x, y)', 'B/2']);
    assert.deepEqual(settingFromText('hostRules', 'slow.test concurrency=1 delay=2000; *.cdn.test delay=0'), [
      { host: 'slow.test', concurrency: 1, delayMs: 2000 },
      { host: '*.cdn.test', delayMs: 0 },
    ]);
    assert.deepEqual(settingFromText('hostRules', '[{"host":"a.test","adaptive":true}]'), [
      { host: 'a.test', adaptive: true },
    ]);
    assert.equal(settingFromText('render', 'true'), 'always');
    assert.equal(settingFromText('scope', 'domain'), 'domain');
  });

  test('settingToText is read back by settingFromText (the embedded roles get every setting so)', () => {
    const settings = {
      ...crawlDefaults(),
      hostRules: [{ host: 'a.test', delayMs: 5 }],
      userAgents: ['A/1 (x, y)', 'B'],
    };
    for (const [key, value] of Object.entries(settings) as [keyof typeof settings, unknown][]) {
      if (value === undefined) continue;
      assert.deepEqual(settingFromText(key, settingToText(key, value)), value, key);
    }
  });

  test('the scheduler reads every crawl setting as ACKCRAWL_<KEY>, with the schema bounds and defaults', () => {
    const config = loadConfig(schedulerConfigSchema, {
      ACKCRAWL_HOST_DELAY_MS: '0',
      ACKCRAWL_PRIORITY: '7',
      ACKCRAWL_PRIORITY_RULE: 'depth-first',
      ACKCRAWL_RENDER: 'true',
      ACKCRAWL_HOST_RULES: 'slow.test delay=2000',
    });
    assert.equal(config.hostDelayMs, 0);
    assert.equal(config.priority, 7);
    assert.equal(config.priorityRule, 'depth-first');
    assert.equal(config.render, 'always');
    assert.deepEqual(config.hostRules, [{ host: 'slow.test', delayMs: 2000 }]);
    assert.deepEqual(config.seeds, [], 'no seeds: a cluster scheduler waits for a crawl');
    assert.equal(config.maxAttempts, crawlDefaults().maxAttempts);
    assert.throws(
      () =>
        loadConfig(schedulerConfigSchema, {
          ACKCRAWL_PRIORITY: '10',
          ACKCRAWL_HOST_RULES: 'slow.test speed=9',
          ACKCRAWL_SEEDS: 'ftp://a.test/',
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        const text = err.problems.join('\n');
        assert.match(text, /^priority \(ACKCRAWL_PRIORITY\):/m);
        assert.match(text, /^hostRules \(ACKCRAWL_HOST_RULES\):.*speed=9/m);
        assert.match(text, /^seeds\.0 \(ACKCRAWL_SEEDS\):/m);
        return true;
      },
    );
  });
});

describe('ackcrawl crawl: flags over variables over defaults', () => {
  const RAW = { out: '/tmp/unused', processes: '2', concurrency: '32' };
  const plan = (flags: Record<string, unknown>, env: Record<string, string> = {}) =>
    planCrawl(['http://a.test/'], { ...RAW, ...flags }, { needsOutDir: false, env });

  test('no flag, no variable: the schema defaults; nothing to send with --cluster but the seeds', () => {
    const p = plan({});
    assert.deepEqual(p.settings, { ...crawlDefaults(), seeds: ['http://a.test/'] });
    assert.deepEqual(p.request, { seeds: ['http://a.test/'] });
  });

  test('a variable sets a crawl setting; a flag wins over it; only those go with --cluster', () => {
    const p = plan(
      { hostDelay: '0', robots: false, render: true, hostRule: ['a.test delay=1', 'b.test concurrency=3'] },
      { ACKCRAWL_HOST_DELAY_MS: '900', ACKCRAWL_MAX_ATTEMPTS: '5', ACKCRAWL_HEARTBEAT_MS: '1' },
    );
    assert.equal(p.settings.hostDelayMs, 0);
    assert.equal(p.settings.maxAttempts, 5);
    assert.equal(p.settings.respectRobots, false);
    assert.equal(p.settings.render, 'always');
    assert.deepEqual(p.settings.hostRules, [
      { host: 'a.test', delayMs: 1 },
      { host: 'b.test', concurrency: 3 },
    ]);
    assert.deepEqual(Object.keys(p.request).sort(), [
      'hostDelayMs',
      'hostRules',
      'maxAttempts',
      'render',
      'respectRobots',
      'seeds',
    ]);
  });

  test('commander defaults of negated flags are not settings: --no-robots absent leaves robots to the rest', () => {
    assert.equal(plan({ robots: true }, { ACKCRAWL_RESPECT_ROBOTS: 'false' }).settings.respectRobots, false);
  });

  test('each problem is named as the user gave it: the seed, the flag (#n in a list), the variable', () => {
    assert.throws(
      () =>
        planCrawl(
          ['not a url'],
          {
            ...RAW,
            hostDelay: 'soon',
            proxy: ['http://127.0.0.1:1', 'http://u:hunter2@h:1/path'],
            hostRule: ['x speed=1'],
          },
          { needsOutDir: false, env: { ACKCRAWL_PRIORITY: 'high' } },
        ),
      (err: unknown) => {
        assert.ok(err instanceof InvalidInputError);
        assert.equal(err.code, 'CRAWL_OPTIONS_INVALID');
        assert.match(err.message, /^seed 'not a url': /m);
        assert.match(err.message, /^--host-delay: /m);
        assert.match(err.message, /^--proxy #2: /m);
        assert.match(err.message, /^--host-rule: /m);
        assert.match(err.message, /^priority \(ACKCRAWL_PRIORITY\): /m);
        assert.ok(!err.message.includes('hunter2'));
        return true;
      },
    );
    assert.throws(() => planCrawl([], RAW, { needsOutDir: false }), /give at least one seed URL/);
  });
});
