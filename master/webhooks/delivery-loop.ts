import { startPeriodicPass } from '../../shared/lifecycle/periodic-pass.js';
import type { Logger } from '../../shared/logger.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { DeliveryRow } from '../../shared/ports/alert-store.js';
import type { Deliverer } from './deliverer.js';

const DEFAULT_LANES = 8;

export interface DeliveryLoopDeps {
  store: SqlStore;
  deliverer: Deliverer;
  clock: { now(): number };
  intervalMs: number;
  /** Rows taken per pass. */
  batch?: number;
  /** Endpoints sent to at once. */
  lanes?: number;
  logger: Logger;
}

/**
 * Sends what is due, every `intervalMs`: the rows are the queue, so what was pending when a master
 * stopped is sent by the next one. Each endpoint's deliveries go in order, endpoints side by side.
 * Passes never overlap; close() waits for the one in flight.
 */
export function startDeliveryLoop(deps: DeliveryLoopDeps): {
  runOnce(): Promise<number>;
  close(): Promise<void>;
} {
  /** One attempt: the row after it, null when another master took it, 'error' when not recorded. */
  const attempt = async (row: DeliveryRow): Promise<DeliveryRow | null | 'error'> => {
    try {
      return await deps.deliverer.deliver(row);
    } catch (err) {
      deps.logger.warn(
        { err, deliveryId: row.id },
        'webhook delivery attempt not recorded; retried after its lease',
      );
      return 'error';
    }
  };
  /**
   * One endpoint's due deliveries, oldest first, until one is left to retry: the rest wait for a later
   * pass (they are still due), so an endpoint that hangs costs one timeout per pass. Returns the
   * attempts made.
   */
  const lane = async (rows: readonly DeliveryRow[]): Promise<number> => {
    let attempts = 0;
    for (const row of rows) {
      if (loop.closed) break;
      const after = await attempt(row);
      if (after === null) continue; // another master's
      if (after === 'error') break;
      attempts += 1;
      // Still pending: the endpoint failed and this one is retried later; so are the others.
      if (after.state === 'pending') break;
    }
    return attempts;
  };
  const pass = async (): Promise<number> => {
    const due = await deps.store.deliveries.due(deps.clock.now(), deps.batch ?? 50);
    const byEndpoint = new Map<string, DeliveryRow[]>();
    for (const row of due) byEndpoint.set(row.webhookId, [...(byEndpoint.get(row.webhookId) ?? []), row]);
    // Endpoints side by side (at most `lanes` at once): a slow or dead one does not hold up the rest.
    const lanes = [...byEndpoint.values()];
    let sent = 0;
    const workers = Array.from({ length: Math.min(deps.lanes ?? DEFAULT_LANES, lanes.length) }, async () => {
      for (let next = lanes.shift(); next !== undefined; next = lanes.shift()) {
        const attempts = await lane(next);
        sent += attempts;
      }
    });
    await Promise.all(workers);
    return sent;
  };
  const loop = startPeriodicPass(pass, {
    intervalMs: deps.intervalMs,
    onError: (err) => deps.logger.warn({ err }, 'webhook delivery pass failed'),
  });
  return loop;
}
