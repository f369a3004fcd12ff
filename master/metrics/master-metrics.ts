import { Counter, type Registry } from 'prom-client';
import type { MisfirePolicy } from '../../shared/ports/sql-store.js';

/** What one webhook attempt came to (master/webhooks/deliverer.ts). */
export type DeliveryResult = 'delivered' | 'retry' | 'failed' | 'disabled' | 'cancelled';

const RESULTS: readonly DeliveryResult[] = ['delivered', 'retry', 'failed', 'disabled', 'cancelled'];
const POLICIES: readonly MisfirePolicy[] = ['skip', 'run-once'];

export interface MasterMetrics {
  /** `count` fire times of a schedule were missed (no master fired them in time), counted once. */
  misfires(policy: MisfirePolicy, count: number): void;
  /** One webhook delivery attempt ended so. */
  delivery(result: DeliveryResult): void;
}

/** The master's series on `registry` (docs/metrics.md); every label value exists from the start. */
export function createMasterMetrics(registry: Registry): MasterMetrics {
  const misfires = new Counter({
    name: 'ackcrawl_schedule_misfires_total',
    help: 'Fire times of schedules that were missed (older than the grace when first seen), by misfire policy',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'ackcrawl_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered (2xx), retry (to be tried again), failed (out of attempts), disabled (410 Gone), cancelled (endpoint deleted or disabled)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // Every label value is shown at 0 from the start; the children are made once.
  const policyChildren = new Map(POLICIES.map((p) => [p, misfires.labels(p)]));
  const resultChildren = new Map(RESULTS.map((r) => [r, deliveries.labels(r)]));
  for (const child of [...policyChildren.values(), ...resultChildren.values()]) child.inc(0);
  return {
    misfires(policy, count) {
      if (count > 0) policyChildren.get(policy)?.inc(count);
    },
    delivery(result) {
      resultChildren.get(result)?.inc();
    },
  };
}
