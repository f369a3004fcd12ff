import { z } from 'zod';

/** An id in a path: what the master hands out (UUIDs), or anything close enough to look up. */
export const idParam = z.string().min(1).max(128).describe('The id the master gave it.');

export const idParams = z.strictObject({ id: idParam });

/** `?limit=&after=` of every list. Query values come as text, so numbers are coerced. */
export const pageQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(500)
    .optional()
    .describe('Items per page, 1 to 500 (default 50).'),
  after: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe('The `next` cursor of the previous page; absent for the first page.'),
});

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    next: z.string().nullable().describe('Cursor of the next page (`?after=`), null on the last page.'),
  });
}

/** Times on the wire: ISO 8601 in UTC. */
export const isoTime = z.iso.datetime().describe('ISO 8601, UTC.');

export const problemSchema = z.object({
  field: z
    .string()
    .describe('Dotted path of the field (`seeds.0`, `query.limit`); `body` for the whole body.'),
  message: z.string(),
});

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().describe('A stable code from docs/error-codes.md.'),
      message: z.string().describe('For a person; names no internals.'),
      problems: z.array(problemSchema).optional().describe('Every field that does not validate (400).'),
    }),
  })
  .describe('Every answer that is not a success.');

export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));
