import { z } from 'zod';
import { parseHostRules } from '../politeness/host-rules.js';
import { parseRequestHeader } from '../protocol/request-headers.js';
import { parseFixedCookie } from '../protocol/fixed-cookies.js';
import { BOOL_WORDS } from '../config/load.js';
import { CrawlSettingsSchema, type CrawlSettingKey } from './schema.js';

/**
 * Settings given as text — ACKCRAWL_* variables, command-line values — become the typed values the
 * schema takes. How is read off each field's type, so a new setting needs nothing here: numbers,
 * booleans (known words only: a typo such as `ture` stays a string and is reported), lists
 * separated by spaces or commas. Some settings have a text form of their own: `userAgents`,
 * `includeUrls` and `excludeUrls` (one per line: they hold spaces and commas) and `hostRules` (a
 * JSON array, or `host concurrency=N delay=MS adaptive; …`), `headers` (a JSON array, or one
 * `[host ]Name: value` per line) and `cookies` (a JSON array, or one `domain name=value` per line).
 */

export type TextKind = 'number' | 'boolean' | 'list' | 'lines' | 'hostRules' | 'headers' | 'cookies' | 'text';

const SPECIAL_KINDS: Partial<Record<CrawlSettingKey, TextKind>> = {
  userAgents: 'lines',
  includeUrls: 'lines',
  excludeUrls: 'lines',
  hostRules: 'hostRules',
  headers: 'headers',
  cookies: 'cookies',
};

/** The zod type a field takes once defaults, optionality and transforms are looked through. */
function baseType(field: z.ZodType): string {
  const def = field._zod.def as { type: string; innerType?: z.ZodType; in?: z.ZodType };
  if ((def.type === 'default' || def.type === 'optional') && def.innerType) return baseType(def.innerType);
  if (def.type === 'pipe' && def.in) return baseType(def.in);
  return def.type;
}

/** How a setting is written as text (for the docs too). */
export function textKindOf(key: CrawlSettingKey): TextKind {
  const special = SPECIAL_KINDS[key];
  if (special) return special;
  switch (baseType(CrawlSettingsSchema.shape[key])) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'list';
    default:
      return 'text';
  }
}

function splitList(text: string, separator: RegExp): string[] {
  return text
    .split(separator)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * The typed value a setting's text stands for. Text that is no value of the kind is returned as
 * it is, for the schema to report (`expected number, received string`).
 * @throws InvalidInputError `BAD_HOST_RULE` for host rules text that cannot be read, `BAD_HEADER`
 *   for a header line that cannot be, `BAD_COOKIE` for a cookie line.
 */
export function settingFromText(key: CrawlSettingKey, text: string): unknown {
  switch (textKindOf(key)) {
    case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? n : text;
    }
    case 'boolean':
      return BOOL_WORDS[text.trim().toLowerCase()] ?? text;
    case 'list':
      return splitList(text, /[\s,]+/);
    case 'lines':
      return splitList(text, /\r?\n/);
    case 'hostRules':
      return text.trim().startsWith('[') ? (JSON.parse(text) as unknown) : parseHostRules(text);
    case 'headers':
      return text.trim().startsWith('[')
        ? (JSON.parse(text) as unknown)
        : splitList(text, /\r?\n/).map(parseRequestHeader);
    case 'cookies':
      return text.trim().startsWith('[')
        ? (JSON.parse(text) as unknown)
        : splitList(text, /\r?\n/).map(parseFixedCookie);
    case 'text':
      return key === 'render' ? renderWord(text) : text;
  }
}

/** `render` was a boolean before it had modes: true and false still mean always and never. */
function renderWord(value: unknown): unknown {
  if (value === true || value === 'true') return 'always';
  if (value === false || value === 'false') return 'never';
  return value;
}

/** The text a setting's value is written as (the inverse of settingFromText), for child roles' env. */
export function settingToText(key: CrawlSettingKey, value: unknown): string {
  switch (textKindOf(key)) {
    case 'list':
      return (value as unknown[]).join(' ');
    case 'lines':
      return (value as unknown[]).join('\n');
    case 'hostRules':
    case 'headers':
    case 'cookies':
      return JSON.stringify(value);
    default:
      return String(value);
  }
}

type TextShape = {
  [K in CrawlSettingKey]: z.ZodPipe<z.ZodTransform<unknown, unknown>, (typeof CrawlSettingsSchema.shape)[K]>;
};

/** A field that takes its typed value or its text (a bad text is reported at that field). */
function textField<K extends CrawlSettingKey>(key: K): TextShape[K] {
  const field = CrawlSettingsSchema.shape[key];
  return z.preprocess((value, ctx) => {
    if (key === 'render') value = renderWord(value);
    if (typeof value !== 'string') return value;
    try {
      return settingFromText(key, value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  }, field) as unknown as TextShape[K];
}

/**
 * The crawl's settings as a role's config schema takes them (shared/config/load.ts): each field
 * accepts its text as well, with the schema's own bounds and default.
 */
export const crawlSettingsTextShape: TextShape = Object.fromEntries(
  (Object.keys(CrawlSettingsSchema.shape) as CrawlSettingKey[]).map((key) => [key, textField(key)]),
) as TextShape;
