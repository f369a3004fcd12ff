import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startPolitenessSite } from '../fixtures/politeness-site.js';
import { runCli, startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait-for.js';

interface Status {
  source: { kind: string; url?: string; crawl?: string; dir?: string };
  runs: { id: string; state: string; waiting: string | null; counters: Record<string, number> }[];
  totals: { active: number; pagesPerSecond: number };
  fleet: unknown;
  alerts: unknown;
}

async function status(args: string[]): Promise<Status> {
  const result = await runCli(['status', ...args, '--json'], {}, 30_000);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Status;
}

/** Without a master, `status` asks the embedded crawl's scheduler (found in --out), then its files. */
describe('ackcrawl status --out: an embedded crawl, while it runs and after', () => {
  test("the running scheduler's runs and rates, then the frontier file's counts once it is over", async () => {
    const site = await startPolitenessSite([{ name: 'slow', pages: 6, responseMs: 5 }]);
    const host = site.hosts.get('slow');
    assert.ok(host);
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-status-'));
    try {
      const run = startCli([
        'crawl',
        host.url,
        '--out',
        out,
        '--allow-private',
        '--host-delay',
        '1000',
        '--json',
      ]);
      await waitFor(() => existsSync(join(out, 'scheduler.json')), {
        timeoutMs: 30_000,
        message: 'scheduler up',
      });
      let live = await status(['--out', out]);
      await waitFor(
        async () => {
          live = await status(['--out', out]);
          return (live.runs[0]?.counters.done ?? 0) >= 1;
        },
        { timeoutMs: 30_000, intervalMs: 200, message: () => `a page done: ${JSON.stringify(live)}` },
      );
      const { api, token } = JSON.parse(readFileSync(join(out, 'scheduler.json'), 'utf8')) as {
        api: string;
        token: string;
      };
      assert.equal(live.source.kind, 'scheduler');
      assert.equal(live.source.url, api);
      assert.equal(live.fleet, null);
      assert.equal(live.alerts, null);
      assert.equal(live.runs.length, 1);
      assert.equal(live.runs[0]?.id, 'default');
      // The host delay keeps most pages queued while it runs.
      assert.ok(['active', 'finished'].includes(String(live.runs[0]?.state)), JSON.stringify(live));

      const text = await runCli(['status', '--scheduler', api, '--token', token], {}, 30_000);
      assert.equal(text.code, 0, text.stderr);
      assert.match(
        text.stdout,
        new RegExp(`^scheduler ${api.replace(/[.]/g, '\\.')} \\(crawl (crawling|done), records to `, 'm'),
      );
      assert.match(text.stdout, /^default\s+default\s+(active|finished)\s+\d+\s+0\s/m);
      assert.match(text.stdout, /^FLEET\nnot known here/m);
      const refused = await runCli(
        ['status', '--scheduler', api, '--token', 'not-the-token-at-all'],
        {},
        30_000,
      );
      // A refusal that is not a bad argument (401): exit code 1, as fail() gives every status but 400.
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /answered 401/);

      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(result.stdout) as { ok: number; failed: number };
      const over = await status(['--out', out]);
      assert.equal(over.source.kind, 'files');
      assert.equal(over.runs[0]?.state, 'finished');
      assert.equal(over.runs[0]?.counters.done, summary.ok);
      assert.equal(over.runs[0]?.counters.failed, summary.failed);
      assert.equal(over.runs[0]?.counters.queued, 0);
      assert.equal(over.totals.active, 0);
    } finally {
      await site.close();
      rmSync(out, { recursive: true, force: true });
    }
    const empty = mkdtempSync(join(tmpdir(), 'ackcrawl-status-none-'));
    try {
      const none = await runCli(['status', '--out', empty], {}, 30_000);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /no crawl in .* \(no scheduler running, no frontier\.sqlite\)/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
