import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import {
  startPolitenessSite,
  type PolitenessHost,
  type PolitenessSite,
} from '../fixtures/politeness-site.js';
import { CLI, runCli } from '../helpers/cli.js';
import { httpCall, startSchedulerProcess, type SchedulerProcess } from '../helpers/scheduler-process.js';

const PAGES = 8;
const mode = (path: string): number => statSync(path).mode & 0o777;

/**
 * A scheduler started without ACKCRAWL_TOKEN makes one and keeps it in its data dir; the agent,
 * its crawlers and the CLI on the same machine find it there, with nothing else to set. A client
 * that finds no token says what to set instead of knocking without one.
 */
describe('the cluster token: made by the scheduler, read by local roles and the CLI', () => {
  let site: PolitenessSite;
  let host: PolitenessHost;
  let scheduler: SchedulerProcess;
  let agent: ChildProcess | null = null;
  let env: NodeJS.ProcessEnv;
  let nowhere: string;

  before(async () => {
    site = await startPolitenessSite([{ name: 'site', pages: PAGES, responseMs: 1 }]);
    host = site.hosts.get('site') as PolitenessHost;
    scheduler = await startSchedulerProcess({ ACKCRAWL_RESPECT_ROBOTS: 'false' });
    env = {
      ACKCRAWL_TOKEN: undefined,
      ACKCRAWL_DATA_DIR: scheduler.dataDir,
      ACKCRAWL_SCHEDULER_URL: scheduler.url,
      ACKCRAWL_LOG_LEVEL: 'warn',
    };
    nowhere = mkdtempSync(join(tmpdir(), 'ackcrawl-no-token-'));
  });

  after(async () => {
    if (agent && agent.exitCode === null) {
      const exited = new Promise((resolve) => agent?.once('exit', resolve));
      agent.kill('SIGTERM');
      await exited;
    }
    await scheduler.stop();
    await site.close();
    rmSync(nowhere, { recursive: true, force: true });
  });

  test('the scheduler writes <dataDir>/token, 0600, and never logs it', () => {
    const path = join(scheduler.dataDir, 'token');
    assert.equal(mode(path), 0o600);
    const token = readFileSync(path, 'utf8').trim();
    assert.match(token, /^[0-9a-f]{48}$/);
    assert.ok(scheduler.stderr().includes(path), 'the log says where the token is');
    assert.ok(!scheduler.stderr().includes(token), 'the log never shows the token');
  });

  test('without the token the API refuses', async () => {
    const answer = await httpCall(scheduler.port, 'GET', '/crawl');
    assert.equal(answer.status, 401);
  });

  test('the agent and `crawl --cluster` read the token file: the crawl completes', async () => {
    agent = spawn(process.execPath, [CLI, 'agent', '--processes', '1'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const result = await runCli(
      ['crawl', host.url, '--cluster', '--allow-private', '--host-delay', '0', '--json'],
      env,
      60_000,
    );
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as { ok: number; failed: number };
    assert.equal(summary.ok, PAGES + 1, 'the root and its pages');
    assert.equal(summary.failed, 0);
    // The submitted crawl, proxy credentials and all, is kept owner-only.
    assert.equal(mode(join(scheduler.outDir, 'job.json')), 0o600);
  });

  test('`why --scheduler` reads the token file', async () => {
    const api = `http://127.0.0.1:${scheduler.port}`;
    const result = await runCli(['why', host.url, '--scheduler', api, '--json'], env, 30_000);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as WhyAnswer).state, 'done');
  });

  test('with no token anywhere, agent and CLI fail at start and say what to set', async () => {
    const none = { ...env, ACKCRAWL_DATA_DIR: nowhere };
    const api = `http://127.0.0.1:${scheduler.port}`;
    for (const args of [
      ['agent', '--processes', '1'],
      ['crawler'],
      ['crawl', host.url, '--cluster'],
      ['why', host.url, '--scheduler', api],
    ]) {
      const result = await runCli(args, none, 30_000);
      assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /ACKCRAWL_TOKEN/, args[0]);
      assert.match(result.stderr, /ACKCRAWL_DATA_DIR/, args[0]);
      assert.ok(result.stderr.includes(join(nowhere, 'token')), `${args[0]} names the file it looked for`);
    }
  });
});
