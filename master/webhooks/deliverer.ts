import type { Logger } from '../../shared/logger.js';
import type { DeliveryRow } from '../../shared/ports/alert-store.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import { backoffMs, retryAfterMs, type RetrySchedule } from './retry-schedule.js';
import type { WebhookSender } from './sender.js';
import { webhookHeaders } from './signature.js';
import type { DeliveryResult, MasterMetrics } from '../metrics/master-metrics.js';

export interface DelivererDeps {
  store: SqlStore;
  send: WebhookSender;
  schedule: RetrySchedule;
  clock: { now(): number };
  random?: () => number;
  logger: Logger;
  /** How long a claimed attempt keeps others off a row (a master dying mid-attempt frees it then). */
  leaseMs: number;
  /** Counts each attempt's result; absent: not counted. */
  metrics?: Pick<MasterMetrics, 'delivery'>;
}

/**
 * One attempt of one delivery, from a claimed row to its recorded outcome: a 2xx is delivered;
 * a 410 disables the endpoint (its other pending deliveries are cancelled as they come due);
 * anything else is tried again after the backoff or the receiver's Retry-After, until the
 * attempts run out. The secret signs the attempt and is never logged.
 */
export function createDeliverer(deps: DelivererDeps) {
  const { store, logger } = deps;

  const attempt = async (row: DeliveryRow): Promise<DeliveryRow> => {
    const now = deps.clock.now();
    const webhook = await store.webhooks.get(row.webhookId);
    const base = { attempts: row.attempts, lastStatus: row.lastStatus, deliveredAt: null, updatedAt: now };
    if (webhook === null || !webhook.enabled) {
      const outcome = {
        ...base,
        state: 'cancelled' as const,
        nextAttemptAt: null,
        lastError:
          webhook === null
            ? 'the endpoint was deleted'
            : `the endpoint is disabled: ${webhook.disabledReason ?? 'by a person'}`,
      };
      await store.deliveries.record(row.id, outcome);
      deps.metrics?.delivery('cancelled');
      return { ...row, ...outcome };
    }
    const result = await deps.send({
      url: webhook.url,
      headers: webhookHeaders(webhook.secret, row.id, now, row.body),
      body: row.body,
    });
    const done = deps.clock.now();
    const attempts = row.attempts + 1;
    const log = logger.child({
      deliveryId: row.id,
      webhookId: webhook.id,
      eventType: row.eventType,
      attempts,
    });
    let outcome: Parameters<SqlStore['deliveries']['record']>[1];
    let counted: DeliveryResult;
    if (result.kind === 'answered' && result.status >= 200 && result.status < 300) {
      outcome = {
        state: 'delivered',
        attempts,
        nextAttemptAt: null,
        lastStatus: result.status,
        lastError: null,
        deliveredAt: done,
        updatedAt: done,
      };
      counted = 'delivered';
      log.info({ status: result.status }, 'webhook delivered');
    } else if (result.kind === 'answered' && result.status === 410) {
      const reason = `the receiver answered 410 Gone at ${new Date(done).toISOString()}`;
      await store.webhooks.update(webhook.id, { enabled: false, disabledReason: reason, updatedAt: done });
      outcome = {
        state: 'failed',
        attempts,
        nextAttemptAt: null,
        lastStatus: 410,
        lastError: 'HTTP 410: endpoint disabled',
        deliveredAt: null,
        updatedAt: done,
      };
      counted = 'disabled';
      log.warn({ status: 410 }, 'webhook endpoint answered 410 Gone: disabled');
    } else {
      const status = result.kind === 'answered' ? result.status : null;
      const error = result.kind === 'answered' ? `HTTP ${result.status}` : result.error;
      if (attempts >= deps.schedule.maxAttempts) {
        outcome = {
          state: 'failed',
          attempts,
          nextAttemptAt: null,
          lastStatus: status,
          lastError: error,
          deliveredAt: null,
          updatedAt: done,
        };
        counted = 'failed';
        log.warn({ status, error }, 'webhook delivery failed: out of attempts');
      } else {
        const asked = result.kind === 'answered' ? retryAfterMs(result.retryAfter, done) : null;
        const delay = asked ?? backoffMs(deps.schedule, attempts, deps.random);
        outcome = {
          state: 'pending',
          attempts,
          nextAttemptAt: done + delay,
          lastStatus: status,
          lastError: error,
          deliveredAt: null,
          updatedAt: done,
        };
        counted = 'retry';
        log.info(
          { status, error, retryInMs: delay, retryAfter: asked !== null },
          'webhook delivery will be retried',
        );
      }
    }
    await store.deliveries.record(row.id, outcome);
    deps.metrics?.delivery(counted);
    return { ...row, ...outcome };
  };

  return {
    /** Claims a due row and makes one attempt; null when another master took it first. */
    async deliver(row: DeliveryRow): Promise<DeliveryRow | null> {
      const expected = row.nextAttemptAt ?? deps.clock.now();
      if (!(await store.deliveries.claim(row.id, expected, deps.clock.now() + deps.leaseMs))) return null;
      return attempt(row);
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
