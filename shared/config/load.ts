import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

/** `leaseTimeoutMs` → `ACKCRAWL_LEASE_TIMEOUT_MS`. */
export function envName(key: string, prefix = 'ACKCRAWL_'): string {
  return prefix + key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

/** The environment variable naming a role's JSON config file (`ackcrawl <role> --config FILE`). */
export const CONFIG_FILE_ENV = 'ACKCRAWL_CONFIG';

/** A role's config file: a JSON object of the schema's keys. Unknown keys are typos, reported. */
function readConfigFile(path: string, known: readonly string[], problems: string[]): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    problems.push(`config file ${path}: ${err instanceof Error ? err.message : String(err)}`);
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`config file ${path}: must be a JSON object of settings`);
    return {};
  }
  for (const key of Object.keys(parsed)) {
    if (!known.includes(key)) problems.push(`config file ${path}: unknown setting '${key}'`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Reads every key of `schema` from, in rising precedence: the JSON file named by ACKCRAWL_CONFIG
 * (if set), `env` (ACKCRAWL_<KEY>), and `overrides` (the command line). Validates once and returns
 * a frozen object. Every problem is reported at once in one ConfigError. Only composition roots
 * call this.
 */
export function loadConfig<S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined>,
  overrides: Record<string, unknown> = {},
): Readonly<z.infer<S>> {
  const problems: string[] = [];
  const known = Object.keys(schema.shape);
  const file = env[CONFIG_FILE_ENV];
  const raw: Record<string, unknown> = file ? readConfigFile(file, known, problems) : {};
  for (const key of known) {
    const value = env[envName(key)];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.');
      problems.push(key ? `${key} (${envName(String(issue.path[0]))}): ${issue.message}` : issue.message);
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return Object.freeze(parsed.data);
}

/** The words a boolean setting may be written as, in the environment or a text form. */
export const BOOL_WORDS: Readonly<Record<string, boolean>> = {
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
  /** Words separated by spaces or commas (each checked by `item`). */
  list: <T extends z.ZodType<string>>(item?: T) =>
    z.preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(/[\s,]+/)
              .map((s) => s.trim())
              .filter(Boolean)
          : v,
      z.array(item ?? z.string()),
    ),
  /** One entry per line, for values that hold spaces and commas (User-Agent strings). */
  lines: () =>
    z.preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(/\r?\n/)
              .map((s) => s.trim())
              .filter(Boolean)
          : v,
      z.array(z.string().min(1).max(500)),
    ),
};
