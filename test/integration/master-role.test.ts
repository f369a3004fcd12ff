import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openRabbitRunControl } from '../../shared/adapters/run-control/rabbit-run-control.js';
import { silentLogger } from '../../shared/logger.js';
import type { RunCommand } from '../../shared/ports/run-control.js';
import { startCli, type CliRun } from '../helpers/cli.js';
import { callServer, jobBody } from '../helpers/master-api.js';
import { AMQP_URL, rabbitAdmin } from '../helpers/rabbitmq.js';
import { makeCertificate } from '../helpers/tls-cert.js';
import { waitFor } from '../helpers/wait-for.js';

interface Started {
  run: CliRun;
  url: string;
  port: number;
  stdout: () => string;
}

/** `ackcrawl master` on a free loopback port; resolves once its log says where it listens. */
async function startMaster(env: NodeJS.ProcessEnv): Promise<Started> {
  const run = startCli(['master'], { ACKCRAWL_MASTER_PORT: '0', ACKCRAWL_LOG_LEVEL: 'info', ...env });
  let stdout = '';
  let stderr = '';
  run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  run.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let url = '';
  let exited = false;
  void run.done.then(() => (exited = true));
  await waitFor(
    () => {
      if (exited) throw new Error(`the master exited: ${stderr}`);
      const line = stderr.split('\n').find((l) => l.includes('"master listening"'));
      if (line) url = (JSON.parse(line) as { url: string }).url;
      return url !== '';
    },
    { timeoutMs: 20_000, message: 'the master to listen' },
  );
  return { run, url, port: Number(new URL(url).port), stdout: () => stdout };
}

async function stop(master: Started): Promise<number | null> {
  master.run.child.kill('SIGTERM');
  const { code } = await master.run.done;
  return code;
}

describe('ackcrawl master (the role, as a process)', () => {
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-master-role-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('prints a generated admin token once, keeps it 0600, serves it, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir();
    const env = { ACKCRAWL_DATA_DIR: dir, ACKCRAWL_RUN_CONTROL: 'local' };
    const first = await startMaster(env);
    const tokenFile = join(dir, 'admin-token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    await waitFor(() => first.stdout().includes(token), { message: 'the token printed' });
    assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const job = await callServer(first.port, 'POST', '/api/v1/jobs', {
      token,
      body: jobBody({ name: 'kept' }),
    });
    assert.equal(job.status, 201, job.text);
    const run = await callServer(first.port, 'POST', `/api/v1/jobs/${job.json.id}/runs`, { token });
    assert.equal(run.status, 201, run.text);
    assert.equal(await stop(first), 0, 'a clean exit');

    const second = await startMaster(env);
    try {
      assert.ok(!second.stdout().includes(token), 'not printed again');
      const again = await callServer(second.port, 'GET', `/api/v1/runs/${run.json.id}`, { token });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.state, 'queued');
      assert.equal(
        (await callServer(second.port, 'GET', `/api/v1/jobs/${job.json.id}`, { token })).json.name,
        'kept',
      );
    } finally {
      assert.equal(await stop(second), 0);
    }
  });

  test('ACKCRAWL_ADMIN_TOKEN is the admin token: nothing written or printed; a bad config exits 2', async () => {
    const dir = tempDir();
    const token = `given-${randomUUID()}`;
    const master = await startMaster({
      ACKCRAWL_DATA_DIR: dir,
      ACKCRAWL_RUN_CONTROL: 'local',
      ACKCRAWL_ADMIN_TOKEN: token,
    });
    try {
      assert.ok(!existsSync(join(dir, 'admin-token')));
      assert.ok(!master.stdout().includes(token));
      assert.equal((await callServer(master.port, 'GET', '/api/v1/tokens', { token })).status, 200);
    } finally {
      assert.equal(await stop(master), 0);
    }
    const badPort = await startCli(['master'], { ACKCRAWL_DATA_DIR: dir, ACKCRAWL_MASTER_PORT: 'x' }).done;
    assert.equal(badPort.code, 2);
    assert.match(badPort.stderr, /masterPort \(ACKCRAWL_MASTER_PORT\)/);
    const halfTls = await startCli(['master'], { ACKCRAWL_DATA_DIR: dir, ACKCRAWL_TLS_CERT: '/nope' }).done;
    assert.equal(halfTls.code, 2);
    assert.match(halfTls.stderr, /TLS needs both ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY/);
  });

  test('with ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY it speaks HTTPS only', async () => {
    const dir = tempDir();
    const { cert, key } = makeCertificate(dir);
    const master = await startMaster({
      ACKCRAWL_DATA_DIR: dir,
      ACKCRAWL_RUN_CONTROL: 'local',
      ACKCRAWL_TLS_CERT: cert,
      ACKCRAWL_TLS_KEY: key,
    });
    try {
      assert.match(master.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsGet(
          `${master.url}/api/v1/jobs`,
          { ca: readFileSync(cert), headers: { authorization: `Bearer ${token}` } },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
      });
      assert.equal(answer.status, 200, answer.body);
      assert.deepEqual(JSON.parse(answer.body).items, []);
      // Plain HTTP to the TLS listener gets no API answer.
      const plain = await callServer(master.port, 'GET', '/api/v1/health').catch(() => null);
      assert.notEqual(plain?.status, 200);
    } finally {
      assert.equal(await stop(master), 0);
    }
  });

  test('run commands go out on the RabbitMQ fanout exchange', async () => {
    const dir = tempDir();
    const exchange = `test-master-${randomUUID()}`;
    const listener = await openRabbitRunControl({ url: AMQP_URL, exchange, logger: silentLogger() });
    const seen: RunCommand[] = [];
    await listener.subscribe((c) => void seen.push(c));
    const master = await startMaster({
      ACKCRAWL_DATA_DIR: dir,
      ACKCRAWL_AMQP_URL: AMQP_URL,
      ACKCRAWL_RUN_CONTROL_EXCHANGE: exchange,
    });
    try {
      const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
      const job = await callServer(master.port, 'POST', '/api/v1/jobs', { token, body: jobBody() });
      const run = await callServer(master.port, 'POST', `/api/v1/jobs/${job.json.id}/runs`, { token });
      await callServer(master.port, 'POST', `/api/v1/runs/${run.json.id}/pause`, { token });
      await waitFor(() => seen.length >= 2, { message: 'start and pause on the exchange' });
      assert.deepEqual(
        seen.map((c) => [c.type, c.runId]),
        [
          ['start', run.json.id],
          ['pause', run.json.id],
        ],
      );
    } finally {
      assert.equal(await stop(master), 0);
      await listener.close();
      const admin = await rabbitAdmin();
      await admin.channel.deleteExchange(exchange);
      await admin.deleteQueuesAndClose([]);
    }
  });
});
