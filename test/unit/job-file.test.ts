import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { JOB_FILE_VERSION, loadJob, saveJob } from '../../scheduler/job-file.js';
import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';
import { ConfigError } from '../../shared/errors.js';

/** A job.json as the scheduler before shared/crawl-settings wrote it (fetch settings nested). */
const V1_FIXTURE = fileURLToPath(new URL('../../../test/fixtures/job-files/v1-job.json', import.meta.url));

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'job-file-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The scheduler's configuration: what a job file leaves out. */
const BASE = parseCrawlSettings({ seeds: ['http://configured.test/'], priority: 8, cooldownBaseMs: 7_000 });

describe('job.json', () => {
  test('a file written by the previous version loads, every setting in its place', () => {
    withDir((dir) => {
      const path = join(dir, 'job.json');
      copyFileSync(V1_FIXTURE, path);
      const job = loadJob(path, BASE);
      assert.ok(job);
      assert.deepEqual(job.seeds, ['http://a.test/', 'http://b.test/start']);
      assert.equal(job.scope, 'domain');
      assert.equal(job.maxPages, 500);
      assert.equal(job.hostDelayMs, 250);
      assert.deepEqual(job.hostRules, [{ host: 'slow.a.test', concurrency: 1, delayMs: 2000 }]);
      assert.equal(job.respectRobots, false);
      assert.equal(job.sitemapMaxDepth, 2);
      // What was under `fetch` is flat now.
      assert.equal(job.userAgent, 'old-crawler/1.0');
      assert.equal(job.totalTimeoutMs, 45_000);
      assert.equal(job.allowPrivate, true);
      assert.equal(job.defaultCharset, 'GBK');
      assert.deepEqual(job.userAgents, ['ua-one/1', 'ua-two/2']);
      assert.deepEqual(job.proxies, ['http://user:secret@127.0.0.1:3128/']);
      assert.deepEqual(job.allowAddresses, ['127.0.0.1']);
      assert.equal(job.sitemapMaxBytes, 1_048_576);
      // Settings it predates are the configuration's.
      assert.equal(job.priority, 8);
      assert.equal(job.cooldownBaseMs, 7_000);
      assert.equal(job.priorityRule, 'breadth-first');
    });
  });

  test('it is saved versioned, and loads back as it was saved', () => {
    withDir((dir) => {
      const path = join(dir, 'job.json');
      const job = parseCrawlSettings({
        seeds: ['http://a.test/'],
        maxPages: 9,
        proxies: ['http://u:p@127.0.0.1:9/'],
      });
      saveJob(path, job);
      const saved = JSON.parse(readFileSync(path, 'utf8')) as { version: number; settings: unknown };
      assert.equal(saved.version, JOB_FILE_VERSION);
      assert.deepEqual(saved.settings, job);
      assert.deepEqual(loadJob(path, BASE), job);
    });
  });

  test('a file that does not validate stops the scheduler with every problem, by field', () => {
    withDir((dir) => {
      const path = join(dir, 'job.json');
      writeFileSync(
        path,
        JSON.stringify({ version: 2, settings: { seeds: ['ftp://x/'], maxPages: -1, typo: 1 } }),
      );
      assert.throws(
        () => loadJob(path, BASE),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.deepEqual(err.problems.map((p) => p.replace(`${path}: `, '').split(':')[0]).sort(), [
            'settings.maxPages',
            'settings.seeds.0',
            'settings.typo',
          ]);
          return true;
        },
      );
      writeFileSync(path, JSON.stringify({ seeds: ['http://a.test/'], fetch: { maxRedirects: 'many' } }));
      assert.throws(() => loadJob(path, BASE), /maxRedirects/);
      writeFileSync(path, '{ torn');
      assert.throws(() => loadJob(path, BASE), ConfigError);
      writeFileSync(path, JSON.stringify({ version: 3, settings: {} }));
      assert.throws(() => loadJob(path, BASE), /version/);
    });
  });

  test('no file: null (the configuration is the crawl)', () => {
    withDir((dir) => assert.equal(loadJob(join(dir, 'job.json'), BASE), null));
  });
});
