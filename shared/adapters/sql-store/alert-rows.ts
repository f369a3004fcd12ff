import type {
  AlertRow,
  AlertRuleKind,
  AlertRuleRow,
  AlertState,
  DeliveryRow,
  DeliveryState,
  WebhookRow,
} from '../../ports/alert-store.js';
import type { SqlRow } from './driver.js';

/** Alerting rows to the port's rows (BIGINT may come back as text, booleans as 0/1). */
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === '1';

export function toRule(r: SqlRow): AlertRuleRow {
  return {
    id: str(r.id),
    name: str(r.name),
    kind: str(r.kind) as AlertRuleKind,
    params: JSON.parse(str(r.params)) as unknown,
    enabled: bool(r.enabled),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toAlert(r: SqlRow): AlertRow {
  return {
    id: str(r.id),
    ruleId: str(r.rule_id),
    subject: str(r.subject),
    type: str(r.event_type),
    state: str(r.state) as AlertState,
    data: JSON.parse(str(r.data)) as unknown,
    openedAt: num(r.opened_at),
    resolvedAt: numOrNull(r.resolved_at),
  };
}

export function toWebhook(r: SqlRow): WebhookRow {
  return {
    id: str(r.id),
    url: str(r.url),
    description: str(r.description),
    secret: str(r.secret),
    eventTypes: JSON.parse(str(r.event_types)) as string[],
    enabled: bool(r.enabled),
    disabledReason: strOrNull(r.disabled_reason),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toDelivery(r: SqlRow): DeliveryRow {
  return {
    id: str(r.id),
    webhookId: str(r.webhook_id),
    alertId: strOrNull(r.alert_id),
    eventType: str(r.event_type),
    body: str(r.body),
    state: str(r.state) as DeliveryState,
    attempts: num(r.attempts),
    nextAttemptAt: numOrNull(r.next_attempt_at),
    lastStatus: numOrNull(r.last_status),
    lastError: strOrNull(r.last_error),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    deliveredAt: numOrNull(r.delivered_at),
  };
}
