import { Option, type Command } from 'commander';
import { z } from 'zod';
import {
  CrawlSettingsSchema,
  crawlDefaults,
  settingFromText,
  type CrawlSettingKey,
} from '../../shared/crawl-settings/index.js';
import { parseHostRules } from '../../shared/politeness/host-rules.js';
import { parseRequestHeader } from '../../shared/protocol/request-headers.js';
import { parseFixedCookie } from '../../shared/protocol/fixed-cookies.js';

/**
 * The command-line flags of `ackcrawl crawl` that set a crawl's settings. Their help is the
 * setting's description and default, from shared/crawl-settings; what a value means is the
 * schema's too (settingFromText), so a flag adds no default or check of its own.
 *
 * - `value`: `--host-delay 0` is the setting's text;
 * - `switch`: `--allow-private` sets true (`--render`: always);
 * - `negate`: `--no-robots` sets false;
 * - `repeat`: each `--proxy` adds to a list (`--host-rule`: rules; `--header`: headers; `--cookie`: cookies; `--user-agent`: the first is
 *   the identity, two or more rotate).
 */
export interface SettingFlag {
  key: CrawlSettingKey;
  flags: string;
  kind: 'value' | 'switch' | 'negate' | 'repeat';
  /** Help where the setting's description does not read as the flag's. */
  help?: string;
}

export const SETTING_FLAGS: readonly SettingFlag[] = [
  { key: 'maxPages', flags: '--max-pages <n>', kind: 'value' },
  { key: 'maxDepth', flags: '--max-depth <n>', kind: 'value' },
  {
    key: 'maxDurationMs',
    flags: '--max-duration <ms>',
    kind: 'value',
    help: 'stop the crawl this many ms after it starts (3600000: an hour); the URLs left stay queued in --out, and the same command goes on with them',
  },
  { key: 'scope', flags: '--scope <scope>', kind: 'value' },
  {
    key: 'includeUrls',
    flags: '--include <regex>',
    kind: 'repeat',
    help: 'follow only discovered URLs in which this RE2 pattern is found (e.g. /blog/); repeatable: any of them',
  },
  {
    key: 'excludeUrls',
    flags: '--exclude <regex>',
    kind: 'repeat',
    help: 'do not follow discovered URLs in which this RE2 pattern is found (e.g. [?&]sessionid=); repeatable',
  },
  {
    key: 'stripQueryParams',
    flags: '--strip-param <name>',
    kind: 'repeat',
    help: 'remove this query parameter from discovered URLs before they are deduplicated (utm_* for a prefix); repeatable',
  },
  { key: 'priority', flags: '--priority <n>', kind: 'value' },
  { key: 'priorityRule', flags: '--priority-rule <rule>', kind: 'value' },
  { key: 'hostConcurrency', flags: '--host-concurrency <n>', kind: 'value' },
  { key: 'hostDelayMs', flags: '--host-delay <ms>', kind: 'value' },
  {
    key: 'hostRules',
    flags: '--host-rule <rule>',
    kind: 'repeat',
    help: 'per-host limits, e.g. "slow.example concurrency=1 delay=2000" or "*.cdn.example delay=0" (repeatable)',
  },
  { key: 'adaptiveDelay', flags: '--adaptive-delay', kind: 'switch' },
  { key: 'maxCrawlDelayMs', flags: '--max-crawl-delay <ms>', kind: 'value' },
  { key: 'retryDelayMs', flags: '--retry-delay <ms>', kind: 'value' },
  { key: 'maxAttempts', flags: '--max-attempts <n>', kind: 'value' },
  { key: 'allowPrivate', flags: '--allow-private', kind: 'switch' },
  {
    key: 'userAgent',
    flags: '--user-agent <ua>',
    kind: 'repeat',
    help: 'User-Agent header; repeat to rotate through several, one per request (the first is the crawl\u2019s identity for robots.txt)',
  },
  {
    key: 'headers',
    flags: '--header <header>',
    kind: 'repeat',
    help: 'send this request header, "Name: value" to every host or "host Name: value" to one (example.com, *.example.com, optionally :port); repeatable',
  },
  {
    key: 'cookies',
    flags: '--cookie <cookie>',
    kind: 'repeat',
    help: 'start every fetch with this cookie, "domain name=value" (".example.com sid=abc; Path=/; Secure": the domain and its subdomains), as a logged-in browser; repeatable',
  },
  {
    key: 'proxies',
    flags: '--proxy <url>',
    kind: 'repeat',
    help: 'send requests through this proxy (http://, https://, socks4://, socks5://, optional user:pass@); repeat for a pool',
  },
  {
    key: 'respectRobots',
    flags: '--no-robots',
    kind: 'negate',
    help: 'ignore robots.txt (obeyed by default: disallowed URLs are recorded, not fetched)',
  },
  { key: 'sitemaps', flags: '--sitemaps', kind: 'switch' },
  {
    key: 'conditionalRequests',
    flags: '--no-conditional-requests',
    kind: 'negate',
    help: 'fetch every page in full, also when an earlier crawl of the same job kept its ETag or Last-Modified',
  },
  { key: 'sessionCookies', flags: '--session-cookies', kind: 'switch' },
  {
    key: 'render',
    flags: '--render',
    kind: 'switch',
    help: 'render every page in a browser (Debian chromium) and record the DOM after scripts ran',
  },
  {
    key: 'renderHosts',
    flags: '--render-host <pattern>',
    kind: 'repeat',
    help: 'render only this host\u2019s pages (example.com, *.example.com, optionally :port); repeatable',
  },
  { key: 'maxUrlLength', flags: '--max-url-length <n>', kind: 'value' },
  { key: 'maxLinksPerPage', flags: '--max-links-per-page <n>', kind: 'value' },
  { key: 'defaultCharset', flags: '--default-charset <label>', kind: 'value' },
];

const FLAG_BY_KEY = new Map(SETTING_FLAGS.map((flag) => [flag.key, flag]));

/** The flag that sets a setting (`--host-delay`), if there is one. */
export function flagOf(key: string): string | undefined {
  return FLAG_BY_KEY.get(key as CrawlSettingKey)?.flags.split(' ')[0];
}

function attributeOf(flag: SettingFlag): string {
  return new Option(flag.flags).attributeName();
}

function helpOf(flag: SettingFlag): string {
  if (flag.help) return flag.help;
  const description = CrawlSettingsSchema.shape[flag.key].description ?? '';
  // "Which links…" reads as "which links…"; "URLs the crawl…" stays as written.
  const lower = /^[A-Z][a-z]/.test(description);
  const text = (lower ? description.charAt(0).toLowerCase() + description.slice(1) : description).replace(
    /\.$/,
    '',
  );
  const fallback = (crawlDefaults() as Record<string, unknown>)[flag.key];
  return flag.kind === 'value' && fallback !== undefined ? `${text} (default: ${String(fallback)})` : text;
}

/** The values an enum setting takes (`scope`: host, domain, any). */
function choicesOf(key: CrawlSettingKey): readonly string[] | undefined {
  let field: z.ZodType = CrawlSettingsSchema.shape[key];
  if (field instanceof z.ZodDefault || field instanceof z.ZodOptional) field = field.unwrap() as z.ZodType;
  return field instanceof z.ZodEnum ? (field.options as readonly string[]) : undefined;
}

/** Adds a commander option for every setting flag (no commander default: the schema has them). */
export function addSettingOptions(command: Command): Command {
  for (const flag of SETTING_FLAGS) {
    const option = new Option(flag.flags, helpOf(flag));
    const choices = choicesOf(flag.key);
    if (flag.kind === 'value' && choices) option.choices(choices);
    if (flag.kind === 'repeat')
      option.argParser((value: string, previous: string[] = []) => [...previous, value]);
    command.addOption(option);
  }
  return command;
}

/**
 * The settings the flags give, as the schema's input, and the problems of values that could not
 * be read at all (a host rule's syntax). Flags not given are left out.
 */
export function settingsFromFlags(options: Record<string, unknown>): {
  input: Record<string, unknown>;
  problems: string[];
} {
  const input: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const flag of SETTING_FLAGS) {
    const value = options[attributeOf(flag)];
    if (value === undefined) continue;
    const name = flag.flags.split(' ')[0] ?? flag.key;
    try {
      switch (flag.kind) {
        case 'value':
          input[flag.key] = settingFromText(flag.key, String(value));
          break;
        case 'switch':
          if (value === true) input[flag.key] = flag.key === 'render' ? 'always' : true;
          break;
        case 'negate':
          if (value === false) input[flag.key] = false;
          break;
        case 'repeat': {
          const values = value as string[];
          if (flag.key === 'hostRules') input.hostRules = values.flatMap((text) => parseHostRules(text));
          else if (flag.key === 'headers') input.headers = values.map(parseRequestHeader);
          else if (flag.key === 'cookies') input.cookies = values.map(parseFixedCookie);
          else if (flag.key === 'userAgent') {
            input.userAgent = values[0];
            if (values.length > 1) input.userAgents = values;
          } else input[flag.key] = values;
          break;
        }
      }
    } catch (err) {
      problems.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { input, problems };
}
