import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createAgentApp } from '../../client/agent/app.js';
import { registerAgentMetrics } from '../../client/agent/metrics.js';
import { createRun } from '../../master/api/run-actions.js';
import { createMasterMetrics } from '../../master/metrics/master-metrics.js';
import { nodeCronEngine } from '../../master/schedules/cron-engine.js';
import { createScheduleLoop } from '../../master/schedules/schedule-loop.js';
import { openBackend } from '../../scheduler/backends/backend.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import { createSchedulerMetrics } from '../../scheduler/metrics/scheduler-metrics.js';
import {
  allExchangeNames,
  allQueueNames,
  DEFAULT_RETRY_DELAY_BUCKETS_MS,
} from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { loadConfig } from '../../shared/config/load.js';
import { createHostPolicy } from '../../shared/http/request-guards.js';
import { silentLogger } from '../../shared/logger.js';
import { createPublishTimers } from '../../shared/metrics/publish-latency.js';
import { createMetricsRegistry } from '../../shared/metrics/registry.js';
import type { ProcessReport } from '../../shared/protocol/agent.js';
import type { OutcomeHeader, WireTask } from '../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { DEFAULT_RUN_ID } from '../../shared/protocol/task.js';
import { processReport } from '../helpers/agent-reports.js';
import { deleteTopic, testTopicName } from '../helpers/kafka-topic.js';
import { callServer, startTestMaster } from '../helpers/master-api.js';
import { removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import {
  family,
  parsePrometheusText,
  sampleValue,
  samplesOf,
  type Family,
} from '../helpers/prometheus-text.js';
import { rabbitAdmin } from '../helpers/rabbitmq.js';
import { pageRecord, RawClient } from '../helpers/raw-crawler.js';
import { requireKafka } from '../helpers/services.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { waitFor } from '../helpers/wait-for.js';

type Families = Map<string, Family>;

/** GET /metrics with `token`: 401 without it, the parsed text with it. */
async function scrape(port: number, token: string): Promise<Families> {
  const answer = await callServer(port, 'GET', '/metrics', { token });
  assert.equal(answer.status, 200, answer.text);
  assert.match(String(answer.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(answer.text);
}

async function assertRefused(port: number, wrongToken: string): Promise<void> {
  for (const token of [null, wrongToken]) {
    const answer = await callServer(port, 'GET', '/metrics', { token });
    assert.equal(answer.status, 401, `token ${String(token)}: ${answer.text}`);
    assert.equal(answer.json?.error?.code, 'UNAUTHORIZED');
    assert.ok(!answer.text.includes('ackcrawl_'), 'nothing of the metrics before the credential');
  }
}

/** The defaults every role has: CPU, memory, event-loop lag, under the prefix. */
function assertDefaults(f: Families): void {
  assert.ok((sampleValue(f, 'ackcrawl_process_cpu_seconds_total') ?? 0) > 0);
  assert.ok((sampleValue(f, 'ackcrawl_process_resident_memory_bytes') ?? 0) > 1e6);
  family(f, 'ackcrawl_nodejs_eventloop_lag_seconds', 'gauge');
  family(f, 'ackcrawl_nodejs_eventloop_lag_p99_seconds', 'gauge');
  for (const name of f.keys()) assert.match(name, /^ackcrawl_/, name);
}

const value = (f: Families, name: string, labels: Record<string, string> = {}): number => {
  const found = sampleValue(f, name, labels);
  assert.notEqual(found, undefined, `${name}${JSON.stringify(labels)} in /metrics`);
  return found as number;
};

const SEEDS = 20;
const TOKEN = `scheduler-token-${randomUUID()}`;

describe('GET /metrics of every role, parsed as Prometheus text', () => {
  test('scheduler on RabbitMQ and Kafka: a crawl by a hand-driven crawler shows in its series', async (t) => {
    await requireKafka();
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-metrics-'));
    const topic = testTopicName();
    const bucket = testBucketName();
    const prefix = `test-${randomUUID()}`;
    const config = loadConfig(schedulerConfigSchema, {
      ...process.env,
      ACKCRAWL_FRONTIER: 'rabbitmq',
      ACKCRAWL_SINK: 'kafka',
      ACKCRAWL_KAFKA_TOPIC: topic,
      ACKCRAWL_S3_BUCKET: bucket,
      ACKCRAWL_QUEUE_PREFIX: prefix,
      ACKCRAWL_DATA_DIR: dir,
      ACKCRAWL_OUT_DIR: dir,
    });
    const registry = createMetricsRegistry();
    // As scheduler/main.ts wires it: the brokers' publishes are timed on the process's registry.
    const backend = await openBackend(config, silentLogger(), createPublishTimers(registry));
    const seeds = Array.from({ length: SEEDS }, (_, i) => `http://a.test/p${i}`);
    const scheduler = new CrawlScheduler({
      settings: testSchedulerSettings(testJob(seeds, { retryDelayMs: 60_000, hostConcurrency: 1 }), TOKEN, {
        // Small: most seeds stay queued in the broker, so the run's queue depth shows.
        bufferSize: 2,
        drainTimeoutMs: 1_000,
        output: backend.output,
      }),
      frontier: backend.frontier,
      sink: backend.sink,
      logger: silentLogger(),
      metrics: { registry, series: createSchedulerMetrics(registry) },
    });
    const url = await scheduler.start();
    const port = Number(new URL(url).port);
    const client = await RawClient.connect(url, { token: TOKEN });
    t.after(async () => {
      await client.close();
      await scheduler.close();
      await backend.close();
      const admin = await rabbitAdmin();
      await admin.deleteQueuesAndClose(
        allQueueNames(prefix, DEFAULT_RETRY_DELAY_BUCKETS_MS, [DEFAULT_RUN_ID]),
        allExchangeNames(prefix, DEFAULT_RETRY_DELAY_BUCKETS_MS),
      );
      await deleteTopic(topic).catch(() => undefined);
      await removeBucket(bucket);
      rmSync(dir, { recursive: true, force: true });
    });
    await assertRefused(port, 'not-the-token');
    await client.hello();
    client.credit(4);

    // One task out (the host takes one at a time), the rest buffered behind it or queued.
    const run = { run: DEFAULT_RUN_ID };
    let f: Families = new Map();
    await waitFor(
      async () => {
        f = await scrape(port, TOKEN);
        return (
          sampleValue(f, 'ackcrawl_run_in_flight_tasks', run) === 1 &&
          (sampleValue(f, 'ackcrawl_run_queued_tasks', run) ?? 0) > 0 &&
          (sampleValue(f, 'ackcrawl_politeness_waiting_tasks') ?? 0) > 0
        );
      },
      { timeoutMs: 15_000, message: 'one task in flight, the others queued and held by politeness' },
    );
    assert.equal(value(f, 'ackcrawl_websocket_sessions'), 1);
    assert.ok(value(f, 'ackcrawl_run_queued_tasks', run) <= SEEDS - 1);
    assert.ok(value(f, 'ackcrawl_rabbitmq_publish_duration_seconds_count', { result: 'ok' }) >= 1, 'seeds');

    // The crawler's answers: p1 is a 404 (final), p2 times out twice (retried at once, then
    // later), the others are 200s. A timeout carries no fetchMs: the scheduler measures it.
    const answered = new Set<string>();
    let bytes = 0;
    let reported = 0;
    const answer = async (task: WireTask): Promise<void> => {
      const path = new URL(task.url).pathname;
      let header: OutcomeHeader;
      let record: Buffer;
      if (path === '/p1') {
        header = {
          type: 'outcome',
          taskId: task.taskId,
          outcome: 'failed',
          failure: {
            code: 'HTTP_404',
            message: 'Not Found',
            retriable: false,
            status: 404,
            retryAfterMs: null,
          },
          links: [],
          status: 404,
          fetchMs: 20,
        };
        record = pageRecord(task, {
          status: 404,
          outcome: 'failed',
          error: { code: 'HTTP_404', message: 'Not Found' },
          body: null,
          bodyBytes: 0,
        });
        reported += 0.02;
      } else if (path === '/p2') {
        await new Promise((resolve) => setTimeout(resolve, 150));
        header = {
          type: 'outcome',
          taskId: task.taskId,
          outcome: 'failed',
          failure: {
            code: 'TIMEOUT',
            message: 'no answer',
            retriable: true,
            status: null,
            retryAfterMs: null,
          },
          links: [],
        };
        record = pageRecord(task, {
          status: null,
          outcome: 'failed',
          error: { code: 'TIMEOUT', message: 'no answer' },
          body: null,
          bodyBytes: 0,
        });
      } else {
        header = {
          type: 'outcome',
          taskId: task.taskId,
          outcome: 'ok',
          failure: null,
          links: [],
          status: 200,
          fetchMs: 40,
        };
        record = pageRecord(task);
        reported += 0.04;
      }
      bytes += record.length;
      client.binary(encodeOutcomeFrame(header, record));
      client.credit(1);
    };
    // 20 seeds and p2's second attempt; its third waits a minute and is not part of this test.
    const expected = SEEDS + 1;
    await waitFor(
      async () => {
        for (const task of client.tasks()) {
          const key = `${task.taskId}/${task.attempt}`;
          if (answered.has(key)) continue;
          answered.add(key);
          await answer(task);
        }
        return answered.size >= expected;
      },
      { timeoutMs: 30_000, message: `${expected} tasks answered` },
    );

    await waitFor(
      async () => {
        f = await scrape(port, TOKEN);
        return (
          sampleValue(f, 'ackcrawl_pages_total', { outcome: 'ok', status_class: '2xx' }) === SEEDS - 2 &&
          sampleValue(f, 'ackcrawl_retries_total', { tier: 'delayed' }) === 1 &&
          (sampleValue(f, 'ackcrawl_dead_letter_tasks') ?? 0) >= 1 &&
          (sampleValue(f, 'ackcrawl_kafka_publish_duration_seconds_count', { result: 'ok' }) ?? 0) >= 1
        );
      },
      { timeoutMs: 20_000, message: 'the outcomes counted and made durable' },
    );
    family(f, 'ackcrawl_pages_total', 'counter');
    assert.equal(value(f, 'ackcrawl_pages_total', { outcome: 'failed', status_class: '4xx' }), 1);
    assert.equal(value(f, 'ackcrawl_pages_total', { outcome: 'retry', status_class: 'none' }), 2);
    assert.equal(value(f, 'ackcrawl_pages_total', { outcome: 'ok', status_class: '5xx' }), 0);
    assert.equal(value(f, 'ackcrawl_errors_total', { code: 'HTTP_404' }), 1);
    assert.equal(value(f, 'ackcrawl_errors_total', { code: 'TIMEOUT' }), 2);
    assert.equal(value(f, 'ackcrawl_retries_total', { tier: 'immediate' }), 1);
    assert.equal(value(f, 'ackcrawl_dead_letters_total'), 1);
    assert.equal(value(f, 'ackcrawl_received_bytes_total'), bytes);
    family(f, 'ackcrawl_fetch_duration_seconds', 'histogram');
    assert.equal(value(f, 'ackcrawl_fetch_duration_seconds_count'), expected);
    // The reported durations, and p2's two attempts measured from dispatch (at least 150 ms each).
    const sum = value(f, 'ackcrawl_fetch_duration_seconds_sum');
    assert.ok(sum >= reported + 0.3 - 1e-9 && sum < reported + 10, `duration sum ${sum}`);
    assert.ok(value(f, 'ackcrawl_fetch_duration_seconds_bucket', { le: '0.05' }) >= SEEDS - 2);
    family(f, 'ackcrawl_kafka_publish_duration_seconds', 'histogram');
    family(f, 'ackcrawl_rabbitmq_publish_duration_seconds', 'histogram');
    assert.ok(value(f, 'ackcrawl_kafka_publish_duration_seconds_sum', { result: 'ok' }) > 0);
    assert.equal(value(f, 'ackcrawl_kafka_publish_duration_seconds_count', { result: 'error' }), 0);
    assert.equal(value(f, 'ackcrawl_politeness_cooldowns_total', { reason: 'slow_down' }), 0);
    assert.equal(value(f, 'ackcrawl_run_in_flight_tasks', run), 0);
    assertDefaults(f);
    // No label names a URL or a host.
    for (const fam of f.values())
      for (const s of fam.samples)
        for (const v of Object.values(s.labels)) assert.ok(!v.includes('a.test'), `${s.name} ${v}`);

    // A run that is no longer hosted as active has no series.
    await scheduler.cancelRun(DEFAULT_RUN_ID);
    f = await scrape(port, TOKEN);
    assert.deepEqual(samplesOf(f, 'ackcrawl_run_queued_tasks'), []);
    assert.deepEqual(samplesOf(f, 'ackcrawl_run_in_flight_tasks'), []);
  });

  test('master: webhook deliveries by result and schedule misfires, to a token with the read scope', async (t) => {
    const registry = createMetricsRegistry();
    const series = createMasterMetrics(registry);
    const master = await startTestMaster({ metrics: { registry, series } });
    const receiver = await startReceiver();
    t.after(async () => {
      await receiver.close();
      await master.close();
    });
    await assertRefused(master.port, master.agentToken);
    const made = await master.call('POST', '/api/v1/tokens', {
      body: { name: 'prometheus', scopes: ['read'] },
    });
    assert.equal(made.status, 201, made.text);
    const readToken = String(made.json.secret);

    const hook = await master.call('POST', '/api/v1/webhooks', { body: { url: receiver.url } });
    assert.equal(hook.status, 201, hook.text);
    receiver.secret = hook.json.secret;
    receiver.answers.push({ status: 200 }, { status: 500 });
    for (const state of ['delivered', 'pending']) {
      const sent = await master.call('POST', `/api/v1/webhooks/${hook.json.id}/test`);
      assert.equal(sent.json?.state, state, sent.text);
    }

    // A schedule whose fire times passed while no master ran: its loop counts them once.
    const now = master.clock.now();
    const job = await master.call('POST', '/api/v1/jobs', {
      body: { name: 'nightly', seeds: ['http://127.0.0.1/'] },
    });
    assert.equal(job.status, 201, job.text);
    await master.store.schedules.put({
      id: randomUUID(),
      jobId: job.json.id,
      expression: '*/10 * * * * *',
      timeZone: 'UTC',
      overlap: 'allow',
      misfire: 'skip',
      enabled: true,
      waitingFireAt: null,
      createdAt: now,
      updatedAt: now,
    });
    master.clock.advance(65_000);
    const loop = createScheduleLoop({
      store: master.store,
      engine: nodeCronEngine(),
      clock: master.clock,
      masterId: 'metrics-test',
      createRun: (row, runId) =>
        createRun(
          {
            store: master.store,
            runControl: master.runControl,
            clock: master.clock,
            newId: randomUUID,
            logger: silentLogger(),
          },
          row,
          runId,
        ),
      newId: randomUUID,
      logger: silentLogger(),
      options: { syncMs: 3_600_000, misfireGraceMs: 2_000, maxMissed: 1_000 },
      metrics: series,
    });
    t.after(() => loop.close());
    await loop.start();

    const f = await scrape(master.port, readToken);
    family(f, 'ackcrawl_webhook_deliveries_total', 'counter');
    assert.equal(value(f, 'ackcrawl_webhook_deliveries_total', { result: 'delivered' }), 1);
    assert.equal(value(f, 'ackcrawl_webhook_deliveries_total', { result: 'retry' }), 1);
    assert.equal(value(f, 'ackcrawl_webhook_deliveries_total', { result: 'failed' }), 0);
    family(f, 'ackcrawl_schedule_misfires_total', 'counter');
    assert.equal(
      value(f, 'ackcrawl_schedule_misfires_total', { policy: 'skip' }),
      6,
      'six fire times in 65 s',
    );
    assert.equal(value(f, 'ackcrawl_schedule_misfires_total', { policy: 'run-once' }), 0);
    assertDefaults(f);
    // The admin token may read too (scopes include the ones below).
    assert.equal(
      (await callServer(master.port, 'GET', '/metrics', { token: master.adminToken })).status,
      200,
    );
  });

  test('agent: its crawler processes by state and per slot, with the agent credential', async (t) => {
    const registry = createMetricsRegistry();
    let reports: ProcessReport[] = [
      processReport(0, { pagesDone: 40, errors: 3, rssBytes: 80e6, cpuSeconds: 2.5, inFlight: 2 }),
      processReport(1, { pagesDone: 7 }),
      processReport(2, { state: 'crash-loop', pid: null, restarts: 5, inFlight: 0 }),
    ];
    registerAgentMetrics(registry, () => reports);
    const agentToken = `agent-${randomUUID()}`;
    const app = createAgentApp({
      agentId: 'agent-1',
      token: agentToken,
      hosts: createHostPolicy({ listenHost: '127.0.0.1', allowedHosts: [], service: 'agent' }),
      logger: silentLogger(),
      processes: () => reports,
      desired: () => null,
      sync: () => undefined,
      metrics: registry,
    });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    await assertRefused(port, 'someone-else');

    let f = await scrape(port, agentToken);
    family(f, 'ackcrawl_crawler_processes', 'gauge');
    assert.equal(value(f, 'ackcrawl_crawler_processes', { state: 'running' }), 2);
    assert.equal(value(f, 'ackcrawl_crawler_processes', { state: 'crash-loop' }), 1);
    assert.equal(value(f, 'ackcrawl_crawler_processes', { state: 'stopped' }), 0);
    family(f, 'ackcrawl_crawler_pages_total', 'counter');
    assert.equal(value(f, 'ackcrawl_crawler_pages_total', { slot: '0' }), 40);
    assert.equal(value(f, 'ackcrawl_crawler_pages_total', { slot: '1' }), 7);
    assert.equal(value(f, 'ackcrawl_crawler_errors_total', { slot: '0' }), 3);
    assert.equal(value(f, 'ackcrawl_crawler_resident_memory_bytes', { slot: '0' }), 80e6);
    assert.equal(value(f, 'ackcrawl_crawler_cpu_seconds_total', { slot: '0' }), 2.5);
    assert.equal(value(f, 'ackcrawl_crawler_in_flight_tasks', { slot: '0' }), 2);
    assert.equal(value(f, 'ackcrawl_crawler_restarts_total', { slot: '2' }), 5);
    assertDefaults(f);

    // Scaled down to one slot: the others' series are gone.
    reports = [processReport(0, { pagesDone: 41 })];
    f = await scrape(port, agentToken);
    assert.deepEqual(
      samplesOf(f, 'ackcrawl_crawler_pages_total').map((s) => [s.labels.slot, s.value]),
      [['0', 41]],
    );
  });
});
