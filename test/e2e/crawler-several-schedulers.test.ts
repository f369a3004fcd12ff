import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { startPolitenessSite, type PolitenessSite } from '../fixtures/politeness-site.js';
import { CLI, runCli } from '../helpers/cli.js';
import { startSchedulerProcess, type SchedulerProcess } from '../helpers/scheduler-process.js';

const PAGES = 30;
const TOKEN = 'several-schedulers-token-0123456789';

/**
 * One crawler process serves two schedulers at once (ACKCRAWL_SCHEDULER_URL as a list): each
 * scheduler's crawl is done by it, nothing else connected, its concurrency split between them.
 */
describe('a crawler connected to several schedulers', () => {
  let site: PolitenessSite;
  const schedulers: SchedulerProcess[] = [];
  let crawler: ChildProcess | null = null;
  let crawlerLog = '';

  before(async () => {
    site = await startPolitenessSite([
      { name: 'a', pages: PAGES, responseMs: 1 },
      { name: 'b', pages: PAGES, responseMs: 1 },
    ]);
    for (let i = 0; i < 2; i++) {
      schedulers.push(
        await startSchedulerProcess({ ACKCRAWL_RESPECT_ROBOTS: 'false', ACKCRAWL_TOKEN: TOKEN }),
      );
    }
  });

  after(async () => {
    if (crawler && crawler.exitCode === null) {
      const exited = new Promise((resolve) => crawler?.once('exit', resolve));
      crawler.kill('SIGTERM');
      await exited;
    }
    for (const scheduler of schedulers) await scheduler.stop();
    await site.close();
  });

  test('both crawls complete with one crawler process, which drains from both on SIGTERM', async () => {
    crawler = spawn(process.execPath, [CLI, 'crawler'], {
      env: {
        ...process.env,
        ACKCRAWL_TOKEN: TOKEN,
        ACKCRAWL_SCHEDULER_URL: schedulers.map((s) => s.url).join(','),
        ACKCRAWL_CONCURRENCY: '8',
        ACKCRAWL_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    crawler.stderr?.setEncoding('utf8').on('data', (chunk: string) => (crawlerLog += chunk));
    const crawls = (['a', 'b'] as const).map((name, i) => {
      const url = site.hosts.get(name)?.url as string;
      return runCli(
        ['crawl', url, '--cluster', '--allow-private', '--host-delay', '0', '--json'],
        {
          ACKCRAWL_TOKEN: TOKEN,
          ACKCRAWL_SCHEDULER_URL: (schedulers[i] as SchedulerProcess).url,
          ACKCRAWL_LOG_LEVEL: 'warn',
        },
        90_000,
      );
    });
    for (const result of await Promise.all(crawls)) {
      assert.equal(result.code, 0, `${result.stderr}\ncrawler: ${crawlerLog.slice(-2_000)}`);
      const summary = JSON.parse(result.stdout) as { ok: number; failed: number };
      assert.equal(summary.ok, PAGES + 1, 'the root and its pages');
      assert.equal(summary.failed, 0);
    }
    await site.settle();
    for (const name of ['a', 'b']) {
      const paths = site.hosts.get(name)?.spans.map((span) => span.path) ?? [];
      assert.equal(new Set(paths).size, PAGES + 1, `host ${name}: every page fetched`);
      assert.equal(paths.length, PAGES + 1, `host ${name}: each once`);
    }
    // Each scheduler had this crawler process connected.
    for (const scheduler of schedulers) {
      assert.match(scheduler.stderr(), new RegExp(`"pid":${crawler.pid}`), 'the crawler said hello to it');
    }
    const exited = new Promise<number | null>((resolve) => crawler?.once('exit', (code) => resolve(code)));
    crawler.kill('SIGTERM');
    assert.equal(await exited, 0, `a clean exit: ${crawlerLog.slice(-2_000)}`);
  });
});
