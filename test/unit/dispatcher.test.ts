import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dispatcher, type CrawlerSession, type HostHold } from '../../scheduler/dispatch/dispatcher.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { WireTask } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';

const lease = (leaseId: string): Lease => ({
  runId: 'default',
  taskId: 'same-task',
  leaseId,
  url: 'https://a.test/page',
  host: 'a.test',
  depth: 0,
  priority: 0,
  parentUrl: null,
  attempt: 1,
  lastError: null,
});

/** A frontier that hands out the given leases once, then nothing. */
function onceFrontier(leases: Lease[]): Frontier {
  let given = false;
  return {
    lease: async () => (given ? [] : ((given = true), leases)),
    release: async () => undefined,
    renew: async () => undefined,
  } as unknown as Frontier;
}

/** A dispatcher over `frontier` with room for 10 tasks, hosts 4 requests at once and no delay. */
function dispatcherOver(
  frontier: Frontier,
  gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 4, delayMs: 0 }),
  hold?: HostHold,
) {
  return new Dispatcher({
    frontier,
    gate,
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 10,
    perHostBuffer: 10,
    ...(hold ? { hold } : {}),
  });
}

test('a second copy of a task in flight takes its place without leaking a host slot', async () => {
  const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 4, delayMs: 0 });
  const dispatcher = dispatcherOver(onceFrontier([lease('old-copy'), lease('new-copy')]), gate);
  const sent: WireTask[] = [];
  const session: CrawlerSession = { id: 's1', credit: 2, sendTasks: (tasks) => sent.push(...tasks) };
  dispatcher.addSession(session);
  dispatcher.pump();
  await waitFor(() => sent.length === 2, { timeoutMs: 2000, message: 'both copies sent' });
  assert.equal(dispatcher.inFlightCount, 1, 'one task in flight, whichever copy');
  assert.equal(gate.inFlight('a.test'), 1, 'the host counts one request for the task');
  assert.ok(dispatcher.complete('s1', 'same-task'));
  assert.equal(gate.inFlight('a.test'), 0, 'the slot is given back');
  assert.equal(dispatcher.complete('s1', 'same-task'), null, 'the other copy’s outcome is stale');
  await dispatcher.close();
});

test('a retried task carries its last error code to the crawler', async () => {
  const retried: Lease = {
    ...lease('l1'),
    taskId: 'retried',
    attempt: 2,
    lastError: 'CONNECTION_RESET: read ECONNRESET',
  };
  const first: Lease = { ...lease('l2'), taskId: 'first', url: 'https://a.test/first' };
  const dispatcher = dispatcherOver(onceFrontier([retried, first]));
  const sent: WireTask[] = [];
  dispatcher.addSession({ id: 's1', credit: 2, sendTasks: (tasks) => sent.push(...tasks) });
  dispatcher.pump();
  await waitFor(() => sent.length === 2, { timeoutMs: 2000, message: 'both tasks sent' });
  assert.equal(sent.find((t) => t.taskId === 'retried')?.lastErrorCode, 'CONNECTION_RESET');
  assert.equal(sent.find((t) => t.taskId === 'first')?.lastErrorCode, undefined);
  await dispatcher.close();
});

test("the frontier is told the crawlers' capacity as they come and go", async () => {
  const told: number[] = [];
  const frontier = {
    ...onceFrontier([]),
    setCapacity: (slots: number) => void told.push(slots),
  } as unknown as Frontier;
  const dispatcher = dispatcherOver(frontier);
  const session = (id: string, slots?: number): CrawlerSession => ({
    id,
    credit: 0,
    ...(slots === undefined ? {} : { slots }),
    sendTasks: () => undefined,
  });
  dispatcher.addSession(session('s1', 32));
  dispatcher.addSession(session('s2', 64));
  dispatcher.addSession(session('s3'));
  await dispatcher.removeSession('s2', { crashed: false });
  await dispatcher.removeSession('s1', { crashed: true });
  await dispatcher.removeSession('s3', { crashed: false });
  assert.deepEqual(told, [32, 96, 97, 33, 1, 0]);
  await dispatcher.close();
});

test("a host whose delay ends before the wake already set is served on time, not at the later host's", async () => {
  const delayMs = 300;
  const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 1, delayMs });
  const at = (host: string, n: number): Lease => ({
    ...lease(`${host}-${n}`),
    taskId: `${host}/${n}`,
    url: `https://${host}/${n}`,
    host,
  });
  const dispatcher = dispatcherOver(
    onceFrontier([at('near.test', 1), at('near.test', 2), at('far.test', 1)]),
    gate,
  );
  // far.test may not be fetched for 3 s: the dispatcher's wake is set for then.
  gate.defer('far.test', Date.now() + 3_000);
  const sent: { taskId: string; at: number }[] = [];
  const session: CrawlerSession = {
    id: 's1',
    credit: 10,
    sendTasks: (tasks) => sent.push(...tasks.map((t) => ({ taskId: t.taskId, at: Date.now() }))),
  };
  dispatcher.addSession(session);
  dispatcher.pump();
  await waitFor(() => sent.length === 1, { timeoutMs: 2_000, message: 'the first near.test task sent' });
  assert.equal(sent[0]?.taskId, 'near.test/1');
  // Its request goes out and comes back: the next may start the delay after the first started.
  dispatcher.started('s1', 'near.test/1');
  const startedAt = Date.now();
  assert.ok(dispatcher.complete('s1', 'near.test/1'));
  dispatcher.pump();
  await waitFor(() => sent.length === 2, { timeoutMs: 2_500, message: 'the second near.test task sent' });
  const second = sent[1] as { taskId: string; at: number };
  assert.equal(second.taskId, 'near.test/2');
  const gap = second.at - startedAt;
  assert.ok(gap >= delayMs - 5, `the host's delay held (${gap} ms)`);
  assert.ok(gap < delayMs + 500, `sent ${gap} ms after the first started, not at far.test's wake (3 s)`);
  await dispatcher.close();
});

/**
 * Two tasks of one host (concurrency 2, `delayMs`) and one crawler session: the dispatcher, its
 * gate and what it sent, with when.
 */
function twoTasksOfOneHost(host: string, delayMs: number, hold?: HostHold) {
  const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 2, delayMs });
  const at = (n: number): Lease => ({
    ...lease(`${host}-${n}`),
    taskId: `${host}/${n}`,
    url: `https://${host}/${n}`,
    host,
  });
  const dispatcher = dispatcherOver(onceFrontier([at(1), at(2)]), gate, hold);
  const sent: { taskId: string; at: number; hopGrants: boolean }[] = [];
  const granted: { taskId: string; at: number }[] = [];
  const denied: string[] = [];
  dispatcher.addSession({
    id: 's1',
    credit: 10,
    sendTasks: (tasks) =>
      sent.push(...tasks.map((t) => ({ taskId: t.taskId, at: Date.now(), hopGrants: t.hopGrants === true }))),
    grantHop: (taskId) => granted.push({ taskId, at: Date.now() }),
    denyHop: (taskId) => denied.push(taskId),
  });
  return { gate, dispatcher, sent, granted, denied };
}

test('the tasks of a host with a delay say their redirects back to it wait for a grant', async () => {
  const paced = twoTasksOfOneHost('hop.test', 200);
  paced.dispatcher.pump();
  await waitFor(() => paced.sent.length === 1, { timeoutMs: 2_000, message: 'the first task sent' });
  assert.equal(paced.sent[0]?.hopGrants, true);
  await paced.dispatcher.close();
  const unpaced = twoTasksOfOneHost('free.test', 0);
  unpaced.dispatcher.pump();
  await waitFor(() => unpaced.sent.length === 2, { timeoutMs: 2_000, message: 'both tasks sent' });
  assert.deepEqual(
    unpaced.sent.map((t) => t.hopGrants),
    [false, false],
    'no delay, nothing to grant',
  );
  await unpaced.dispatcher.close();
});

test('a redirect back to the host is granted its delay after the last start, and goes before the host’s next task', async () => {
  const delayMs = 200;
  const { dispatcher, sent, granted } = twoTasksOfOneHost('redirects.test', delayMs);
  dispatcher.pump();
  await waitFor(() => sent.length === 1, { timeoutMs: 2_000, message: 'the first task sent' });
  dispatcher.started('s1', 'redirects.test/1');
  const firstStart = Date.now();
  // The first request came back with a redirect to the same host at once; the crawler asks.
  dispatcher.hop('s1', 'redirects.test/1');
  await waitFor(() => granted.length === 1, { timeoutMs: 2_000, message: 'the hop granted' });
  const hopAt = (granted[0] as { at: number }).at;
  assert.ok(hopAt - firstStart >= delayMs - 5, `granted ${hopAt - firstStart} ms after the first start`);
  assert.equal(sent.length, 1, 'the second task did not go before the hop (concurrency 2 would allow it)');
  // The hop's write is reported; the second task goes its delay after it.
  dispatcher.started('s1', 'redirects.test/1');
  const hopWritten = Date.now();
  await waitFor(() => sent.length === 2, { timeoutMs: 2_000, message: 'the second task sent' });
  const gap = (sent[1] as { at: number }).at - hopWritten;
  assert.ok(gap >= delayMs - 5, `the second task went ${gap} ms after the hop`);
  await dispatcher.close();
});

/** robots.txt as the dispatcher sees it: hops of pages checked, `/private/` disallowed. */
const ROBOTS_HOLD: HostHold = {
  waitMs: () => 0,
  nextTask: () => null,
  checksHops: (lease) => lease.kind !== 'sitemap',
  allowsHop: (_lease, url) => !new URL(url).pathname.startsWith('/private/'),
};

test('with robots.txt obeyed, every page’s redirects back to its host ask first, paced or not', async () => {
  const unpaced = twoTasksOfOneHost('checked.test', 0, ROBOTS_HOLD);
  unpaced.dispatcher.pump();
  await waitFor(() => unpaced.sent.length === 2, { timeoutMs: 2_000, message: 'both tasks sent' });
  assert.deepEqual(
    unpaced.sent.map((t) => t.hopGrants),
    [true, true],
  );
  // No delay: an allowed hop is granted at once, and the host's other tasks are not held for it.
  unpaced.dispatcher.hop('s1', 'checked.test/1', 'https://checked.test/public');
  assert.deepEqual(
    unpaced.granted.map((g) => g.taskId),
    ['checked.test/1'],
  );
  unpaced.dispatcher.hop('s1', 'checked.test/2', 'https://checked.test/private/x');
  assert.deepEqual(unpaced.denied, ['checked.test/2'], 'a disallowed target is denied');
  assert.equal(unpaced.granted.length, 1);
  await unpaced.dispatcher.close();
});

test('a paced host’s hop to a disallowed target is denied at once, and holds nothing back', async () => {
  const delayMs = 200;
  const { dispatcher, sent, granted, denied } = twoTasksOfOneHost('denied.test', delayMs, ROBOTS_HOLD);
  dispatcher.pump();
  await waitFor(() => sent.length === 1, { timeoutMs: 2_000, message: 'the first task sent' });
  dispatcher.started('s1', 'denied.test/1');
  const firstStart = Date.now();
  dispatcher.hop('s1', 'denied.test/1', 'https://denied.test/private/login');
  assert.deepEqual(denied, ['denied.test/1'], 'denied without waiting for the delay');
  // The host's second task is not held behind a hop: it goes its delay after the first start.
  await waitFor(() => sent.length === 2, { timeoutMs: 2_000, message: 'the second task sent' });
  const gap = (sent[1] as { at: number }).at - firstStart;
  assert.ok(gap >= delayMs - 5 && gap < delayMs + 300, `the second task went ${gap} ms after the first`);
  assert.deepEqual(granted, []);
  await dispatcher.close();
});

test('a waiting hop whose task ends is dropped, and the host’s next task goes', async () => {
  const delayMs = 200;
  const { dispatcher, sent, granted } = twoTasksOfOneHost('dropped.test', delayMs);
  dispatcher.pump();
  await waitFor(() => sent.length === 1, { timeoutMs: 2_000, message: 'the first task sent' });
  dispatcher.started('s1', 'dropped.test/1');
  dispatcher.hop('s1', 'dropped.test/1');
  dispatcher.hop('s1', 'unknown-task'); // not in flight: ignored
  // The crawler gave up (its fetch's time ran out) and sent the outcome before the grant.
  dispatcher.complete('s1', 'dropped.test/1');
  await waitFor(() => sent.length === 2, { timeoutMs: 2_000, message: 'the second task sent' });
  await new Promise((resolve) => setTimeout(resolve, delayMs + 100));
  assert.deepEqual(granted, [], 'no grant for a task that ended');
  await dispatcher.close();
});

test('a host with a free slot gets its next task its delay after the crawler reports the start', async () => {
  const delayMs = 200;
  const { dispatcher, sent } = twoTasksOfOneHost('two.test', delayMs);
  dispatcher.pump();
  await waitFor(() => sent.length === 1, { timeoutMs: 2_000, message: 'the first task sent' });
  // Until the start is reported the host waits (the delay runs from the real start).
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(sent.length, 1, 'nothing before the start is reported');
  dispatcher.started('s1', 'two.test/1');
  const startedAt = Date.now();
  // No outcome, no other event: the wake the report set sends the second.
  await waitFor(() => sent.length === 2, { timeoutMs: 2_000, message: 'the second task sent by the wake' });
  const gap = (sent[1] as { at: number }).at - startedAt;
  assert.ok(gap >= delayMs - 5, `the delay held (${gap} ms)`);
  assert.ok(gap < delayMs + 300, `sent on time (${gap} ms)`);
  await dispatcher.close();
});

test('a second start report of one task (its request written again) moves the host’s next start to its delay after that', async () => {
  const delayMs = 200;
  const { gate, dispatcher, sent } = twoTasksOfOneHost('again.test', delayMs);
  dispatcher.pump();
  await waitFor(() => sent.length === 1, { timeoutMs: 2_000, message: 'the first task sent' });
  dispatcher.started('s1', 'again.test/1');
  // Half a delay later the crawler writes the request again (the first write met a stale socket).
  await waitFor(() => gate.waitMs('again.test', Date.now()) <= delayMs / 2, {
    timeoutMs: 2_000,
    message: 'half the delay passed',
  });
  assert.equal(sent.length, 1, 'not sent before the first report’s delay either');
  dispatcher.started('s1', 'again.test/1');
  const resentAt = Date.now();
  await waitFor(() => sent.length === 2, { timeoutMs: 2_000, message: 'the second task sent' });
  const gap = (sent[1] as { at: number }).at - resentAt;
  assert.ok(gap >= delayMs - 5, `the delay ran from the second write (${gap} ms after it)`);
  assert.ok(gap < delayMs + 300, `sent on time (${gap} ms)`);
  await dispatcher.close();
});
