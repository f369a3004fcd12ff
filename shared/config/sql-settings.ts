import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, errorMessage } from '../errors.js';
import { describeSqlUrl, parseSqlUrl } from '../adapters/sql-store/sql-url.js';

/**
 * Where a role keeps its SQL store. Each key is also an environment variable: `sqlUrl` →
 * ACKCRAWL_SQL_URL, `sqlCaFile` → ACKCRAWL_SQL_CA_FILE. Unset, the store is the SQLite file
 * `<dataDir>/ackcrawl.db`. Role schemas may spread these fields: `z.object({ ...sqlSettingsSchema.shape })`.
 * The URL may carry a password: it is redacted in logs (shared/logger.ts) and never repeated in
 * a message (describeSqlUrl).
 */
export const sqlSettingsSchema = z.object({
  sqlUrl: z.string().trim().min(1).optional(),
  sqlCaFile: z.string().min(1).optional(),
});

export type SqlSettings = z.infer<typeof sqlSettingsSchema>;

export const SQL_URL_ENV = 'ACKCRAWL_SQL_URL';
export const SQL_CA_FILE_ENV = 'ACKCRAWL_SQL_CA_FILE';

/** The default store: one SQLite file in the role's data dir. */
export function defaultSqlStoreUrl(dataDir: string): string {
  return `sqlite:${join(dataDir, 'ackcrawl.db')}`;
}

/**
 * ACKCRAWL_SQL_URL, or the SQLite file in `dataDir`; checked here (scheme, shape) so that a typo
 * fails at start with a ConfigError rather than at the first query.
 */
export function sqlStoreUrlFromEnv(env: Record<string, string | undefined>, dataDir: string): string {
  const raw = env[SQL_URL_ENV]?.trim();
  const url = raw ? raw : defaultSqlStoreUrl(dataDir);
  try {
    parseSqlUrl(url);
  } catch (err) {
    throw new ConfigError([`sqlUrl (${SQL_URL_ENV}): ${errorMessage(err)}`]);
  }
  return url;
}

/** ACKCRAWL_SQL_CA_FILE, if set. */
export function sqlCaFileFromEnv(env: Record<string, string | undefined>): string | undefined {
  const raw = env[SQL_CA_FILE_ENV]?.trim();
  return raw ? raw : undefined;
}

export { describeSqlUrl };
