import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RoleIpcMessage } from '../../shared/protocol/ipc.js';
import {
  startPolitenessSite,
  type PolitenessHost,
  type PolitenessSite,
} from '../fixtures/politeness-site.js';
import { CLI, runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait-for.js';
import { makeCertificate } from '../helpers/tls-cert.js';

const PAGES = 8;
const TOKEN = 'tls-test-token-0123456789abcdef';

/** GET /health over https (trusting `ca`) or http; resolves with the status or the error's code. */
function health(port: number, scheme: 'http' | 'https', ca?: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = scheme === 'https' ? httpsRequest : httpRequest;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/health',
        agent: false,
        timeout: 5_000,
        ...(ca === undefined ? {} : { ca: readFileSync(ca) }),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A scheduler with a certificate and key serves its API over https and its crawler endpoint over
 * wss; an agent's crawlers that trust its CA (ACKCRAWL_TLS_CA) crawl a site to the end, and a
 * crawler that does not is refused with TLS_UNTRUSTED and exits instead of retrying for ever.
 */
describe('TLS between the scheduler and its crawlers', () => {
  let dir: string;
  let tls: { cert: string; key: string };
  let site: PolitenessSite;
  let host: PolitenessHost;
  let port: number;
  let scheduler: ChildProcess;
  let schedulerStderr = '';
  let listening: string | null = null;
  let done: Record<string, number> | null = null;
  let agent: ChildProcess | null = null;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-tls-'));
    tls = makeCertificate(dir);
    site = await startPolitenessSite([{ name: 'site', pages: PAGES, responseMs: 1 }]);
    host = site.hosts.get('site') as PolitenessHost;
    port = await freePort();
    env = {
      ...process.env,
      ACKCRAWL_TOKEN: TOKEN,
      ACKCRAWL_DATA_DIR: join(dir, 'data'),
      ACKCRAWL_SCHEDULER_URL: `wss://127.0.0.1:${port}/crawlers`,
      ACKCRAWL_LOG_LEVEL: 'warn',
      ACKCRAWL_TLS_CA: undefined,
      NODE_EXTRA_CA_CERTS: undefined,
    };
    scheduler = spawn(process.execPath, [CLI, 'scheduler'], {
      env: {
        ...env,
        ACKCRAWL_FRONTIER: 'sqlite',
        ACKCRAWL_SINK: 'file',
        ACKCRAWL_OUT_DIR: join(dir, 'out'),
        ACKCRAWL_LISTEN_PORT: String(port),
        ACKCRAWL_TLS_CERT: tls.cert,
        ACKCRAWL_TLS_KEY: tls.key,
        ACKCRAWL_SEEDS: host.url,
        ACKCRAWL_ALLOW_PRIVATE: 'true',
        ACKCRAWL_RESPECT_ROBOTS: 'false',
        ACKCRAWL_HOST_DELAY_MS: '0',
        ACKCRAWL_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    scheduler.stderr?.setEncoding('utf8').on('data', (chunk: string) => (schedulerStderr += chunk));
    scheduler.on('message', (message: RoleIpcMessage) => {
      if (message.type === 'listening') listening = message.url;
      if (message.type === 'done') done = message.summary;
    });
    await waitFor(() => listening !== null || scheduler.exitCode !== null, {
      timeoutMs: 30_000,
      message: 'the scheduler listening',
    });
    assert.ok(listening, `the scheduler started (stderr: ${schedulerStderr.slice(-500)})`);
  });

  after(async () => {
    if (agent) {
      agent.kill('SIGTERM');
      await exited(agent);
    }
    scheduler.kill('SIGTERM');
    await exited(scheduler);
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the scheduler says wss:// and answers https only, with a certificate its CA verifies', async () => {
    assert.equal(listening, `wss://127.0.0.1:${port}/crawlers`);
    assert.equal(await health(port, 'https', tls.cert), 200);
    // Without the CA the certificate does not verify; plain HTTP gets no API answer.
    assert.equal(await health(port, 'https'), 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.notEqual(await health(port, 'http'), 200);
  });

  test('a crawler that does not trust the certificate exits with TLS_UNTRUSTED', async () => {
    const result = await runCli(['crawler'], { ...env, ACKCRAWL_LOG_LEVEL: 'info' }, 30_000);
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /TLS_UNTRUSTED/);
    assert.match(result.stderr, /ACKCRAWL_TLS_CA/);
    assert.equal(done, null, 'nothing was crawled');
  });

  test('an agent whose crawlers trust the CA (ACKCRAWL_TLS_CA) crawls the site to the end over wss', async () => {
    agent = spawn(process.execPath, [CLI, 'agent', '--processes', '1'], {
      env: { ...env, ACKCRAWL_TLS_CA: tls.cert },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(() => done !== null, { timeoutMs: 60_000, message: 'the crawl done' });
    const summary = done as unknown as { ok: number; failed: number };
    assert.equal(summary.ok, PAGES + 1, 'the root and its pages');
    assert.equal(summary.failed, 0);
  });

  test('the CLI reaches the https API with the CA in NODE_EXTRA_CA_CERTS', async () => {
    const api = `https://127.0.0.1:${port}`;
    const trusted = await runCli(['why', host.url, '--scheduler', api, '--json'], {
      ...env,
      NODE_EXTRA_CA_CERTS: tls.cert,
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal((JSON.parse(trusted.stdout) as { state: string }).state, 'done');
    const untrusted = await runCli(['why', host.url, '--scheduler', api, '--json'], env);
    assert.notEqual(untrusted.code, 0);
  });

  test('a certificate without its key (or the other way round) is a ConfigError naming both', async () => {
    for (const half of [{ ACKCRAWL_TLS_CERT: tls.cert }, { ACKCRAWL_TLS_KEY: tls.key }]) {
      const result = await runCli(['scheduler'], { ...env, ...half }, 30_000);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /TLS needs both ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY/);
    }
  });
});
