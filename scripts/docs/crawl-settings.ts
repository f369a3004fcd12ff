import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { flagOf } from '../../master/cli/crawl-flags.js';
import { envName } from '../../shared/config/load.js';
import {
  CRAWL_SETTING_KEYS,
  CrawlSettingsSchema,
  crawlDefaults,
  textKindOf,
  type CrawlSettingKey,
} from '../../shared/crawl-settings/index.js';

/** docs/crawl-settings.md, generated from the schema every entry point parses (shared/crawl-settings). */
export const CRAWL_SETTINGS_DOC_PATH = fileURLToPath(
  new URL('../../../docs/crawl-settings.md', import.meta.url),
);

interface JsonSchemaField {
  type?: string;
  enum?: string[];
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  items?: JsonSchemaField;
  description?: string;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string): string => `\`${text}\``;

function typeOf(key: CrawlSettingKey, field: JsonSchemaField): string {
  if (field.enum) return field.enum.map(code).join(', ');
  if (field.type === 'integer' || field.type === 'number') {
    const low = field.minimum ?? field.exclusiveMinimum;
    const bounds = [
      low === undefined ? null : `${field.exclusiveMinimum !== undefined ? '>' : '≥'} ${low}`,
      field.maximum === undefined || field.maximum >= Number.MAX_SAFE_INTEGER ? null : `≤ ${field.maximum}`,
    ].filter(Boolean);
    return `${field.type}${bounds.length > 0 ? ` (${bounds.join(', ')})` : ''}`;
  }
  if (field.type === 'array') {
    const item = field.items?.type === 'object' ? 'objects' : `${field.items?.type ?? 'value'}s`;
    const sizes = [
      field.minItems === undefined ? null : `at least ${field.minItems}`,
      field.maxItems === undefined ? null : `at most ${field.maxItems.toLocaleString('en-US')}`,
    ].filter(Boolean);
    const text = {
      list: 'spaces or commas',
      lines: 'one per line',
      hostRules: 'JSON or rule text',
      headers: 'JSON or one per line',
      cookies: 'JSON or one per line',
    }[textKindOf(key) as 'list'];
    return `list of ${item}${sizes.length > 0 ? ` (${sizes.join(', ')})` : ''}; as text: ${text}`;
  }
  return field.type ?? 'value';
}

function defaultOf(key: CrawlSettingKey): string {
  if (key === 'seeds') return 'required';
  const value = (crawlDefaults() as Record<string, unknown>)[key];
  if (value === undefined) return 'unset';
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

export function renderCrawlSettingsDoc(): string {
  const schema = z.toJSONSchema(CrawlSettingsSchema, { io: 'input' }) as {
    properties: Record<string, JsonSchemaField>;
  };
  const rows = CRAWL_SETTING_KEYS.map((key) => {
    const field = schema.properties[key] ?? {};
    const flag = flagOf(key);
    return [
      code(key),
      typeOf(key, field),
      defaultOf(key),
      key === 'seeds' ? `${code(envName(key))} (scheduler)` : code(envName(key)),
      flag ? code(flag) : key === 'seeds' ? 'the arguments' : '',
      field.description ?? '',
    ];
  });
  const header = ['setting', 'type', 'default', 'variable', '`ackcrawl crawl`', 'meaning'];
  const table = [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
  return `<!-- Generated from shared/crawl-settings by \`npm run docs:generate\`; edit the schema, not this file. -->

# A crawl's settings

One schema (\`shared/crawl-settings/\`) defines what a crawl can be told, with each default written
once. Every way of giving a crawl its settings parses through it and reports every problem at
once, field by field:

- \`ackcrawl crawl\`: the flags below, over the \`ACKCRAWL_*\` variables of its environment, over
  the defaults; the embedded roles get the result. With \`--cluster\`, only what the flags and
  variables set is sent: the scheduler's configuration fills the rest.
- The scheduler (\`ackcrawl scheduler\`): \`ACKCRAWL_<SETTING>\` variables and the keys of its
  \`--config\` JSON file (see [configuration](configuration.md)); they are its crawl when it has
  seeds, and what a submitted crawl leaves out.
- The scheduler's \`POST /crawl\`: a JSON object of these names, \`seeds\` required, anything else
  optional (the scheduler's configuration fills it); unknown names are refused. A bad body is
  400 \`INVALID_CRAWL\` with \`error.problems\`: \`[{ "field": "hostRules.0.delayMs", "message": … }]\`.
- \`job.json\`, the crawl a cluster scheduler resumes after a restart: \`{ "version": 2, "settings":
  {…} }\`, validated on load (the unversioned file of earlier versions still loads).

Names are the same everywhere: camelCase in JSON, upper snake case with \`ACKCRAWL_\` in the
environment (\`hostDelayMs\` → \`ACKCRAWL_HOST_DELAY_MS\`). As text, a boolean is one of \`true\`,
\`false\`, \`1\`, \`0\`, \`yes\`, \`no\`, \`on\`, \`off\`; a list is separated by spaces or commas,
\`userAgents\`, \`includeUrls\` and \`excludeUrls\` have one per line (they hold spaces and
commas), \`hostRules\` is a JSON array or \`host concurrency=N delay=MS adaptive; …\` (see
[politeness](politeness.md)), and \`headers\` is a JSON array or one \`[host ]Name: value\` per line.

**Request headers.** \`headers\` adds the crawl's own headers to its requests: an API key, an
\`Authorization\` for a site behind a login, an \`Accept-Language\`. A header without \`host\` goes on
every request; one with a host pattern (\`example.com\`, \`*.example.com\`, optionally \`:port\`, as
\`renderHosts\`) only on requests to the hosts it names, the most specific pattern of a name winning
(\`--header "api.example.com Authorization: Bearer …"\`, repeatable). They go on every request of
the run to those hosts: pages, robots.txt, sitemaps, and a rendered page's own requests. Each hop of
a redirect gets its own host's headers, so a key for one site never follows a redirect to another;
a redirect Chromium follows inside one of a rendered page's requests is the exception (it keeps what
the first hop was given). The crawler refuses the headers it sets itself (\`Host\`, \`User-Agent\`:
use \`userAgent\`, \`Cookie\`: use \`cookies\`, \`Accept-Encoding\`, \`If-None-Match\`, …) with
\`BAD_HEADER\` or a problem at \`headers\`, and what to use instead.

**A crawl's own cookies.** \`cookies\` starts every fetch of the run with cookies, as a browser
that is logged in: copy the session cookie of a login from a browser (\`--cookie ".example.com
sid=abc123; Secure"\`, repeatable; as text \`domain name=value\`, then \`; Path=/p\` and \`; Secure\`).
Each is sent where a browser would send it: \`example.com\` to that host only, \`.example.com\` to it
and its subdomains, on its path, over HTTPS only when \`secure\`; pages, robots.txt, sitemaps and a
rendered page's browser all have them. What a site sets on top wins over the fixed cookie of the
same name for as long as the fetch (or, with \`sessionCookies\`, the run's session) keeps it.

Header values and cookie values may be secrets: a \`read\` token sees each as \`(hidden)\`, logs
never show them, and only crawlers that passed the token check are sent them (the protocol's
\`welcome\` and \`settings\`, as proxies' credentials).

**URL patterns.** \`includeUrls\` and \`excludeUrls\` decide, after \`scope\`, which discovered URLs
are followed: page links, redirect targets and sitemap entries (seeds are taken as given). Each
is a regular expression in RE2 syntax (as Go's and Python's, without backreferences or
lookaround; \`(?i)\` for case-insensitive), searched for anywhere in the normalised URL (anchor it
with \`^\` or \`$\`). A URL is followed when no exclude pattern is found in it and, if there are
include patterns, one of them is. RE2 runs in time linear in the URL whatever the pattern, so a
pattern such as \`(a+)+$\` cannot stall a scheduler on a hostile link; a pattern RE2 refuses makes
the settings invalid (\`INVALID_CRAWL\`, the problem by its place: \`excludeUrls.1\`; on the
command line, by its flag). \`ackcrawl why\` names the pattern that keeps a URL out. The cost is
the scheduler's: about 2 µs of CPU per list and in-scope link, however many patterns the list has
(40 times V8's own regular expressions, most of it moving the URL into RE2's WebAssembly memory),
and some 20 MB for RE2 in a process that has patterns; at 20 links a page that is about 4 % of a
core for every 500 pages a second. For example
\`--include '^https://example\\.com/docs/' --exclude '[?&](sessionid|sort)='\`.

**Query parameters stripped.** \`stripQueryParams\` lists parameters that do not change a page
(tracking and session ids: \`utm_*\`, \`fbclid\`, \`sessionid\`, \`PHPSESSID\`), so
\`/a?utm_source=x\` and \`/a\` are one URL to the crawl: the scheduler removes them from
discovered links and sitemap entries before the seen-set, the scope and the patterns see them, and
fetches the page once, under the URL without them. A name matches in any case; \`utm_*\` matches
every name that starts with \`utm_\`; what is left of the query keeps its order. Seeds are taken as
given; a page record's \`links\` keep the links as the page wrote them. \`why\` answers for the
spelling the crawl holds. Path parameters of the listed names go too: with \`jsessionid\` listed,
\`/shop;jsessionid=A1?x=1\` is \`/shop?x=1\` (Java servers put the session there for clients without cookies).

${table}

On the command line, \`--user-agent\` may be repeated: the first is \`userAgent\`, two or more
are also \`userAgents\`. \`--render\` sets \`render\` to \`always\`; \`--no-robots\` sets
\`respectRobots\` to \`false\`; \`--host-rule\`, \`--proxy\`, \`--render-host\`, \`--include\`,
\`--exclude\` and \`--strip-param\` may be repeated.
`;
}

// `node dist/scripts/docs/crawl-settings.js` rewrites the file; `--check` fails if it drifted.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rendered = renderCrawlSettingsDoc();
  if (process.argv.includes('--check')) {
    if (readFileSync(CRAWL_SETTINGS_DOC_PATH, 'utf8') !== rendered) {
      console.error('docs/crawl-settings.md is out of date: run npm run docs:generate');
      process.exit(1);
    }
  } else {
    writeFileSync(CRAWL_SETTINGS_DOC_PATH, rendered);
  }
}
