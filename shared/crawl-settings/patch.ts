import { z } from 'zod';
import { CrawlSettingsSchema, type CrawlSettings } from './schema.js';

type Shape = typeof CrawlSettingsSchema.shape;
/** A field without its default: absent stays absent. */
type WithoutDefault<T> = T extends z.ZodDefault<infer Inner> ? Inner : T;
type PatchShape = { [K in keyof Shape]: z.ZodOptional<WithoutDefault<Shape[K]>> };

function withoutDefault(field: z.ZodType): z.ZodType {
  return field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field;
}

const patchShape = Object.fromEntries(
  Object.entries(CrawlSettingsSchema.shape).map(([key, field]) => {
    const description = field.description;
    const optional = withoutDefault(field).optional();
    return [key, description ? optional.describe(description) : optional];
  }),
) as unknown as PatchShape;

/** A change to a crawl's settings (PATCH): every field optional, nothing defaulted, unknown keys refused. */
export const CrawlSettingsPatchSchema = z.strictObject(patchShape);
export type CrawlSettingsPatch = z.output<typeof CrawlSettingsPatchSchema>;
export type CrawlSettingsPatchInput = z.input<typeof CrawlSettingsPatchSchema>;

/** The settings with the patch's fields in place of theirs (fields the patch leaves out stay). */
export function mergeCrawlSettings(current: CrawlSettings, patch: CrawlSettingsPatch): CrawlSettings {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined) merged[key] = value;
  }
  return merged as CrawlSettings;
}
