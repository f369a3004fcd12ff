import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { roleScripts } from '../../master/embedded/role-scripts.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * A crawler whose scheduler is away (restarting, or not up yet) keeps trying and connects when it
 * comes: it must not exit on its own, or its agent counts the exits as a crash loop and the fleet
 * has no crawlers left when the scheduler is back.
 */
describe('a crawler waits for its scheduler', () => {
  const children: ReturnType<typeof spawn>[] = [];
  after(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  test('nothing listening for a while: it stays up, retrying, and connects once a scheduler listens', async () => {
    const port = await freePort();
    const token = 'reconnect-test-token';
    const child = spawn(process.execPath, [roleScripts.crawler], {
      env: {
        ...process.env,
        ACKCRAWL_SCHEDULER_URL: `ws://127.0.0.1:${port}/crawlers`,
        ACKCRAWL_TOKEN: token,
        ACKCRAWL_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    let exit: string | null = null;
    child.once('exit', (code, signal) => (exit = `exit ${code ?? signal}`));

    // Backoff 100, 200, 400, 800 ms…: four failed attempts take about 1.5 s.
    const attempts = (): number => stderr.split('scheduler connection closed; reconnecting').length - 1;
    await waitFor(() => attempts() >= 4 || exit !== null, {
      timeoutMs: 15_000,
      message: () => `four reconnect attempts (${stderr.slice(-2_000)})`,
    });
    assert.equal(exit, null, `the crawler stayed up while its scheduler was away: ${stderr.slice(-2_000)}`);

    const server = new WebSocketServer({ host: '127.0.0.1', port, path: '/crawlers' });
    try {
      const authorization = await new Promise<string | undefined>((resolve) =>
        server.once('connection', (_ws, req) => resolve(req.headers.authorization)),
      );
      assert.equal(authorization, `Bearer ${token}`);
      assert.equal(exit, null);
    } finally {
      for (const ws of server.clients) ws.terminate();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
