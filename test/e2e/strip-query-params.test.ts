import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import { runCli, startCli, type CliRun } from '../helpers/cli.js';
import { startLinkSite, type LinkSite } from '../helpers/link-site.js';
import { readRecords } from '../helpers/records.js';
import { waitFor } from '../helpers/wait-for.js';

/** Each page's links, by path and query. */
const SITE: Record<string, string[]> = {
  '/': ['/a?utm_source=news', '/a?utm_medium=mail', '/a?id=2&SESSIONID=abc', '/b?utm_campaign=z&q=1'],
  '/a': ['/a?id=2&sessionid=def', '/'],
  '/a?id=2': ['/b?q=1&utm_term=x', '/b;jsessionid=XYZ?q=1'],
  '/b?q=1': [],
};

describe('ackcrawl crawl --strip-param: tracking and session parameters (query and path) folded away before dedup', () => {
  let site: LinkSite;
  let origin = '';
  let out = '';
  let result: Awaited<CliRun['done']>;
  let asked: WhyAnswer;

  before(async () => {
    site = await startLinkSite(SITE);
    origin = site.origin;
    out = mkdtempSync(join(tmpdir(), 'ackcrawl-strip-'));
    const run = startCli([
      'crawl',
      `${origin}/`,
      '--out',
      out,
      '--allow-private',
      '--no-robots',
      '--host-delay',
      '700',
      '--strip-param',
      'utm_*',
      '--strip-param',
      'sessionid',
      '--strip-param',
      'jsessionid',
      '--json',
    ]);
    await waitFor(() => existsSync(join(out, 'scheduler.json')), {
      timeoutMs: 30_000,
      message: 'scheduler up',
    });
    await waitFor(() => site.requested.includes('/a'), { timeoutMs: 30_000, message: '/a fetched' });
    const answer = await runCli(['why', `${origin}/a?utm_source=news`, '--out', out, '--json'], {}, 30_000);
    assert.equal(answer.code, 0, answer.stderr);
    asked = JSON.parse(answer.stdout) as WhyAnswer;
    result = await run.done;
  });
  after(async () => {
    await site.close();
    rmSync(out, { recursive: true, force: true });
  });

  test('each page is fetched once, under its URL without the listed parameters', () => {
    assert.equal(result.code, 0, result.stderr);
    const fetched = readRecords(out)
      .map((r) => new URL(r.url).pathname + new URL(r.url).search)
      .sort();
    assert.deepEqual(fetched, ['/', '/a', '/a?id=2', '/b?q=1']);
    assert.deepEqual(
      [...site.requested].sort(),
      fetched,
      'no spelling with a stripped parameter was requested',
    );
  });

  test('the records keep the links as the pages wrote them', () => {
    const home = readRecords(out).find((r) => r.url === `${origin}/`);
    assert.ok(home?.links?.includes(`${origin}/a?utm_source=news`));
  });

  test('why answers for the spelling the crawl holds', () => {
    assert.equal(asked.normalized, `${origin}/a`);
    assert.equal(asked.duplicateOf, `${origin}/a`);
    assert.ok(['done', 'in-flight'].includes(asked.state), `${asked.state}: ${asked.reason}`);
  });
});
