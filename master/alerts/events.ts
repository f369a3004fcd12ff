import type { AlertRow, DeliveryRow, WebhookRow } from '../../shared/ports/alert-store.js';
import { newMessageId } from '../webhooks/signature.js';

/** The Standard Webhooks payload: `{type, timestamp, data}`, with dotted types. */
export function eventBody(type: string, at: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
}

/** What an alert's events carry, besides what its rule saw. */
export function alertData(
  alert: AlertRow,
  ruleName: string,
  resolvedAt: number | null,
): Record<string, unknown> {
  return {
    ...(alert.data as Record<string, unknown>),
    alertId: alert.id,
    ruleId: alert.ruleId,
    ruleName,
    subject: alert.subject,
    state: resolvedAt === null ? alert.state : 'resolved',
    openedAt: new Date(alert.openedAt).toISOString(),
    resolvedAt: resolvedAt === null ? null : new Date(resolvedAt).toISOString(),
  };
}

/**
 * Whether an endpoint takes an event type: it lists none (all), or this type, or, for a
 * `….resolved` event, the type it resolves (who was told of `agent.lost` hears that it ended).
 */
export function wants(webhook: WebhookRow, type: string): boolean {
  if (webhook.eventTypes.length === 0) return true;
  return (
    webhook.eventTypes.includes(type) ||
    (type.endsWith('.resolved') && webhook.eventTypes.includes(type.slice(0, -9)))
  );
}

/** One pending delivery per endpoint that wants the event, due now. */
export function deliveriesFor(
  webhooks: readonly WebhookRow[],
  alertId: string | null,
  type: string,
  body: string,
  now: number,
): DeliveryRow[] {
  return webhooks
    .filter((w) => w.enabled && wants(w, type))
    .map((w) => ({
      id: newMessageId(),
      webhookId: w.id,
      alertId,
      eventType: type,
      body,
      state: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      lastStatus: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      deliveredAt: null,
    }));
}
