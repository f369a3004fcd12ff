import { z } from 'zod';
import { ConfigError } from '../errors.js';

/** `leaseTimeoutMs` → `ACKCRAWL_LEASE_TIMEOUT_MS`. */
export function envName(key: string, prefix = 'ACKCRAWL_'): string {
  return prefix + key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

/**
 * Reads every key of `schema` from `env` (ACKCRAWL_<KEY>), overlays `overrides` (from a config
 * file or the command line), validates once and returns a frozen object. Every problem is
 * reported at once in one ConfigError. Only composition roots call this.
 */
export function loadConfig<S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined>,
  overrides: Record<string, unknown> = {},
): Readonly<z.infer<S>> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[envName(key)];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const key = issue.path.join('.');
        return key ? `${key} (${envName(String(issue.path[0]))}): ${issue.message}` : issue.message;
      }),
    );
  }
  return Object.freeze(parsed.data);
}

const BOOL_WORDS: Record<string, boolean> = {
  '1': true,
  true: true,
  yes: true,
  on: true,
  '0': false,
  false: false,
  no: false,
  off: false,
};

/** Field helpers that accept both typed values and environment strings. */
export const field = {
  int: (min = 0) => z.coerce.number().int().min(min),
  /** Known words only: a typo such as `ture` is reported, not read as false. */
  bool: () =>
    z.preprocess((v) => (typeof v === 'string' ? (BOOL_WORDS[v.trim().toLowerCase()] ?? v) : v), z.boolean()),
  list: () =>
    z.preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(/[\s,]+/)
              .map((s) => s.trim())
              .filter(Boolean)
          : v,
      z.array(z.string()),
    ),
};
