import { z } from 'zod';
import { InvalidInputError } from '../errors.js';

/**
 * Per-host politeness overrides. A rule names hosts by pattern: `example.com` (any port),
 * `example.com:8080` (that port only) or `*.example.com` (every subdomain, not the domain itself).
 * The most specific rule wins: host with port, then host, then the longest wildcard suffix.
 */
export const hostRuleSchema = z
  .object({
    host: z
      .string()
      .min(1)
      .max(300)
      .regex(/^(\*\.)?[A-Za-z0-9.[\]:_-]+$/, 'a host, host:port or *.domain pattern')
      .transform((h) => h.toLowerCase()),
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

/** Finds the rule for a host key (`host[:port]`, lower case) in O(labels) per lookup. */
export class HostRuleBook {
  private readonly exact = new Map<string, HostRule>();
  private readonly wildcard = new Map<string, HostRule>();

  constructor(rules: readonly HostRule[]) {
    // Later rules win over earlier ones for the same pattern, as in a config file read top down.
    for (const rule of rules) {
      if (rule.host.startsWith('*.')) this.wildcard.set(rule.host.slice(2), rule);
      else this.exact.set(rule.host, rule);
    }
  }

  get size(): number {
    return this.exact.size + this.wildcard.size;
  }

  match(hostKey: string): HostRule | undefined {
    if (this.size === 0) return undefined;
    const withPort = this.exact.get(hostKey);
    if (withPort) return withPort;
    const name = stripPort(hostKey);
    const byName = this.exact.get(name);
    if (byName) return byName;
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
      const rule = this.wildcard.get(name.slice(dot + 1));
      if (rule) return rule;
    }
    return undefined;
  }
}

function stripPort(hostKey: string): string {
  if (hostKey.startsWith('[')) {
    const end = hostKey.indexOf(']');
    return end >= 0 ? hostKey.slice(0, end + 1) : hostKey;
  }
  const colon = hostKey.lastIndexOf(':');
  return colon >= 0 ? hostKey.slice(0, colon) : hostKey;
}
