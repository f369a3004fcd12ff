import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dispatcher } from '../../scheduler/dispatch/dispatcher.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier, LeaseOptions } from '../../shared/ports/frontier.js';
import type { WireTask } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';

/** A FIFO frontier of `perHost` tasks on each host that honours `max` and `excludeHosts`, as the real ones do. */
function queuedFrontier(hosts: string[], perHost: number) {
  const ready: Lease[] = [];
  for (let i = 0; i < perHost; i++) {
    for (const host of hosts) {
      ready.push({
        runId: 'default',
        taskId: `${host}-${i}`,
        leaseId: `${host}-${i}`,
        url: `https://${host}/${i}`,
        host,
        depth: 1,
        priority: 0,
        parentUrl: null,
        attempt: 1,
        lastError: null,
      });
    }
  }
  const calls: { max: number; excluded: string[] }[] = [];
  const frontier = {
    lease: async (max: number, options: LeaseOptions = {}) => {
      const excluded = [...(options.excludeHosts ?? [])];
      calls.push({ max, excluded });
      const taken: Lease[] = [];
      for (let i = 0; i < ready.length && taken.length < max;) {
        if (excluded.includes((ready[i] as Lease).host)) i++;
        else taken.push(...ready.splice(i, 1));
      }
      return taken;
    },
    release: async () => undefined,
    renew: async () => undefined,
  } as unknown as Frontier;
  return { frontier, calls };
}

test('a host that sent its buffered tasks gets more at once, though most of the buffer is still full', async () => {
  const hosts = ['a.test', 'b.test', 'c.test', 'd.test'];
  const { frontier, calls } = queuedFrontier(hosts, 30);
  const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 100, delayMs: 0 });
  // Only a.test may start: the others hold their buffered tasks the whole test.
  for (const host of hosts.slice(1)) gate.defer(host, Date.now() + 60_000);
  const dispatcher = new Dispatcher({
    frontier,
    gate,
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 40,
    perHostBuffer: 10,
  });
  const sent: WireTask[] = [];
  const session = { id: 's1', credit: 0, sendTasks: (tasks: WireTask[]) => sent.push(...tasks) };
  dispatcher.addSession(session);
  dispatcher.pump();
  await waitFor(() => dispatcher.bufferedCount === 40, { timeoutMs: 2000, message: 'buffer filled' });

  // a.test sends its 10: three quarters of the buffer are still there, all of other hosts.
  session.credit = 10;
  dispatcher.pump();
  await waitFor(() => sent.length === 10 && calls.length >= 2 && dispatcher.bufferedCount === 40, {
    timeoutMs: 2000,
    message: 'a top-up lease',
  });
  assert.deepEqual(calls[1]?.excluded.sort(), ['b.test', 'c.test', 'd.test'], 'the full hosts are skipped');
  session.credit = 10;
  dispatcher.pump();
  await waitFor(() => sent.length === 20, { timeoutMs: 2000, message: 'a.test goes on' });
  assert.ok(sent.every((t) => t.url.startsWith('https://a.test/')));
  await dispatcher.close();
});
