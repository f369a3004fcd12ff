import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { startCli } from '../helpers/cli.js';
import { crawlerPids, descendants, isAlive } from '../helpers/process-tree.js';
import { countByUrl, readRecords } from '../helpers/records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 2000;

function crawlArgs(site: GeneratedSite, out: string): string[] {
  return [
    'crawl',
    site.url,
    '--out',
    out,
    '--allow-private',
    '--host-delay',
    '0',
    '--host-concurrency',
    '16',
    '--concurrency',
    '8',
    '--json',
  ];
}

function safeCount(out: string): number {
  try {
    return readRecords(out).length;
  } catch {
    return 0;
  }
}

describe('kill -9 during an embedded crawl', () => {
  let site: GeneratedSite;
  const outs: string[] = [];
  before(async () => {
    site = await startGeneratedSite({ pages: PAGES });
  });
  after(async () => {
    await site.close();
    for (const out of outs) rmSync(out, { recursive: true, force: true });
  });

  test('a crawler killed mid-crawl: every page still arrives exactly once', async () => {
    site.resetStats();
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-kill-'));
    outs.push(out);
    const run = startCli(crawlArgs(site, out));
    const root = run.child.pid as number;
    await waitFor(() => crawlerPids(root).length === 2, {
      timeoutMs: 15_000,
      message: 'two crawlers running',
    });
    await waitFor(() => safeCount(out) >= 300, { timeoutMs: 30_000, message: '300 pages recorded' });
    const [victim] = crawlerPids(root);
    assert.ok(victim);
    process.kill(victim, 'SIGKILL');
    // The agent starts a replacement.
    await waitFor(() => crawlerPids(root).some((pid) => pid !== victim) && crawlerPids(root).length === 2, {
      timeoutMs: 15_000,
      message: 'agent restarted the killed crawler',
    });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    const counts = countByUrl(readRecords(out));
    assert.equal(counts.size, PAGES, 'every page recorded');
    const repeated = [...counts].filter(([, n]) => n > 1);
    assert.deepEqual(repeated, [], 'no page recorded twice');
    assert.ok(readRecords(out).every((r) => r.outcome === 'ok'));
  });

  test('the whole process tree killed: the same command resumes, nothing lost, nothing refetched', async () => {
    site.resetStats();
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-resume-'));
    outs.push(out);
    const first = startCli(crawlArgs(site, out));
    const root = first.child.pid as number;
    await waitFor(() => safeCount(out) >= 500, { timeoutMs: 30_000, message: '500 pages recorded' });
    const tree = [root, ...descendants(root).map((p) => p.pid)];
    for (const pid of tree) process.kill(pid, 'SIGKILL');
    await first.done;
    await waitFor(() => tree.every((pid) => !isAlive(pid)), { timeoutMs: 5_000, message: 'tree dead' });
    const before = countByUrl(readRecords(out));
    assert.ok(before.size >= 500 && before.size < PAGES, `killed mid-crawl (${before.size} pages)`);

    site.resetStats();
    const second = startCli(crawlArgs(site, out));
    const result = await second.done;
    assert.equal(result.code, 0, result.stderr);
    const counts = countByUrl(readRecords(out));
    assert.equal(counts.size, PAGES, 'every page recorded');
    assert.deepEqual(
      [...counts].filter(([, n]) => n > 1),
      [],
      'no page recorded twice',
    );
    assert.equal(
      site.stats().pageResponses,
      PAGES - before.size,
      'pages durable before the kill were not fetched again',
    );
    const summary = JSON.parse(result.stdout) as { pages: number };
    assert.equal(summary.pages, PAGES);
  });
});
