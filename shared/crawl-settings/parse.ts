import { InvalidInputError } from '../errors.js';
import { formatProblems, settingsProblems } from './problems.js';
import { CrawlSettingsSchema, type CrawlSettings } from './schema.js';
import { CrawlSettingsPatchSchema, type CrawlSettingsPatch } from './patch.js';

/**
 * Validates a crawl's settings and applies every default.
 * @throws InvalidInputError `INVALID_CRAWL` (400) whose `details.problems` lists each
 *   `{ field, message }`.
 */
export function parseCrawlSettings(input: unknown): CrawlSettings {
  const parsed = CrawlSettingsSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidCrawl(settingsProblems(parsed.error));
}

/** Validates a change to a crawl's settings (every field optional, no default applied). */
export function parseCrawlSettingsPatch(input: unknown): CrawlSettingsPatch {
  const parsed = CrawlSettingsPatchSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidCrawl(settingsProblems(parsed.error));
}

function invalidCrawl(problems: ReturnType<typeof settingsProblems>): InvalidInputError {
  return new InvalidInputError(
    'INVALID_CRAWL',
    `invalid crawl settings: ${formatProblems(problems).join('; ')}`,
    {
      details: { problems },
    },
  );
}
