import { z } from 'zod';
import type { AlertRuleKind } from '../../shared/ports/alert-store.js';

/** Each rule kind's parameters, validated when a rule is saved and when the engine reads it. */
export const RULE_PARAMS = {
  'agent.lost': z.strictObject({}),
  'process.crash_loop': z.strictObject({}),
  'errors.rate': z.strictObject({
    perMinute: z
      .number()
      .positive()
      .max(1_000_000)
      .describe('Fires while a run logs more failures a minute than this.'),
    windowMs: z
      .number()
      .int()
      .min(10_000)
      .max(86_400_000)
      .default(300_000)
      .describe('Over this window (default 5 min).'),
    finalOnly: z.boolean().default(false).describe('Count final failures only (default: retries too).'),
    codes: z.array(z.string().min(1).max(100)).max(50).optional().describe('Only these error codes.'),
  }),
  'run.stuck': z.strictObject({
    minutes: z
      .number()
      .positive()
      .max(10_080)
      .default(10)
      .describe('No progress for this long while work is queued.'),
  }),
  'dlq.growing': z.strictObject({
    windowMs: z
      .number()
      .int()
      .min(10_000)
      .max(86_400_000)
      .default(300_000)
      .describe('Growth measured over this window.'),
    minIncrease: z
      .number()
      .int()
      .min(1)
      .default(1)
      .describe('Fires when the queue grew by at least this much.'),
  }),
  'run.succeeded': z.strictObject({}),
  'run.failed': z.strictObject({}),
  'run.cancelled': z.strictObject({}),
} satisfies Record<AlertRuleKind, z.ZodType>;

export type RuleParams<K extends AlertRuleKind> = z.output<(typeof RULE_PARAMS)[K]>;

/** A one-off notice per run (nothing to resolve), or a condition with a `….resolved` event. */
export const EVENT_KINDS: readonly AlertRuleKind[] = ['run.succeeded', 'run.failed', 'run.cancelled'];
