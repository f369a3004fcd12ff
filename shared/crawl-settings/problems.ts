import type { z } from 'zod';

/** One problem of a crawl's settings: the field as a dotted path (`hostRules.0.delayMs`), and why. */
export interface SettingsProblem {
  field: string;
  message: string;
}

/**
 * Every problem zod found, field by field (an unknown key is a problem of that key: a typo); a
 * problem of the whole object has the field `settings`.
 */
export function settingsProblems(error: z.ZodError): SettingsProblem[] {
  return error.issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...at, key].join('.'), message: 'unknown setting' }));
    }
    return [{ field: at.join('.') || 'settings', message: issue.message }];
  });
}

/** The problems as one line each, `field: message`. */
export function formatProblems(problems: readonly SettingsProblem[]): string[] {
  return problems.map((p) => `${p.field}: ${p.message}`);
}
