/**
 * One definition of a crawl's settings (issue 9, point 1): the schema, its parse and patch
 * functions, and the map to what crawlers need.
 */
export {
  CrawlSettingsSchema,
  CRAWL_SETTING_KEYS,
  crawlDefaults,
  PRIORITY_MAX,
  PRIORITY_MIN,
  PRIORITY_RULES,
  type CrawlSettingKey,
  type CrawlSettings,
  type CrawlSettingsInput,
  type PriorityRule,
} from './schema.js';
export { parseCrawlSettings, parseCrawlSettingsPatch } from './parse.js';
export { settingsProblems, formatProblems, type SettingsProblem } from './problems.js';
export {
  CrawlSettingsPatchSchema,
  mergeCrawlSettings,
  type CrawlSettingsPatch,
  type CrawlSettingsPatchInput,
} from './patch.js';
export { fetchSettingsOf } from './fetch-settings.js';
export {
  crawlSettingsTextShape,
  settingFromText,
  settingToText,
  textKindOf,
  type TextKind,
} from './text-input.js';
export { seedSchema, seedsSchema } from './seeds.js';
