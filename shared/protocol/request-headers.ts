import { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import { hostPatternSchema } from '../url/host-patterns.js';

/**
 * A crawl's own request headers (`headers`): sent on every request of the run, or only on
 * requests to the hosts a pattern names (`host`, as `renderHosts` writes them), so an API key or
 * a login's `Authorization` goes to the site it is for and nowhere else, redirects included.
 */

/** Header names the crawler sets itself, or that would break a fetch; each with what to use instead. */
export const RESERVED_HEADERS: Readonly<Record<string, string>> = {
  host: 'the crawler sets it from the URL',
  'content-length': 'the crawler sends GET requests without a body',
  'transfer-encoding': 'the crawler sends GET requests without a body',
  connection: 'the crawler manages its connections',
  'keep-alive': 'the crawler manages its connections',
  upgrade: 'the crawler manages its connections',
  te: 'the crawler manages its connections',
  trailer: 'the crawler sends GET requests without a body',
  expect: 'the crawler sends GET requests without a body',
  'proxy-connection': 'the crawler manages its connections',
  'proxy-authorization': 'give the credentials in the proxy URL (proxies: http://user:pass@host:port)',
  'user-agent': 'use userAgent (and userAgents to rotate)',
  cookie: "use cookies (a login's cookie, for its domain) and sessionCookies (what the hosts set)",
  'accept-encoding': 'the crawler decodes bodies itself, within maxBodyBytes',
  'if-none-match': 'conditional requests are sent by a recrawl (conditionalRequests)',
  'if-modified-since': 'conditional requests are sent by a recrawl (conditionalRequests)',
};

/** RFC 9110's token: the characters a header name may have. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What Node sends as a header value: Latin-1 without controls other than tab. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export const MAX_REQUEST_HEADERS = 100;
export const MAX_HEADER_VALUE_LENGTH = 8_192;

export const requestHeaderSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .regex(TOKEN, "a header name (letters, digits and !#$%&'*+.^_`|~-)")
      .superRefine((name, ctx) => {
        const instead = RESERVED_HEADERS[name.toLowerCase()];
        if (instead !== undefined)
          ctx.addIssue({ code: 'custom', message: `${name} cannot be set: ${instead}` });
      }),
    value: z
      .string()
      .max(MAX_HEADER_VALUE_LENGTH)
      .regex(FIELD_VALUE, 'one line of Latin-1 text (no line breaks or control characters)'),
    /** A host pattern (example.com, *.example.com, :port); absent: every host of the crawl. */
    host: hostPatternSchema.optional(),
  })
  .strict();
export type RequestHeader = z.infer<typeof requestHeaderSchema>;

export const requestHeadersSchema = z
  .array(requestHeaderSchema)
  .max(MAX_REQUEST_HEADERS)
  .superRefine((headers, ctx) => {
    const seen = new Set<string>();
    headers.forEach((header, i) => {
      const key = `${header.name.toLowerCase()} ${header.host?.toLowerCase() ?? '*'}`;
      if (seen.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `${header.name} is given twice for ${header.host ?? 'every host'}`,
        });
      }
      seen.add(key);
    });
  });

/** `[host ]Name: value`, the first word a host pattern when the line names one. */
const WITH_HOST = /^(\S+)\s+([^\s:]+):[ \t]*(.*)$/;
const WITHOUT_HOST = /^([^\s:]+):[ \t]*(.*)$/;

/**
 * One header as text: `X-Api-Key: abc`, or `api.example.com Authorization: Bearer abc` for one
 * host (a pattern as `renderHosts` takes them). The value runs to the end of the line.
 * @throws InvalidInputError `BAD_HEADER` when the line is neither form, or its parts are invalid.
 */
export function parseRequestHeader(text: string): RequestHeader {
  const line = text.trim();
  const hosted = WITH_HOST.exec(line);
  const raw =
    hosted && hostPatternSchema.safeParse(hosted[1]).success
      ? { host: hosted[1], name: hosted[2], value: (hosted[3] ?? '').trim() }
      : headerWithoutHost(line);
  const parsed = requestHeaderSchema.safeParse(raw);
  if (!parsed.success) {
    const why = parsed.error.issues.map((issue) => issue.message).join('; ');
    throw new InvalidInputError('BAD_HEADER', `header "${redactHeaderLine(line)}": ${why}`);
  }
  return parsed.data;
}

function headerWithoutHost(line: string): RequestHeader {
  const plain = WITHOUT_HOST.exec(line);
  if (!plain) {
    throw new InvalidInputError(
      'BAD_HEADER',
      `header "${redactHeaderLine(line)}": write it as "Name: value" or "host Name: value"`,
    );
  }
  return { name: plain[1] ?? '', value: (plain[2] ?? '').trim() };
}

/** A header's line with its value hidden (error messages: a value may be a secret). */
function redactHeaderLine(line: string): string {
  const colon = line.indexOf(':');
  if (colon >= 0) return `${line.slice(0, Math.min(colon, 100))}: …`;
  const word = /^\S{1,100}/.exec(line)?.[0] ?? '';
  return word.length < line.length ? `${word} …` : word;
}
