import type { Page, PageQuery } from './sql-store.js';

/**
 * The alerting part of the SQL store (migration 4): alert rules, the alerts they raised (one per
 * rule and subject while a condition lasts), webhook endpoints and their deliveries. Deliveries are
 * rows so that a pending one survives a master restart: a loop retries what is due.
 */

// ---- alert rules ---------------------------------------------------------------------------

export const ALERT_RULE_KINDS = [
  'agent.lost',
  'process.crash_loop',
  'errors.rate',
  'run.stuck',
  'dlq.growing',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
] as const;
export type AlertRuleKind = (typeof ALERT_RULE_KINDS)[number];

export interface AlertRuleRow {
  id: string;
  name: string;
  kind: AlertRuleKind;
  /** The kind's parameters (master/alerts/rule-params.ts), as JSON. */
  params: unknown;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface AlertRuleRepository {
  /** Rejects with SQL_CONFLICT when the id or the name is taken. */
  create(rule: AlertRuleRow): Promise<AlertRuleRow>;
  get(id: string): Promise<AlertRuleRow | null>;
  /** Oldest first. */
  list(query?: PageQuery): Promise<Page<AlertRuleRow>>;
  /** Null when there is no such rule. Rejects with SQL_CONFLICT when the new name is taken. */
  update(
    id: string,
    patch: { name?: string; params?: unknown; enabled?: boolean; updatedAt: number },
  ): Promise<AlertRuleRow | null>;
  /** False when there is no such rule. Its alerts stay (they are history). */
  delete(id: string): Promise<boolean>;
}

// ---- alerts --------------------------------------------------------------------------------

/**
 * `active`: the condition holds (one row per rule and subject); `resolved`: it cleared;
 * `event`: a one-off notice (a run ended) that has nothing to resolve.
 */
export const ALERT_STATES = ['active', 'resolved', 'event'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

export interface AlertRow {
  id: string;
  ruleId: string;
  /** What the condition is about: an agent id, `agentId/processId`, a run id, the queue name. */
  subject: string;
  /** The event type sent when it opened (`agent.lost`, `run.failed`, …). */
  type: string;
  state: AlertState;
  /** What the rule saw, as JSON (sent as the event's `data`). */
  data: unknown;
  openedAt: number;
  resolvedAt: number | null;
}

export interface AlertRepository {
  /**
   * Records a new alert and the deliveries it causes, in one transaction. False (and nothing
   * written) when the rule already has an active alert on this subject, or, for an `event`,
   * already told of this subject: two master processes raise it once.
   */
  open(alert: AlertRow, deliveries: readonly DeliveryRow[]): Promise<boolean>;
  /**
   * `active` → `resolved` and the deliveries of the `….resolved` event, in one transaction.
   * False when the alert is not active (resolved already, by this or another master).
   */
  resolve(id: string, at: number, deliveries: readonly DeliveryRow[]): Promise<boolean>;
  get(id: string): Promise<AlertRow | null>;
  /** Newest first; `states` filters. */
  list(query?: PageQuery & { states?: readonly AlertState[] }): Promise<Page<AlertRow>>;
}

// ---- webhook endpoints ---------------------------------------------------------------------

export interface WebhookRow {
  id: string;
  url: string;
  description: string;
  /** `whsec_` + base64: kept as is, because it must sign. Never logged, shown once. */
  secret: string;
  /** Event types delivered here; empty: all. */
  eventTypes: string[];
  enabled: boolean;
  /** Why it was disabled (a 410 from the receiver), or null. */
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookRepository {
  /** Rejects with SQL_CONFLICT when the id is taken. */
  create(webhook: WebhookRow): Promise<WebhookRow>;
  get(id: string): Promise<WebhookRow | null>;
  /** Oldest first. */
  list(query?: PageQuery): Promise<Page<WebhookRow>>;
  update(
    id: string,
    patch: {
      url?: string;
      description?: string;
      eventTypes?: string[];
      enabled?: boolean;
      disabledReason?: string | null;
      updatedAt: number;
    },
  ): Promise<WebhookRow | null>;
  /** False when there is no such endpoint. Its deliveries go with it. */
  delete(id: string): Promise<boolean>;
}

// ---- deliveries ----------------------------------------------------------------------------

/**
 * `pending`: to be sent at `nextAttemptAt`; `delivered`: a 2xx came back; `failed`: out of
 * attempts; `cancelled`: its endpoint was disabled or deleted before it went out.
 */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DeliveryRow {
  /** The `webhook-id` header: the same on every attempt, so receivers can drop repeats. */
  id: string;
  webhookId: string;
  /** The alert it tells of; null for a test delivery. */
  alertId: string | null;
  eventType: string;
  /** The exact body sent (and signed): `{type, timestamp, data}` as JSON text. */
  body: string;
  state: DeliveryState;
  attempts: number;
  /** When it is due (pending), else null. */
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
}

export interface DeliveryRepository {
  create(rows: readonly DeliveryRow[]): Promise<void>;
  get(id: string): Promise<DeliveryRow | null>;
  /** Pending rows due at `now`, soonest first. */
  due(now: number, limit: number): Promise<DeliveryRow[]>;
  /**
   * Takes a due row for one attempt: moves its `nextAttemptAt` from `expected` to `leaseUntil`
   * (when a master dies mid-attempt the row is due again then). False when another took it.
   */
  claim(id: string, expected: number, leaseUntil: number): Promise<boolean>;
  /** What an attempt came to. */
  record(
    id: string,
    outcome: Pick<
      DeliveryRow,
      'state' | 'attempts' | 'nextAttemptAt' | 'lastStatus' | 'lastError' | 'deliveredAt' | 'updatedAt'
    >,
  ): Promise<void>;
  /** Newest first. */
  listByWebhook(webhookId: string, query?: PageQuery): Promise<Page<DeliveryRow>>;
}
