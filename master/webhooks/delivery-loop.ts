import type { Logger } from '../../shared/logger.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { Deliverer } from './deliverer.js';

export interface DeliveryLoopDeps {
  store: SqlStore;
  deliverer: Deliverer;
  clock: { now(): number };
  intervalMs: number;
  /** Rows taken per pass. */
  batch?: number;
  logger: Logger;
}

/**
 * Sends what is due, every `intervalMs`: the rows are the queue, so what was pending when a master
 * stopped is sent by the next one. Passes never overlap; close() waits for the one in flight.
 */
export function startDeliveryLoop(deps: DeliveryLoopDeps): {
  runOnce(): Promise<number>;
  close(): Promise<void>;
} {
  let running: Promise<number> | null = null;
  let closed = false;
  const pass = async (): Promise<number> => {
    const due = await deps.store.deliveries.due(deps.clock.now(), deps.batch ?? 50);
    let sent = 0;
    for (const row of due) {
      if (closed) break;
      try {
        if (await deps.deliverer.deliver(row)) sent += 1;
      } catch (err) {
        deps.logger.warn(
          { err, deliveryId: row.id },
          'webhook delivery attempt not recorded; retried after its lease',
        );
      }
    }
    return sent;
  };
  const runOnce = (): Promise<number> => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    if (running === null && !closed)
      runOnce().catch((err: unknown) => deps.logger.warn({ err }, 'webhook delivery pass failed'));
  }, deps.intervalMs);
  timer.unref();
  return {
    runOnce,
    async close() {
      closed = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
