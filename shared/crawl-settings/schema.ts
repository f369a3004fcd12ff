import { z } from 'zod';
import { defaultCharsetSchema } from '../protocol/charset-label.js';
import {
  DEFAULT_MAX_LINKS_PER_PAGE,
  DEFAULT_MAX_URL_LENGTH,
  MAX_LINKS_PER_PAGE_LIMIT,
  MAX_URL_LENGTH_LIMIT,
} from '../protocol/link-limits.js';
import { proxyUrlSchema } from '../protocol/proxy-url.js';
import { renderHostsSchema } from '../protocol/render-rules.js';
import { requestHeadersSchema } from '../protocol/request-headers.js';
import { fixedCookiesSchema } from '../protocol/fixed-cookies.js';
import { hostRulesSchema } from '../politeness/host-rules.js';
import { allowAddressSchema } from './allow-address.js';
import { seedsSchema } from './seeds.js';
import { queryParamNamesSchema, urlPatternsSchema } from './url-patterns.js';

const int = (min = 0) => z.number().int().min(min);

/** Job priorities, lowest first: a run of a higher-priority job is served before lower ones. */
export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 9;

/** How a task's priority level is chosen within its job's (see `priorityRule`). */
export const PRIORITY_RULES = ['breadth-first', 'depth-first', 'fifo'] as const;
export type PriorityRule = (typeof PRIORITY_RULES)[number];

/**
 * Every setting of one crawl, with its default, in one place: the CLI (`ackcrawl crawl`), the
 * roles' ACKCRAWL_* variables and config files, the scheduler's `POST /crawl`, job.json and the
 * master's job API all parse through this schema, and docs/crawl-settings.md is generated from it.
 * The names are flat and camelCase, as a user writes them; units are in the names.
 *
 * The schema takes typed JSON values (numbers, booleans, arrays); text from the environment or
 * the command line is turned into them first (shared/crawl-settings/text-input.ts). It has no
 * preprocessing step, so `z.toJSONSchema(CrawlSettingsSchema, { io: 'input' })` describes a request.
 */
export const CrawlSettingsSchema = z.strictObject({
  // What to crawl
  seeds: seedsSchema
    .min(1, 'give at least one seed URL')
    .describe('Where the crawl starts: http(s) URLs, normalised; links are followed from them.'),
  scope: z
    .enum(['host', 'domain', 'any'])
    .default('host')
    .describe("Which links are followed: the seeds' hosts, their registrable domains, or any."),
  includeUrls: urlPatternsSchema
    .default([])
    .describe(
      'Regular expressions (RE2): a discovered URL in scope is followed only if one is found in it (empty: every URL).',
    ),
  excludeUrls: urlPatternsSchema
    .default([])
    .describe('Regular expressions (RE2): a discovered URL in which one is found is not followed.'),
  stripQueryParams: queryParamNamesSchema
    .default([])
    .describe(
      'Query parameters (and `;name=` path parameters) removed from discovered URLs before they are deduplicated (any case; utm_* for a prefix).',
    ),
  maxPages: int().default(0).describe('URLs the crawl accepts at most, seeds included (0: no limit).'),
  maxDepth: int().default(0).describe('Links followed at most this many hops from a seed (0: no limit).'),
  maxDurationMs: int()
    .default(0)
    .describe(
      "Longest a run goes, in ms from its start, pauses included (0: no limit). A master's run is then cancelled; `ackcrawl crawl` stops as on Ctrl-C, its queued URLs kept for the same command to go on.",
    ),
  maxUrlLength: int(1)
    .max(MAX_URL_LENGTH_LIMIT)
    .default(DEFAULT_MAX_URL_LENGTH)
    .describe('Links longer than this (characters, normalised) are dropped.'),
  maxLinksPerPage: int(1)
    .max(MAX_LINKS_PER_PAGE_LIMIT)
    .default(DEFAULT_MAX_LINKS_PER_PAGE)
    .describe('Distinct links kept per page, the first in document order; the rest are counted.'),
  // Priority
  priority: int(PRIORITY_MIN)
    .max(PRIORITY_MAX)
    .default(5)
    .describe(`Job priority, ${PRIORITY_MIN} (lowest) to ${PRIORITY_MAX}: higher jobs are served first.`),
  priorityRule: z
    .enum(PRIORITY_RULES)
    .default('breadth-first')
    .describe(
      "How a task's level is chosen within its job: breadth-first (shallower first), depth-first (deeper first), fifo (job priority only).",
    ),
  // Politeness (per host, across every crawler and run)
  hostConcurrency: int(1).default(2).describe('Requests in flight at once to one host, across the fleet.'),
  hostDelayMs: int().default(500).describe('Minimum ms between two request starts to one host.'),
  hostRules: hostRulesSchema
    .default([])
    .describe(
      'Per-host overrides: [{ host, concurrency?, delayMs?, adaptive? }]; as text, `host concurrency=N delay=MS adaptive; …`.',
    ),
  adaptiveDelay: z
    .boolean()
    .default(false)
    .describe("Every host's delay follows its response time (never below hostDelayMs)."),
  adaptiveFactor: z
    .number()
    .positive()
    .max(100)
    .default(1)
    .describe('Adaptive target: the delay tends to this many times the response time.'),
  maxAdaptiveDelayMs: int().default(60_000).describe('Ceiling of an adaptive delay, in ms.'),
  maxCrawlDelayMs: int()
    .default(30_000)
    .describe('A robots.txt Crawl-delay above this slows the host to this (ms), with a warning.'),
  cooldownBaseMs: int(1)
    .default(5_000)
    .describe('First cool-down after a 429/503 without Retry-After (ms); doubles with each in a row.'),
  maxCooldownMs: int(1)
    .default(3_600_000)
    .describe('Longest cool-down of a host, Retry-After included (ms).'),
  // robots.txt and sitemaps
  respectRobots: z
    .boolean()
    .default(true)
    .describe('Obey robots.txt: disallowed URLs end as ROBOTS_DENIED records, Crawl-delay slows the host.'),
  sitemaps: z
    .boolean()
    .default(false)
    .describe("Also queue each host's sitemaps (robots.txt Sitemap: lines and /sitemap.xml)."),
  sitemapMaxDepth: int().default(3).describe('Levels of sitemap index followed below a root sitemap.'),
  sitemapMaxUrls: int(1).default(50_000).describe('Entries read from one sitemap at most.'),
  sitemapMaxBytes: int(1024)
    .default(50 * 1024 * 1024)
    .describe('Bytes of one sitemap read at most, uncompressed.'),
  // Rendering
  render: z
    .enum(['never', 'always'])
    .default('never')
    .describe('Render every page in a browser (always) or none (never); needs render crawlers.'),
  renderHosts: renderHostsSchema
    .default([])
    .describe('Host patterns whose pages are rendered whatever render says (example.com, *.example.com).'),
  // Requests
  userAgent: z
    .string()
    .min(1)
    .max(500)
    .regex(/^[^\r\n]*$/, 'one line')
    .default('ackcrawl/0.1 (+https://github.com/ackcrawl/ackcrawl)')
    .describe("The crawl's identity: the User-Agent header, and the name robots.txt rules are matched to."),
  userAgents: z
    .array(
      z
        .string()
        .min(1)
        .max(500)
        .regex(/^[^\r\n]*$/, 'one line'),
    )
    .max(1000)
    .default([])
    .describe('User-Agent headers to rotate through, one per request (empty: always userAgent).'),
  headers: requestHeadersSchema
    .default([])
    .describe(
      'Request headers sent on every request, or only to the hosts a pattern names: [{ name, value, host? }]; as text, one per line, `Name: value` or `host Name: value`.',
    ),
  cookies: fixedCookiesSchema
    .default([])
    .describe(
      'Cookies every fetch starts with, as a logged-in browser (a session cookie copied from one): [{ name, value, domain, path?, secure? }]; as text, one per line, `domain name=value; Path=/; Secure` (.example.com: and its subdomains).',
    ),
  proxies: z
    .array(proxyUrlSchema)
    .max(10_000)
    .default([])
    .describe(
      'Proxy URLs (http, https, socks4(a), socks5(h), optional user:pass@) used in turn; empty: direct.',
    ),
  proxyMaxFailures: int(1)
    .default(3)
    .describe('Consecutive proxy-level failures after which a proxy is retired.'),
  proxyCooloffMs: int(1)
    .default(60_000)
    .describe('How long a retired proxy rests before one probe request may re-admit it (ms).'),
  connectTimeoutMs: int(1).default(10_000).describe('Time to open a connection (ms).'),
  responseTimeoutMs: int(1).default(20_000).describe("Time for a response's headers to arrive (ms)."),
  totalTimeoutMs: int(1).default(60_000).describe('Time for a whole fetch, body included (ms).'),
  maxRedirects: int().default(10).describe('Redirects followed per fetch.'),
  maxBodyBytes: int(1)
    .default(10 * 1024 * 1024)
    .describe('Largest body fetched; a larger one fails as BODY_TOO_LARGE.'),
  defaultCharset: defaultCharsetSchema
    .optional()
    .describe('Charset of pages that name none and are not UTF-8 (e.g. gbk); windows-1252 when unset.'),
  conditionalRequests: z
    .boolean()
    .default(true)
    .describe(
      "On a recrawl (a later run of the same job), send the URL's last ETag and Last-Modified; a 304 is recorded as not-modified, without a body.",
    ),
  sessionCookies: z
    .boolean()
    .default(false)
    .describe(
      "Keep the cookies a host sets across the run's pages, as a browser would (one session per run and host, kept by the scheduler across its restarts); off: each page's fetch starts with none.",
    ),
  // Retries
  retryDelayMs: int()
    .default(300_000)
    .describe('Wait before the second retry of a failed page (ms); never sooner than Retry-After.'),
  maxAttempts: int(1).default(3).describe('Attempts of a page before it fails for good.'),
  // Safety
  allowPrivate: z
    .boolean()
    .default(false)
    .describe('Fetch private, loopback and link-local addresses (refused by default).'),
  allowAddresses: z
    .array(allowAddressSchema)
    .max(1000)
    .default([])
    .describe('With allowPrivate off, IPs or CIDRs fetched anyway (e.g. 10.1.2.3, 192.168.0.0/16).'),
});

/** A crawl's settings, every default applied. */
export type CrawlSettings = z.output<typeof CrawlSettingsSchema>;
/** What a user may write: anything with a default may be left out. */
export type CrawlSettingsInput = z.input<typeof CrawlSettingsSchema>;
export type CrawlSettingKey = keyof CrawlSettings;

/** Every setting's name, in the schema's order. */
export const CRAWL_SETTING_KEYS = Object.keys(CrawlSettingsSchema.shape) as CrawlSettingKey[];

/** The default of every setting but `seeds` (which has none), fresh on each call. */
export function crawlDefaults(): Omit<CrawlSettings, 'seeds'> {
  return CrawlSettingsSchema.omit({ seeds: true }).parse({});
}
