import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  allQueueNames,
  DEFAULT_RETRY_DELAY_BUCKETS_MS,
} from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { startPolitenessSite } from '../fixtures/politeness-site.js';
import { CLI } from '../helpers/cli.js';
import { deleteTopic } from '../helpers/kafka-topic.js';
import { rabbitAdmin } from '../helpers/rabbitmq.js';
import { readPageRecords } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 10;
const DEFAULT_PORT = 8700;

async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * The README's distributed flow as a user types it: `ackcrawl scheduler`, `ackcrawl agent`,
 * `ackcrawl crawl URL --cluster`, in one folder, with no token, port, URL or data dir set — the
 * scheduler listens on 127.0.0.1:8700 where the others look, and they share its token file in
 * ./ackcrawl-data. Only the queue prefix and topic are set, so the test meets no other crawl.
 */
test('scheduler, agent and crawl --cluster connect with no connection settings', async (t) => {
  assert.ok(
    await portFree(DEFAULT_PORT),
    `this test runs the scheduler on its default port ${DEFAULT_PORT}, which something else holds: stop it`,
  );
  const id = randomUUID().slice(0, 8);
  const prefix = `test-${id}`;
  const topic = `test-${id}.pages`;
  const cwd = mkdtempSync(join(tmpdir(), 'ackcrawl-defaults-'));
  const site = await startPolitenessSite([{ name: 'site', pages: PAGES, responseMs: 1 }]);
  const url = site.hosts.get('site')?.url as string;
  // Of the test runner's ACKCRAWL_* environment only where the services are reaches the roles.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('ACKCRAWL_') || /^ACKCRAWL_(AMQP|KAFKA|S3)_/.test(key),
    ),
  );
  Object.assign(env, {
    ACKCRAWL_QUEUE_PREFIX: prefix,
    ACKCRAWL_KAFKA_TOPIC: topic,
    ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'error',
  });
  const start = (args: string[]): ChildProcess =>
    spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const roles: ChildProcess[] = [];
  t.after(async () => {
    for (const role of roles.reverse()) {
      role.kill('SIGTERM');
      await exited(role);
    }
    await site.close();
    rmSync(cwd, { recursive: true, force: true });
    const admin = await rabbitAdmin();
    await admin.deleteQueuesAndClose(allQueueNames(prefix, DEFAULT_RETRY_DELAY_BUCKETS_MS));
    await deleteTopic(topic);
  });

  roles.push(start(['scheduler']));
  await waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${DEFAULT_PORT}/health`).catch(() => null);
      return res?.ok === true;
    },
    { timeoutMs: 60_000, message: `the scheduler answering on 127.0.0.1:${DEFAULT_PORT}` },
  );
  const tokenFile = join(cwd, 'ackcrawl-data', 'token');
  assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
  roles.push(start(['agent', '--processes', '1']));

  const crawl = spawn(
    process.execPath,
    [CLI, 'crawl', url, '--cluster', '--allow-private', '--host-delay', '0', '--json'],
    { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  crawl.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  crawl.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => crawl.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => crawl.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  assert.equal(code, 0, stderr);
  const summary = JSON.parse(stdout) as { pages: number; ok: number; out: string };
  assert.equal(summary.ok, PAGES + 1, 'the root and its pages');
  assert.equal(summary.out, `kafka:${topic}`);
  const records = await readPageRecords(topic, (r) => new Set(r.map((x) => x.url)).size >= PAGES + 1);
  assert.equal(new Set(records.map((r) => r.url)).size, PAGES + 1);
});
