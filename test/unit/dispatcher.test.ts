import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dispatcher, type CrawlerSession } from '../../scheduler/dispatch/dispatcher.js';
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
) {
  return new Dispatcher({
    frontier,
    gate,
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 10,
    perHostBuffer: 10,
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
