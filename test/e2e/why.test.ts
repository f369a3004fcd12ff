import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import { startPolitenessSite } from '../fixtures/politeness-site.js';
import { runCli, startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait-for.js';

async function why(url: string, out: string): Promise<WhyAnswer> {
  const result = await runCli(['why', url, '--out', out, '--json'], {}, 30_000);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as WhyAnswer;
}

describe('ackcrawl why: where a URL is and what it waits for', () => {
  test('asks the running embedded crawl, then reads its files once it is over', async () => {
    const site = await startPolitenessSite([{ name: 'slow', pages: 6, responseMs: 5 }]);
    const host = site.hosts.get('slow');
    assert.ok(host);
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-why-'));
    try {
      const run = startCli([
        'crawl',
        host.url,
        '--out',
        out,
        '--allow-private',
        '--host-delay',
        '1500',
        '--json',
      ]);
      await waitFor(() => existsSync(join(out, 'scheduler.json')), {
        timeoutMs: 30_000,
        message: 'scheduler up',
      });
      await waitFor(async () => (await why(host.url, out)).state === 'done', {
        timeoutMs: 30_000,
        message: 'the seed is done',
      });
      const last = `${host.url}p/5`;
      const waiting = await why(last, out);
      assert.ok(
        ['waiting', 'queued', 'in-flight'].includes(waiting.state),
        `${waiting.state}: ${waiting.reason}`,
      );
      assert.equal(waiting.host?.delayMs, 1_500);
      const outside = await why('http://elsewhere.test/page', out);
      assert.equal(outside.state, 'out-of-scope');
      assert.match(outside.reason, /scope "host"/);
      const bad = await runCli(['why', 'no-scheme', '--out', out], {}, 30_000);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /URL/i);

      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
      assert.ok(!existsSync(join(out, 'scheduler.json')), 'the scheduler file goes with the scheduler');
      const after = await why(last, out);
      assert.equal(after.state, 'done', after.reason);
      const text = await runCli(['why', last, '--out', out], {}, 30_000);
      assert.match(text.stdout, /done: fetched and recorded/);
    } finally {
      await site.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
