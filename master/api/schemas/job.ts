import { z } from 'zod';
import { CrawlSettingsPatchSchema, CrawlSettingsSchema } from '../../../shared/crawl-settings/index.js';
import type { JobRow, TokenRow } from '../../../shared/ports/sql-store.js';
import { settingsShownTo } from '../settings-view.js';
import { isoTime, toIso } from './common.js';

const jobName = z
  .string()
  .min(1)
  .max(200)
  .regex(/\S/, 'a name that is not only spaces')
  .describe('Unique among jobs; for people.');

/** `POST /jobs`: a name plus the crawl's settings, flat and camelCase (shared/crawl-settings). */
export const jobCreateSchema = CrawlSettingsSchema.extend({ name: jobName }).describe(
  'A job: its name plus the settings of one crawl (defaults filled in for what is left out).',
);

/** `PATCH /jobs/{id}`: any of the fields, the rest stay. */
export const jobPatchSchema = CrawlSettingsPatchSchema.extend({ name: jobName.optional() }).describe(
  'The fields to change; the others keep their values. Runs already made keep their own snapshot.',
);

export const jobSchema = z.object({
  id: z.string(),
  name: z.string(),
  settings: CrawlSettingsSchema.describe('Every setting, defaults filled in.'),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type JobView = z.input<typeof jobSchema>;

/** A job as answered; its settings as `caller` may see them (settingsShownTo). */
export function jobView(row: JobRow, caller: TokenRow | null): JobView {
  return {
    id: row.id,
    name: row.name,
    settings: settingsShownTo(caller, row.settings) as JobView['settings'],
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}
