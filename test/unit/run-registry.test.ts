import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Dispatcher } from '../../scheduler/dispatch/dispatcher.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import {
  DEFAULT_POLITENESS,
  politenessOf,
  type PolitenessSettings,
} from '../../scheduler/politeness/politeness-settings.js';
import { robotsPolicy } from '../../scheduler/robots/robots-settings.js';
import { HostedRun } from '../../scheduler/runs/hosted-run.js';
import { RunFetchFeed } from '../../scheduler/runs/run-fetch-feed.js';
import { finishVerdict } from '../../scheduler/runs/run-finish.js';
import { RunRegistry } from '../../scheduler/runs/run-registry.js';
import { strictestPoliteness, type RunPoliteness } from '../../scheduler/runs/strictest-politeness.js';
import { parseCrawlSettings, type CrawlSettings } from '../../shared/crawl-settings/index.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier, FrontierStats } from '../../shared/ports/frontier.js';
import type { SchedulerMessage, WireTask } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';

const settings = (more: Record<string, unknown> = {}): CrawlSettings =>
  parseCrawlSettings({ seeds: ['https://a.test/'], ...more });

const hosted = (runId: string, more: Record<string, unknown> = {}, jobId = `job-${runId}`): HostedRun =>
  new HostedRun({ runId, jobId, settings: settings(more) }, Date.now, (fetch) => fetch);

const registryOf = (...runs: HostedRun[]): RunRegistry => {
  const base = settings();
  const registry = new RunRegistry({ politeness: politenessOf(base), robots: robotsPolicy(base) });
  for (const run of runs) registry.add(run);
  return registry;
};

let seq = 0;
const lease = (runId: string, host = 'a.test'): Lease => {
  seq += 1;
  return {
    runId,
    taskId: `t${seq}`,
    leaseId: `l${seq}`,
    url: `https://${host}/${seq}`,
    host,
    depth: 0,
    priority: 0,
    parentUrl: null,
    attempt: 1,
    lastError: null,
  };
};

const stats = (more: Partial<FrontierStats>): FrontierStats => ({
  ready: 0,
  delayed: 0,
  leased: 0,
  done: 0,
  failed: 0,
  total: 0,
  cancelled: 0,
  ...more,
});

/** A run that may go to any host (scope `any`). */
const anywhere = (politeness: PolitenessSettings): RunPoliteness => ({ politeness, hosts: null });

describe('the strictest politeness of several runs', () => {
  test('lowest concurrency, longest delay, adaptive if any, longest cool-downs', () => {
    const a = politenessOf(settings({ hostConcurrency: 4, hostDelayMs: 100, maxCooldownMs: 1_000 }));
    const b = politenessOf(settings({ hostConcurrency: 2, hostDelayMs: 50, adaptiveDelay: true }));
    const merged = strictestPoliteness([anywhere(a), anywhere(b)]);
    assert.ok(merged);
    assert.equal(merged.concurrency, 2);
    assert.equal(merged.delayMs, 100);
    assert.equal(merged.adaptiveDelay, true);
    assert.equal(merged.maxCooldownMs, Math.max(a.maxCooldownMs, b.maxCooldownMs));
    assert.equal(strictestPoliteness([]), null);
    assert.equal(strictestPoliteness([anywhere(a)]), a, 'one run: its own');
  });

  test("host rules merge pattern by pattern, against each run's own rule or default for that host", () => {
    const fast = politenessOf(
      settings({ hostConcurrency: 2, hostDelayMs: 0, hostRules: [{ host: 'cdn.test', concurrency: 8 }] }),
    );
    const slow = politenessOf(
      settings({
        hostConcurrency: 3,
        hostDelayMs: 200,
        hostRules: [{ host: '*.shop.test', concurrency: 1, delayMs: 2_000 }],
      }),
    );
    const wild = politenessOf(
      settings({ hostConcurrency: 5, hostDelayMs: 0, hostRules: [{ host: 'x.shop.test', concurrency: 4 }] }),
    );
    const merged = strictestPoliteness([fast, slow, wild].map(anywhere));
    assert.ok(merged);
    const rule = (host: string) => merged.hostRules.find((r) => r.host === host);
    // cdn.test: 8 for `fast`, but `slow` and `wild` have no rule: their defaults, 3 and 5, with 200 ms.
    assert.deepEqual(rule('cdn.test'), { host: 'cdn.test', concurrency: 3, delayMs: 200, adaptive: false });
    // x.shop.test: `slow`'s *.shop.test rule (1, 2 s) applies to it, and it is the strictest.
    assert.deepEqual(rule('x.shop.test'), {
      host: 'x.shop.test',
      concurrency: 1,
      delayMs: 2_000,
      adaptive: false,
    });
    assert.equal(rule('*.shop.test')?.concurrency, 1);
    assert.equal(merged.concurrency, 2);
  });

  test("a run limited to its seeds' hosts sets the politeness of those hosts only", () => {
    const polite = hosted('polite', {
      seeds: ['https://slow.test/'],
      scope: 'host',
      hostConcurrency: 1,
      hostDelayMs: 2_000,
    });
    const other = hosted('other', {
      seeds: ['https://b.test:8080/'],
      scope: 'host',
      hostConcurrency: 6,
      hostDelayMs: 0,
    });
    const wide = hosted('wide', {
      seeds: ['https://c.test/'],
      scope: 'any',
      hostConcurrency: 4,
      hostDelayMs: 100,
    });
    const gate = (registry: RunRegistry, host: string) => {
      const merged = registry.politeness();
      const rule = merged.hostRules.find((r) => r.host === host);
      return {
        concurrency: rule?.concurrency ?? merged.concurrency,
        delayMs: rule?.delayMs ?? merged.delayMs,
      };
    };
    // Two host-limited runs: each host gets its own run's settings, not the other's.
    const two = registryOf(polite, other);
    assert.deepEqual(gate(two, 'slow.test'), { concurrency: 1, delayMs: 2_000 });
    assert.deepEqual(gate(two, 'b.test:8080'), { concurrency: 6, delayMs: 0 });
    // A host neither names: the strictest of all, as before.
    assert.deepEqual(gate(two, 'elsewhere.test'), { concurrency: 1, delayMs: 2_000 });
    // With a run that may go anywhere: every other host gets its defaults, and its say on the
    // limited runs' hosts too (it may reach them), the strictest winning.
    const three = registryOf(polite, other, wide);
    assert.deepEqual(gate(three, 'elsewhere.test'), { concurrency: 4, delayMs: 100 });
    assert.deepEqual(gate(three, 'slow.test'), { concurrency: 1, delayMs: 2_000 });
    assert.deepEqual(gate(three, 'b.test:8080'), { concurrency: 4, delayMs: 100 });
    // Two runs on one host share its one limit.
    const same = hosted('same', {
      seeds: ['https://slow.test/x'],
      scope: 'host',
      hostConcurrency: 3,
      hostDelayMs: 0,
    });
    assert.deepEqual(gate(registryOf(polite, same), 'slow.test'), { concurrency: 1, delayMs: 2_000 });
    // Domain scope: the registrable domain and its subdomains.
    const domain = hosted('domain', {
      seeds: ['https://www.shop.test/'],
      scope: 'domain',
      hostConcurrency: 2,
      hostDelayMs: 500,
    });
    const withDomain = registryOf(domain, other);
    assert.equal(withDomain.politeness().hostRules.find((r) => r.host === '*.shop.test')?.concurrency, 2);
    assert.equal(withDomain.politeness().hostRules.find((r) => r.host === 'shop.test')?.delayMs, 500);
  });

  test('the registry merges the runs that are not cancelled, and limits each run by its own maxPages', () => {
    const a = hosted('a', { hostConcurrency: 1, maxPages: 10 });
    const b = hosted('b', { hostConcurrency: 4, maxPages: 0 });
    const registry = registryOf(a, b);
    assert.equal(registry.politeness().concurrency, 1);
    a.state = 'paused';
    assert.equal(registry.politeness().concurrency, 1, 'a paused run may resume: its limits stay');
    a.state = 'cancelled';
    assert.equal(registry.politeness().concurrency, 4, 'a cancelled run no longer counts');
    assert.equal(registry.maxTotal('a'), 10);
    assert.equal(registry.maxTotal('b'), 0);
    assert.equal(registry.maxTotal('unknown'), undefined);
    assert.equal(registry.dispatchable('a'), false);
    assert.equal(registry.dispatchable('b'), true);
    assert.equal(registry.dispatchable('unknown'), false, 'a run not hosted here is not dispatched');
    assert.equal(registry.jobOf('b'), 'job-b');
  });

  test('each run orders its tasks by its own priority', () => {
    const high = hosted('high', { priority: 9 });
    const low = hosted('low', { priority: 0, priorityRule: 'fifo' });
    assert.ok(high.level(0) > low.level(0));
    assert.equal(low.level(5), low.level(0), 'fifo: one level');
    const [seed] = high.seedTasks(() => 'a.test');
    assert.equal(seed?.runId, 'high');
    assert.equal(seed?.priority, high.level(0));
  });
});

describe('finish detection', () => {
  test('finished when nothing is ready, delayed or leased; failed when nothing was accepted', () => {
    assert.deepEqual(finishVerdict(stats({ ready: 1, total: 3 })), { finished: false });
    assert.deepEqual(finishVerdict(stats({ delayed: 1, total: 3 })), { finished: false });
    assert.deepEqual(finishVerdict(stats({ leased: 1, total: 3 })), { finished: false });
    assert.deepEqual(finishVerdict(stats({ done: 2, failed: 1, total: 3 })), {
      finished: true,
      outcome: 'succeeded',
    });
    const none = finishVerdict(stats({}));
    assert.equal(none.finished && none.outcome, 'failed');
    assert.match(none.finished && none.outcome === 'failed' ? none.error : '', /none of its seeds/);
  });
});

describe('dispatch of many runs', () => {
  /** A frontier that hands out the given leases once and records what is released. */
  function frontierOf(leases: Lease[]): Frontier & { released: string[] } {
    let given = false;
    const released: string[] = [];
    return {
      released,
      lease: async () => (given ? [] : ((given = true), leases)),
      release: async (back: readonly Pick<Lease, 'taskId'>[]) => {
        released.push(...back.map((l) => l.taskId));
      },
      renew: async () => undefined,
    } as unknown as Frontier & { released: string[] };
  }

  test("a paused run's buffered tasks go back at once; the other run's go out, tagged", async () => {
    const a = [lease('run-a'), lease('run-a', 'b.test')];
    const b = [lease('run-b'), lease('run-b', 'b.test')];
    const frontier = frontierOf([...a, ...b]);
    const paused = new Set<string>();
    const dispatcher = new Dispatcher({
      frontier,
      gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 10, delayMs: 0 }),
      logger: silentLogger(),
      clock: Date.now,
      leaseMs: 60_000,
      bufferSize: 10,
      perHostBuffer: 10,
      dispatchable: (l) => !paused.has(l.runId),
      jobOf: (runId) => `job-of-${runId}`,
    });
    dispatcher.pump();
    await waitFor(() => dispatcher.bufferedCount === 4, { timeoutMs: 2000, message: 'all four buffered' });
    paused.add('run-a');
    assert.equal(await dispatcher.releaseBuffered((l) => l.runId === 'run-a'), 2);
    assert.deepEqual(frontier.released.sort(), a.map((l) => l.taskId).sort());
    const sent: WireTask[] = [];
    dispatcher.addSession({ id: 's1', credit: 10, sendTasks: (tasks) => sent.push(...tasks) });
    dispatcher.pump();
    await waitFor(() => sent.length === 2, { timeoutMs: 2000, message: "run-b's tasks sent" });
    assert.deepEqual(new Set(sent.map((t) => t.runId)), new Set(['run-b']));
    assert.deepEqual(new Set(sent.map((t) => t.jobId)), new Set(['job-of-run-b']));
    const captures = sent.map((t) => t.captureId);
    assert.ok(captures.every((c) => typeof c === 'string' && c.length >= 32));
    assert.equal(new Set(captures).size, captures.length, 'a capture id per dispatched attempt');
    assert.deepEqual(dispatcher.inFlightByRun(), new Map([['run-b', 2]]));
    await dispatcher.close();
  });

  test('leases of a run that does not dispatch go straight back without an attempt', async () => {
    const frontier = frontierOf([lease('paused-run'), lease('live-run')]);
    const dispatcher = new Dispatcher({
      frontier,
      gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 10, delayMs: 0 }),
      logger: silentLogger(),
      clock: Date.now,
      leaseMs: 60_000,
      bufferSize: 10,
      perHostBuffer: 10,
      dispatchable: (l) => l.runId === 'live-run',
    });
    dispatcher.pump();
    await waitFor(() => frontier.released.length === 1, { timeoutMs: 2000, message: 'handed back' });
    assert.equal(dispatcher.bufferedCount, 1);
    await dispatcher.close();
  });

  test("a session is sent a run's fetch settings once per version, before its first task", () => {
    const run = hosted('r1', { userAgent: 'first-agent/1' });
    const feed = new RunFetchFeed((runId) => (runId === 'r1' ? run : undefined));
    const messages: SchedulerMessage[] = [];
    const session = { id: 's1', send: (m: SchedulerMessage) => messages.push(m) };
    const task = { taskId: 't', url: 'https://a.test/', depth: 0, attempt: 1, parentUrl: null, runId: 'r1' };
    feed.beforeTasks(session, [task, task]);
    feed.beforeTasks(session, [task]);
    assert.equal(messages.length, 1);
    assert.deepEqual(messages[0], { type: 'run', runId: 'r1', fetch: run.fetch });
    run.update(settings({ userAgent: 'second-agent/2' }));
    feed.beforeTasks(session, [task]);
    assert.equal(messages.length, 2);
    assert.equal(messages[1]?.type === 'run' && messages[1].fetch.userAgent, 'second-agent/2');
    feed.sessionGone('s1');
    feed.beforeTasks(session, [task]);
    assert.equal(messages.length, 3, 'a new session is sent them again');
  });
});
