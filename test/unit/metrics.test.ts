import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerAgentMetrics } from '../../client/agent/metrics.js';
import { createMasterMetrics } from '../../master/metrics/master-metrics.js';
import { createSchedulerMetrics } from '../../scheduler/metrics/scheduler-metrics.js';
import { AppError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/http/error-responses.js';
import { silentLogger } from '../../shared/logger.js';
import { errorCodeLabel, statusClass } from '../../shared/metrics/labels.js';
import { createPublishTimers } from '../../shared/metrics/publish-latency.js';
import { createMetricsRegistry, type Registry } from '../../shared/metrics/registry.js';
import { metricsRoute } from '../../shared/metrics/route.js';
import type { ProcessReport } from '../../shared/protocol/agent.js';
import { processReport } from '../helpers/agent-reports.js';
import { callServer } from '../helpers/master-api.js';
import { family, parsePrometheusText, sampleValue, samplesOf } from '../helpers/prometheus-text.js';

const scrape = async (registry: Registry) => parsePrometheusText(await registry.metrics());

describe('metrics: the registry', () => {
  test('the defaults (CPU, memory, event-loop lag) are there under the ackcrawl_ prefix', async () => {
    const families = await scrape(createMetricsRegistry());
    assert.ok((sampleValue(families, 'ackcrawl_process_cpu_seconds_total') ?? -1) >= 0);
    assert.ok((sampleValue(families, 'ackcrawl_process_resident_memory_bytes') ?? 0) > 0);
    family(families, 'ackcrawl_nodejs_eventloop_lag_seconds', 'gauge');
    for (const name of families.keys()) assert.match(name, /^ackcrawl_/);
  });

  test('a registry without the defaults holds only what is put on it; registries do not share', async () => {
    const a = createMetricsRegistry({ defaults: false });
    const b = createMetricsRegistry({ defaults: false });
    createMasterMetrics(a).delivery('delivered');
    assert.equal(
      sampleValue(await scrape(a), 'ackcrawl_webhook_deliveries_total', { result: 'delivered' }),
      1,
    );
    assert.equal((await scrape(b)).size, 0);
    // A second set on another registry is allowed (two roles in one process, tests).
    createMasterMetrics(b);
    assert.throws(() => createMasterMetrics(a), /already been registered/);
  });
});

describe('metrics: labels', () => {
  test('status classes', () => {
    assert.deepEqual([200, 204, 301, 404, 503, 101, null, undefined, 0, 999].map(statusClass), [
      '2xx',
      '2xx',
      '3xx',
      '4xx',
      '5xx',
      '1xx',
      'none',
      'none',
      'none',
      'none',
    ]);
  });

  test('error codes: the catalogue and HTTP_<status> pass, anything else is OTHER', () => {
    assert.equal(errorCodeLabel('TIMEOUT'), 'TIMEOUT');
    assert.equal(errorCodeLabel('HTTP_503'), 'HTTP_503');
    assert.equal(errorCodeLabel('HTTP_999'), 'OTHER');
    assert.equal(errorCodeLabel('MADE_UP_BY_A_PEER'), 'OTHER');
  });
});

describe('metrics: the scheduler series', () => {
  test('pages by outcome and status class, durations, bytes, errors and retries by tier', async () => {
    const registry = createMetricsRegistry({ defaults: false });
    const m = createSchedulerMetrics(registry);
    m.page({ outcome: 'ok', status: 200, seconds: 0.2, bytes: 1000 });
    m.page({ outcome: 'ok', status: 204, seconds: 0.02, bytes: 500 });
    m.page({ outcome: 'retry', status: 503, seconds: 3, bytes: 100 });
    m.page({ outcome: 'failed', status: null, seconds: 0.001, bytes: 80 });
    m.retry(0, 'HTTP_503: Service Unavailable');
    m.retry(300_000, 'TIMEOUT: no answer');
    m.finalFailure('DNS_FAILURE: nxdomain');
    m.finalFailure('not a code at all');
    m.finalFailure('MADE_UP_BY_A_PEER: unbounded codes are not labels');
    m.cooldown('slow_down');
    const f = await scrape(registry);
    const pages = (outcome: string, cls: string) =>
      sampleValue(f, 'ackcrawl_pages_total', { outcome, status_class: cls });
    assert.equal(pages('ok', '2xx'), 2);
    assert.equal(pages('retry', '5xx'), 1);
    assert.equal(pages('failed', 'none'), 1);
    assert.equal(pages('ok', '4xx'), 0, 'every combination exists from the start');
    assert.equal(sampleValue(f, 'ackcrawl_fetch_duration_seconds_count'), 4);
    assert.equal(sampleValue(f, 'ackcrawl_fetch_duration_seconds_bucket', { le: '0.25' }), 3);
    assert.ok(Math.abs((sampleValue(f, 'ackcrawl_fetch_duration_seconds_sum') ?? 0) - 3.221) < 1e-9);
    assert.equal(sampleValue(f, 'ackcrawl_received_bytes_total'), 1680);
    assert.equal(sampleValue(f, 'ackcrawl_retries_total', { tier: 'immediate' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_retries_total', { tier: 'delayed' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_dead_letters_total'), 3);
    assert.equal(sampleValue(f, 'ackcrawl_errors_total', { code: 'HTTP_503' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_errors_total', { code: 'TIMEOUT' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_errors_total', { code: 'DNS_FAILURE' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_errors_total', { code: 'UNKNOWN' }), 1, 'an error without a code');
    assert.equal(
      sampleValue(f, 'ackcrawl_errors_total', { code: 'OTHER' }),
      1,
      'a code not in the catalogue',
    );
    assert.equal(sampleValue(f, 'ackcrawl_politeness_cooldowns_total', { reason: 'slow_down' }), 1);
    family(f, 'ackcrawl_pages_total', 'counter');
    family(f, 'ackcrawl_fetch_duration_seconds', 'histogram');
  });

  test('run gauges exist only for active and paused runs, and go when the run ends', async () => {
    const registry = createMetricsRegistry({ defaults: false });
    const m = createSchedulerMetrics(registry);
    const runs = [
      { runId: 'r1', state: 'active', counters: { queued: 7, inFlight: 2 } },
      { runId: 'r2', state: 'paused', counters: { queued: 3, inFlight: 0 } },
      { runId: 'r3', state: 'finished', counters: { queued: 0, inFlight: 0 } },
    ];
    let waitMs = 0;
    let blocked = false;
    m.watch({
      runs: () => runs,
      sessions: () => 4,
      deadLetters: () => 9,
      politenessWaiting: () => 5,
      commitWaitMs: () => waitMs,
      publishBlocked: () => blocked,
    });
    let f = await scrape(registry);
    assert.equal(sampleValue(f, 'ackcrawl_run_queued_tasks', { run: 'r1' }), 7);
    assert.equal(sampleValue(f, 'ackcrawl_run_in_flight_tasks', { run: 'r1' }), 2);
    assert.equal(sampleValue(f, 'ackcrawl_run_queued_tasks', { run: 'r2' }), 3);
    assert.equal(sampleValue(f, 'ackcrawl_run_queued_tasks', { run: 'r3' }), undefined);
    assert.equal(sampleValue(f, 'ackcrawl_websocket_sessions'), 4);
    assert.equal(sampleValue(f, 'ackcrawl_dead_letter_tasks'), 9);
    assert.equal(sampleValue(f, 'ackcrawl_politeness_waiting_tasks'), 5);
    assert.equal(sampleValue(f, 'ackcrawl_settle_wait_seconds'), 0);
    assert.equal(sampleValue(f, 'ackcrawl_frontier_publish_blocked'), 0);
    waitMs = 12_500;
    blocked = true;
    f = await scrape(registry);
    assert.equal(sampleValue(f, 'ackcrawl_settle_wait_seconds'), 12.5);
    assert.equal(sampleValue(f, 'ackcrawl_frontier_publish_blocked'), 1);
    (runs[0] as { state: string }).state = 'cancelled';
    f = await scrape(registry);
    assert.deepEqual(
      samplesOf(f, 'ackcrawl_run_queued_tasks').map((s) => s.labels.run),
      ['r2'],
      'a run that ended has no series any more',
    );
  });
});

describe('metrics: the agent series', () => {
  test('crawler processes by state and per-slot numbers, for the slots reported now', async () => {
    const registry = createMetricsRegistry({ defaults: false });
    let reports: ProcessReport[] = [
      processReport(0, { pagesDone: 12, errors: 2, rssBytes: 5e7, cpuSeconds: 1.5, inFlight: 3 }),
      processReport(1, { state: 'crash-loop', restarts: 4 }),
      processReport(2, { state: 'starting' }),
    ];
    registerAgentMetrics(registry, () => reports);
    let f = await scrape(registry);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_processes', { state: 'running' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_processes', { state: 'crash-loop' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_processes', { state: 'lost' }), 0);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_pages_total', { slot: '0' }), 12);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_errors_total', { slot: '0' }), 2);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_cpu_seconds_total', { slot: '0' }), 1.5);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_resident_memory_bytes', { slot: '0' }), 5e7);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_in_flight_tasks', { slot: '0' }), 3);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_restarts_total', { slot: '1' }), 4);
    family(f, 'ackcrawl_crawler_pages_total', 'counter');
    // The value follows the report, and a slot scaled away has no series.
    reports = [processReport(0, { pagesDone: 20 })];
    f = await scrape(registry);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_pages_total', { slot: '0' }), 20);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_pages_total', { slot: '1' }), undefined);
    assert.equal(sampleValue(f, 'ackcrawl_crawler_processes', { state: 'crash-loop' }), 0);
  });
});

describe('metrics: the master series and publish timers', () => {
  test('misfires by policy, deliveries by result, publish durations by result', async () => {
    const registry = createMetricsRegistry({ defaults: false });
    const m = createMasterMetrics(registry);
    m.misfires('skip', 3);
    m.misfires('run-once', 0);
    m.delivery('retry');
    m.delivery('retry');
    const timers = createPublishTimers(registry);
    timers.kafka.observe(0.004, 'ok');
    timers.rabbitmq.observe(0.2, 'error');
    const f = await scrape(registry);
    assert.equal(sampleValue(f, 'ackcrawl_schedule_misfires_total', { policy: 'skip' }), 3);
    assert.equal(sampleValue(f, 'ackcrawl_schedule_misfires_total', { policy: 'run-once' }), 0);
    assert.equal(sampleValue(f, 'ackcrawl_webhook_deliveries_total', { result: 'retry' }), 2);
    assert.equal(sampleValue(f, 'ackcrawl_kafka_publish_duration_seconds_count', { result: 'ok' }), 1);
    assert.equal(
      sampleValue(f, 'ackcrawl_kafka_publish_duration_seconds_bucket', { result: 'ok', le: '0.005' }),
      1,
    );
    assert.equal(sampleValue(f, 'ackcrawl_rabbitmq_publish_duration_seconds_count', { result: 'error' }), 1);
    assert.equal(sampleValue(f, 'ackcrawl_rabbitmq_publish_duration_seconds_count', { result: 'ok' }), 0);
  });
});

describe('metrics: GET /metrics', () => {
  test('the app credential first; then the text with the registry content type; GET only', async (t) => {
    const registry = createMetricsRegistry({ defaults: false });
    createMasterMetrics(registry).delivery('failed');
    const app = new Koa();
    app.use(errorResponses(silentLogger(), { service: 'test' }));
    app.use(
      metricsRoute(registry, (ctx) => {
        if (ctx.get('authorization') !== 'Bearer good') throw new AppError('UNAUTHORIZED', 'no');
      }),
    );
    app.use((ctx) => {
      ctx.body = { other: true };
    });
    app.silent = true;
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    assert.equal((await callServer(port, 'GET', '/metrics')).status, 401);
    assert.equal((await callServer(port, 'GET', '/metrics', { token: 'bad' })).status, 401);
    const ok = await callServer(port, 'GET', '/metrics', { token: 'good' });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['content-type'], registry.contentType);
    assert.equal(
      sampleValue(parsePrometheusText(ok.text), 'ackcrawl_webhook_deliveries_total', { result: 'failed' }),
      1,
    );
    assert.equal((await callServer(port, 'POST', '/metrics', { token: 'good' })).status, 405);
    assert.deepEqual((await callServer(port, 'GET', '/other')).json, { other: true }, 'other paths go on');
  });
});

describe('metrics: the text format reader of the tests', () => {
  test('reads a good exposition and refuses what a scraper refuses', () => {
    const good = [
      '# HELP a_total A counter with "quotes" and a \\\\ backslash',
      '# TYPE a_total counter',
      'a_total{code="x\\"y",b="1\\n2"} 3 1700000000000',
      '# TYPE h histogram',
      'h_bucket{le="0.1"} 1',
      'h_bucket{le="+Inf"} 2',
      'h_sum 0.3',
      'h_count 2',
      '',
    ].join('\n');
    const f = parsePrometheusText(good);
    assert.equal(sampleValue(f, 'a_total', { code: 'x"y', b: '1\n2' }), 3);
    assert.equal(family(f, 'h', 'histogram').samples.length, 4);
    const bad = [
      'a{b="x} 1',
      'a 1 2 3',
      'a{b="x"}',
      '9a 1',
      'a abc',
      'a{b="\\t"} 1',
      '# TYPE a weird',
      'a 1\na 2',
      'a 1\nb 1\na 2',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1',
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3',
    ];
    for (const text of bad) assert.throws(() => parsePrometheusText(text), Error, text);
  });
});

describe('metrics: the docs', () => {
  const docsFile = (name: string): string =>
    readFileSync(fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url)), 'utf8');

  test('every series the Grafana dashboard queries is listed in docs/metrics.md', () => {
    const dashboard = JSON.parse(docsFile('grafana-dashboard.json')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const doc = docsFile('metrics.md');
    const used = new Set<string>();
    for (const panel of dashboard.panels)
      for (const target of panel.targets)
        for (const name of target.expr.match(/ackcrawl_[a-z0-9_]+/g) ?? [])
          used.add(name.replace(/_bucket$/, ''));
    assert.ok(used.size >= 15, [...used].join(' '));
    for (const name of used) assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/metrics.md`);
  });

  test('every series a role registers is listed in docs/metrics.md', async () => {
    const registry = createMetricsRegistry({ defaults: false });
    createSchedulerMetrics(registry);
    createMasterMetrics(registry);
    createPublishTimers(registry);
    registerAgentMetrics(registry, () => [processReport(0)]);
    const doc = docsFile('metrics.md');
    const names = [...(await scrape(registry)).keys()];
    assert.equal(names.length, 25, names.join(' '));
    for (const name of names) assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/metrics.md`);
  });
});
