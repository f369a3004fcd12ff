import { z } from 'zod';
import { DELIVERY_STATES, type DeliveryRow, type WebhookRow } from '../../../shared/ports/alert-store.js';
import { isoTime, toIso, toIsoOrNull } from './common.js';

const eventType = z
  .string()
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'a dotted event type (agent.lost, run.failed.resolved)')
  .max(100);

const url = z.string().min(1).max(2_000).describe('http(s) URL the events are POSTed to.');

export const webhookCreateSchema = z.strictObject({
  url,
  description: z.string().max(500).default(''),
  eventTypes: z
    .array(eventType)
    .max(50)
    .default([])
    .describe('Event types sent here; empty: all. Listing a type also sends its `.resolved` event.'),
  enabled: z.boolean().default(true),
});

export const webhookPatchSchema = z.strictObject({
  url: url.optional(),
  description: z.string().max(500).optional(),
  eventTypes: z.array(eventType).max(50).optional(),
  enabled: z.boolean().optional().describe('true also clears why it was disabled (after a 410).'),
});

export const webhookSchema = z.object({
  id: z.string(),
  url: z
    .string()
    .describe(
      'Where events go. Shown whole to admin tokens only: others see its origin and `/…` (chat hook URLs carry their secret in the path).',
    ),
  description: z.string(),
  eventTypes: z.array(z.string()),
  enabled: z.boolean(),
  disabledReason: z.string().nullable().describe('Why it was disabled: a 410 from the receiver.'),
  createdAt: isoTime,
  updatedAt: isoTime,
});

export const createdWebhookSchema = webhookSchema.extend({
  secret: z
    .string()
    .describe('The signing secret (whsec_…), for the receiver to verify signatures. Shown this once.'),
});

/** The URL without path, query or credentials: `https://hooks.example.com/…`. */
export function redactedWebhookUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '…';
  }
}

/** An endpoint as answered; `fullUrl` only for a caller that may change it (admin). */
export function webhookView(row: WebhookRow, fullUrl = true): z.input<typeof webhookSchema> {
  return {
    id: row.id,
    url: fullUrl ? row.url : redactedWebhookUrl(row.url),
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}

export const deliverySchema = z.object({
  id: z.string().describe('The webhook-id header: the same on every attempt.'),
  webhookId: z.string(),
  alertId: z.string().nullable().describe('Null for a test delivery.'),
  eventType: z.string(),
  state: z.enum(DELIVERY_STATES),
  attempts: z.number().int(),
  nextAttemptAt: isoTime.nullable(),
  lastStatus: z.number().int().nullable().describe("The receiver's last HTTP status; null when none came."),
  lastError: z.string().nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
  deliveredAt: isoTime.nullable(),
  payload: z.unknown().describe('The body sent: {type, timestamp, data}.'),
});

export function deliveryView(row: DeliveryRow): z.input<typeof deliverySchema> {
  return {
    id: row.id,
    webhookId: row.webhookId,
    alertId: row.alertId,
    eventType: row.eventType,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: toIsoOrNull(row.nextAttemptAt),
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
    deliveredAt: toIsoOrNull(row.deliveredAt),
    payload: JSON.parse(row.body) as unknown,
  };
}
