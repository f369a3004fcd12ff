import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { roleScripts } from '../../master/embedded/role-scripts.js';
import { waitFor } from '../helpers/wait-for.js';

/** A crawler process told its supervisor's pid, pointed at a scheduler that is not there. */
function crawler(supervisorPid: number) {
  const child = spawn(process.execPath, [roleScripts.crawler], {
    env: {
      ...process.env,
      ACKCRAWL_SUPERVISOR_PID: String(supervisorPid),
      ACKCRAWL_SCHEDULER_URL: 'ws://127.0.0.1:1/crawlers',
      ACKCRAWL_TOKEN: 'not-a-real-token-but-long-enough',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stderr: () => stderr };
}

test('a crawler whose supervisor is gone before it starts stops at once', { timeout: 15_000 }, async (t) => {
  // A pid that is not its parent: its agent died between the spawn and the crawler's start.
  const { child, stderr } = crawler(2 ** 22 + 1);
  t.after(() => child.kill('SIGKILL'));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
  assert.match(stderr(), /agent gone before this crawler started/);
});

test('a crawler whose supervisor is its parent keeps running', async (t) => {
  const { child, stderr } = crawler(process.pid);
  t.after(() => child.kill('SIGKILL'));
  let exited = false;
  child.once('exit', () => (exited = true));
  // Past the start-up check and two of the watchdog's one-second rounds.
  await waitFor(() => stderr().length > 0 || exited, { timeoutMs: 10_000, message: 'the crawler logs' });
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal(exited, false, `it stopped: ${stderr()}`);
  assert.doesNotMatch(stderr(), /agent gone/);
});
