import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { task } from './frontier-contract-kit.js';

const CHILD = fileURLToPath(new URL('../helpers/frontier-crash-child.js', import.meta.url));

interface Confirmed {
  pushed: Set<string>;
  acked: Set<string>;
}

/**
 * Runs the child on `path` until it has confirmed `ackTarget` acks, then SIGKILLs it. Only whole
 * lines count: a line cut short by the kill was not confirmed.
 */
function runAndKill(path: string, prefix: string, ackTarget: number, into: Confirmed): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, prefix], { stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = '';
    let stderr = '';
    let acks = 0;
    let killed = false;
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child confirmed only ${acks} acks in time; stderr: ${stderr}`));
    }, 30_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const url = line.slice(2);
        if (line.startsWith('P ')) into.pushed.add(url);
        else if (line.startsWith('A ')) {
          into.acked.add(url);
          acks += 1;
        }
      }
      if (acks >= ackTarget && !killed) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('close', (code, signal) => {
      clearTimeout(deadline);
      if (signal === 'SIGKILL' && killed) resolve();
      else reject(new Error(`child ended by itself (code ${code}, signal ${signal}); stderr: ${stderr}`));
    });
  });
}

it('sqlite frontier: kill -9 mid-crawl loses no confirmed push and no confirmed ack', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-frontier-crash-'));
  try {
    const path = join(dir, 'frontier.db');
    const confirmed: Confirmed = { pushed: new Set(), acked: new Set() };
    // Three runs on one file, each killed at a different point, each resuming the last.
    for (const [round, target] of [150, 333, 517].entries()) {
      await runAndKill(path, `r${round}`, target, confirmed);
    }
    assert.ok(confirmed.acked.size >= 1_000);

    const frontier = openSqliteFrontier({ path });
    frontier.releaseAllLeases();
    const again = await frontier.push([...confirmed.pushed].map((url) => task(url)));
    assert.deepEqual(
      again.map((t) => t.url),
      [],
      'every confirmed push is still known',
    );
    const before = await frontier.stats();
    assert.ok(before.done >= confirmed.acked.size, `done ${before.done} < acked ${confirmed.acked.size}`);
    assert.equal(before.leased, 0);

    let drained = 0;
    for (;;) {
      const leases = await frontier.lease(100);
      if (leases.length === 0) break;
      for (const lease of leases) {
        assert.ok(!confirmed.acked.has(lease.url), `acked URL ${lease.url} was leased again`);
      }
      const result = await frontier.settle({
        acks: leases.map((l) => ({ lease: { taskId: l.taskId, leaseId: l.leaseId } })),
        retries: [],
        failures: [],
      });
      assert.equal(result.applied, leases.length);
      drained += leases.length;
    }
    const after = await frontier.stats();
    assert.equal(after.done, after.total);
    assert.equal(after.total, before.total);
    assert.equal(drained, before.ready);
    assert.ok(after.total >= confirmed.pushed.size);
    assert.match((await frontier.checkpoint()) ?? '', /^r2:\d+$/);
    await frontier.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
