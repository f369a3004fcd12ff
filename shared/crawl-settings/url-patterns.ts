import { z } from 'zod';
import { MAX_URL_PATTERNS, urlPatternProblem } from '../url/url-patterns.js';

/** `includeUrls` / `excludeUrls`: RE2 patterns, each checked once, as the settings are parsed. */
export const urlPatternsSchema = z
  .array(
    z.string().superRefine((pattern, ctx) => {
      const problem = urlPatternProblem(pattern);
      if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
    }),
  )
  .max(MAX_URL_PATTERNS);
