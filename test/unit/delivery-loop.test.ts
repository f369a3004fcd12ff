import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../shared/logger.js';
import type { DeliveryRow } from '../../shared/ports/alert-store.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { Deliverer } from '../../master/webhooks/deliverer.js';
import { startDeliveryLoop } from '../../master/webhooks/delivery-loop.js';

const row = (id: string, webhookId: string): DeliveryRow => ({
  id,
  webhookId,
  alertId: null,
  eventType: 'run.failed',
  body: '{}',
  state: 'pending',
  attempts: 0,
  nextAttemptAt: 1,
  lastStatus: null,
  lastError: null,
  createdAt: 1,
  updatedAt: 1,
  deliveredAt: null,
});

describe('the delivery loop', () => {
  it('a hanging endpoint costs one attempt per pass and holds up no other endpoint', async () => {
    const due = [row('a1', 'dead'), row('a2', 'dead'), row('a3', 'dead'), row('b1', 'ok'), row('b2', 'ok')];
    const events: string[] = [];
    const deliverer = {
      deliver: async (r: DeliveryRow) => {
        events.push(`start ${r.id}`);
        // The dead endpoint answers only at its timeout, and not with a 2xx.
        await new Promise((resolve) => setTimeout(resolve, r.webhookId === 'dead' ? 300 : 5));
        events.push(`end ${r.id}`);
        return { ...r, attempts: 1, state: r.webhookId === 'dead' ? 'pending' : 'delivered' } as DeliveryRow;
      },
    } as unknown as Deliverer;
    const store = { deliveries: { due: () => Promise.resolve(due) } } as unknown as SqlStore;
    const loop = startDeliveryLoop({
      store,
      deliverer,
      clock: { now: () => 1 },
      intervalMs: 3_600_000,
      logger: silentLogger(),
    });
    try {
      assert.equal(await loop.runOnce(), 3, 'attempts made: one to the dead endpoint, two to the other');
      assert.deepEqual(
        events.filter((e) => e.startsWith('start')),
        ['start a1', 'start b1', 'start b2'],
      );
      assert.ok(events.indexOf('end b2') < events.indexOf('end a1'), events.join(', '));
    } finally {
      await loop.close();
    }
  });
});
