import { z } from 'zod';
import {
  ALERT_RULE_KINDS,
  ALERT_STATES,
  type AlertRow,
  type AlertRuleRow,
} from '../../../shared/ports/alert-store.js';
import type { RuleStatus } from '../../alerts/engine.js';
import { isoTime, pageQuery, toIso, toIsoOrNull } from './common.js';

const ruleName = z
  .string()
  .min(1)
  .max(200)
  .regex(/\S/, 'a name that is not only spaces')
  .describe('Unique among alert rules; for people.');

const params = z
  .record(z.string(), z.unknown())
  .describe(
    "The kind's parameters (docs/alerts.md): errors.rate {perMinute, windowMs?, finalOnly?, codes?}; run.stuck {minutes?}; dlq.growing {windowMs?, minIncrease?}; the others none.",
  );

export const ruleCreateSchema = z.strictObject({
  name: ruleName,
  kind: z.enum(ALERT_RULE_KINDS).describe('What the rule watches; also the type of the events it sends.'),
  params: params.default({}),
  enabled: z.boolean().default(true),
});

export const rulePatchSchema = z.strictObject({
  name: ruleName.optional(),
  params: params.optional(),
  enabled: z.boolean().optional(),
});

export const ruleSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(ALERT_RULE_KINDS),
  params: z.record(z.string(), z.unknown()).describe('Defaults filled in.'),
  enabled: z.boolean(),
  createdAt: isoTime,
  updatedAt: isoTime,
  status: z
    .object({
      evaluatedAt: isoTime,
      available: z
        .boolean()
        .describe('False when the rule cannot tell (its fact is unavailable): see reason.'),
      reason: z.string().nullable(),
    })
    .nullable()
    .describe("The engine's last pass over the rule in this master process; null before the first."),
});

export function ruleView(row: AlertRuleRow, status: RuleStatus | null): z.input<typeof ruleSchema> {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    params: row.params as Record<string, unknown>,
    enabled: row.enabled,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
    status:
      status === null
        ? null
        : { evaluatedAt: toIso(status.evaluatedAt), available: status.available, reason: status.reason },
  };
}

export const alertListQuery = pageQuery.extend({
  state: z
    .union([z.enum(ALERT_STATES), z.array(z.enum(ALERT_STATES)).max(3)])
    .optional()
    .describe('Only alerts in this state (repeat for several): active, resolved, event.'),
});

export const alertSchema = z.object({
  id: z.string(),
  ruleId: z.string(),
  subject: z.string().describe('What it is about: an agent id, agentId/processId, a run id, a queue.'),
  type: z.string().describe('The event type it was sent as (agent.lost, run.failed, …).'),
  state: z.enum(ALERT_STATES),
  data: z.record(z.string(), z.unknown()),
  openedAt: isoTime,
  resolvedAt: isoTime.nullable(),
});

export function alertView(row: AlertRow): z.input<typeof alertSchema> {
  return {
    id: row.id,
    ruleId: row.ruleId,
    subject: row.subject,
    type: row.type,
    state: row.state,
    data: row.data as Record<string, unknown>,
    openedAt: toIso(row.openedAt),
    resolvedAt: toIsoOrNull(row.resolvedAt),
  };
}
