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

const lease = (n: number): Lease => ({
  runId: 'default',
  taskId: String(n),
  leaseId: `l${n}`,
  url: `https://a.test/${n}`,
  host: 'a.test',
  depth: 0,
  priority: 0,
  parentUrl: null,
  attempt: 1,
  lastError: null,
});

test('held back by canDispatch, the dispatcher neither sends tasks nor leases more', async () => {
  let leaseCalls = 0;
  let next = 0;
  const frontier = {
    lease: async (max: number) => {
      leaseCalls += 1;
      return Array.from({ length: Math.min(max, 3) }, () => lease((next += 1)));
    },
    release: async () => undefined,
    renew: async () => undefined,
  } as unknown as Frontier;
  let allowed = false;
  const dispatcher = new Dispatcher({
    frontier,
    gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 8, delayMs: 0 }),
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 10,
    perHostBuffer: 10,
    canDispatch: () => allowed,
  });
  const sent: WireTask[] = [];
  const session: CrawlerSession = { id: 's1', credit: 5, sendTasks: (tasks) => sent.push(...tasks) };
  dispatcher.addSession(session);
  dispatcher.pump();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sent.length, 0, 'nothing sent while held back');
  assert.equal(leaseCalls, 0, 'nothing leased while held back (a stalled sink, a full disk)');

  allowed = true;
  dispatcher.pump();
  await waitFor(() => sent.length > 0, { timeoutMs: 2_000, message: 'tasks sent once allowed' });
  assert.ok(leaseCalls >= 1);
  await dispatcher.close();
});
