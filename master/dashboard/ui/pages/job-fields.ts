/** The job form's common settings (the rest are reachable through the advanced JSON box). */
export interface FieldSpec {
  name: string;
  label: string;
  /** `seeds` and `lines`: a list, one item per line. */
  kind: 'text' | 'number' | 'checkbox' | 'select' | 'seeds' | 'lines';
  /** Shown in an empty text box. */
  placeholder?: string;
  options?: string[];
  hint: string;
  /** The API's default, shown as the placeholder (new job) or checked state. */
  defaultValue?: string | number | boolean;
  min?: number;
  max?: number;
  wide?: boolean;
}

export const FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', hint: 'Unique among jobs.', wide: true },
  {
    name: 'seeds',
    label: 'Seeds',
    kind: 'seeds',
    hint: 'One http(s) URL per line; links are followed from them.',
    wide: true,
  },
  {
    name: 'scope',
    label: 'Scope',
    kind: 'select',
    options: ['host', 'domain', 'any'],
    defaultValue: 'host',
    hint: "Links followed: the seeds' hosts, their domains, or any.",
  },
  {
    name: 'includeUrls',
    label: 'Follow only URLs matching',
    kind: 'lines',
    placeholder: '/blog/',
    hint: 'RE2 patterns, one per line: a discovered URL is followed only if one is found in it (empty: all).',
    wide: true,
  },
  {
    name: 'excludeUrls',
    label: 'Never follow URLs matching',
    kind: 'lines',
    placeholder: '[?&]sessionid=',
    hint: 'RE2 patterns, one per line: a discovered URL in which one is found is not followed.',
    wide: true,
  },
  {
    name: 'stripQueryParams',
    label: 'Strip query parameters',
    kind: 'lines',
    placeholder: 'utm_*',
    hint: 'One name per line (utm_* for a prefix): removed from discovered URLs before they are deduplicated.',
    wide: true,
  },
  {
    name: 'maxPages',
    label: 'Max pages',
    kind: 'number',
    min: 0,
    defaultValue: 0,
    hint: 'URLs accepted at most (0: no limit).',
  },
  {
    name: 'maxDepth',
    label: 'Max depth',
    kind: 'number',
    min: 0,
    defaultValue: 0,
    hint: 'Hops from a seed (0: no limit).',
  },
  {
    name: 'maxDurationMs',
    label: 'Time limit (ms)',
    kind: 'number',
    min: 0,
    defaultValue: 0,
    hint: 'A run is cancelled this long after it starts, pauses included (3600000: an hour; 0: no limit).',
  },
  {
    name: 'hostConcurrency',
    label: 'Per-host concurrency',
    kind: 'number',
    min: 1,
    defaultValue: 2,
    hint: 'Requests in flight at once to one host.',
  },
  {
    name: 'hostDelayMs',
    label: 'Per-host delay (ms)',
    kind: 'number',
    min: 0,
    defaultValue: 500,
    hint: 'Minimum ms between two request starts to one host.',
  },
  {
    name: 'priority',
    label: 'Priority',
    kind: 'number',
    min: 0,
    max: 9,
    defaultValue: 5,
    hint: '0 (lowest) to 9.',
  },
  {
    name: 'priorityRule',
    label: 'Order',
    kind: 'select',
    options: ['breadth-first', 'depth-first', 'fifo'],
    defaultValue: 'breadth-first',
    hint: 'How tasks are ordered within the job.',
  },
  {
    name: 'maxAttempts',
    label: 'Max attempts',
    kind: 'number',
    min: 1,
    defaultValue: 3,
    hint: 'Attempts of a page before it fails for good.',
  },
  {
    name: 'render',
    label: 'Render',
    kind: 'select',
    options: ['never', 'always'],
    defaultValue: 'never',
    hint: 'Render pages in a browser (needs render crawlers).',
  },
  {
    name: 'userAgent',
    label: 'User agent',
    kind: 'text',
    hint: 'The User-Agent header and the robots.txt name.',
    wide: true,
  },
  {
    name: 'respectRobots',
    label: 'Obey robots.txt',
    kind: 'checkbox',
    defaultValue: true,
    hint: 'Disallowed URLs are skipped; Crawl-delay slows the host.',
  },
  {
    name: 'sitemaps',
    label: 'Read sitemaps',
    kind: 'checkbox',
    defaultValue: false,
    hint: "Also queue each host's sitemaps.",
  },
  {
    name: 'sessionCookies',
    label: 'Session cookies',
    kind: 'checkbox',
    defaultValue: false,
    hint: "A host's cookies are kept across its pages, as a browser would.",
  },
  {
    name: 'adaptiveDelay',
    label: 'Adaptive delay',
    kind: 'checkbox',
    defaultValue: false,
    hint: "Each host's delay follows its response time.",
  },
  {
    name: 'allowPrivate',
    label: 'Allow private addresses',
    kind: 'checkbox',
    defaultValue: false,
    hint: 'Fetch loopback and private IPs.',
  },
];

export const FIELD_NAMES = new Set(FIELDS.map((f) => f.name));
