import { z } from 'zod';
import { MAX_QUERY_PARAM_NAME, MAX_QUERY_PARAMS, QUERY_PARAM_NAME } from '../url/query-params.js';
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

/** `stripQueryParams`: parameter names, each with an optional trailing `*` (a prefix). */
export const queryParamNamesSchema = z
  .array(
    z
      .string()
      .min(1)
      .max(MAX_QUERY_PARAM_NAME)
      .regex(
        QUERY_PARAM_NAME,
        'a query parameter name (no & = # ? or spaces), with an optional trailing * for a prefix',
      ),
  )
  .max(MAX_QUERY_PARAMS);
