import { z } from 'zod';
import { normalizeUrl } from '../url/normalize.js';

/** One seed URL, normalised; the problem is the normaliser's (unparsable, not http(s), too long). */
export const seedSchema = z
  .string()
  .max(8192)
  .transform((value, ctx) => {
    try {
      return normalizeUrl(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  });

export const seedsSchema = z.array(seedSchema).max(10_000);
