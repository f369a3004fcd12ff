import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { saveJob } from '../../scheduler/job-file.js';
import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import { runCli, startCli, type CliRun } from '../helpers/cli.js';
import { startLinkSite, type LinkSite } from '../helpers/link-site.js';
import { readRecords } from '../helpers/records.js';
import { waitFor } from '../helpers/wait-for.js';

/** Each page's links, by path. */
const SITE: Record<string, string[]> = {
  '/': ['/blog/1', '/blog/2?sessionid=x', '/shop/1', '/blog/3'],
  '/blog/1': ['/blog/4', '/about'],
  '/blog/3': ['/blog/3/comments?sessionid=y', '/blog/5'],
  '/blog/4': [],
  '/blog/5': ['/'],
  '/blog/2?sessionid=x': [],
  '/shop/1': [],
  '/about': [],
};

describe('ackcrawl crawl --include / --exclude: URL patterns decide which links are followed', () => {
  let site: LinkSite;
  let origin = '';
  let out = '';
  let result: Awaited<CliRun['done']>;
  /** What `why` said of two URLs the patterns keep out, asked while the crawl ran. */
  let excluded: WhyAnswer;
  let notIncluded: WhyAnswer;

  const why = async (path: string): Promise<WhyAnswer> => {
    const answer = await runCli(['why', `${origin}${path}`, '--out', out, '--json'], {}, 30_000);
    assert.equal(answer.code, 0, answer.stderr);
    return JSON.parse(answer.stdout) as WhyAnswer;
  };

  before(async () => {
    site = await startLinkSite(SITE);
    origin = site.origin;
    out = mkdtempSync(join(tmpdir(), 'ackcrawl-patterns-'));
    const run = startCli([
      'crawl',
      `${origin}/`,
      '--out',
      out,
      '--allow-private',
      '--no-robots',
      // Slow enough to ask the running crawl: a finished one has no settings left to answer from.
      '--host-delay',
      '700',
      '--include',
      '/blog/',
      '--exclude',
      '[?&]sessionid=',
      '--json',
    ]);
    await waitFor(() => existsSync(join(out, 'scheduler.json')), {
      timeoutMs: 30_000,
      message: 'scheduler up',
    });
    excluded = await why('/blog/2?sessionid=x');
    notIncluded = await why('/shop/1');
    result = await run.done;
  });
  after(async () => {
    await site.close();
    rmSync(out, { recursive: true, force: true });
  });
  test('only links in which an include pattern is found, and no exclude pattern, are fetched; the seed always is', () => {
    assert.equal(result.code, 0, result.stderr);
    const fetched = readRecords(out)
      .map((r) => new URL(r.url).pathname + new URL(r.url).search)
      .sort();
    assert.deepEqual(fetched, ['/', '/blog/1', '/blog/3', '/blog/4', '/blog/5']);
    assert.deepEqual([...site.requested].sort(), fetched, 'nothing else was requested');
  });

  test('why names the pattern that kept a URL out', () => {
    assert.equal(excluded.state, 'out-of-scope', excluded.reason);
    assert.match(excluded.reason, /excludeUrls pattern "\[\?&\]sessionid="/);
    assert.equal(notIncluded.state, 'out-of-scope', notIncluded.reason);
    assert.match(notIncluded.reason, /matches none of the includeUrls patterns \("\/blog\/"\)/);
  });

  test('a finished crawl whose folder keeps a job.json (a scheduler on SQLite) still answers by its patterns', async () => {
    // The file a scheduler on a SQLite frontier keeps beside it, written by the scheduler's own code.
    saveJob(
      join(out, 'job.json'),
      parseCrawlSettings({ seeds: [`${origin}/`], includeUrls: ['/blog/'], excludeUrls: ['[?&]sessionid='] }),
    );
    try {
      const excludedAfter = await why('/blog/2?sessionid=x');
      assert.equal(excludedAfter.state, 'out-of-scope', excludedAfter.reason);
      assert.match(excludedAfter.reason, /excludeUrls pattern/);
      assert.equal((await why('/blog/4')).state, 'done');
    } finally {
      rmSync(join(out, 'job.json'));
    }
  });

  test('a pattern RE2 does not take is refused before anything is crawled, by its setting', async () => {
    const before = site.requested.length;
    const bad = await runCli(
      ['crawl', `${origin}/`, '--out', join(out, 'bad'), '--allow-private', '--exclude', '(?<=a)b'],
      {},
      30_000,
    );
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--exclude '\(\?<=a\)b': not a pattern RE2 takes/);
    assert.equal(site.requested.length, before);
  });
});
