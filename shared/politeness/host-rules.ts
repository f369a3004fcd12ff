import { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import { createHostLookup, hostPatternSchema, type HostLookup } from '../url/host-patterns.js';

/**
 * Per-host politeness overrides. A rule names hosts by a host pattern (shared/url/host-patterns.ts):
 * `example.com` (any port), `example.com:8080` (that port only) or `*.example.com` (every
 * subdomain, not the domain itself). The most specific rule wins.
 */
export const hostRuleSchema = z
  .object({
    host: hostPatternSchema.min(1).transform((h) => h.toLowerCase()),
    /** Requests in flight at once to a matching host. */
    concurrency: z.number().int().positive().max(1_000).optional(),
    /** Minimum ms between two request starts to a matching host. */
    delayMs: z.number().int().nonnegative().max(86_400_000).optional(),
    /** Let the delay follow the host's response times (see PolitenessSettings.adaptiveDelay). */
    adaptive: z.boolean().optional(),
  })
  .strict();
export type HostRule = z.infer<typeof hostRuleSchema>;

export const hostRulesSchema = z.array(hostRuleSchema).max(10_000);

/**
 * Reads the text form of rules, for the CLI and environment variables: rules separated by `;`,
 * each a host pattern followed by `concurrency=N`, `delay=MS` and/or `adaptive`, e.g.
 * `slow.example concurrency=1 delay=2000; *.cdn.example concurrency=8 delay=0`.
 */
export function parseHostRules(text: string): HostRule[] {
  return text
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map(parseHostRule);
}

function parseHostRule(text: string): HostRule {
  const [host = '', ...options] = text.split(/\s+/);
  const raw: Record<string, unknown> = { host };
  for (const option of options) {
    const [key, value] = option.split('=', 2);
    if (key === 'adaptive' && value === undefined) raw.adaptive = true;
    else if ((key === 'concurrency' || key === 'delay') && value !== undefined && /^\d+$/.test(value)) {
      raw[key === 'delay' ? 'delayMs' : 'concurrency'] = Number(value);
    } else {
      throw new InvalidInputError(
        'BAD_HOST_RULE',
        `host rule "${text}": unknown option "${option}" (use concurrency=N, delay=MS, adaptive)`,
      );
    }
  }
  const parsed = hostRuleSchema.safeParse(raw);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join('.') || 'rule'}: ${i.message}`).join('; ');
    throw new InvalidInputError('BAD_HOST_RULE', `host rule "${text}": ${why}`);
  }
  return parsed.data;
}

/** Finds the rule for a host key (`host[:port]`): the most specific pattern's. */
export function hostRuleLookup(rules: readonly HostRule[]): HostLookup<HostRule> {
  return createHostLookup(rules.map((rule) => ({ pattern: rule.host, value: rule })));
}
