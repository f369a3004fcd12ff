import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Dispatcher, type CrashPolicy, type CrawlerSession } from '../../scheduler/dispatch/dispatcher.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { WireTask } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';

function lease(taskId: string): Lease {
  return {
    runId: 'default',
    taskId,
    leaseId: `${taskId}-lease`,
    url: `https://a.test/${taskId}`,
    host: 'a.test',
    depth: 0,
    priority: 0,
    parentUrl: null,
    attempt: 1,
    lastError: null,
  };
}

/** A frontier that hands out each batch once, in turn; released leases are recorded. */
function fakeFrontier(...batches: Lease[][]): Frontier & { released: Lease[] } {
  const queue = [...batches];
  const released: Lease[] = [];
  return {
    released,
    lease: async () => queue.shift() ?? [],
    release: async (leases: Lease[]) => void released.push(...leases),
    renew: async () => undefined,
  } as unknown as Frontier & { released: Lease[] };
}

function session(id: string, credit: number): CrawlerSession & { got: WireTask[] } {
  const got: WireTask[] = [];
  return { id, credit, got, sendTasks: (tasks) => got.push(...tasks) };
}

/** A policy with the tally's first step: struck tasks go back and become suspects. */
function recordingPolicy(suspects: Set<string> = new Set()): CrashPolicy & { struckIds: string[] } {
  const struckIds: string[] = [];
  return {
    struckIds,
    isSuspect: (l) => suspects.has(l.taskId),
    struck: (l) => {
      struckIds.push(l.taskId);
      suspects.add(l.taskId);
      return 'release';
    },
  };
}

function dispatcherWith(frontier: Frontier, crashes?: CrashPolicy): Dispatcher {
  return new Dispatcher({
    frontier,
    gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 100, delayMs: 0 }),
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 100,
    perHostBuffer: 100,
    ...(crashes ? { crashes } : {}),
  });
}

describe('Dispatcher: crawlers that die, drain or hand tasks back', () => {
  test('a crash strikes the tasks the crawler worked on; those only queued there go back as they are', async () => {
    const frontier = fakeFrontier(['a', 'b', 'c'].map(lease));
    const policy = recordingPolicy();
    const dispatcher = dispatcherWith(frontier, policy);
    const s1 = session('s1', 3);
    dispatcher.addSession(s1);
    dispatcher.pump();
    await waitFor(() => s1.got.length === 3, { timeoutMs: 2000, message: 'three tasks sent' });
    dispatcher.working('s1', ['a']);
    dispatcher.started('s1', 'b');
    dispatcher.working('other-session', ['c']);
    await dispatcher.removeSession('s1', { crashed: true });
    assert.deepEqual(policy.struckIds.sort(), ['a', 'b'], 'worked on (working or started)');
    assert.deepEqual(frontier.released.map((l) => l.taskId).sort(), ['a', 'b', 'c'], 'all handed back');
    assert.equal(dispatcher.inFlightCount, 0);
    await dispatcher.close();
  });

  test('a goodbye strikes nothing; a task the policy settles is not handed back', async () => {
    const frontier = fakeFrontier(['a', 'b'].map(lease), ['c', 'd'].map(lease));
    const settled: string[] = [];
    const policy: CrashPolicy = {
      isSuspect: () => false,
      struck: (l) => (settled.push(l.taskId), 'settled'),
    };
    const dispatcher = dispatcherWith(frontier, policy);
    const s1 = session('s1', 2);
    dispatcher.addSession(s1);
    dispatcher.pump();
    await waitFor(() => s1.got.length === 2, { timeoutMs: 2000, message: 'two tasks sent' });
    dispatcher.working('s1', ['a', 'b']);
    await dispatcher.removeSession('s1', { crashed: false });
    assert.deepEqual(settled, []);
    assert.equal(frontier.released.length, 2);

    const s2 = session('s2', 2);
    dispatcher.addSession(s2);
    dispatcher.frontierChanged();
    await waitFor(() => s2.got.length === 2, { timeoutMs: 2000, message: 'two more tasks' });
    dispatcher.working('s2', ['c', 'd']);
    await dispatcher.removeSession('s2', { crashed: true });
    assert.deepEqual(settled.sort(), ['c', 'd']);
    assert.equal(frontier.released.length, 2, 'the settled ones were not released too');
    await dispatcher.close();
  });

  test('suspects go out one per crawler at a time; other work flows past them', async () => {
    const suspects = new Set(['s-1', 's-2', 's-3']);
    const frontier = fakeFrontier([
      ...['s-1', 's-2', 's-3'].map(lease),
      ...['n-1', 'n-2', 'n-3', 'n-4'].map(lease),
    ]);
    const dispatcher = dispatcherWith(frontier, recordingPolicy(suspects));
    const a = session('a', 3);
    const b = session('b', 3);
    dispatcher.addSession(a);
    dispatcher.addSession(b);
    dispatcher.pump();
    await waitFor(() => a.got.length + b.got.length === 6, { timeoutMs: 2000, message: 'six tasks sent' });
    const suspectsOf = (s: { got: WireTask[] }): string[] =>
      s.got.filter((t) => t.taskId.startsWith('s-')).map((t) => t.taskId);
    assert.equal(suspectsOf(a).length, 1, 'one suspect for a');
    assert.equal(suspectsOf(b).length, 1, 'one suspect for b');
    assert.equal(dispatcher.bufferedCount, 1, 'the third suspect waits');

    // a's suspect ends: a may take the next one.
    const first = suspectsOf(a)[0] as string;
    assert.ok(dispatcher.complete('a', first));
    a.credit += 1;
    dispatcher.pump();
    assert.equal(suspectsOf(a).length, 2, 'the waiting suspect went to a');
    assert.equal(dispatcher.bufferedCount, 0);
    await dispatcher.close();
  });

  test('released tasks go back without an attempt; a late outcome for them is stale', async () => {
    const frontier = fakeFrontier(['a', 'b', 'c'].map(lease));
    const dispatcher = dispatcherWith(frontier, recordingPolicy());
    const s1 = session('s1', 3);
    dispatcher.addSession(s1);
    dispatcher.pump();
    await waitFor(() => s1.got.length === 3, { timeoutMs: 2000, message: 'three tasks sent' });
    assert.equal(await dispatcher.release('s1', ['a', 'b', 'not-mine']), 2);
    assert.equal(await dispatcher.release('s2', ['c']), 0, 'another session cannot release it');
    assert.deepEqual(frontier.released.map((l) => l.taskId).sort(), ['a', 'b']);
    assert.equal(dispatcher.complete('s1', 'a'), null, 'its outcome after the release is stale');
    assert.ok(dispatcher.complete('s1', 'c'));
    await dispatcher.close();
  });

  test('stopDispatching: nothing more goes out, outcomes are still taken', async () => {
    const frontier = fakeFrontier(['a', 'b'].map(lease));
    const dispatcher = dispatcherWith(frontier);
    const s1 = session('s1', 1);
    dispatcher.addSession(s1);
    dispatcher.pump();
    await waitFor(() => s1.got.length === 1, { timeoutMs: 2000, message: 'a task sent' });
    dispatcher.stopDispatching();
    s1.credit += 5;
    dispatcher.pump();
    dispatcher.frontierChanged();
    assert.equal(s1.got.length, 1);
    assert.ok(dispatcher.complete('s1', s1.got[0]?.taskId ?? ''));
    await dispatcher.close();
  });
});
