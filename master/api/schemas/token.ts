import { z } from 'zod';
import { TOKEN_SCOPES, type TokenRow } from '../../../shared/ports/sql-store.js';
import { isoTime, toIso, toIsoOrNull } from './common.js';

export const scopeSchema = z
  .enum(TOKEN_SCOPES)
  .describe(
    'read: GET routes; operate: read, and create/edit jobs and start/pause/resume/cancel runs; admin: everything (tokens, deleting jobs).',
  );

export const tokenCreateSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(200)
    .regex(/\S/, 'a name that is not only spaces')
    .describe('Who or what holds it.'),
  scopes: z.array(scopeSchema).min(1).max(3),
});

export const tokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(scopeSchema),
  createdAt: isoTime,
  revokedAt: isoTime.nullable(),
  lastUsedAt: isoTime.nullable().describe('Within a minute.'),
});

export const createdTokenSchema = tokenSchema.extend({
  secret: z.string().describe('The bearer token. Shown this once: only its SHA-256 is stored.'),
});

export function tokenView(row: TokenRow): z.input<typeof tokenSchema> {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    createdAt: toIso(row.createdAt),
    revokedAt: toIsoOrNull(row.revokedAt),
    lastUsedAt: toIsoOrNull(row.lastUsedAt),
  };
}
